package functions

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

type benchContext struct{}

func (benchContext) Now() time.Time { return time.Unix(0, 0) }
func (benchContext) Warn(string)    {}

// A call of a user-defined JavaScript function (a fresh runtime per call)
// beside a native function of the same arity, as a selection calls them
// for each row: the ratio is the price of running a body.
func BenchmarkCall(b *testing.B) {
	k := &storage.KeyspaceDef{Name: "ks", Functions: []*storage.FunctionDef{{Keyspace: "ks", Name: "plus",
		ArgNames: []string{"a", "b"}, ArgTypes: []string{"int", "int"}, ReturnType: "int", Language: "javascript", Body: "a + b"}}}
	u := NewUsers(UserOptions{Enabled: true, Scripted: true, Fail: time.Second})
	sigs, err := u.Lookup(k, "plus", func(s string) (datatype.DataType, error) { return statements.ParseType(s) })
	if err != nil || len(sigs) != 1 {
		b.Fatal(sigs, err)
	}
	args := [][]byte{binary.BigEndian.AppendUint32(nil, 1), binary.BigEndian.AppendUint32(nil, 2)}
	b.Run("javascript", func(b *testing.B) {
		for b.Loop() {
			if _, err := sigs[0].Impl(benchContext{}, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	native := Lookup("intasblob")[0]
	b.Run("native", func(b *testing.B) {
		for b.Loop() {
			if _, err := native.Impl(benchContext{}, args[:1]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
