package commitlog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkSegmentSize measures appends on this machine's disk for several
// commitlog_segment_size values: 16 writers of 1 KiB records in adaptive
// mode, with a flush (MarkFlushed up to the newest record) after every
// 64 MiB, so that segments rotate, get freed and are recycled as under a
// real engine. It chose DefaultSegmentSize:
//
//	go test -run '^$' -bench BenchmarkSegmentSize -benchtime 200000x ./commitlog/
func BenchmarkSegmentSize(b *testing.B) {
	const writers, payload, flushEvery = 16, 1 << 10, 64 << 20
	for _, size := range []int64{1 << 20, 4 << 20, 8 << 20, 32 << 20, 128 << 20} {
		b.Run(fmt.Sprintf("size=%dMiB", size>>20), func(b *testing.B) {
			opts := Options{FS: vfs.Default, Dir: b.TempDir(), SegmentSize: size, TotalSpace: 1 << 30,
				Sync: SyncAdaptive, Logger: quietLogger()}
			l := mustOpen(b, opts)
			defer l.Close()
			p := make([]byte, payload)
			var next atomic.Int64
			var bytes atomic.Int64
			var flushMu sync.Mutex
			b.SetBytes(payload)
			b.ResetTimer()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						pos, err := l.Append(p)
						if err != nil {
							b.Error(err)
							return
						}
						if bytes.Add(payload)%flushEvery < payload && flushMu.TryLock() {
							if err := l.MarkFlushed(pos); err != nil {
								b.Error(err)
							}
							flushMu.Unlock()
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
