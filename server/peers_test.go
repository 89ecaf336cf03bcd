package server

import (
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/gossip"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// What gossip said of a peer is there again after a restart; a removed
// peer is not; a peer gossip gave no rpc address is not recorded.
func TestSavedPeersSurviveRestart(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("system", 0o755); err != nil {
		t.Fatal(err)
	}
	open := func() *savedPeers {
		s, err := openSavedPeers(fs, "system/peers.json", slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b, c := ring.HostID{1}, ring.HostID{2}, ring.HostID{3}
	meta := gossip.Meta{RPCAddr: netip.MustParseAddr("10.0.0.1"), NativePort: 9042, ReleaseVersion: "4.0.11",
		SchemaVersion: [16]byte{7}, Load: 1, Status: "NORMAL"}
	s := open()
	s.record(a, meta)
	meta.RPCAddr = netip.MustParseAddr("10.0.0.2")
	s.record(b, meta)
	s.record(c, gossip.Meta{NativePort: 9042})
	s.forget(b)

	r := open()
	got, ok := r.get(a)
	if want := factsOf(gossip.Meta{RPCAddr: netip.MustParseAddr("10.0.0.1"), NativePort: 9042, ReleaseVersion: "4.0.11",
		SchemaVersion: [16]byte{7}}); !ok || got != want {
		t.Fatalf("after a restart: %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := r.get(b); ok {
		t.Fatal("a forgotten peer came back")
	}
	if _, ok := r.get(c); ok {
		t.Fatal("a peer without rpc address recorded")
	}
}

// A file this release cannot read is set aside with a warning: the node
// starts, and gossip gives the facts again.
func TestSavedPeersBadFile(t *testing.T) {
	fs := vfs.NewMem()
	for _, data := range []string{`{"version":1,"peers":{"nope":{}}}`, `{"version":9}`, `{`} {
		if err := storage.WriteFileAtomic(fs, "peers.json", []byte(data)); err != nil {
			t.Fatal(err)
		}
		var logged strings.Builder
		s, err := openSavedPeers(fs, "peers.json", slog.New(slog.NewTextHandler(&logged, nil)))
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !strings.Contains(logged.String(), "ignoring the saved peers") {
			t.Errorf("%s: no warning, log %q", data, logged.String())
		}
		s.record(ring.HostID{1}, gossip.Meta{RPCAddr: netip.MustParseAddr("10.0.0.1")})
		if _, err := openSavedPeers(fs, "peers.json", slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
}
