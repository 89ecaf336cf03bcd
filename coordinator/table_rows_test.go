package coordinator

import (
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// TestUDTFieldPath checks that udtFieldIndex reads back the stored form
// (storage.AppendKey) of every field path.
func TestUDTFieldPath(t *testing.T) {
	for _, i := range []int{0, 1, 2, 255, 256, 32767} {
		enc, err := storage.AppendKey(nil, datatype.Smallint, udtFieldPath(i), false)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := udtFieldIndex(enc); !ok || got != i {
			t.Errorf("field %d: stored as %x, read back as %d, %v", i, enc, got, ok)
		}
	}
	if _, ok := udtFieldIndex([]byte{1}); ok {
		t.Error("a 1-byte path was read as a field")
	}
}

// TestAssembleUDT checks that missing fields, before, between and after
// the stored ones, are null, and fields the type no longer has are
// skipped.
func TestAssembleUDT(t *testing.T) {
	ut := &datatype.UserDefined{Name: "u", FieldNames: []string{"a", "b", "c", "d"},
		FieldTypes: []datatype.DataType{datatype.Int, datatype.Int, datatype.Int, datatype.Int}}
	cell := func(i int, v string) storage.ColumnCell {
		enc, _ := storage.AppendKey(nil, datatype.Smallint, udtFieldPath(i), false)
		return storage.ColumnCell{Path: enc, Cell: storage.Cell{Value: []byte(v)}}
	}
	got := assembleUDT(ut, []storage.ColumnCell{cell(1, "x"), cell(2, ""), cell(7, "gone")})
	want := append(types.AppendBytes(types.AppendBytes(types.AppendBytes(nil, nil), []byte("x")), []byte{}), 0xff, 0xff, 0xff, 0xff)
	if string(got) != string(want) {
		t.Fatalf("assembleUDT = %x, want %x", got, want)
	}
	if fields := types.SplitFields(got, 4); fields[0] != nil || string(fields[1]) != "x" || fields[2] == nil || len(fields[2]) != 0 || fields[3] != nil {
		t.Fatalf("fields %q", fields)
	}
}
