package coordinator

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// BenchmarkUDTExecute compares, in one run, a prepared single-row write
// and read of the same three values stored three ways: as three columns
// (layout=columns), as one frozen<address> cell (layout=frozen) and as a
// non-frozen address, one cell per field (layout=fields). Handle alone,
// as in BenchmarkExecuteInsert's path=handle.
func BenchmarkUDTExecute(b *testing.B) {
	c := newTestCoordinator(b)
	runQuery(b, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	runQuery(b, c, "CREATE TYPE bench.address (street text, city text, zip int)")
	runQuery(b, c, "CREATE TABLE bench.cols (k int PRIMARY KEY, street text, city text, zip int)")
	runQuery(b, c, "CREATE TABLE bench.frozen (k int PRIMARY KEY, a frozen<address>)")
	runQuery(b, c, "CREATE TABLE bench.fields (k int PRIMARY KEY, a address)")
	street, city, zip := []byte("12 Rue de la Paix"), []byte("Paris"), []byte{0, 1, 0x25, 0x51}
	var udt []byte
	for _, f := range [][]byte{street, city, zip} {
		udt = binary.BigEndian.AppendUint32(udt, uint32(len(f)))
		udt = append(udt, f...)
	}
	keys := benchKeyBytes()
	ctx := context.Background()
	for _, l := range []struct {
		name, insert, sel string
		vals              [][]byte
	}{
		{"columns", "INSERT INTO bench.cols (k, street, city, zip) VALUES (?, ?, ?, ?)", "SELECT street, city, zip FROM bench.cols WHERE k = ?", [][]byte{street, city, zip}},
		{"frozen", "INSERT INTO bench.frozen (k, a) VALUES (?, ?)", "SELECT a FROM bench.frozen WHERE k = ?", [][]byte{udt}},
		{"fields", "INSERT INTO bench.fields (k, a) VALUES (?, ?)", "SELECT a FROM bench.fields WHERE k = ?", [][]byte{udt}},
	} {
		ins := newBenchExec(benchPrepare(b, c, l.insert), 1+len(l.vals))
		for i, v := range l.vals {
			ins.vals[1+i].Contents = v
		}
		b.Run("op=insert/layout="+l.name, func(b *testing.B) {
			r := rnd(0x9e3779b97f4a7c15)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := r.intn(benchKeys)
				ins.vals[0].Contents = keys[4*k : 4*k+4]
				if resp := c.Handle(ctx, &ins.req); resp.Message.GetOpCode() != primitive.OpCodeResult {
					b.Fatalf("INSERT answered %v", resp.Message)
				}
			}
		})
		sel := newBenchExec(benchPrepare(b, c, l.sel), 1)
		b.Run("op=select/layout="+l.name, func(b *testing.B) {
			for k := 0; k < 1000; k++ {
				ins.vals[0].Contents = keys[4*k : 4*k+4]
				c.Handle(ctx, &ins.req)
			}
			r := rnd(0x9e3779b97f4a7c15)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := r.intn(1000)
				sel.vals[0].Contents = keys[4*k : 4*k+4]
				resp := c.Handle(ctx, &sel.req)
				if rows, ok := resp.Message.(*message.RowsResult); !ok || len(rows.Data) != 1 {
					b.Fatalf("SELECT answered %v", resp.Message)
				}
			}
		})
	}
}
