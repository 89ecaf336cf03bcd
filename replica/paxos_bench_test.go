package replica

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/storage"
)

// BenchmarkPaxosRoundsOnOnePartition times a whole round (prepare with a
// read, propose, commit) on one partition after `after` rounds on it: a
// flat figure means a hot partition's round does not cost more as its
// history grows. Each sub-benchmark starts a fresh replica in periodic
// mode on an in-memory file system: the figure is CPU alone. cache=off
// reads the state from system.paxos at every round, as without the cache.
func BenchmarkPaxosRoundsOnOnePartition(b *testing.B) {
	for _, after := range []int{0, 1000, 2000} {
		for _, cache := range []string{"off", "on"} {
			b.Run(fmt.Sprintf("after=%d/cache=%s", after, cache), func(b *testing.B) {
				l := openLocalOn(b, vfs.NewMem(), "data", "periodic")
				l.paxosCache.off = cache == "off"
				tbl := testTable(b, [16]byte{7})
				ctx := context.Background()
				n := int64(0)
				round := func() {
					n += 10
					p := proposalOf(tbl, n, 1, 1, 0, "v")
					if pr, err := l.Prepare(ctx, tbl, i32(1), p.Ballot, &storage.Slice{}); err != nil || !pr.OK {
						b.Fatal(pr, err)
					}
					if a, err := l.Propose(ctx, p, ProposeOptions{}); err != nil || !a.OK {
						b.Fatal(a, err)
					}
					if err := l.Commit(ctx, p, nil); err != nil {
						b.Fatal(err)
					}
				}
				for range after {
					round()
				}
				b.ResetTimer()
				for range b.N {
					round()
				}
			})
		}
	}
}
