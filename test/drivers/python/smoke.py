#!/usr/bin/python3
"""End-to-end smoke test of the DataStax Python driver against a cqld node.

Usage: smoke.py [--explicit] HOST PORT CLUSTER_NAME KEYSPACE PROTOCOL_VERSION

Run by test/python_test.go with Debian's /usr/bin/python3 and its
python3-cassandra package. The driver is used as an application would use
it: a DC-aware, token-aware load balancing policy and, by default, no
protocol version, so it negotiates one (with --explicit, the Cluster is
given PROTOCOL_VERSION). It connects, checks the protocol version is
PROTOCOL_VERSION and the discovered node, creates a keyspace, checks its
metadata, USEs it, creates a user type and a table using it (checking their
metadata and a prepared write and read), reads system.local and drops the
keyspace.

Any WARNING or ERROR the driver logs fails the run, with one exception.
With no protocol version set, driver 3.25 starts at DSE_V2 (66) and steps
down one version per "Invalid or unsupported protocol version" error,
logging a WARNING "Downgrading core protocol version from X to Y" each
time; it does so against Apache Cassandra 4.x too, whatever the server
answers. So when negotiating, the downgrade warnings must be exactly the
steps from 66 to PROTOCOL_VERSION (66->65->5 for v5): one more step, or
any other warning, is a failure. With --explicit there must be none.

Exits 0 on success, 1 on failure (printing why and the driver's log), 2
on bad usage or a missing driver. SMOKE_VERBOSE=1 prints the driver's log
on success too.
"""

import argparse
import logging
import os
import re
import sys
import time

try:
    import cassandra
    from cassandra import ProtocolVersion
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy
except ImportError as e:  # the Go test checks for this before running us
    print("cassandra driver not importable: %s" % e, file=sys.stderr)
    sys.exit(2)

LOCAL_DC = "datacenter1"
DOWNGRADE = re.compile(r"^Downgrading core protocol version from (\d+) to (\d+) for ")
MURMUR3 = "org.apache.cassandra.dht.Murmur3Partitioner"


