package test

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestSingleNodeDataUpgrades starts a node on a data directory written by
// cqld before it was a cluster (commit 3924200, one node, no metadata log):
// testdata/olddata/single-node-3924200.tgz is that node's folder after a
// clean stop. It was written through the Python driver: keyspace old (RF 1)
// with a user type, a table t of 10 partitions of 3 rows (a set and a
// frozen UDT column, clustering order DESC, an index on v), one row and one
// partition deleted, and a counter table n with k0..k9 incremented by 1..10.
// Under today's code the node keeps its host id, its 16 tokens, its schema
// and every row, takes DDL and writes through the metadata log, and starts
// again on the same folder with all of it.
func TestSingleNodeDataUpgrades(t *testing.T) {
	dir := t.TempDir()
	untar(t, "testdata/olddata/single-node-3924200.tgz", dir)
	cfg := testConfig(t, dir)

	check := func(s *gocql.Session, withNew bool) {
		t.Helper()
		var host gocql.UUID
		var tokens []string
		if err := s.Query(`SELECT host_id, tokens FROM system.local`).Scan(&host, &tokens); err != nil {
			t.Fatal(err)
		}
		if host.String() != "c3596d99-621c-4adf-9f21-d162d50649f6" || len(tokens) != 16 || !slices.Contains(tokens, "-6548514892582590856") {
			t.Errorf("system.local: host id %s, tokens %v", host, tokens)
		}
		var n int
		if err := s.Query(`SELECT count(*) FROM old.t`).Scan(&n); err != nil || n != 26 {
			t.Errorf("old.t holds %d rows, %v; want 26", n, err)
		}
		var v string
		var tags []string
		var street string
		var num int
		var a map[string]any
		if err := s.Query(`SELECT v, tags, a FROM old.t WHERE k = 2 AND c = 2`).Scan(&v, &tags, &a); err != nil {
			t.Fatal(err)
		}
		street, _ = a["street"].(string)
		num, _ = a["n"].(int)
		sort.Strings(tags)
		if v != "v2_2" || !reflect.DeepEqual(tags, []string{"x2", "y"}) || street != "s2" || num != 2 {
			t.Errorf("old.t (2, 2): %q %v %v", v, tags, a)
		}
		var cs []int
		iter := s.Query(`SELECT c FROM old.t WHERE k = 3`).Iter()
		for c := 0; iter.Scan(&c); {
			cs = append(cs, c)
		}
		if err := iter.Close(); err != nil || !reflect.DeepEqual(cs, []int{2, 0}) {
			t.Errorf("old.t k = 3 (row 1 deleted, clustering DESC): %v, %v", cs, err)
		}
		var k, c int
		if err := s.Query(`SELECT k, c FROM old.t WHERE v = 'v5_1'`).Scan(&k, &c); err != nil || k != 5 || c != 1 {
			t.Errorf("old.t through its index: (%d, %d), %v", k, c, err)
		}
		var hits int64
		if err := s.Query(`SELECT hits FROM old.n WHERE k = 'k4'`).Scan(&hits); err != nil || hits != 5 {
			t.Errorf("old.n k4: %d, %v", hits, err)
		}
		if withNew {
			if err := s.Query(`SELECT v FROM old.added WHERE k = 1`).Scan(&v); err != nil || v != "new" {
				t.Errorf("old.added after a restart: %q, %v", v, err)
			}
		}
	}

	node, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, node.Addr())
	check(s, false)
	for _, q := range []string{
		`CREATE TABLE old.added (k int PRIMARY KEY, v text)`,
		`INSERT INTO old.added (k, v) VALUES (1, 'new')`,
		`INSERT INTO old.t (k, c, v) VALUES (9, 0, 'back')`,
		`DELETE FROM old.t WHERE k = 9`,
		`UPDATE old.n SET hits = hits + 0 WHERE k = 'k4'`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}

	node = startNode(t, cfg)
	s = connect(t, node.Addr())
	defer s.Close()
	check(s, true)
}

// untar extracts the gzipped tar archive at path into dir, refusing
// entries that would land outside it.
func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, h.Name)
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(os.PathSeparator)) && name != filepath.Clean(dir) {
			t.Fatalf("%s: entry %q outside the folder", path, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			var out *os.File
			if out, err = os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
				_, err = io.Copy(out, tr)
				if cerr := out.Close(); err == nil {
					err = cerr
				}
			}
		default:
			err = fmt.Errorf("entry %q of type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
