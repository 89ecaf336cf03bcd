package cqlclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

// freePort is a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode runs a cqld node on 127.0.0.1 for the test.
func startNode(t *testing.T) *server.Node {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.NativeTransportPort = freePort(t)
	// A node of its own: its own internode port, itself its one seed.
	cfg.StoragePort = freePort(t)
	cfg.SeedProvider.Parameters = map[string]string{"seeds": fmt.Sprintf("127.0.0.1:%d", cfg.StoragePort)}
	cfg.PrometheusPort = 0
	cfg.DataFileDirectories = []string{dir + "/data"}
	cfg.CommitlogDirectory = dir + "/commitlog"
	cfg.SavedCachesDirectory = dir + "/saved_caches"
	cfg.HintsDirectory = dir + "/hints"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := server.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.Shutdown(ctx)
	})
	return n
}

func requests(t *testing.T, n *server.Node, opcode string) float64 {
	t.Helper()
	mfs, err := n.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "cqld_native_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "opcode" && l.GetValue() == opcode {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

var stmts = []Statement{
	{Query: "SELECT key FROM system.local"},
	{Query: "SELECT host_id FROM system.local WHERE key = ?"},
	{Query: "SELECT nope FROM system.local"},
}

// TestPrepareBatchWithAndWithout: with the extension one PREPARE_BATCH
// request carries every statement; without it PrepareBatch sends one
// PREPARE each; the results are the same either way.
func TestPrepareBatchWithAndWithout(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	var got [2][]Result
	for i, off := range []bool{false, true} {
		c, err := Dial(ctx, n.Addr(), Options{DisablePrepareBatch: off})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.CanPrepareBatch() == off {
			t.Fatalf("DisablePrepareBatch %v: CanPrepareBatch %v", off, c.CanPrepareBatch())
		}
		if got[i], err = c.PrepareBatch(ctx, stmts); err != nil {
			t.Fatal(err)
		}
	}
	if b, p := requests(t, n, "PREPARE_BATCH"), requests(t, n, "PREPARE"); b != 1 || p != 3 {
		t.Errorf("requests: %v PREPARE_BATCH, %v PREPARE; want 1 and 3", b, p)
	}
	for j := range stmts {
		with, without := got[0][j], got[1][j]
		if (with.Err == nil) != (without.Err == nil) {
			t.Fatalf("statement %d: %v vs %v", j+1, with.Err, without.Err)
		}
		if with.Err != nil {
			var se *ServerError
			if !errors.As(with.Err, &se) || with.Err.Error() != without.Err.Error() {
				t.Errorf("statement %d: %v vs %v", j+1, with.Err, without.Err)
			}
			continue
		}
		if !bytes.Equal(with.Prepared.Body(), without.Prepared.Body()) {
			t.Errorf("statement %d: different PREPARED bodies", j+1)
		}
		md, err := with.Prepared.Metadata()
		if err != nil || !bytes.Equal(md.PreparedQueryId, with.Prepared.ID) {
			t.Errorf("statement %d metadata: %v %v", j+1, md, err)
		}
	}
}

// TestKeyspaceAndClose: a statement's keyspace needs v5 for a plain
// PREPARE; after Close every call fails with ErrClosed.
func TestKeyspaceAndClose(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	c4, err := Dial(ctx, n.Addr(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c4.Prepare(ctx, Statement{Query: "SELECT key FROM local", Keyspace: "system"}); err == nil {
		t.Error("v4 PREPARE with a keyspace accepted")
	}
	c5, err := Dial(ctx, n.Addr(), Options{Version: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer c5.Close()
	p, err := c5.Prepare(ctx, Statement{Query: "SELECT key FROM local", Keyspace: "system"})
	if err != nil || len(p.ResultMetadataID) == 0 {
		t.Fatalf("v5 PREPARE with a keyspace: %+v %v", p, err)
	}
	c4.Close()
	if _, err = c4.Prepare(ctx, stmts[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}
