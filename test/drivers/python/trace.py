"""Request tracing read back through the DataStax Python driver.

Usage: python3 trace.py HOST PORT KEYSPACE SOURCES

Sends every request to HOST alone (its coordinator), traced: a write and a
read of a table in KEYSPACE (created with replication factor 1 if it does
not exist), of a partition HOST does not hold when there are SOURCES > 1
nodes, so the coordinator is not the replica. Reads each trace back with ResultSet.get_query_trace(), which
polls system_traces until the session's duration is written, and waits
(up to 20 s) until its events come from SOURCES distinct nodes: the
coordinator and the replicas record their own. Prints each trace as one
line of JSON for the test to check. Exits 0 on success, 1 with the reason
otherwise.
"""
import json
import sys
import time

from cassandra import ConsistencyLevel
from cassandra.cluster import Cluster, ExecutionProfile, EXEC_PROFILE_DEFAULT
from cassandra.policies import WhiteListRoundRobinPolicy


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    host, port, ks, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    profile = ExecutionProfile(load_balancing_policy=WhiteListRoundRobinPolicy([host]),
                               consistency_level=ConsistencyLevel.ONE, request_timeout=20)
    cluster = Cluster([host], port=port, execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    session = cluster.connect()
    session.execute("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}" % ks)
    session.execute("CREATE TABLE IF NOT EXISTS %s.traced (k int PRIMARY KEY, v text)" % ks)
    cluster.refresh_schema_metadata()
    key = 1
    if sources > 1:
        probe = session.prepare("INSERT INTO %s.traced (k, v) VALUES (?, 'one')" % ks)
        for key in range(1, 1000):
            replicas = cluster.metadata.get_replicas(ks, probe.bind((key,)).routing_key)
            if replicas and all(str(r.address) != host for r in replicas):
                break
        else:
            fail("no key whose replicas exclude %s" % host)
    for query in ("INSERT INTO %s.traced (k, v) VALUES (%d, 'one')" % (ks, key), "SELECT v FROM %s.traced WHERE k = %d" % (ks, key)):
        rs = session.execute(query, trace=True)
        trace = rs.get_query_trace(max_wait_sec=20)
        deadline = time.time() + 20
        while len({str(e.source) for e in trace.events}) < sources:
            if time.time() > deadline:
                fail("%s: events from %s, want %d sources" % (query, sorted({str(e.source) for e in trace.events}), sources))
            time.sleep(0.2)
            trace.populate(max_wait=20)
        print(json.dumps({
            "query": query,
            "trace_id": str(trace.trace_id),
            "coordinator": str(trace.coordinator),
            "request_type": trace.request_type,
            "duration_us": trace.duration.total_seconds() * 1e6 if trace.duration is not None else None,
            "client": str(trace.client),
            "parameters": dict(trace.parameters or {}),
            "events": [{"activity": e.description, "source": str(e.source), "thread": e.thread_name} for e in trace.events],
        }))
    cluster.shutdown()


main()
