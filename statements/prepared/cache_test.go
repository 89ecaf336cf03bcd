package prepared

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/metrics"
)

type sized int64

func (s sized) Size() int64 { return int64(s) }

// TestCacheLRU: the least recently used statement goes first, a get
// counts as a use, and a statement larger than the budget is refused.
func TestCacheLRU(t *testing.T) {
	m := metrics.NewPrepared(prometheus.NewRegistry())
	pc := NewCache(Options{MaxBytes: 300, Metrics: m})
	stmt := func(b byte, size int64) *Statement {
		return &Statement{ID: [16]byte{b}, Query: string(rune('a' + b)), Plan: sized(size)}
	}
	for b := byte(1); b <= 3; b++ {
		if err := pc.Put(stmt(b, 100), true, &Writes{}); err != nil {
			t.Fatal(err)
		}
	}
	if pc.Get([16]byte{1}) == nil {
		t.Fatal("1 missing before any eviction")
	}
	if err := pc.Put(stmt(4, 100), true, &Writes{}); err != nil {
		t.Fatal(err)
	}
	for b, want := range map[byte]bool{1: true, 2: false, 3: true, 4: true} {
		if got := pc.Get([16]byte{b}) != nil; got != want {
			t.Errorf("statement %d cached = %v, want %v", b, got, want)
		}
	}
	if err := pc.Put(stmt(5, 301), true, &Writes{}); err == nil {
		t.Error("a statement larger than the cache was accepted")
	}
	if err := pc.Put(stmt(3, 200), true, &Writes{}); err != nil { // replaces 3, evicts two
		t.Fatal(err)
	}
	if n := pc.Len(); n != 2 || testutil.ToFloat64(m.Bytes) != 300 || testutil.ToFloat64(m.Evictions) != 2 {
		t.Errorf("entries %d, bytes %v, evictions %v", n, testutil.ToFloat64(m.Bytes), testutil.ToFloat64(m.Evictions))
	}
}
