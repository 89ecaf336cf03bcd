package mutation

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/storage"
)

func testTable(t testing.TB) *storage.Table {
	t.Helper()
	def := &storage.TableDef{Keyspace: "ks", Name: "t", ID: [16]byte{7, 1}, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "c", Type: "text", Kind: storage.KindClustering, Position: 0, Order: "asc"},
		{Name: "v", Type: "text", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}}
	tbl, err := storage.NewTable(def, func(s string) (datatype.DataType, error) {
		if s == "int" {
			return datatype.Int, nil
		}
		return datatype.Varchar, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// sample is an Update with every kind of op.
func sample(tbl *storage.Table) *Update {
	m := New()
	pk := []byte{0, 0, 0, 1}
	ck := [][]byte{[]byte("a")}
	live := storage.Cell{Timestamp: 10, TTL: 5, LocalDeletionTime: 100, Value: []byte("x")}
	dead := storage.Cell{Timestamp: 11, Tombstone: true, LocalDeletionTime: 99}
	m.WriteRowMarker(tbl, pk, ck, storage.Cell{Timestamp: 10})
	m.WriteCell(tbl, pk, storage.CellTarget{Clustering: ck, Column: "v"}, live)
	m.WriteCell(tbl, pk, storage.CellTarget{Static: true, Column: "s", PathType: datatype.Varchar, Path: []byte("p")}, live)
	m.WriteCell(tbl, pk, storage.CellTarget{Clustering: ck, Column: "e", PathType: datatype.NewMap(datatype.Int, datatype.Varchar), Path: []byte{}}, dead)
	m.WriteCell(tbl, pk, storage.CellTarget{Clustering: ck, Column: "e", Path: []byte{0x80, 0, 0, 1}}, live) // a path in key encoding
	m.DeleteCollection(tbl, pk, storage.CellTarget{Clustering: ck, Column: "l"}, dead)
	m.DeleteRow(tbl, pk, [][]byte{[]byte("b")}, dead)
	m.DeleteRange(tbl, pk, storage.Slice{Start: &storage.Bound{Prefix: [][]byte{[]byte("c")}, Inclusive: true}}, dead)
	m.DeleteRange(tbl, pk, storage.Slice{End: &storage.Bound{Prefix: [][]byte{[]byte("d")}}}, dead)
	m.DeletePartition(tbl, pk, dead)
	m.AddCounter(tbl, pk, storage.CellTarget{Clustering: ck, Column: "n"}, -3, 12)
	if len(m.Updates) != 1 {
		panic("one partition, one update")
	}
	return m.Updates[0]
}

func TestCodecRoundTrip(t *testing.T) {
	tbl := testTable(t)
	u := sample(tbl)
	b, err := Append([]byte("head"), u)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "tail"...)
	lookup := func(id [16]byte) (*storage.Table, bool) { return tbl, id == tbl.Def.ID }
	got, rest, err := Decode(b[4:], lookup)
	if err != nil {
		t.Fatal(err)
	}
	if string(rest) != "tail" {
		t.Fatalf("rest %q, want tail", rest)
	}
	again, err := Append(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b[4:len(b)-4]) || got.Table != tbl || string(got.Key) != string(u.Key) || len(got.Ops) != len(u.Ops) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, u)
	}
	for i, op := range got.Ops {
		w := u.Ops[i]
		if op.Kind != w.Kind || op.Target.Column != w.Target.Column || op.Target.Static != w.Target.Static ||
			string(op.Target.Path) != string(w.Target.Path) || (op.Target.PathType == nil) != (w.Target.PathType == nil) ||
			op.Cell.Timestamp != w.Cell.Timestamp || op.Cell.Tombstone != w.Cell.Tombstone || string(op.Cell.Value) != string(w.Cell.Value) {
			t.Fatalf("op %d decoded as %+v, want %+v", i, op, w)
		}
	}
	for n := range len(b) - 8 {
		if _, _, err := Decode(b[4:4+n], lookup); !errors.Is(err, ErrBadUpdate) {
			t.Fatalf("truncated to %d bytes: err %v, want ErrBadUpdate", n, err)
		}
	}
	other := func([16]byte) (*storage.Table, bool) { return nil, false }
	if _, _, err := Decode(b[4:], other); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("unknown table: err %v", err)
	}
}

