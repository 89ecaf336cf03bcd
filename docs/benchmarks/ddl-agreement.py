#!/usr/bin/env python3
"""DDL latency and schema agreement on a running cluster of 3 nodes on
127.0.0.1-3 (cqld cluster -n 3). For each of node1 and node2 as
coordinator, N CREATE TABLEs without the driver's agreement wait: how long
the statement takes, and when every node's system.local and system.peers
show one version, new. Then N more with the driver's own wait (what a user
sees). Usage: ddl-agreement.py PORT N"""
import os, statistics, sys, time, warnings
from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy

warnings.filterwarnings('ignore')
port, n = int(sys.argv[1]), int(sys.argv[2])
run = int(time.time()) % 100000
hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3']

def session(host, wait):
    c = Cluster([host], port=port, max_schema_agreement_wait=wait,
                load_balancing_policy=WhiteListRoundRobinPolicy([host]))
    return c, c.connect()

per_node = [session(h, 0)[1] for h in hosts]

def versions(s):
    v = {r.schema_version for r in s.execute("SELECT schema_version FROM system.peers")}
    return v | {r.schema_version for r in s.execute("SELECT schema_version FROM system.local")}

def agreed_after(t0, old):
    for s in per_node:
        while True:
            v = versions(s)
            if len(v) == 1 and old not in v:
                break
            time.sleep(0.002)
    return (time.time() - t0) * 1000

def pct(xs):
    xs = sorted(xs)
    return "p50 %.0f  p90 %.0f  max %.0f ms" % (statistics.median(xs), xs[int(0.9 * (len(xs) - 1))], xs[-1])

per_node[0].execute("CREATE KEYSPACE IF NOT EXISTS ddlbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
time.sleep(1)
for i, host in enumerate(hosts[:2]):
    s = per_node[i]
    ddl, agree = [], []
    for k in range(n):
        old = next(iter(versions(s)))
        t0 = time.time()
        s.execute("CREATE TABLE ddlbench.t%d_%d_%d (k int PRIMARY KEY, v int)" % (run, i, k))
        ddl.append((time.time() - t0) * 1000)
        agree.append(agreed_after(t0, old))
    print("coordinator %s: CREATE TABLE %s; all nodes agree %s" % (host, pct(ddl), pct(agree)))
_, s = session(hosts[0], 10)
waited = []
for k in range(n):
    t0 = time.time()
    s.execute("CREATE TABLE ddlbench.w%d_%d (k int PRIMARY KEY, v int)" % (run, k))
    waited.append((time.time() - t0) * 1000)
print("python driver, agreement wait on, through any node: CREATE TABLE %s" % pct(waited))
sys.stdout.flush()
# the driver's threads complain at exit otherwise
os._exit(0)
