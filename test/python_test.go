package test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The DataStax Python and Node.js drivers are not Go modules: .ci/run
// installs them (Debian's python3-cassandra, and cassandra-driver from npm
// into drivers/nodejs/node_modules), and these tests drive them through the
// scripts under drivers/ as subprocesses.

// driverTimeout bounds one driver script run, connect to shutdown.
const driverTimeout = 60 * time.Second

// driverMissing skips a test whose driver is not installed, except under
// CI (CI=true), where .ci/run must have installed it: a skip there would
// hide a broken install step, so it fails instead.
func driverMissing(t *testing.T, driver, install string, err error, out []byte) {
	t.Helper()
	msg := driver + " is not installed (" + install + "): " + err.Error()
	if s := strings.TrimSpace(string(out)); s != "" {
		msg += "\n" + s
	}
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// runDriverScript runs a driver smoke script (name and args) in dir and
// fails the test if it exits non-zero or runs past driverTimeout. The
// script's output is logged, so it shows on failure and with -v.
func runDriverScript(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), driverTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = driverEnv()
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s (%v):\n%s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out)
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v", name, driverTimeout)
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("driver smoke test failed (exit %d); its output is above", exit.ExitCode())
		}
		t.Fatalf("run %s: %v", name, err)
	}
}

// driverEnv is the test's environment without the variables that would
// point Debian's /usr/bin/python3 at another Python's modules, and with
// SMOKE_VERBOSE=1 under go test -v, so the scripts print the driver's log.
func driverEnv() []string {
	var env []string
	if testing.Verbose() {
		env = append(env, "SMOKE_VERBOSE=1")
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PYTHONPATH=") || strings.HasPrefix(kv, "PYTHONHOME=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// needPythonDriver skips (or under CI fails) a test when Debian's Python
// cannot import the driver.
func needPythonDriver(t *testing.T) {
	t.Helper()
	probe := exec.Command(debianPython, "-c", "import cassandra")
	probe.Env = driverEnv()
	if out, err := probe.CombinedOutput(); err != nil {
		driverMissing(t, "the DataStax Python driver",
			"apt-get install python3-cassandra, as .ci/run does", err, out)
	}
}

// debianPython is Debian's interpreter, which python3-cassandra installs
// into (the python3 first on PATH may be another one).
const debianPython = "/usr/bin/python3"

// pythonNegotiated is the version the Python driver (3.25) settles on with
// no protocol_version set: it steps down from DSE_V2 (66) to DSE_V1 (65) to
// the highest non-beta Cassandra version the server accepts. Against Apache
// Cassandra 4.x, whose supported versions are 3/v3, 4/v4, 5/v5
// (ProtocolVersion.java), that is v5, and cqld accepts the same.
const pythonNegotiated = 5

// TestPythonDriverSmoke connects the DataStax Python driver (Debian's
// python3-cassandra) to a node: protocol negotiation (or a version set by
// the application), node discovery, CREATE KEYSPACE and its metadata, USE,
// system.local, DROP KEYSPACE, with no warning or error in the driver's log
// other than its own protocol downgrade steps (see drivers/python/smoke.py).
func TestPythonDriverSmoke(t *testing.T) {
	needPythonDriver(t)
	node, cfg := newNode(t)
	host, port := hostPort(node.Addr())
	for _, tc := range []struct {
		name     string
		version  int
		explicit bool
	}{
		{"negotiated", pythonNegotiated, false},
		{"v3", 3, true},
		{"v4", 4, true},
		{"v5", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"smoke.py"}
			if tc.explicit {
				args = append(args, "--explicit")
			}
			args = append(args, host, strconv.Itoa(port), cfg.ClusterName,
				"ks_python_"+tc.name, strconv.Itoa(tc.version))
			runDriverScript(t, "drivers/python", debianPython, args...)
		})
	}
}
