package test

import (
	"testing"

	"github.com/gocql/gocql"
)

// BenchmarkIndexQuery compares, on one node and one table of 20,000 rows
// in 2,000 partitions, a query through a secondary index (10 matching
// rows) with the same query on an unindexed column of the same
// distribution under ALLOW FILTERING (a table scan).
//
//	flock /tmp/cqld-bench.lock go test ./test -run '^$' -bench IndexQuery -benchtime 200x
func BenchmarkIndexQuery(b *testing.B) {
	node, _ := newNode(b)
	s, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE bix WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE bix.t (k int, c int, v int, w int, PRIMARY KEY (k, c))`,
		`CREATE INDEX ON bix.t (v)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	ins := s.Query(`INSERT INTO bix.t (k, c, v, w) VALUES (?, ?, ?, ?)`)
	batch := s.NewBatch(gocql.UnloggedBatch)
	for i := 0; i < 20000; i++ {
		batch.Query(ins.Statement(), i/10, i%10, i%2000, i%2000)
		if batch.Size() == 100 {
			if err := s.ExecuteBatch(batch); err != nil {
				b.Fatal(err)
			}
			batch = s.NewBatch(gocql.UnloggedBatch)
		}
	}
	for _, bc := range []struct{ name, q string }{
		{"index", `SELECT k, c FROM bix.t WHERE v = ?`},
		{"filtering", `SELECT k, c FROM bix.t WHERE w = ? ALLOW FILTERING`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := s.Query(bc.q)
			for i := 0; i < b.N; i++ {
				iter := q.Bind(i % 2000).Iter()
				n := 0
				for iter.Scan(new(int), new(int)) {
					n++
				}
				if err := iter.Close(); err != nil {
					b.Fatal(err)
				}
				if n != 10 {
					b.Fatalf("%d rows, want 10", n)
				}
			}
		})
	}
}
