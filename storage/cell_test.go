package storage

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"testing"
)

func cellsEqual(a, b Cell) bool {
	return a.Timestamp == b.Timestamp && a.TTL == b.TTL && a.LocalDeletionTime == b.LocalDeletionTime &&
		a.Tombstone == b.Tombstone && bytes.Equal(a.Value, b.Value)
}

func TestCellRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xAB}, 1<<16)
	tests := []struct {
		name string
		c    Cell
	}{
		{"live", Cell{Timestamp: 1700000000000000, Value: []byte("hello")}},
		{"live empty value", Cell{Timestamp: 1, Value: []byte{}}},
		{"live nil value", Cell{Timestamp: 1}},
		{"live zero timestamp", Cell{Value: []byte{0}}},
		{"negative timestamp", Cell{Timestamp: -5, Value: []byte{1, 2}}},
		{"min timestamp", Cell{Timestamp: math.MinInt64, Value: []byte{1}}},
		{"max timestamp", Cell{Timestamp: math.MaxInt64, Value: []byte{1}}},
		{"expiring", Cell{Timestamp: 10, TTL: 3600, LocalDeletionTime: 1700003600, Value: []byte("v")}},
		{"expiring max ttl", Cell{Timestamp: 10, TTL: 630720000, LocalDeletionTime: math.MaxInt32, Value: []byte("v")}},
		{"tombstone", Cell{Timestamp: 99, LocalDeletionTime: 1700000000, Tombstone: true}},
		{"tombstone without deletion time", Cell{Timestamp: 99, Tombstone: true}},
		{"large value", Cell{Timestamp: 7, Value: big}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc := tc.c.Append([]byte("prefix"))
			if !bytes.HasPrefix(enc, []byte("prefix")) {
				t.Fatal("Append dropped dst")
			}
			enc = enc[len("prefix"):]
			got, err := DecodeCell(enc)
			if err != nil {
				t.Fatalf("DecodeCell(%x): %v", enc, err)
			}
			if !cellsEqual(got, tc.c) {
				t.Fatalf("round trip: got %+v, want %+v", got, tc.c)
			}
			if tc.c.Tombstone && got.Value != nil {
				t.Fatal("tombstone decoded with a non-nil value")
			}
			if !tc.c.Tombstone && got.Value == nil {
				t.Fatal("live cell decoded with a nil (null) value")
			}
		})
	}
}

// TestCellLayout freezes the on-disk layout documented in cell.go.
func TestCellLayout(t *testing.T) {
	tests := []struct {
		c    Cell
		want string
	}{
		{Cell{Timestamp: 1, Value: []byte("ab")}, "01 00 0000000000000001 6162"},
		{Cell{Timestamp: -1, Value: []byte{}}, "01 00 ffffffffffffffff"},
		{Cell{Timestamp: 2, TTL: 60, LocalDeletionTime: 1000, Value: []byte{7}}, "01 06 0000000000000002 0000003c 000003e8 07"},
		{Cell{Timestamp: 3, LocalDeletionTime: 1000, Tombstone: true, Value: []byte("ignored")}, "01 05 0000000000000003 000003e8"},
	}
	for _, tc := range tests {
		if got := tc.c.Append(nil); !bytes.Equal(got, mustHex(t, tc.want)) {
			t.Errorf("Append(%+v) = %x, want %s", tc.c, got, tc.want)
		}
	}
}

func TestDecodeCellErrors(t *testing.T) {
	tests := []struct {
		name string
		b    string
	}{
		{"empty", ""},
		{"short header", "01 00 00000000000000"},
		{"unknown version", "02 00 0000000000000001"},
		{"version zero", "00 00 0000000000000001"},
		{"unknown flag", "01 08 0000000000000001"},
		{"truncated ttl", "01 02 0000000000000001 0000"},
		{"zero ttl with flag", "01 02 0000000000000001 00000000"},
		{"truncated deletion time", "01 04 0000000000000001 00"},
		{"zero deletion time with flag", "01 04 0000000000000001 00000000"},
		{"truncated ttl and deletion time", "01 06 0000000000000001 0000003c 0000"},
		{"tombstone with value", "01 05 0000000000000001 000003e8 00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCell(mustHex(t, tc.b))
			if !errors.Is(err, ErrBadCell) {
				t.Fatalf("DecodeCell(%s) error = %v, want ErrBadCell", tc.b, err)
			}
		})
	}
}