func TestMutationGroupsByPartition(t *testing.T) {
	tbl := testTable(t)
	m := New()
	defer m.Release()
	if !m.Empty() {
		t.Fatal("new mutation not empty")
	}
	c := storage.Cell{Timestamp: 1}
	for _, k := range []byte{1, 2, 1, 3, 2} {
		m.WriteCell(tbl, []byte{0, 0, 0, k}, storage.CellTarget{Column: "v"}, c)
	}
	var keys []byte
	var ops []int
	for _, u := range m.Updates {
		keys = append(keys, u.Key[3])
		ops = append(ops, len(u.Ops))
	}
	if string(keys) != "\x01\x02\x03" || !reflect.DeepEqual(ops, []int{2, 2, 1}) {
		t.Fatalf("updates by key %v with ops %v", keys, ops)
	}

	// Past indexFrom partitions, lookups go through the index: each
	// partition still gets one Update, in the order first written.
	big := New()
	defer big.Release()
	const n = 3 * indexFrom
	for round := range 2 {
		for k := range n {
			big.WriteCell(tbl, []byte{0, 0, 0, byte(k)}, storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: int64(round)})
		}
	}
	if len(big.Updates) != n {
		t.Fatalf("%d partitions written twice each made %d updates", n, len(big.Updates))
	}
	for i, u := range big.Updates {
		if u.Key[3] != byte(i) || len(u.Ops) != 2 {
			t.Fatalf("update %d is of key %v with %d ops", i, u.Key, len(u.Ops))
		}
	}
}

// SetTimestamp gives a lightweight transaction's update its ballot's
// timestamp as Cassandra does: the writes at it, the deletions just
// before it.
func TestSetTimestamp(t *testing.T) {
	tbl := testTable(t)
	m := New()
	defer m.Release()
	pk := []byte{0, 0, 0, 1}
	c := storage.Cell{Timestamp: 5}
	m.DeletePartition(tbl, pk, storage.Cell{Timestamp: 5, Tombstone: true})
	m.WriteCell(tbl, pk, storage.CellTarget{Column: "v"}, c)
	m.WriteCell(tbl, pk, storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 5, Tombstone: true})
	m.DeleteCollection(tbl, pk, storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 4, Tombstone: true})
	m.WriteRowMarker(tbl, pk, nil, c)
	m.DeleteRow(tbl, pk, nil, storage.Cell{Timestamp: 5, Tombstone: true})
	m.DeleteRange(tbl, pk, storage.Slice{}, storage.Cell{Timestamp: 5, Tombstone: true})
	m.Updates[0].SetTimestamp(100)
	var got []int64
	for _, op := range m.Updates[0].Ops {
		got = append(got, op.Cell.Timestamp)
	}
	if want := []int64{99, 100, 100, 99, 100, 99, 99}; !reflect.DeepEqual(got, want) {
		t.Fatalf("timestamps %v, want %v", got, want)
	}
}

func FuzzDecode(f *testing.F) {
	tbl := testTable(f)
	b, err := Append(nil, sample(tbl))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte{updateFormatV1})
	lookup := func([16]byte) (*storage.Table, bool) { return tbl, true }
	f.Fuzz(func(t *testing.T, in []byte) {
		u, _, err := Decode(in, lookup)
		if err != nil {
			return
		}
		// What decodes encodes again to the same bytes it was read from.
		out, err := Append(nil, u)
		if err != nil {
			t.Fatalf("re-encoding a decoded update: %v", err)
		}
		u2, _, err := Decode(out, lookup)
		if err != nil {
			t.Fatalf("decoding a re-encoded update: %v", err)
		}
		out2, err := Append(nil, u2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("round trip of a decoded update changed it: %v", err)
		}
	})
}

// BenchmarkManyPartitions is a batch touching n partitions, each once: the
// cost of finding each write's Update.
func BenchmarkManyPartitions(b *testing.B) {
	tbl := testTable(b)
	for _, n := range []int{10, 1000, 20000} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = []byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
		}
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			for range b.N {
				m := New()
				for _, k := range keys {
					m.WriteCell(tbl, k, storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 1})
				}
				m.Release()
			}
		})
	}
}
