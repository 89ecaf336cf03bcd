package coordinator

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/storage"
)

// newTestCoordinator is a coordinator wired as server/node.go wires one,
// over fresh storage in tb's temp dir with a periodic commit log.
func newTestCoordinator(tb testing.TB) *Coordinator {
	tb.Helper()
	return newTestCoordinatorWith(tb, func(*Options) {})
}

// newTestCoordinatorWith is newTestCoordinator with its options changed
// by set.
func newTestCoordinatorWith(tb testing.TB, set func(*Options)) *Coordinator {
	tb.Helper()
	dir := tb.TempDir()
	fs := vfs.Default
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	info, err := storage.LoadOrCreateNode(fs, filepath.Join(dir, "system"), "Test Cluster", 16)
	if err != nil {
		tb.Fatal(err)
	}
	catalog, err := storage.OpenCatalog(fs, filepath.Join(dir, "system_schema"))
	if err != nil {
		tb.Fatal(err)
	}
	engine, err := storage.OpenEngine(storage.EngineOptions{
		FS:  fs,
		Dir: filepath.Join(dir, "tables"),
		Log: commitlog.Options{
			Dir:        filepath.Join(dir, "commitlog"),
			Sync:       commitlog.SyncPeriodic,
			SyncPeriod: 10 * time.Second,
		},
		Logger: log,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := engine.Close(); err != nil {
			tb.Errorf("close engine: %v", err)
		}
	})
	opts := Options{Catalog: catalog, Engine: engine, Node: info, DataCenter: "datacenter1", Rack: "rack1", Logger: log}
	set(&opts)
	c, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// runQuery runs q as a v4 QUERY at ONE and fails tb on an ERROR answer.
func runQuery(tb testing.TB, c *Coordinator, q string) message.Message {
	tb.Helper()
	resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4,
		Message: &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}})
	if e, ok := resp.Message.(message.Error); ok {
		tb.Fatalf("%s: %v", q, e)
	}
	return resp.Message
}