func TestDecodeCellValueAliases(t *testing.T) {
	enc := Cell{Timestamp: 1, Value: []byte("abc")}.Append(nil)
	enc = append(enc, "zz"...)[:len(enc)] // spare capacity after the value
	c, err := DecodeCell(enc)
	if err != nil {
		t.Fatal(err)
	}
	enc[len(enc)-1] = 'X'
	if string(c.Value) != "abX" {
		t.Fatalf("Value does not alias the input: %q", c.Value)
	}
	// Appending to Value must not scribble past the cell.
	_ = append(c.Value, 'q')
	if full := enc[:cap(enc)]; full[len(enc)] != 'z' {
		t.Fatal("Value has capacity beyond the cell")
	}
}

func TestCellIsLive(t *testing.T) {
	const now = 1700000000
	tests := []struct {
		name string
		c    Cell
		want bool
	}{
		{"live", Cell{Timestamp: 1, Value: []byte("v")}, true},
		{"live empty", Cell{Timestamp: 1, Value: []byte{}}, true},
		{"tombstone", Cell{Timestamp: 1, LocalDeletionTime: now - 10, Tombstone: true}, false},
		{"future tombstone", Cell{Timestamp: 1, LocalDeletionTime: now + 10, Tombstone: true}, false},
		{"expiring, not yet", Cell{Timestamp: 1, TTL: 10, LocalDeletionTime: now + 1, Value: []byte("v")}, true},
		// Cell.isLive: nowInSec < localDeletionTime, so it dies at that second.
		{"expiring, exactly now", Cell{Timestamp: 1, TTL: 10, LocalDeletionTime: now, Value: []byte("v")}, false},
		{"expired", Cell{Timestamp: 1, TTL: 10, LocalDeletionTime: now - 1, Value: []byte("v")}, false},
	}
	for _, tc := range tests {
		if got := tc.c.IsLive(now); got != tc.want {
			t.Errorf("%s: IsLive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReconcile(t *testing.T) {
	live := func(ts int64, v string) Cell { return Cell{Timestamp: ts, Value: []byte(v)} }
	exp := func(ts int64, ttl, ldt int32, v string) Cell {
		return Cell{Timestamp: ts, TTL: ttl, LocalDeletionTime: ldt, Value: []byte(v)}
	}
	tomb := func(ts int64, ldt int32) Cell { return Cell{Timestamp: ts, LocalDeletionTime: ldt, Tombstone: true} }
	tests := []struct {
		name   string
		a, b   Cell
		winner Cell
	}{
		{"higher timestamp wins", live(2, "a"), live(1, "z"), live(2, "a")},
		{"higher timestamp beats tombstone", live(2, "a"), tomb(1, 100), live(2, "a")},
		{"newer tombstone wins", tomb(3, 1), live(2, "a"), tomb(3, 1)},
		{"negative timestamps", live(-1, "a"), live(-2, "z"), live(-1, "a")},
		{"tie: greater value wins", live(5, "b"), live(5, "a"), live(5, "b")},
		{"tie: longer value wins over its prefix", live(5, "ab"), live(5, "a"), live(5, "ab")},
		{"tie: values compare unsigned", live(5, "\x80"), live(5, "\x7f"), live(5, "\x80")},
		{"tie: any value beats empty", live(5, "\x00"), live(5, ""), live(5, "\x00")},
		{"tie: tombstone beats live", tomb(5, 1), live(5, "zzz"), tomb(5, 1)},
		// CASSANDRA-14592: an expiring cell beats a live one on a tie even
		// before it expires, whatever the values.
		{"tie: expiring beats live", exp(5, 10, 1000, "a"), live(5, "zzz"), exp(5, 10, 1000, "a")},
		{"tie: tombstone beats expiring", tomb(5, 1), exp(5, 10, 1000, "zzz"), tomb(5, 1)},
		{"tie: tombstone beats expiring with a later deletion time", tomb(5, 1), exp(5, 10, 2000000000, "z"), tomb(5, 1)},
		{"tie: two tombstones, later deletion time wins", tomb(5, 20), tomb(5, 10), tomb(5, 20)},
		{"tie: two expiring, later expiry wins over greater value", exp(5, 10, 2000, "a"), exp(5, 10, 1000, "z"), exp(5, 10, 2000, "a")},
		{"tie: two expiring, same expiry, greater value wins", exp(5, 10, 1000, "b"), exp(5, 20, 1000, "a"), exp(5, 10, 1000, "b")},
		{"tie: everything equal but TTL (ours: larger TTL)", exp(5, 20, 1000, "a"), exp(5, 10, 1000, "a"), exp(5, 20, 1000, "a")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reconcile(tc.a, tc.b); !cellsEqual(got, tc.winner) {
				t.Fatalf("Reconcile(a, b) = %+v, want %+v", got, tc.winner)
			}
			if got := Reconcile(tc.b, tc.a); !cellsEqual(got, tc.winner) {
				t.Fatalf("Reconcile(b, a) = %+v, want %+v", got, tc.winner)
			}
		})
	}
}

// refResolveRegular is a literal port of Cassandra 4.0's
// Cells.resolveRegular, on Cassandra's representation where a live
// non-expiring cell has localDeletionTime NO_DELETION_TIME and
// isExpiring() is ttl != NO_TTL.
func refResolveRegular(left, right Cell) Cell {
	const noDeletionTime = math.MaxInt32
	ldt := func(c Cell) int64 {
		if !c.Tombstone && c.TTL == 0 {
			return noDeletionTime
		}
		return int64(c.LocalDeletionTime)
	}
	value := func(c Cell) []byte {
		if c.Tombstone {
			return nil
		}
		return c.Value
	}
	if left.Timestamp != right.Timestamp {
		if left.Timestamp > right.Timestamp {
			return left
		}
		return right
	}
	l, r := ldt(left), ldt(right)
	lET, rET := l != noDeletionTime, r != noDeletionTime
	if lET || rET {
		if lET != rET {
			if lET {
				return left
			}
			return right
		}
		lT, rT := left.TTL == 0, right.TTL == 0
		if lT != rT {
			if lT {
				return left
			}
			return right
		}
		if l != r {
			if l > r {
				return left
			}
			return right
		}
	}
	if bytes.Compare(value(left), value(right)) >= 0 {
		return left
	}
	return right
}

func randCell(rng *rand.Rand) Cell {
	c := Cell{Timestamp: int64(rng.Intn(4))}
	switch rng.Intn(3) {
	case 0:
		c.Value = [][]byte{{}, {0}, {1}, {0x80}, {1, 0}}[rng.Intn(5)]
	case 1:
		c.TTL = int32(1 + rng.Intn(3))
		c.LocalDeletionTime = int32(1000 + rng.Intn(3))
		c.Value = [][]byte{{}, {0}, {1}, {0x80}}[rng.Intn(4)]
	default:
		c.Tombstone = true
		c.LocalDeletionTime = int32(1000 + rng.Intn(3))
	}
	return c
}

// TestReconcileMatchesCassandra checks Reconcile against the port of
// resolveRegular on random cells with many ties, and that it is
// commutative and associative (the merge operator relies on it).
func TestReconcileMatchesCassandra(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		a, b, c := randCell(rng), randCell(rng), randCell(rng)
		got := Reconcile(a, b)
		ref1, ref2 := refResolveRegular(a, b), refResolveRegular(b, a)
		if cellsEqual(ref1, ref2) && !cellsEqual(got, ref1) {
			t.Fatalf("Reconcile(%+v, %+v) = %+v, Cassandra picks %+v", a, b, got, ref1)
		}
		if !cellsEqual(got, ref1) && !cellsEqual(got, ref2) {
			t.Fatalf("Reconcile(%+v, %+v) = %+v, Cassandra picks %+v or %+v", a, b, got, ref1, ref2)
		}
		if !cellsEqual(got, Reconcile(b, a)) {
			t.Fatalf("not commutative: %+v, %+v", a, b)
		}
		if x, y := Reconcile(a, Reconcile(b, c)), Reconcile(Reconcile(a, b), c); !cellsEqual(x, y) {
			t.Fatalf("not associative: %+v, %+v, %+v: %+v vs %+v", a, b, c, x, y)
		}
	}
}
