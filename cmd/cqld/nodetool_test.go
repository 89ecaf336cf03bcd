package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cqld/cqld/server"
)

// nodetool status prints each node's state as Cassandra's does: U or D,
// then N, J or L.
func TestPrintStatusStates(t *testing.T) {
	var b bytes.Buffer
	printStatus(&b, []server.NodeStatus{
		{Address: "127.0.0.1", Up: true, State: "NORMAL", Tokens: 16, Owns: 0.5, HostID: "h1", DataCenter: "dc1", Rack: "r1"},
		{Address: "127.0.0.2", Up: true, State: "JOINING", Tokens: 16, HostID: "h2", DataCenter: "dc1", Rack: "r1"},
		{Address: "127.0.0.3", Up: false, State: "LEAVING", Tokens: 16, Owns: 0.5, HostID: "h3", DataCenter: "dc1", Rack: "r1"},
	})
	out := b.String()
	for _, want := range []string{"UN  127.0.0.1", "UJ  127.0.0.2", "DL  127.0.0.3", "|/ State=Normal/Leaving/Joining/Moving"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestPrintNetstats(t *testing.T) {
	var b bytes.Buffer
	printNetstats(&b, server.Netstats{Mode: "NORMAL"})
	if got := b.String(); got != "Mode: NORMAL\nNot sending any streams.\n" {
		t.Errorf("idle: %q", got)
	}
	b.Reset()
	printNetstats(&b, server.Netstats{Mode: "LEAVING", Progress: server.Progress{Operation: "decommission", Running: true, Streams: 8, Done: 3, Partitions: 1200, Bytes: 3 << 20}})
	if got := b.String(); got != "Mode: LEAVING\ndecommission (running): 3 of 8 streams done, 1200 partitions, 3.00 MiB streamed\n" {
		t.Errorf("running: %q", got)
	}
}
