"""The DataStax Python driver against a cqld cluster.

Usage: python3 cluster.py HOST PORT NODES KEYSPACE METRICS_PORT

Connects with one contact point and checks that the driver discovers every
node of the cluster, all up, and builds a token map giving each partition
of an RF 3 keyspace three replicas; then writes and reads rows at QUORUM
through TokenAwarePolicy, so each request goes straight to a replica.
Then the same at RF 1, where each partition has one replica and the nodes
disagree with a wrong token map: every request must go to the replica the
driver computed, and no node may forward a write or a read to another
(the sum of MUTATION and READ messages sent, on every node's /metrics at
METRICS_PORT, stays the same), so the driver's placement is the server's.
Exits 0 on success, 1 with the reason otherwise.
"""
import sys
import urllib.request

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def forwarded(hosts, metrics_port):
    """The MUTATION and READ messages the nodes have sent one another."""
    n = 0
    for h in hosts:
        with urllib.request.urlopen("http://%s:%d/metrics" % (h.address, metrics_port), timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("cqld_internode_messages_total{") and 'direction="sent"' in line and \
                        ('verb="MUTATION"' in line or 'verb="READ"' in line):
                    n += float(line.rsplit(" ", 1)[1])
    return n


def host_address(h):
    """A coordinator as the driver reports it: a Host, an endpoint or an address."""
    h = getattr(h, "endpoint", h)
    return str(getattr(h, "address", h)).split(":")[0]


def main():
    host, port, nodes, ks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    metrics_port = int(sys.argv[5])
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

    # RF 1: one replica a partition, so a request routed by a wrong token
    # map would land on a node that forwards it.
    ks1 = ks + "_rf1"
    session.execute("CREATE KEYSPACE %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % ks1)
    session.execute("CREATE TABLE %s.t (k int PRIMARY KEY, v text)" % ks1)
    cluster.refresh_schema_metadata()
    insert = session.prepare("INSERT INTO %s.t (k, v) VALUES (?, ?)" % ks1)
    select = session.prepare("SELECT v FROM %s.t WHERE k = ?" % ks1)
    before = forwarded(hosts, metrics_port)
    owners = set()
    for k in range(50):
        bound = insert.bind((k, "v%d" % k))
        replicas = cluster.metadata.get_replicas(ks1, bound.routing_key)
        if len(replicas) != 1:
            fail("rf1 key %d: the driver's token map gives %d replicas" % (k, len(replicas)))
        owner = host_address(replicas[0])
        owners.add(owner)
        for stmt in (bound, select.bind((k,))):
            rs = session.execute(stmt)
            got = host_address(rs.response_future.coordinator_host)
            if got != owner:
                fail("rf1 key %d: sent to %s, not to its replica %s" % (k, got, owner))
        if rs.one().v != "v%d" % k:
            fail("rf1 key %d read back wrong" % k)
    if len(owners) != nodes:
        fail("rf1: 50 keys on %d of %d nodes" % (len(owners), nodes))
    sent = forwarded(hosts, metrics_port) - before
    if sent != 0:
        fail("rf1: the nodes forwarded %d writes or reads: the driver's replicas are not the server's" % sent)
    session.execute("DROP KEYSPACE %s" % ks1)
    cluster.shutdown()
    print("ok: %d nodes discovered, 50 rows written and read at QUORUM, 50 at RF 1 each on its replica" % nodes)


main()
