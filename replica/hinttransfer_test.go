package replica

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// sinkRecorder keeps the hints written to it.
type sinkRecorder struct {
	mu   sync.Mutex
	got  []ring.HostID
	hint [][]byte
	at   []time.Time
}

func (s *sinkRecorder) Write(target ring.HostID, hint []byte, created time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, target)
	s.hint = append(s.hint, bytes.Clone(hint))
	s.at = append(s.at, created)
	return nil
}

var _ HintSink = (*sinkRecorder)(nil)

// A handed-over hint is applied by its target, kept for another node in
// the receiver's hints with its write time, dropped when its table is
// unknown, and refused when the receiver keeps no hints.
func TestHintTransfer(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	tables := func(id [16]byte) (*storage.Table, bool) { return n.tbl, id == n.tbl.Def.ID }
	self := ring.HostID{2}
	sink := &sinkRecorder{}
	srv := Serve(n.b, n.lb, tables, nil)
	srv.ServeHintTransfer(n.b, self, sink, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hintOf := func(tbl *storage.Table, k int) []byte {
		m := mutation.New()
		defer m.Release()
		writeV(m, tbl, k, 0, "v", 10)
		b, err := AppendHint(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	created := time.UnixMicro(time.Now().UnixMicro())

	if err := n.remote.TransferHint(ctx, self, created, hintOf(n.tbl, 1)); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 1); len(got) != 1 {
		t.Fatalf("a hint handed over to its target: rows %v", got)
	}
	if len(sink.got) != 0 {
		t.Fatalf("a hint for the receiver was kept as a hint: %v", sink.got)
	}

	other := ring.HostID{7}
	h := hintOf(n.tbl, 2)
	if err := n.remote.TransferHint(ctx, other, created, h); err != nil {
		t.Fatal(err)
	}
	if len(sink.got) != 1 || sink.got[0] != other || !bytes.Equal(sink.hint[0], h) || !sink.at[0].Equal(created) {
		t.Fatalf("kept %v %v %v, want the hint for %v written at %v", sink.got, sink.hint, sink.at, other, created)
	}
	if got := rows(t, n.lb, n.tbl, 2); len(got) != 0 {
		t.Fatalf("a hint for another node was applied here: %v", got)
	}

	dropped := testTable(t, [16]byte{8})
	if err := n.remote.TransferHint(ctx, other, created, hintOf(dropped, 3)); err != nil {
		t.Fatalf("a hint of an unknown table: %v", err)
	}
	if len(sink.got) != 1 {
		t.Fatalf("a hint of an unknown table was kept: %v", sink.got)
	}

	if _, err := n.a.Request(ctx, n.b.Addr(), messaging.VerbHintTransfer, []byte{1, 2, 3}); err == nil {
		t.Fatal("a malformed hint transfer was accepted")
	}

	srv.ServeHintTransfer(n.b, self, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	err := n.remote.TransferHint(ctx, other, created, h)
	var re *messaging.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("a hint for another node where hinted handoff is off: %v", err)
	}
}

func FuzzDecodeHintTransfer(f *testing.F) {
	f.Add(AppendHintTransfer(nil, ring.HostID{1, 2, 3}, time.UnixMicro(1700000000000000), []byte{codecV1, 0}))
	f.Add(AppendHintTransfer(nil, ring.HostID{}, time.UnixMicro(-1), nil))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		target, created, hint, err := DecodeHintTransfer(in)
		if err != nil {
			return
		}
		if out := AppendHintTransfer(nil, target, created, hint); !bytes.Equal(out, in) {
			t.Fatalf("decoded %x, encodes as %x", in, out)
		}
	})
}
