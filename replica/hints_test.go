package replica

import (
	"context"
	"testing"
	"time"

	"github.com/cqld/cqld/mutation"
)

// A hint written before a TRUNCATE does not bring the truncated rows
// back; one written after it applies.
func TestHintsSkipWhatWasTruncatedSince(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	hintOf := func(k int, v string) []byte {
		m := mutation.New()
		defer m.Release()
		writeV(m, n.tbl, k, 0, v, 10)
		b, err := AppendHint(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := time.Now().Add(-time.Minute)
	if err := n.remote.ApplyHint(ctx, before, hintOf(1, "before")); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 1); len(got) != 1 {
		t.Fatalf("a hint of a table never truncated: %v", got)
	}
	if err := n.remote.Truncate(ctx, n.tbl); err != nil {
		t.Fatal(err)
	}
	if err := n.remote.ApplyHint(ctx, before, hintOf(2, "before")); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 2); len(got) != 0 {
		t.Fatalf("a hint written before the TRUNCATE brought back %v", got)
	}
	if err := n.remote.ApplyHint(ctx, time.Now().Add(time.Minute), hintOf(3, "after")); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 3); len(got) != 1 {
		t.Fatalf("a hint written after the TRUNCATE: %v", got)
	}
}
