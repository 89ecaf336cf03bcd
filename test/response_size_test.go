package test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
)

// TestResponseSizeBound runs reads whose answers outgrow
// native_transport_max_frame_size (256 KiB here) through gocql: a paged
// read ends each page where the frame would fill, so every row arrives
// once across more pages than the page size asks for; an unpaged read, a
// selection whose metadata alone is too big, and a single row too big for
// a frame are refused with INVALID "Response is too big"; and the node
// answers the next request as before.
func TestResponseSizeBound(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.NativeTransportMaxFrameSize = 256 * config.KiB
	node := startNode(t, cfg)
	s := tableSession(t, node.Addr(), "respsize")
	mustExec(t, s, `CREATE TABLE big (k int, c int, v text, PRIMARY KEY (k, c))`)
	value := strings.Repeat("v", 1000)
	const perPartition = 300 // 300 KB a partition, 600 KB the table
	for k := 1; k <= 2; k++ {
		for c := range perPartition {
			mustExec(t, s, `INSERT INTO big (k, c, v) VALUES (?, ?, ?)`, k, c, value)
		}
	}

	tooBig := func(q string, pageSize int) {
		t.Helper()
		err := s.Query(q).PageSize(pageSize).Exec()
		var re gocql.RequestError
		if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), "Response is too big") {
			t.Fatalf("%s (page size %d): %v, want INVALID Response is too big", q, pageSize, err)
		}
	}
	tooBig(`SELECT * FROM big WHERE k = 1`, 0)
	tooBig(`SELECT * FROM big`, 0)
	tooBig(`SELECT k`+strings.Repeat(", k", 20000)+` FROM big WHERE k = 1 LIMIT 1`, 0)
	tooBig(`SELECT v`+strings.Repeat(", v", 299)+` FROM big WHERE k = 1 AND c = 0`, 5000)

	if n := len(rowsOf(t, s, `SELECT * FROM big WHERE k = 1 LIMIT 100`)); n != 100 {
		t.Fatalf("an unpaged read within the frame: %d rows, want 100", n)
	}
	for _, tc := range []struct {
		q    string
		want int
	}{
		{`SELECT k, c, v FROM big WHERE k = 1`, perPartition},
		{`SELECT k, c, v FROM big`, 2 * perPartition},
		{`SELECT k, c, v FROM big PER PARTITION LIMIT 290`, 2 * 290},
		{`SELECT k, c, v FROM big LIMIT 550`, 550},
	} {
		seen := map[string]bool{}
		pages := 0
		var state []byte
		for {
			iter := s.Query(tc.q).PageSize(5000).PageState(state).Iter()
			var k, c int
			var v string
			for iter.Scan(&k, &c, &v) {
				key := fmt.Sprint(k, "/", c)
				if seen[key] || v != value {
					t.Fatalf("%s: row %s again or with a wrong value", tc.q, key)
				}
				seen[key] = true
			}
			state = iter.PageState()
			if err := iter.Close(); err != nil {
				t.Fatalf("%s: page %d: %v", tc.q, pages+1, err)
			}
			pages++
			if len(state) == 0 {
				break
			}
		}
		if len(seen) != tc.want || pages < 2 {
			t.Fatalf("%s: %d rows in %d pages, want %d rows in pages cut at the frame size", tc.q, len(seen), pages, tc.want)
		}
	}
}
