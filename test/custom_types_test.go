package test

import (
	"testing"

	"github.com/gocql/gocql"
)

// TestLexicalUUIDType is gocql v1.7.0's own TestLexicalUUIDType (a custom
// type column bound and read back through prepared statements), with the
// type in the partition key too and the clustering order Cassandra gives
// it: java.util.UUID.compareTo, each half as a signed number.
func TestLexicalUUIDType(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "custom")
	mustExec(t, s, `CREATE TABLE test_lexical_uuid (
		key     varchar,
		column1 'org.apache.cassandra.db.marshal.LexicalUUIDType',
		value   int,
		PRIMARY KEY (key, column1))`)
	key := gocql.TimeUUID().String()
	column1 := gocql.TimeUUID()
	mustExec(t, s, "INSERT INTO test_lexical_uuid(key, column1, value) VALUES(?, ?, ?)", key, column1, 55)
	var got gocql.UUID
	if err := s.Query("SELECT column1 from test_lexical_uuid where key = ? AND column1 = ?", key, column1).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != column1 {
		t.Errorf("got %s, expected %s", got, column1)
	}

	mustExec(t, s, `CREATE TABLE by_lex (k 'LexicalUUIDType', c 'LexicalUUIDType', v int, PRIMARY KEY (k, c))`)
	k := gocql.MustRandomUUID()
	// In the order java.util.UUID.compareTo sorts them.
	ordered := []string{
		"80000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff",
		"00000000-0000-0000-8000-000000000000",
		"00000000-0000-0000-7fff-ffffffffffff",
		"00000000-0000-0001-0000-000000000000",
		"7fffffff-ffff-ffff-ffff-ffffffffffff",
	}
	for i := len(ordered) - 1; i >= 0; i-- {
		mustExec(t, s, "INSERT INTO by_lex (k, c, v) VALUES (?, ?, ?)", k, mustUUID(t, ordered[i]), i)
	}
	iter := s.Query("SELECT c, v FROM by_lex WHERE k = ?", k).PageSize(4).Iter()
	var c gocql.UUID
	var v, n int
	for iter.Scan(&c, &v) {
		if n >= len(ordered) || c.String() != ordered[n] || v != n {
			t.Errorf("row %d: c=%s v=%d, want c=%s v=%d", n, c, v, ordered[min(n, len(ordered)-1)], n)
		}
		n++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if n != len(ordered) {
		t.Fatalf("%d rows, want %d", n, len(ordered))
	}
	var count int
	if err := s.Query("SELECT count(*) FROM by_lex WHERE k = ? AND c > ? AND c <= ?", k,
		mustUUID(t, ordered[1]), mustUUID(t, ordered[4])).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != 3 {
		t.Errorf("count of (%s, %s]: %d, want 3", ordered[1], ordered[4], count)
	}
}

func mustUUID(t *testing.T, s string) gocql.UUID {
	t.Helper()
	u, err := gocql.ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
