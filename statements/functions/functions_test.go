package functions

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/statements/types"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

func TestAggregateArithmetic(t *testing.T) {
	run := func(kind AggKind, typ datatype.DataType, vals ...[]byte) []byte {
		a := &Aggregate{Kind: kind, Type: typ}
		var st AggState
		for _, v := range vals {
			a.Add(&st, v)
		}
		v, err := a.Result(&st)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	i32 := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	dec := func(s string) []byte { b, _ := types.DecimalBytes(s); return b }
	// int sum wraps like Java's int; avg uses a long sum and truncates.
	if got := int32(binary.BigEndian.Uint32(run(AggSum, datatype.Int, i32(math.MaxInt32), i32(1)))); got != math.MinInt32 {
		t.Errorf("int sum overflow = %d", got)
	}
	if got := int32(binary.BigEndian.Uint32(run(AggAvg, datatype.Int, i32(math.MaxInt32), i32(math.MaxInt32)))); got != math.MaxInt32 {
		t.Errorf("int avg = %d", got)
	}
	if got := int32(binary.BigEndian.Uint32(run(AggAvg, datatype.Int, i32(-7), i32(2)))); got != -2 {
		t.Errorf("int avg truncation = %d", got)
	}
	if got := int32(binary.BigEndian.Uint32(run(AggAvg, datatype.Int))); got != 0 {
		t.Errorf("int avg of nothing = %d", got)
	}
	if got := run(AggMin, datatype.Int); got != nil {
		t.Errorf("min of nothing = %v", got)
	}
	if got := int32(binary.BigEndian.Uint32(run(AggMin, datatype.Int, i32(3), nil, i32(-4), i32(9)))); got != -4 {
		t.Errorf("min = %d", got)
	}
	// decimal: exact sums, incremental HALF_EVEN average.
	u, s, _ := types.DecodeDecimal(run(AggSum, datatype.Decimal, dec("1.5"), dec("2.25")))
	if got := types.BigDecimalString(u, s, false); got != "3.75" {
		t.Errorf("decimal sum = %s", got)
	}
	u, s, _ = types.DecodeDecimal(run(AggAvg, datatype.Decimal, dec("1"), dec("2")))
	if got := types.BigDecimalString(u, s, false); got != "1" {
		t.Errorf("decimal avg(1, 2) = %s (Cassandra: 1 + (2-1)/2 rounded half even at scale 0)", got)
	}
	u, s, _ = types.DecodeDecimal(run(AggAvg, datatype.Decimal, dec("1.0"), dec("2.0")))
	if got := types.BigDecimalString(u, s, false); got != "1.5" {
		t.Errorf("decimal avg(1.0, 2.0) = %s", got)
	}
	d := math.Float64frombits(binary.BigEndian.Uint64(run(AggAvg, datatype.Double,
		binary.BigEndian.AppendUint64(nil, math.Float64bits(1)), binary.BigEndian.AppendUint64(nil, math.Float64bits(2)))))
	if d != 1.5 {
		t.Errorf("double avg = %v", d)
	}
	vi := types.DecodeVarint(run(AggAvg, datatype.Varint, types.VarintBytes(big.NewInt(7)), types.VarintBytes(big.NewInt(-2))))
	if vi.Int64() != 2 {
		t.Errorf("varint avg = %v", vi)
	}
}

func TestCastConversions(t *testing.T) {
	cast := func(from, to datatype.DataType, v []byte) []byte {
		fn := Cast(from, to)
		if fn == nil {
			t.Fatalf("no cast from %s to %s", typeName(from), typeName(to))
		}
		out, err := fn(nil, [][]byte{v})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	f64 := func(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }
	i32 := func(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }
	if got := string(cast(datatype.Double, datatype.Varchar, f64(2.5))); got != "2.5" {
		t.Errorf("double as text = %s", got)
	}
	if got := string(cast(datatype.Int, datatype.Varchar, i32(-3))); got != "-3" {
		t.Errorf("int as text = %s", got)
	}
	if got := int32(binary.BigEndian.Uint32(cast(datatype.Double, datatype.Int, f64(-2.7)))); got != -2 {
		t.Errorf("double as int = %d", got)
	}
	if got := int32(binary.BigEndian.Uint32(cast(datatype.Double, datatype.Int, f64(1e20)))); got != math.MaxInt32 {
		t.Errorf("double as int saturates: %d", got)
	}
	if got := cast(datatype.Int, datatype.Tinyint, i32(300)); got[0] != 44 {
		t.Errorf("int as tinyint wraps: %d", got[0])
	}
	u, s, _ := types.DecodeDecimal(cast(datatype.Int, datatype.Decimal, i32(5)))
	if got := types.BigDecimalString(u, s, false); got != "5.0" {
		t.Errorf("int as decimal = %s (BigDecimal.valueOf(5.0))", got)
	}
	ts := binary.BigEndian.AppendUint64(nil, uint64(time.Date(2011, 2, 3, 4, 5, 0, 0, time.UTC).UnixMilli()))
	if got := string(cast(datatype.Timestamp, datatype.Varchar, ts)); got != "2011-02-03T04:05:00.000Z" {
		t.Errorf("timestamp as text = %s", got)
	}
	if Cast(datatype.Blob, datatype.Varchar) != nil || Cast(datatype.Varchar, datatype.Int) != nil {
		t.Error("casts Cassandra does not have")
	}
	if !strings.HasPrefix(types.JavaFloatString(1e-10, 64), "1.0E-10") {
		t.Error("JavaFloatString")
	}
}

// Decimals whose scale is at either end of an int: every conversion
// answers as Java's BigDecimal does, without computing 10^(2^31), and a sum
// that would need billions of digits is refused.
func TestExtremeDecimalScales(t *testing.T) {
	dec := func(unscaled int64, scale int32) []byte {
		return types.EncodeDecimal(big.NewInt(unscaled), scale)
	}
	huge, tiny, negHuge := dec(1, math.MinInt32), dec(5, math.MaxInt32), dec(-3, -math.MaxInt32)
	cast := func(to datatype.DataType, v []byte) []byte {
		out, err := Cast(datatype.Decimal, to)(nil, [][]byte{v})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	f64 := func(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) }
	if got := f64(cast(datatype.Double, huge)); !math.IsInf(got, 1) {
		t.Errorf("CAST(1E+2147483648 AS double) = %v, want +Infinity", got)
	}
	if got := f64(cast(datatype.Double, negHuge)); !math.IsInf(got, -1) {
		t.Errorf("CAST(-3E+2147483647 AS double) = %v, want -Infinity", got)
	}
	if got := f64(cast(datatype.Double, tiny)); got != 0 {
		t.Errorf("CAST(5E-2147483647 AS double) = %v, want 0", got)
	}
	for _, v := range [][]byte{huge, tiny, negHuge} {
		if got := binary.BigEndian.Uint64(cast(datatype.Bigint, v)); got != 0 {
			t.Errorf("CAST(%x AS bigint) = %d, want 0 (the low 64 bits)", v, got)
		}
		// CastFcts makes a varint of longValue() too.
		if got := types.DecodeVarint(cast(datatype.Varint, v)); got.Sign() != 0 {
			t.Errorf("CAST(%x AS varint) = %v, want 0 (BigInteger.valueOf(longValue()))", v, got)
		}
	}
	if out, err := Cast(datatype.Decimal, datatype.Varchar)(nil, [][]byte{huge}); err == nil || !strings.Contains(err.Error(), "Cannot cast the decimal") {
		t.Errorf("CAST(1E+2147483648 AS text): %d bytes, %v; want a refusal", len(out), err)
	}
	if got := string(cast(datatype.Varchar, dec(15, 1))); got != "1.5" {
		t.Errorf("CAST(1.5 AS text) = %q", got)
	}
	a := &Aggregate{Kind: AggSum, Type: datatype.Decimal}
	var st AggState
	a.Add(&st, huge)
	a.Add(&st, dec(1, 0))
	if _, err := a.Result(&st); err == nil || !strings.Contains(err.Error(), "Cannot add decimals") {
		t.Errorf("sum(1E+2147483648, 1): %v, want a refusal", err)
	}
	// avg adds as sum does, from a zero of scale 0: even one such value
	// is refused.
	for _, v := range [][]byte{huge, tiny, negHuge} {
		avg := &Aggregate{Kind: AggAvg, Type: datatype.Decimal}
		var st AggState
		avg.Add(&st, v)
		if _, err := avg.Result(&st); err == nil || !strings.Contains(err.Error(), "Cannot add decimals") {
			t.Errorf("avg(%x): %v, want a refusal", v, err)
		}
	}
	// Near scales still add exactly.
	var ok AggState
	a.Add(&ok, dec(15, 1))
	a.Add(&ok, dec(1, 3))
	if v, err := a.Result(&ok); err != nil {
		t.Fatal(err)
	} else if u, s, _ := types.DecodeDecimal(v); types.BigDecimalString(u, s, false) != "1.501" {
		t.Errorf("sum(1.5, 0.001) = %s", types.BigDecimalString(u, s, false))
	}
}
