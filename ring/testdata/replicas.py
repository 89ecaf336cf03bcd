"""Replica placement by the DataStax Python driver, for ring's cross-check.

Reads {"cases": [{"hosts": [{"dc", "rack"}], "tokens": [...], "owners":
[host index per token], "strategies": [{"class", "options"}]}]} on stdin and
writes {"cases": [[[replica host indexes per ring token] per strategy]]}:
what cassandra.metadata's make_token_replica_map, which the driver's
token-aware routing uses, computes for each ring token.
"""
import json
import sys

from cassandra.metadata import NetworkTopologyStrategy, SimpleStrategy


class Host:
    def __init__(self, index, dc, rack):
        self.index, self.datacenter, self.rack = index, dc, rack


def main():
    cases = json.load(sys.stdin)["cases"]
    out = []
    for case in cases:
        hosts = [Host(i, h["dc"], h["rack"]) for i, h in enumerate(case["hosts"])]
        ring = case["tokens"]
        owner = {t: hosts[o] for t, o in zip(ring, case["owners"])}
        results = []
        for s in case["strategies"]:
            if s["class"] == "SimpleStrategy":
                strategy = SimpleStrategy(s["options"])
            else:
                strategy = NetworkTopologyStrategy(s["options"])
            replicas = strategy.make_token_replica_map(owner, ring)
            results.append([[h.index for h in replicas[t]] for t in ring])
        out.append(results)
    json.dump({"cases": out}, sys.stdout)


main()
