package coordinator

import (
	"context"
	"encoding/binary"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements/types"
)

// selTestCoord is a test coordinator with keyspace ks.
func selTestCoord(t testing.TB) *Coordinator {
	t.Helper()
	c := newTestCoordinator(t)
	runQuery(t, c, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	return c
}

func selHandle(c *Coordinator, m message.Message) message.Message {
	return c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4, Message: m}).Message
}

func selColNames(cols []*message.ColumnMetadata) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name+" "+typeName(c.Type))
	}
	return out
}

// TestSelectMetadataPrepareEqualsExecute checks that the result metadata
// of PREPARE is what QUERY and EXECUTE return, with Cassandra's names.
func TestSelectMetadataPrepareEqualsExecute(t *testing.T) {
	c := selTestCoord(t)
	runQuery(t, c, "CREATE TABLE ks.t (k int, c int, v int, d double, s text, u timeuuid, \"Name\" text, PRIMARY KEY (k, c))")
	runQuery(t, c, "INSERT INTO ks.t (k, c, v, d, s, u, \"Name\") VALUES (1, 1, 10, 1.5, 'a', now(), 'N')")
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"SELECT count(*) FROM ks.t", []string{"count bigint"}},
		{"SELECT count(1), count(v), min(v), max(s), sum(d), avg(v) FROM ks.t",
			[]string{"count bigint", "system.count(v) bigint", "system.min(v) int", "system.max(s) text", "system.sum(d) double", "system.avg(v) int"}},
		{"SELECT writetime(v), ttl(v), max(writetime(v)) FROM ks.t", []string{"writetime(v) bigint", "ttl(v) int", "system.max(writetime(v)) bigint"}},
		{"SELECT cast(v as text), CAST(v AS bigint), cast(v as int), cast(count(*) as int) FROM ks.t",
			[]string{"cast(v as text) text", "cast(v as bigint) bigint", "v int", "cast(count as int) int"}},
		{"SELECT toTimestamp(u), toDate(u), toUnixTimestamp(u), dateOf(u), unixTimestampOf(u) FROM ks.t",
			[]string{"system.totimestamp(u) timestamp", "system.todate(u) date", "system.tounixtimestamp(u) bigint", "system.dateof(u) timestamp", "system.unixtimestampof(u) bigint"}},
		{"SELECT now(), uuid(), currentTimestamp(), currentDate(), toTimestamp(now()) FROM ks.t",
			[]string{"system.now() timeuuid", "system.uuid() uuid", "system.currenttimestamp() timestamp", "system.currentdate() date", "system.totimestamp(system.now()) timestamp"}},
		{"SELECT token(k), intAsBlob(v), blobAsInt(intAsBlob(v)), textAsBlob(s), toJson(s) FROM ks.t",
			[]string{"system.token(k) bigint", "system.intasblob(v) blob", "system.blobasint(system.intasblob(v)) int", "system.textasblob(s) blob", "system.tojson(s) text"}},
		{"SELECT k AS key, count(*) AS n, \"Name\" FROM ks.t", []string{"key int", "n bigint", "Name text"}},
		{"SELECT JSON k, v FROM ks.t", []string{"[json] text"}},
		{"SELECT intAsBlob(?) FROM ks.t", []string{"system.intasblob(?) blob"}},
		{"SELECT (int)? FROM ks.t", []string{"(int)? int"}},
	} {
		prep := selHandle(c, &message.Prepare{Query: tc.q})
		pr, ok := prep.(*message.PreparedResult)
		if !ok {
			t.Errorf("PREPARE %s: %v", tc.q, prep)
			continue
		}
		if got := selColNames(pr.ResultMetadata.Columns); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: prepared columns %q, want %q", tc.q, got, tc.want)
		}
		var vals []*primitive.Value
		for range pr.VariablesMetadata.Columns {
			vals = append(vals, &primitive.Value{Type: primitive.ValueTypeRegular, Contents: []byte{0, 0, 0, 7}})
		}
		exec := selHandle(c, &message.Execute{QueryId: pr.PreparedQueryId, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, PositionalValues: vals}})
		rows, ok := exec.(*message.RowsResult)
		if !ok {
			t.Errorf("EXECUTE %s: %v", tc.q, exec)
			continue
		}
		if got := selColNames(rows.Metadata.Columns); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: executed columns %q, want %q", tc.q, got, tc.want)
		}
		if len(rows.Data) != 1 || len(rows.Data[0]) != len(tc.want) {
			t.Errorf("%s: rows %v", tc.q, rows.Data)
		}
		if len(vals) == 0 {
			q := selHandle(c, &message.Query{Query: tc.q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
			if rows, ok := q.(*message.RowsResult); !ok || !reflect.DeepEqual(selColNames(rows.Metadata.Columns), tc.want) {
				t.Errorf("QUERY %s: %v", tc.q, q)
			}
		}
	}
}

