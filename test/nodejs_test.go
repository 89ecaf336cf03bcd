package test

import (
	"os/exec"
	"strconv"
	"testing"
)

// nodejsDriverDir holds the Node.js smoke script and the package.json that
// pins cassandra-driver; .ci/run runs npm ci there.
const nodejsDriverDir = "drivers/nodejs"

// TestNodejsDriverSmoke connects the DataStax Node.js driver
// (cassandra-driver from npm) to a node: protocol negotiation (one
// downgrade, from DSE_V2 to v4), node discovery, CREATE KEYSPACE and its
// metadata, USE, system.local, a table with a user-defined type, a set and
// a timestamp through prepared statements, prepared batches with int
// parameters, a lightweight transaction, a client with a keyspace set,
// DROP KEYSPACE, with no warning or error in the driver's log.
func TestNodejsDriverSmoke(t *testing.T) {
	needNodejsDriver(t)
	node, cfg := newNode(t)
	host, port := hostPort(node.Addr())
	runDriverScript(t, nodejsDriverDir, "node",
		"smoke.js", host, strconv.Itoa(port), cfg.ClusterName, "ks_nodejs_smoke")
}

// needNodejsDriver skips (or under CI fails) a test when node cannot load
// the driver.
func needNodejsDriver(t *testing.T) {
	t.Helper()
	probe := exec.Command("node", "-e", "require('cassandra-driver')")
	probe.Dir = nodejsDriverDir
	if out, err := probe.CombinedOutput(); err != nil {
		driverMissing(t, "the DataStax Node.js driver",
			"node and npm ci in test/"+nodejsDriverDir+", as .ci/run does", err, out)
	}
}
