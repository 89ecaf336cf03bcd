package test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// On a cluster with one replica per partition, CONTAINS, CONTAINS KEY and
// m[key] = value are answered through each node from the indexes on the
// elements of non-frozen collections, every replica looking up its own
// index (proxy.ScanIndex), paged across the nodes; the entries follow
// element writes and deletes, and rows written before an index was
// created are found through it.
func TestClusterContainsIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.keyspaceSession(t, "cix", 1)
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>)`)
	const rows = 30
	for k := 0; k < rows; k++ {
		if k == rows/2 {
			// Half the rows are written before the indexes exist.
			for _, q := range []string{
				`CREATE INDEX ON t (values(l))`, `CREATE INDEX ON t (s)`,
				`CREATE INDEX ON t (keys(m))`, `CREATE INDEX ON t (values(m))`, `CREATE INDEX ON t (entries(m))`,
			} {
				mustExec(t, s, q)
			}
		}
		mustExec(t, s, `INSERT INTO t (k, l, s, m) VALUES (?, ?, ?, ?)`,
			k, []int{k % 5}, []string{fmt.Sprintf("t%d", k%2)}, map[string]int{fmt.Sprintf("k%d", k%3): k})
	}
	mustExec(t, s, `UPDATE t SET l = l - [2] WHERE k = 2`)
	mustExec(t, s, `UPDATE t SET m['k2'] = 100 WHERE k = 2`)
	mustExec(t, s, `DELETE m['k2'] FROM t WHERE k = 5`)
	mustExec(t, s, `UPDATE t SET s = s + {'t9'} WHERE k = 9`)
	mustExec(t, s, `DELETE FROM t WHERE k = 4`)

	want := func(keep func(k int) bool) []int {
		var ks []int
		for k := 0; k < rows; k++ {
			if k != 4 && keep(k) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	cases := []struct {
		q    string
		args []any
		want []int
	}{
		{`SELECT k FROM cix.t WHERE l CONTAINS ?`, []any{2}, want(func(k int) bool { return k%5 == 2 && k != 2 })},
		{`SELECT k FROM cix.t WHERE s CONTAINS ?`, []any{"t0"}, want(func(k int) bool { return k%2 == 0 })},
		{`SELECT k FROM cix.t WHERE s CONTAINS ?`, []any{"t9"}, []int{9}},
		{`SELECT k FROM cix.t WHERE m CONTAINS KEY ?`, []any{"k2"}, want(func(k int) bool { return k%3 == 2 && k != 5 || k == 2 })},
		{`SELECT k FROM cix.t WHERE m CONTAINS ?`, []any{2}, nil},
		{`SELECT k FROM cix.t WHERE m CONTAINS ?`, []any{100}, []int{2}},
		{`SELECT k FROM cix.t WHERE m CONTAINS ?`, []any{7}, []int{7}},
		{`SELECT k FROM cix.t WHERE m[?] = ?`, []any{"k1", 7}, []int{7}},
		{`SELECT k FROM cix.t WHERE m[?] = ?`, []any{"k0", 7}, nil},
	}
	for i := range tc.nodes {
		si := tc.single(i, gocql.One)
		for _, c := range cases {
			eventually(t, 20*time.Second, fmt.Sprintf("%s %v through node%d", c.q, c.args, i+1), func() error {
				iter := si.Query(c.q, c.args...).PageSize(4).Iter()
				var got []int
				var k int
				for iter.Scan(&k) {
					got = append(got, k)
				}
				if err := iter.Close(); err != nil {
					return err
				}
				slices.Sort(got)
				if !slices.Equal(got, c.want) {
					return fmt.Errorf("got %v, want %v", got, c.want)
				}
				return nil
			})
		}
	}
}