class Recorder(logging.Handler):
    """Keeps every record of the 'cassandra' logger, to check and to print."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []
        self.setFormatter(logging.Formatter(
            "%(relativeCreated)7.0fms %(levelname)-7s %(name)s: %(message)s"))

    def emit(self, record):
        self.records.append(record)

    def problems(self):
        return [r for r in self.records if r.levelno >= logging.WARNING]

    def dump(self, out):
        for r in self.records:
            print("  " + self.format(r), file=out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--explicit", action="store_true", help="set Cluster(protocol_version=PROTOCOL_VERSION)")
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("cluster_name")
    ap.add_argument("keyspace")
    ap.add_argument("protocol_version", type=int)
    args = ap.parse_args(argv[1:])  # exits 2 on bad usage
    host, port, cluster_name, ks = args.host, args.port, args.cluster_name, args.keyspace
    want_protocol = args.protocol_version

    rec = Recorder()
    log = logging.getLogger("cassandra")
    log.setLevel(logging.DEBUG)
    log.addHandler(rec)
    log.propagate = False

    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)
        return ok

    print("python %s, cassandra-driver %s" % (sys.version.split()[0], cassandra.__version__))
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=LOCAL_DC)),
        request_timeout=10)
    kwargs = {"protocol_version": want_protocol} if args.explicit else {}
    cluster = Cluster(contact_points=[host], port=port,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                      connect_timeout=10, control_connection_timeout=10, **kwargs)
    try:
        start = time.monotonic()
        session = cluster.connect()
        print("connected in %.0f ms, protocol version %d"
              % ((time.monotonic() - start) * 1000, cluster.protocol_version))
        check(cluster.protocol_version == want_protocol,
              "negotiated protocol version %d, want %d" % (cluster.protocol_version, want_protocol))

        md = cluster.metadata
        hosts = md.all_hosts()
        print("hosts: %s" % ", ".join("%s dc=%s rack=%s release=%s up=%s"
                                      % (h.endpoint, h.datacenter, h.rack, h.release_version, h.is_up)
                                      for h in hosts))
        if check(len(hosts) == 1, "metadata has %d hosts, want 1" % len(hosts)):
            h = hosts[0]
            check(h.datacenter == LOCAL_DC, "host datacenter %r, want %r" % (h.datacenter, LOCAL_DC))
            check(h.is_up, "host %s is not up" % h.endpoint)
            check(str(h.endpoint.address) == host and h.endpoint.port == port,
                  "host endpoint %s, want %s:%d" % (h.endpoint, host, port))
        check(md.cluster_name == cluster_name,
              "metadata cluster_name %r, want %r" % (md.cluster_name, cluster_name))
        check(md.partitioner == MURMUR3, "metadata partitioner %r, want %r" % (md.partitioner, MURMUR3))
        check(md.token_map is not None and len(md.token_map.ring) > 0, "no token map")
        check("system" in md.keyspaces, "metadata lacks keyspace system: %s" % sorted(md.keyspaces))
        pools = session.get_pool_state()
        check(len(pools) == 1, "session has %d pools, want 1: %s" % (len(pools), pools))

        session.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
        # The driver waits for schema agreement and refreshes the keyspace's
        # metadata before execute() returns.
        kmd = md.keyspaces.get(ks)
        if check(kmd is not None, "metadata lacks keyspace %s after CREATE: %s" % (ks, sorted(md.keyspaces))):
            strategy = type(kmd.replication_strategy).__name__
            check(strategy == "SimpleStrategy" and kmd.replication_strategy.replication_factor == 1,
                  "keyspace %s replication %s %r" % (ks, strategy, vars(kmd.replication_strategy)))
            check(kmd.durable_writes, "keyspace %s durable_writes false" % ks)
        check(cluster.control_connection.wait_for_schema_agreement(wait_time=5), "no schema agreement")

        session.set_keyspace(ks)
        check(session.keyspace == ks, "session keyspace %r after set_keyspace, want %r" % (session.keyspace, ks))
        session.execute("USE %s" % ks)
        check(session.keyspace == ks, "session keyspace %r after USE, want %r" % (session.keyspace, ks))

        # A user type: the driver reads it from system_schema.types on the
        # TYPE schema change, parses the column types naming it, and
        # serializes it by the prepared metadata.
        session.execute("CREATE TYPE address (street text, city text)")
        session.execute("CREATE TABLE people (k int PRIMARY KEY, home frozen<address>, work address)")
        kmd = md.keyspaces.get(ks)
        ut = kmd.user_types.get("address") if kmd else None
        if check(ut is not None, "metadata lacks user type address: %s" % (kmd and sorted(kmd.user_types))):
            check(ut.field_names == ["street", "city"] and ut.field_types == ["text", "text"],
                  "user type address: %s %s" % (ut.field_names, ut.field_types))
        tmd = kmd.tables.get("people") if kmd else None
        if check(tmd is not None, "metadata lacks table people"):
            types = {c: tmd.columns[c].cql_type for c in tmd.columns}
            check(types == {"k": "int", "home": "frozen<address>", "work": "address"}, "people column types %s" % types)
        ins = session.prepare("INSERT INTO people (k, home, work) VALUES (?, ?, ?)")
        session.execute(ins, (1, ("Main", "Oslo"), (None, "Bergen")))
        session.execute("UPDATE people SET work.street = 'Quay' WHERE k = 1")
        row = session.execute("SELECT home, work, work.city FROM people WHERE k = 1").one()
        check(row is not None and row[0].street == "Main" and row[0].city == "Oslo"
              and row[1].street == "Quay" and row[1].city == "Bergen" and row[2] == "Bergen",
              "people row %r" % (row,))

        row = session.execute("SELECT release_version, partitioner, cluster_name, data_center "
                              "FROM system.local WHERE key='local'").one()
        print("system.local: release_version=%s partitioner=%s cluster_name=%s data_center=%s"
              % (row.release_version, row.partitioner, row.cluster_name, row.data_center))
        check(row.release_version.startswith("4."), "release_version %r, want 4.x" % row.release_version)
        check(row.partitioner == MURMUR3, "partitioner %r, want %r" % (row.partitioner, MURMUR3))
        check(row.cluster_name == cluster_name, "cluster_name %r, want %r" % (row.cluster_name, cluster_name))
        check(row.data_center == LOCAL_DC, "data_center %r, want %r" % (row.data_center, LOCAL_DC))

        session.execute("DROP KEYSPACE %s" % ks)
        check(ks not in md.keyspaces, "metadata still has keyspace %s after DROP" % ks)
    except Exception as e:
        failures.append("%s: %s" % (type(e).__name__, e))
    finally:
        cluster.shutdown()

    # The downgrade steps the driver takes without a protocol version set,
    # from its first attempt to want_protocol (see the module doc).
    want_steps = []
    if not args.explicit:
        want_steps = [v for v in sorted(ProtocolVersion.SUPPORTED_VERSIONS, reverse=True)
                      if v not in ProtocolVersion.BETA_VERSIONS and v >= want_protocol]
        want_steps = list(zip(want_steps, want_steps[1:]))
    steps = []
    for r in rec.problems():
        m = DOWNGRADE.match(r.getMessage())
        if r.levelno == logging.WARNING and m and len(steps) < len(want_steps) \
                and (int(m.group(1)), int(m.group(2))) == want_steps[len(steps)]:
            steps.append(want_steps[len(steps)])
            continue
        failures.append("driver logged %s: %s" % (r.levelname, r.getMessage()))
    check(steps == want_steps, "protocol downgrades %s, want %s" % (steps, want_steps))
    if failures:
        print("FAIL", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        print("driver log:", file=sys.stderr)
        rec.dump(sys.stderr)
        return 1
    if os.environ.get("SMOKE_VERBOSE"):
        print("driver log:")
        rec.dump(sys.stdout)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