func TestJavaNumberFormatting(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1.0"}, {1.5, 64, "1.5"}, {-0.25, 64, "-0.25"}, {1e7, 64, "1.0E7"}, {1.2345e-5, 64, "1.2345E-5"},
		{123456.789, 64, "123456.789"}, {0.001, 64, "0.001"}, {0.0001, 64, "1.0E-4"}, {0, 64, "0.0"},
		{math.Inf(1), 64, "Infinity"}, {math.NaN(), 64, "NaN"}, {float64(float32(1.1)), 32, "1.1"}, {1e10, 32, "1.0E10"},
	} {
		if got := types.JavaFloatString(tc.f, tc.bits); got != tc.want {
			t.Errorf("JavaFloatString(%v, %d) = %q, want %q", tc.f, tc.bits, got, tc.want)
		}
	}
	for _, tc := range []struct {
		u           int64
		scale       int32
		plain, sci  string
		description string
	}{
		{12345, 2, "123.45", "123.45", ""},
		{5, 0, "5", "5", ""},
		{-5, 3, "-0.005", "-0.005", ""},
		{1, 7, "0.0000001", "1E-7", ""},
		{10, -9, "10000000000", "1.0E+10", ""},
		{0, 2, "0.00", "0.00", ""},
	} {
		u := big.NewInt(tc.u)
		if got := types.BigDecimalString(u, tc.scale, true); got != tc.plain {
			t.Errorf("plain %d/%d = %q, want %q", tc.u, tc.scale, got, tc.plain)
		}
		if got := types.BigDecimalString(u, tc.scale, false); got != tc.sci {
			t.Errorf("toString %d/%d = %q, want %q", tc.u, tc.scale, got, tc.sci)
		}
	}
}

func TestJSONValues(t *testing.T) {
	i32 := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	coll := func(elems ...[]byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(elems)))
		for _, e := range elems {
			b = types.AppendBytes(b, e)
		}
		return b
	}
	mapOf := func(elems ...[]byte) []byte {
		b := coll(elems...)
		binary.BigEndian.PutUint32(b, uint32(len(elems)/2))
		return b
	}
	ts := binary.BigEndian.AppendUint64(nil, uint64(time.Date(2011, 2, 3, 4, 5, 0, 0, time.UTC).UnixMilli()))
	for _, tc := range []struct {
		t    datatype.DataType
		v    []byte
		want string
	}{
		{datatype.Varchar, []byte("a\"b\\c\n\x01é"), `"a\"b\\c\n\u0001é"`},
		{datatype.Int, i32(-7), "-7"},
		{datatype.Timestamp, ts, `"2011-02-03 04:05:00.000Z"`},
		{datatype.Blob, []byte{0xca, 0xfe}, `"0xcafe"`},
		{datatype.Boolean, []byte{1}, "true"},
		{datatype.Double, binary.BigEndian.AppendUint64(nil, math.Float64bits(math.NaN())), "null"},
		{datatype.Float, binary.BigEndian.AppendUint32(nil, math.Float32bits(2.5)), "2.5"},
		{datatype.Uuid, []byte{0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4, 0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00, 0x00}, `"550e8400-e29b-41d4-a716-446655440000"`},
		{datatype.Date, binary.BigEndian.AppendUint32(nil, 1<<31+1), `"1970-01-02"`},
		{datatype.Time, binary.BigEndian.AppendUint64(nil, uint64(3723*time.Second+5)), `"01:02:03.000000005"`},
		{datatype.Inet, []byte{127, 0, 0, 1}, `"127.0.0.1"`},
		{datatype.Inet, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, `"0:0:0:0:0:0:0:1"`},
		{datatype.NewList(datatype.Varchar), coll([]byte("x"), []byte("y")), `["x", "y"]`},
		{datatype.NewSet(datatype.Int), coll(i32(1), i32(2)), `[1, 2]`},
		{datatype.NewMap(datatype.Varchar, datatype.Int), mapOf([]byte("a"), i32(1)), `{"a": 1}`},
		{datatype.NewMap(datatype.Int, datatype.Varchar), mapOf(i32(1), []byte("a"), i32(2), []byte("b")), `{"1": "a", "2": "b"}`},
		{datatype.NewMap(datatype.NewList(datatype.Int), datatype.Int), mapOf(coll(i32(1), i32(2)), i32(3)), `{"[1, 2]": 3}`},
		{datatype.NewTuple(datatype.Int, datatype.Varchar), append(types.AppendBytes(nil, i32(1)), 0xff, 0xff, 0xff, 0xff), `[1, null]`},
	} {
		if got := string(types.AppendJSONValue(nil, tc.t, tc.v)); got != tc.want {
			t.Errorf("JSON of %v = %s, want %s", typeName(tc.t), got, tc.want)
		}
	}
	d, _ := types.DecimalBytes("-1.50")
	if got := string(types.AppendJSONValue(nil, datatype.Decimal, d)); got != "-1.50" {
		t.Errorf("decimal JSON = %s", got)
	}
	dur, _ := types.EncodeValue(datatype.Duration, selDuration(t, "1y2mo3d4h5m6s"), primitive.ProtocolVersion5)
	if got := string(types.AppendJSONValue(nil, datatype.Duration, dur)); got != `"1y2mo3d4h5m6s"` {
		t.Errorf("duration JSON = %s", got)
	}
	j := types.NewJSONColumns([]*message.ColumnMetadata{{Name: "k", Type: datatype.Int}, {Name: "Name", Type: datatype.Varchar}, {Name: "e", Type: datatype.Varchar}})
	if got := string(j.Row([][]byte{i32(1), nil, {}})); got != `{"k": 1, "\"Name\"": null, "e": ""}` {
		t.Errorf("json row = %s", got)
	}
}

func selDuration(t *testing.T, s string) any {
	d, err := types.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
