package coordinator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
)

// TestPrepCacheLRU: the least recently used statement goes first, a get
// counts as a use, and a statement larger than the budget is refused.
func TestPrepCacheLRU(t *testing.T) {
	m := metrics.NewPrepared(prometheus.NewRegistry())
	pc := newPrepCache(300, m, nil)
	stmt := func(b byte, size int64) *preparedStmt {
		return &preparedStmt{id: [16]byte{b}, query: string(rune('a' + b)), size: size}
	}
	for b := byte(1); b <= 3; b++ {
		if err := pc.put(stmt(b, 100), true, &storeOps{}); err != nil {
			t.Fatal(err)
		}
	}
	if pc.get([16]byte{1}) == nil {
		t.Fatal("1 missing before any eviction")
	}
	if err := pc.put(stmt(4, 100), true, &storeOps{}); err != nil {
		t.Fatal(err)
	}
	for b, want := range map[byte]bool{1: true, 2: false, 3: true, 4: true} {
		if got := pc.get([16]byte{b}) != nil; got != want {
			t.Errorf("statement %d cached = %v, want %v", b, got, want)
		}
	}
	if err := pc.put(stmt(5, 301), true, &storeOps{}); err == nil {
		t.Error("a statement larger than the cache was accepted")
	}
	if err := pc.put(stmt(3, 200), true, &storeOps{}); err != nil { // replaces 3, evicts two
		t.Fatal(err)
	}
	if n := len(pc.all()); n != 2 || testutil.ToFloat64(m.Bytes) != 300 || testutil.ToFloat64(m.Evictions) != 2 {
		t.Errorf("entries %d, bytes %v, evictions %v", n, testutil.ToFloat64(m.Bytes), testutil.ToFloat64(m.Evictions))
	}
}
