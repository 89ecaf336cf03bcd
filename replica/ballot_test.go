package replica

import (
	"testing"
	"time"
)

func TestBallotIsATimeUUID(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	b := NewBallot(at.UnixMicro(), [8]byte{0xff, 1, 2, 3, 4, 5, 6, 7})
	if got := b.Micros(); got != at.UnixMicro() {
		t.Fatalf("micros %d, want %d", got, at.UnixMicro())
	}
	if v := b[6] >> 4; v != 1 {
		t.Fatalf("version %d, want 1", v)
	}
	if b[8]&0xc0 != 0x80 {
		t.Fatalf("variant bits %#x", b[8])
	}
	// Python's uuid.UUID(fields=...) of that instant's 100 ns timestamp.
	if s := b.String(); s != "64c22900-0b77-11ef-bf01-020304050607" {
		t.Fatalf("%s", s)
	}
}

func TestBallotOrder(t *testing.T) {
	n1, n2 := [8]byte{1}, [8]byte{2}
	a, b, c := NewBallot(10, n2), NewBallot(10, n1), NewBallot(11, n1)
	var none Ballot
	for _, tc := range []struct {
		x, y  Ballot
		cmp   int
		after bool
	}{
		{a, a, 0, false},
		{b, a, -1, false}, // same microseconds: ordered, but not after
		{a, b, 1, false},
		{c, a, 1, true},
		{a, c, -1, false},
		{a, none, 1, true},
		{none, a, -1, false},
		{none, none, 0, false},
	} {
		if got := tc.x.Compare(tc.y); got != tc.cmp {
			t.Errorf("%s vs %s: compare %d, want %d", tc.x, tc.y, got, tc.cmp)
		}
		if got := tc.x.After(tc.y); got != tc.after {
			t.Errorf("%s after %s: %v, want %v", tc.x, tc.y, got, tc.after)
		}
	}
	if a.Max(c) != c || c.Max(a) != c || none.Max(a) != a {
		t.Fatal("Max")
	}
}
