#!/usr/bin/python3
"""Server-side DESCRIBE through the DataStax Python driver, as cqlsh 4.0+
sends it.

Usage: describe.py HOST PORT KEYSPACE

Creates KEYSPACE with a user type, a user-defined function and an
aggregate, a table using the type and an index, reads
DESCRIBE KEYSPACE two rows a page (the driver follows the paging state),
drops the keyspace and runs the CREATE statements it got: DESCRIBE then
answers the same rows again. Also checks DESCRIBE CLUSTER's range
ownership (a map of lists) in the keyspace, that a missing element is an
InvalidRequest with Cassandra's message, and that system_views.clients
names the driver. Exits 0 on success, 1 with
the reason otherwise.
"""
import sys

from cassandra import InvalidRequest
from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def describe(session, query):
    rows = session.execute(SimpleStatement(query, fetch_size=2))
    return [(r.keyspace_name, r.type, r.name, r.create_statement) for r in rows]


def main():
    host, port, ks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cluster = Cluster([host], port=port)
    session = cluster.connect()
    for q in ("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % ks,
              "CREATE TYPE %s.point (x double, y double)" % ks,
              "CREATE FUNCTION %s.longer(s text, v text) CALLED ON NULL INPUT RETURNS text LANGUAGE javascript"
              " AS $$ s == null || (v != null && v.length > s.length) ? v : s $$" % ks,
              "CREATE AGGREGATE %s.longest(text) SFUNC longer STYPE text INITCOND ''" % ks,
              "CREATE TABLE %s.places (id uuid, at timestamp, name text static, p frozen<point>, tags set<text>,"
              " PRIMARY KEY (id, at)) WITH CLUSTERING ORDER BY (at DESC) AND comment = 'where'" % ks,
              "CREATE INDEX ON %s.places (name)" % ks):
        session.execute(q)

    first = describe(session, "DESCRIBE KEYSPACE %s" % ks)
    kinds = [(t, n) for (_, t, n, _) in first]
    if kinds != [("keyspace", ks), ("type", "point"), ("function", "longer(text, text)"), ("aggregate", "longest(text)"),
                 ("table", "places"), ("index", "places_name_idx")]:
        fail("DESCRIBE KEYSPACE gave %r" % kinds)
    if "    at timestamp,\n    name text static," not in first[4][3] or "CLUSTERING ORDER BY (at DESC)" not in first[4][3]:
        fail("the table as described:\n%s" % first[4][3])
    if first[3][3] != "CREATE AGGREGATE %s.longest(text)\n    SFUNC longer\n    STYPE text\n    INITCOND '';" % ks:
        fail("the aggregate as described:\n%s" % first[3][3])

    session.execute("DROP KEYSPACE %s" % ks)
    for (_, _, _, stmt) in first:
        session.execute(stmt)
    again = describe(session, "DESCRIBE KEYSPACE %s" % ks)
    if again != first:
        fail("described again:\n%r\nfirst:\n%r" % (again, first))

    session.set_keyspace(ks)
    row = session.execute("DESCRIBE CLUSTER").one()
    tokens = session.execute("SELECT tokens FROM system.local").one().tokens
    if row.partitioner != "Murmur3Partitioner" or set(row.range_ownership) != set(tokens):
        fail("DESCRIBE CLUSTER gave %r, tokens %r" % (row, tokens))
    for token, endpoints in row.range_ownership.items():
        if len(endpoints) != 1 or not endpoints[0].startswith("/" + host + ":"):
            fail("range ending at %s owned by %r" % (token, endpoints))

    try:
        session.execute("DESCRIBE TABLE nope")
        fail("DESCRIBE TABLE nope answered")
    except InvalidRequest as e:
        if "Table 'nope' not found in keyspace '%s'" % ks not in str(e):
            fail("DESCRIBE TABLE nope: %s" % e)

    # system_views.clients knows the driver by what it said in STARTUP.
    drivers = {(r.driver_name, r.connection_stage) for r in session.execute("SELECT driver_name, connection_stage FROM system_views.clients")}
    if ("DataStax Python Driver", "ready") not in drivers:
        fail("system_views.clients: %r" % drivers)

    session.execute("DROP KEYSPACE %s" % ks)
    cluster.shutdown()
    print("ok: DESCRIBE KEYSPACE paged, run back and described the same; DESCRIBE CLUSTER's %d ranges" % len(tokens))


main()
