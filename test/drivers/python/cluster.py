"""The DataStax Python driver against a cqld cluster.

Usage: python3 cluster.py HOST PORT NODES KEYSPACE

Connects with one contact point and checks that the driver discovers every
node of the cluster, all up, and builds a token map giving each partition
of an RF 3 keyspace three replicas; then writes and reads rows at QUORUM
through TokenAwarePolicy, so each request goes straight to a replica.
Exits 0 on success, 1 with the reason otherwise.
"""
import sys

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    host, port, nodes, ks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc="datacenter1")),
        consistency_level=ConsistencyLevel.QUORUM,
        request_timeout=20,
    )
    cluster = Cluster([host], port=port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    session = cluster.connect()
    hosts = cluster.metadata.all_hosts()
    if len(hosts) != nodes or not all(h.is_up for h in hosts):
        fail("hosts %s" % [(h.address, h.is_up) for h in hosts])
    session.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}" % ks)
    session.execute("CREATE TABLE %s.t (k int PRIMARY KEY, v text)" % ks)
    cluster.refresh_schema_metadata()
    insert = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks)
    select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks)
    for k in range(50):
        bound = insert.bind((k, "v%d" % k))
        replicas = cluster.metadata.get_replicas(ks, bound.routing_key)
        if len(replicas) != 3:
            fail("key %d: the driver's token map gives %d replicas" % (k, len(replicas)))
        session.execute(bound)
    for k in range(50):
        row = session.execute(select, (k,)).one()
        if row is None or row.v != "v%d" % k:
            fail("key %d read back %r" % (k, row))
    session.execute("DROP KEYSPACE %s" % ks)
    cluster.shutdown()
    print("ok: %d nodes discovered, 50 rows written and read at QUORUM" % nodes)


main()
