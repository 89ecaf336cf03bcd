#!/usr/bin/python3
"""A request over native_transport_max_frame_size, through the DataStax
Python driver.

Usage: toobig.py HOST PORT KEYSPACE VERSION LIMIT

Run by test/toobig_test.go against a node whose frame limit is LIMIT bytes:
on protocol VERSION, an INSERT binding a blob of LIMIT + 1 bytes fails with
InvalidRequest carrying the server's message (not a connection reset),
and the same session's next statements (on the same connection: the
driver opens one per host) are answered. Prints the server's message.
Exits 0 on success, 1 on failure, 2 on bad usage or a missing driver.
"""

import sys

try:
    from cassandra import InvalidRequest
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy
except ImportError as e:  # the Go test checks for this before running us
    print("cassandra driver not importable: %s" % e, file=sys.stderr)
    sys.exit(2)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    host, port, ks, version, limit = argv[1], int(argv[2]), argv[3], int(argv[4]), int(argv[5])
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([host]), request_timeout=30)
    cluster = Cluster([host], port=port, protocol_version=version,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                      connect_timeout=10, control_connection_timeout=10)
    session = cluster.connect()
    try:
        session.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
        session.execute("CREATE TABLE IF NOT EXISTS %s.blobs (k int PRIMARY KEY, v blob)" % ks)
        insert = session.prepare("INSERT INTO %s.blobs (k, v) VALUES (?, ?)" % ks)
        pool = session.get_pool_state()
        try:
            session.execute(insert, (1, b"x" * (limit + 1)))
        except InvalidRequest as e:
            print("refused:", e)
        except Exception as e:
            fail("the oversized INSERT failed with %r, want InvalidRequest" % (e,))
        else:
            fail("the oversized INSERT succeeded")
        session.execute(insert, (2, b"small"))
        rows = list(session.execute("SELECT k FROM %s.blobs" % ks))
        if [r.k for r in rows] != [2]:
            fail("rows after the refusal: %r, want only k=2" % (rows,))
        if session.get_pool_state() != pool:
            fail("the connection pool changed: %r, was %r" % (session.get_pool_state(), pool))
        if cluster.control_connection._connection.is_defunct:
            fail("the control connection is defunct")
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main(sys.argv)
