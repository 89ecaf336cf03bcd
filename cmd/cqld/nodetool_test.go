package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cqld/cqld/server"
)

// nodetool status prints each node's state as Cassandra's does: U or D,
// then N, J or L.
func TestPrintStatusStates(t *testing.T) {
	var b bytes.Buffer
	printStatus(&b, server.Status{Effective: true, Nodes: []server.NodeStatus{
		{Address: "127.0.0.1", Up: true, State: "NORMAL", Tokens: 16, Owns: 0.5, HostID: "h1", DataCenter: "dc1", Rack: "r1"},
		{Address: "127.0.0.2", Up: true, State: "JOINING", Tokens: 16, HostID: "h2", DataCenter: "dc1", Rack: "r1"},
		{Address: "127.0.0.3", Up: false, State: "LEAVING", Tokens: 16, Owns: 0.5, HostID: "h3", DataCenter: "dc1", Rack: "r1"},
	}})
	out := b.String()
	for _, want := range []string{"UN  127.0.0.1", "UJ  127.0.0.2", "DL  127.0.0.3", "|/ State=Normal/Leaving/Joining/Moving"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// nodetool status prints as Cassandra 4.0's does, byte for byte: the
// columns shared by every data center's block, two spaces apart and the
// last one padded too; "Owns (effective)" with a percentage, or "Owns"
// with "?" and the reason as a note when no effective figure is
// meaningful; loads with at most two decimals.
func TestPrintStatusAsNodetool(t *testing.T) {
	nodes := []server.NodeStatus{
		{Address: "127.0.0.2", Up: true, State: "NORMAL", LoadBytes: 71816, Tokens: 16, Owns: 0.6667, HostID: "5a0b3b9e-2d1c-4c4f-9f0e-3f5b8c3e1a22", DataCenter: "datacenter1", Rack: "rack1"},
		{Address: "127.0.0.1", Up: true, State: "NORMAL", LoadBytes: 1536 << 10, Tokens: 16, Owns: 0.6666, HostID: "0e6b1c4d-7f7a-4d8b-9c1e-2a3b4c5d6e7f", DataCenter: "datacenter1", Rack: "rack1"},
		{Address: "127.0.0.10", Up: false, State: "LEAVING", LoadBytes: 512, Tokens: 8, Owns: 0.6667, HostID: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", DataCenter: "dc2", Rack: "r2"},
	}
	var b bytes.Buffer
	printStatus(&b, server.Status{Effective: true, Nodes: nodes})
	want := `Datacenter: datacenter1
=======================
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address     Load       Tokens  Owns (effective)  Host ID                               Rack 
UN  127.0.0.1   1.5 MiB    16      66.7%             0e6b1c4d-7f7a-4d8b-9c1e-2a3b4c5d6e7f  rack1
UN  127.0.0.2   70.13 KiB  16      66.7%             5a0b3b9e-2d1c-4c4f-9f0e-3f5b8c3e1a22  rack1

Datacenter: dc2
===============
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address     Load       Tokens  Owns (effective)  Host ID                               Rack 
DL  127.0.0.10  512 bytes  8       66.7%             9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a  r2   

`
	if got := b.String(); got != want {
		t.Errorf("effective:\n%s\nwant:\n%s", got, want)
	}

	b.Reset()
	printStatus(&b, server.Status{Note: "Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless", Nodes: nodes[:2]})
	want = `Datacenter: datacenter1
=======================
Status=Up/Down
|/ State=Normal/Leaving/Joining/Moving
--  Address    Load       Tokens  Owns  Host ID                               Rack 
UN  127.0.0.1  1.5 MiB    16      ?     0e6b1c4d-7f7a-4d8b-9c1e-2a3b4c5d6e7f  rack1
UN  127.0.0.2  70.13 KiB  16      ?     5a0b3b9e-2d1c-4c4f-9f0e-3f5b8c3e1a22  rack1

Note: Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless
`
	if got := b.String(); got != want {
		t.Errorf("not effective:\n%s\nwant:\n%s", got, want)
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

// Every command reaches its endpoint: the state changes as POSTs with the
// credentials (decommission's form in the body), the reads as GETs
// without them.
func TestNodetoolRequests(t *testing.T) {
	type seen struct{ method, path, user, form string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, _, _ := r.BasicAuth()
		_ = r.ParseForm()
		got = append(got, seen{r.Method, r.URL.Path, user, r.PostForm.Encode()})
		switch r.URL.Path {
		case "/nodetool/reloadssl":
			_, _ = io.WriteString(w, `{"client_encryption_options":"reloaded","server_encryption_options":"off"}`)
		case "/nodetool/netstats":
			_, _ = io.WriteString(w, `{"mode":"NORMAL"}`)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	var stdout, stderr bytes.Buffer
	for _, cmd := range [][]string{{"reloadssl"}, {"decommission", "--force"}, {"netstats"}} {
		args := append([]string{"-h", host, "-p", port, "-u", "admin", "-pw", "pw"}, cmd...)
		if code := runNodetool(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("nodetool %v: exit %d, stderr %q", cmd, code, stderr.String())
		}
	}
	want := []seen{
		{"POST", "/nodetool/reloadssl", "admin", ""},
		{"POST", "/nodetool/decommission", "admin", "force=true"},
		{"GET", "/nodetool/netstats", "", ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if out := stdout.String(); !strings.Contains(out, "client_encryption_options: reloaded") || !strings.Contains(out, "Mode: NORMAL") {
		t.Errorf("output %q", out)
	}
}
