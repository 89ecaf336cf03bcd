package hints

import (
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// 100,000 hints for a peer that is down go to disk: the heap does not grow
// with them.
func TestMemoryBoundedWhilePeerDown(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 30 MB")
	}
	e := newEnv(t)
	e.fs = vfs.Default
	e.dir = t.TempDir()
	e.opts = func(o *Options) { o.MaxFileSize = 4 << 20 }
	s := e.open()
	defer closeStore(t, s)
	e.live.setDown(host(1), e.clock.Now())
	m := make([]byte, 256)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const n = 100_000
	for i := range n {
		m[0], m[1], m[2] = byte(i), byte(i>>8), byte(i>>16)
		if err := s.Write(host(1), m, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	after := heap()
	p := s.Pending(host(1))
	if want := int64(n) * recordSize(len(m)); p.Bytes < want {
		t.Fatalf("Pending = %+v, want at least %d bytes", p, want)
	}
	const limit = 4 << 20
	if after > before && after-before > limit {
		t.Errorf("heap grew by %d bytes while %d bytes of hints were written (limit %d)", after-before, p.Bytes, limit)
	}
}
