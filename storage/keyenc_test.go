package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// ---- serialization helpers (protocol v4, as a driver sends values) ----

func ser32(v int32) []byte   { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func ser64(v int64) []byte   { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func ser16(v int16) []byte   { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func ser8(v int8) []byte     { return []byte{byte(v)} }
func serU32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func serF32(f float32) []byte {
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(f))
}
func serF64(f float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
}
func serF32Bits(u uint32) []byte { return binary.BigEndian.AppendUint32(nil, u) }
func serF64Bits(u uint64) []byte { return binary.BigEndian.AppendUint64(nil, u) }

func serUUID(t testing.TB, s string) []byte {
	t.Helper()
	b := mustHex(t, strings.ReplaceAll(s, "-", ""))
	if len(b) != 16 {
		t.Fatalf("bad uuid %q", s)
	}
	return b
}

func bigFromString(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big int " + s)
	}
	return x
}

func serVarint(s string) []byte { return bigToTwos(bigFromString(s)) }

func serDecimal(unscaled string, scale int32) []byte {
	return append(ser32(scale), bigToTwos(bigFromString(unscaled))...)
}

func serCollection(elems ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(elems)))
	for _, e := range elems {
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// serMap takes key, value, key, value...
func serMap(kv ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(kv)/2))
	for _, e := range kv {
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

// serTuple serializes fields; a nil field is null.
func serTuple(fields ...[]byte) []byte {
	b := []byte{}
	for _, f := range fields {
		if f == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

var empty = []byte{}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func mustKey(t testing.TB, typ datatype.DataType, v []byte, desc bool) []byte {
	t.Helper()
	k, err := AppendKey(nil, typ, v, desc)
	if err != nil {
		t.Fatalf("AppendKey(%s, %x, desc=%v): %v", typ.AsCql(), v, desc, err)
	}
	return k
}

// checkRoundTrip decodes k and checks it is one component, canonical
// (re-encoding gives k), and, if want != nil, equal to want.
func checkRoundTrip(t testing.TB, typ datatype.DataType, k []byte, desc bool, want []byte) []byte {
	t.Helper()
	suffix := []byte{0xAB, 0x00, 0xFF} // must come back as rest, untouched
	got, rest, err := DecodeKey(append(append([]byte{}, k...), suffix...), typ, desc)
	if err != nil {
		t.Fatalf("DecodeKey(%s, %x, desc=%v): %v", typ.AsCql(), k, desc, err)
	}
	if !bytes.Equal(rest, suffix) {
		t.Fatalf("DecodeKey(%s, %x): rest %x, want %x", typ.AsCql(), k, rest, suffix)
	}
	if got == nil {
		t.Fatalf("DecodeKey(%s, %x) returned a nil value (null)", typ.AsCql(), k)
	}
	if want != nil && !bytes.Equal(got, want) {
		t.Fatalf("DecodeKey(%s, %x) = %x, want %x", typ.AsCql(), k, got, want)
	}
	again := mustKey(t, typ, got, desc)
	if !bytes.Equal(again, k) {
		t.Fatalf("%s: re-encoding decoded %x gives %x, want %x", typ.AsCql(), got, again, k)
	}
	return got
}

// orderCase lists values of one type in Cassandra's order; values inside one
// group compare equal in Cassandra. canon, when set for a group, is what
// DecodeKey must return for every value of the group; otherwise DecodeKey
// must return the value itself.
type orderCase struct {
	name   string
	typ    datatype.DataType
	groups [][][]byte
	canon  map[int][]byte
}

func g(vs ...[]byte) [][]byte { return vs }

func checkOrder(t *testing.T, oc orderCase) {
	t.Helper()
	type item struct {
		group int
		v     []byte
		asc   []byte
		desc  []byte
	}
	var items []item
	for gi, grp := range oc.groups {
		for _, v := range grp {
			it := item{group: gi, v: v, asc: mustKey(t, oc.typ, v, false), desc: mustKey(t, oc.typ, v, true)}
			want := v
			if c, ok := oc.canon[gi]; ok {
				want = c
			}
			checkRoundTrip(t, oc.typ, it.asc, false, want)
			checkRoundTrip(t, oc.typ, it.desc, true, want)
			items = append(items, it)
		}
	}
	for _, a := range items {
		for _, b := range items {
			want := sign(a.group - b.group)
			if got := sign(bytes.Compare(a.asc, b.asc)); got != want {
				t.Errorf("%s asc: compare(%x, %x) = %d, want %d (keys %x vs %x)", oc.name, a.v, b.v, got, want, a.asc, b.asc)
			}
			if got := sign(bytes.Compare(a.desc, b.desc)); got != -want {
				t.Errorf("%s desc: compare(%x, %x) = %d, want %d", oc.name, a.v, b.v, got, -want)
			}
		}
	}
}

func TestKeyOrderPerType(t *testing.T) {
	u := func(s string) []byte { return serUUID(t, s) }
	nan32 := math.Float32frombits(0x7fc00000)
	cases := []orderCase{
		{name: "int", typ: datatype.Int, groups: [][][]byte{
			g(empty), g(ser32(math.MinInt32)), g(ser32(-65536)), g(ser32(-256)), g(ser32(-1)), g(ser32(0)),
			g(ser32(1)), g(ser32(127)), g(ser32(128)), g(ser32(255)), g(ser32(256)), g(ser32(math.MaxInt32)),
		}},
		{name: "bigint", typ: datatype.Bigint, groups: [][][]byte{
			g(empty), g(ser64(math.MinInt64)), g(ser64(math.MinInt64 + 1)), g(ser64(-1 << 32)), g(ser64(-1)),
			g(ser64(0)), g(ser64(1)), g(ser64(1 << 32)), g(ser64(math.MaxInt64)),
		}},
		{name: "timestamp", typ: datatype.Timestamp, groups: [][][]byte{
			g(empty), g(ser64(-62135596800000)), g(ser64(-1)), g(ser64(0)), g(ser64(1700000000000)), g(ser64(math.MaxInt64)),
		}},
		{name: "smallint", typ: datatype.Smallint, groups: [][][]byte{
			g(ser16(math.MinInt16)), g(ser16(-257)), g(ser16(-1)), g(ser16(0)), g(ser16(1)), g(ser16(255)), g(ser16(math.MaxInt16)),
		}},
		{name: "tinyint", typ: datatype.Tinyint, groups: [][][]byte{
			g(ser8(math.MinInt8)), g(ser8(-1)), g(ser8(0)), g(ser8(1)), g(ser8(math.MaxInt8)),
		}},
		{name: "boolean", typ: datatype.Boolean,
			groups: [][][]byte{g(empty), g([]byte{0}), g([]byte{1}, []byte{2}, []byte{0xFF}, []byte{0x80})},
			canon:  map[int][]byte{2: {1}}},
		{name: "float", typ: datatype.Float, groups: [][][]byte{
			g(empty), g(serF32(float32(math.Inf(-1)))), g(serF32(-math.MaxFloat32)), g(serF32(-1)),
			g(serF32(-math.SmallestNonzeroFloat32)), g(serF32(float32(math.Copysign(0, -1)))), g(serF32(0)),
			g(serF32(math.SmallestNonzeroFloat32)), g(serF32(1)), g(serF32(1.5)), g(serF32(math.MaxFloat32)),
			g(serF32(float32(math.Inf(1)))),
			// Float.compare: every NaN is equal and greater than +Inf.
			g(serF32(nan32), serF32Bits(0x7f800001), serF32Bits(0xffc00000), serF32Bits(0x7fffffff), serF32Bits(0xff800001)),
		}, canon: map[int][]byte{12: serF32Bits(0x7fc00000)}},
		{name: "double", typ: datatype.Double, groups: [][][]byte{
			g(empty), g(serF64(math.Inf(-1))), g(serF64(-math.MaxFloat64)), g(serF64(-2)), g(serF64(-1)),
			g(serF64(-math.SmallestNonzeroFloat64)), g(serF64(math.Copysign(0, -1))), g(serF64(0)),
			g(serF64(math.SmallestNonzeroFloat64)), g(serF64(0.1)), g(serF64(1)), g(serF64(math.MaxFloat64)),
			g(serF64(math.Inf(1))),
			g(serF64(math.NaN()), serF64Bits(0x7ff0000000000001), serF64Bits(0xfff8000000000000), serF64Bits(0xffffffffffffffff)),
		}, canon: map[int][]byte{13: serF64Bits(0x7ff8000000000000)}},
		{name: "text", typ: datatype.Varchar, groups: [][][]byte{
			g(empty), g([]byte{0}), g([]byte{0, 0}), g([]byte{0, 1}), g([]byte{1}), g([]byte("A")), g([]byte("Z")),
			g([]byte("a")), g([]byte("a\x00")), g([]byte("a\x00\x00")), g([]byte("a\x00b")), g([]byte("a\x01")),
			g([]byte("ab")), g([]byte("b")), g([]byte("z")), g([]byte("é")), g([]byte("é\x00")), g([]byte("日本")),
			g([]byte("😀")), g([]byte{0xFF}), g([]byte{0xFF, 0x00}), g([]byte{0xFF, 0xFF}),
		}},
		{name: "ascii", typ: datatype.Ascii, groups: [][][]byte{
			g(empty), g([]byte(" ")), g([]byte("0")), g([]byte("A")), g([]byte("AA")), g([]byte("a")), g([]byte("~")),
		}},
		{name: "blob", typ: datatype.Blob, groups: [][][]byte{
			g(empty), g([]byte{0x00}), g([]byte{0x00, 0x00}), g([]byte{0x00, 0x00, 0x00}), g([]byte{0x00, 0x01}),
			g([]byte{0x00, 0xFF}), g([]byte{0x01}), g([]byte{0x7F}), g([]byte{0x80}), g([]byte{0xFE, 0xFF}),
			g([]byte{0xFF}), g([]byte{0xFF, 0x00}), g([]byte{0xFF, 0xFF}),
		}},
		// InetAddressType is BYTE_ORDER: raw address bytes, shorter prefix
		// first, so IPv4 and IPv6 interleave.
		{name: "inet", typ: datatype.Inet, groups: [][][]byte{
			g(empty), g(mustHex(t, "00000000000000000000000000000001")), g([]byte{1, 2, 3, 4}),
			g(mustHex(t, "01020304000000000000000000000000")), g([]byte{10, 0, 0, 1}), g([]byte{127, 0, 0, 1}),
			g([]byte{192, 168, 0, 1}), g(mustHex(t, "fe800000000000000000000000000001")), g([]byte{255, 255, 255, 255}),
			g(mustHex(t, "ffffffffffffffffffffffffffffffff")),
		}},
		// SimpleDateType is BYTE_ORDER on an unsigned int with 2^31 = epoch.
		{name: "date", typ: datatype.Date, groups: [][][]byte{
			g(empty), g(serU32(0)), g(serU32(1)), g(serU32(1<<31 - 1)), g(serU32(1 << 31)), g(serU32(1<<31 + 19000)), g(serU32(math.MaxUint32)),
		}},
		{name: "time", typ: datatype.Time, groups: [][][]byte{
			g(empty), g(ser64(0)), g(ser64(1)), g(ser64(3600e9)), g(ser64(86399999999999)),
		}},
		// UUIDType: version first; v1 by timestamp then lsb unsigned;
		// other versions msb unsigned then lsb unsigned.
		{name: "uuid", typ: datatype.Uuid, groups: [][][]byte{
			g(empty),
			g(u("00000000-0000-0000-0000-000000000000")),
			g(u("ffffffff-ffff-0fff-ffff-ffffffffffff")), // version 0, max
			// v1: ordered by timestamp (time_hi, time_mid, time_low), not by bytes
			g(u("ffffffff-0000-1000-8000-000000000000")),
			g(u("00000000-0001-1000-8000-000000000000")),
			g(u("00000000-0000-1001-0000-000000000000")),
			g(u("00000000-0000-1001-8000-000000000000")), // lsb unsigned: 80 > 00
			g(u("00000000-0000-1001-ff00-000000000000")),
			g(u("00000000-0000-1fff-0000-000000000000")),
			// v2..v4: unsigned msb with the version nibble set aside
			g(u("ffffffff-ffff-2fff-ffff-ffffffffffff")),
			g(u("00000000-0000-4000-0000-000000000000")),
			g(u("00000000-0000-4000-8000-000000000000")),
			g(u("00000000-0001-4000-0000-000000000000")),
			g(u("7fffffff-ffff-4fff-bfff-ffffffffffff")),
			g(u("80000000-0000-4000-8000-000000000000")),
			g(u("ffffffff-ffff-4fff-ffff-ffffffffffff")),
			g(u("00000000-0000-5000-0000-000000000000")),
			g(u("00000000-0000-f000-0000-000000000000")),
		}},
		// TimeUUIDType: timestamp, then the lsb as *signed* bytes.
		{name: "timeuuid", typ: datatype.Timeuuid, groups: [][][]byte{
			g(empty),
			g(u("00000000-0000-1000-8000-000000000000")), // lsb byte 0x80 = -128 first
			g(u("00000000-0000-1000-ff00-000000000000")), // 0xff = -1
			g(u("00000000-0000-1000-0000-000000000000")), // 0x00
			g(u("00000000-0000-1000-7f00-800000000000")), // 0x7f, then 0x80 = -128
			g(u("00000000-0000-1000-7f00-000000000000")), // 0x7f, then 0x00
			g(u("00000000-0000-1000-7f00-7f0000000000")), // 0x7f, then 0x7f
			g(u("ffffffff-0000-1000-8000-000000000000")),
			g(u("00000000-0001-1000-8000-000000000000")),
			g(u("00000000-ffff-1000-8000-000000000000")),
			g(u("00000000-0000-1001-8000-000000000000")),
			g(u("13814000-1dd2-11b2-8080-808080808080")), // minTimeuuid-like
			g(u("ffffffff-ffff-1fff-7f7f-7f7f7f7f7f7f")),
		}},
		// IntegerType.compareIntegers: numeric, padding ignored.
		{name: "varint", typ: datatype.Varint, groups: [][][]byte{
			g(empty),
			g(serVarint("-" + strings.Repeat("9", 400))),
			g(serVarint("-340282366920938463463374607431768211457")),
			g(serVarint("-340282366920938463463374607431768211456")),
			g(serVarint("-9223372036854775809")),
			g(serVarint("-9223372036854775808"), ser64(math.MinInt64)),
			g(serVarint("-257")),
			g(serVarint("-256"), []byte{0xFF, 0x00}, []byte{0xFF, 0xFF, 0x00}),
			g(serVarint("-129")),
			g(serVarint("-128"), []byte{0xFF, 0x80}),
			g(serVarint("-2")),
			g(serVarint("-1"), []byte{0xFF, 0xFF}, []byte{0xFF, 0xFF, 0xFF, 0xFF}),
			g(serVarint("0"), []byte{0, 0}, []byte{0, 0, 0, 0, 0}),
			g(serVarint("1"), []byte{0, 1}, ser32(1), ser64(1)),
			g(serVarint("127")),
			g(serVarint("128"), []byte{0, 0, 0x80}),
			g(serVarint("255")),
			g(serVarint("256")),
			g(serVarint("65535")),
			g(serVarint("65536")),
			g(serVarint("9223372036854775807")),
			g(serVarint("9223372036854775808")),
			g(serVarint("340282366920938463463374607431768211456")),
			g(serVarint(strings.Repeat("9", 400))),
		}, canon: map[int][]byte{
			5: serVarint("-9223372036854775808"), 7: serVarint("-256"), 9: serVarint("-128"), 11: serVarint("-1"),
			12: serVarint("0"), 13: serVarint("1"), 15: serVarint("128"),
		}},
		// DecimalType: BigDecimal.compareTo, numeric whatever the scale.
		{name: "decimal", typ: datatype.Decimal, groups: [][][]byte{
			g(empty),
			g(serDecimal("-1", math.MinInt32)), // -1E+2147483648
			g(serDecimal("-123", -100)),
			g(serDecimal("-1", -40)),
			g(serDecimal("-1001", 0)),
			g(serDecimal("-1000", 0), serDecimal("-1", -3), serDecimal("-10000", 1)),
			g(serDecimal("-999", 0)),
			g(serDecimal("-100", 0)),
			g(serDecimal("-99", 0)),
			g(serDecimal("-11", 1)),
			g(serDecimal("-101", 2)),
			g(serDecimal("-1", 0), serDecimal("-10", 1), serDecimal("-100", 2)),
			g(serDecimal("-99", 2)),
			g(serDecimal("-1", 1)),
			g(serDecimal("-5", 2)),
			g(serDecimal("-1", 2)),
			g(serDecimal("-1", math.MaxInt32)),
			g(serDecimal("0", 0), serDecimal("0", 5), serDecimal("0", -5), serDecimal("0", math.MinInt32), append(ser32(3), 0, 0)),
			g(serDecimal("1", math.MaxInt32)),
			g(serDecimal("1", 400)),
			g(serDecimal("1", 2), serDecimal("10", 3)),
			g(serDecimal("101", 4)),
			g(serDecimal("11", 3)),
			g(serDecimal("1", 1)),
			g(serDecimal("1", 0), serDecimal("10", 1), serDecimal("1000", 3)),
			g(serDecimal("1000001", 6)),
			g(serDecimal("11", 1)),
			g(serDecimal("15", 1), serDecimal("150", 2)),
			g(serDecimal("99", 1)),
			g(serDecimal("99", 0)),
			g(serDecimal("100", 0), serDecimal("1", -2)),
			g(serDecimal("101", 0)),
			g(serDecimal("123456789012345678901234567890", 0)),
			g(serDecimal("1", -40)),
			g(serDecimal("2", -40)),
			g(serDecimal("12", -40)),
			g(serDecimal("1", math.MinInt32)),
			g(serDecimal("1000", math.MinInt32)), // canonical scale below MinInt32: padded back
		}, canon: map[int][]byte{
			5:  serDecimal("-1000", 0),
			11: serDecimal("-1", 0),
			17: serDecimal("0", 0),
			20: serDecimal("1", 2),
			24: serDecimal("1", 0),
			27: serDecimal("15", 1),
			30: serDecimal("100", 0),
		}},
	}
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) { checkOrder(t, oc) })
	}
}

func TestKeyOrderCollections(t *testing.T) {
	i := ser32
	s := func(x string) []byte { return []byte(x) }
	cases := []orderCase{
		// ListType.compareListOrSet: empty value first, then element by
		// element, a prefix before the longer list.
		{name: "list<int>", typ: datatype.NewList(datatype.Int), groups: [][][]byte{
			g(empty), g(serCollection()), g(serCollection(empty)), g(serCollection(empty, i(5))),
			g(serCollection(i(-5))), g(serCollection(i(-5), i(0))), g(serCollection(i(1))),
			g(serCollection(i(1), i(-1))), g(serCollection(i(1), i(1))), g(serCollection(i(1), i(1), i(1))),
			g(serCollection(i(2))),
		}},
		{name: "list<text>", typ: datatype.NewList(datatype.Varchar), groups: [][][]byte{
			g(empty), g(serCollection()), g(serCollection(s(""))), g(serCollection(s(""), s(""))),
			g(serCollection(s("\x00"))), g(serCollection(s("a"))), g(serCollection(s("a"), s(""))),
			g(serCollection(s("a\x00"))), g(serCollection(s("ab"))), g(serCollection(s("b"))),
		}},
		// Frozen sets: order of the serialized elements does not matter and
		// duplicates collapse, as Cassandra stores frozen sets sorted.
		{name: "set<int>", typ: datatype.NewSet(datatype.Int), groups: [][][]byte{
			g(empty), g(serCollection()),
			g(serCollection(i(-1))),
			g(serCollection(i(-1), i(3)), serCollection(i(3), i(-1)), serCollection(i(3), i(-1), i(3))),
			g(serCollection(i(1))),
			g(serCollection(i(1), i(2)), serCollection(i(2), i(1))),
		}, canon: map[int][]byte{3: serCollection(i(-1), i(3)), 5: serCollection(i(1), i(2))}},
		{name: "set<varint>", typ: datatype.NewSet(datatype.Varint), groups: [][][]byte{
			g(serCollection(serVarint("1"), serVarint("2")),
				serCollection([]byte{0, 2}, serVarint("1"), []byte{0, 0, 1})),
		}, canon: map[int][]byte{0: serCollection(serVarint("1"), serVarint("2"))}},
		// MapType.compareMaps: key, value, key, value...
		{name: "map<text,int>", typ: datatype.NewMap(datatype.Varchar, datatype.Int), groups: [][][]byte{
			g(empty), g(serMap()),
			g(serMap(s("a"), i(-1))),
			g(serMap(s("a"), i(1))),
			g(serMap(s("a"), i(1), s("b"), i(0)), serMap(s("b"), i(0), s("a"), i(1)), serMap(s("a"), i(7), s("b"), i(0), s("a"), i(1))),
			g(serMap(s("a"), i(2))),
			g(serMap(s("b"), i(0))),
		}, canon: map[int][]byte{4: serMap(s("a"), i(1), s("b"), i(0))}},
	}
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) { checkOrder(t, oc) })
	}
}

func TestKeyOrderTuples(t *testing.T) {
	i := ser32
	s := func(x string) []byte { return []byte(x) }
	tup := datatype.NewTuple(datatype.Int, datatype.Varchar, datatype.NewList(datatype.Bigint))
	udt, err := datatype.NewUserDefined("ks", "addr", []string{"street", "number"}, []datatype.DataType{datatype.Varchar, datatype.Int})
	if err != nil {
		t.Fatal(err)
	}
	nested := datatype.NewTuple(datatype.NewTuple(datatype.Int, datatype.Int), datatype.Varchar)
	cases := []orderCase{
		// TupleType.compareCustom: field by field; null before any value;
		// a missing trailing field equals a null one.
		{name: "tuple<int,text,list<bigint>>", typ: tup, groups: [][][]byte{
			g(empty),
			g(serTuple(nil, nil, nil), serTuple(nil), serTuple(nil, nil)),
			g(serTuple(nil, s("a"), nil)),
			g(serTuple(empty, nil, nil), serTuple(empty)),
			g(serTuple(empty, s(""), nil)),
			g(serTuple(i(-1), nil, nil), serTuple(i(-1)), serTuple(i(-1), nil)),
			g(serTuple(i(-1), s(""), nil), serTuple(i(-1), s(""))),
			g(serTuple(i(-1), s(""), serCollection())),
			g(serTuple(i(-1), s(""), serCollection(ser64(1)))),
			g(serTuple(i(-1), s("a"), nil)),
			g(serTuple(i(0), nil, nil)),
			g(serTuple(i(0), nil, serCollection())),
			g(serTuple(i(0), s("a"), nil)),
		}, canon: map[int][]byte{
			1: serTuple(nil, nil, nil), 3: serTuple(empty, nil, nil), 5: serTuple(i(-1), nil, nil),
			6: serTuple(i(-1), s(""), nil),
		}},
		{name: "udt<text,int>", typ: udt, groups: [][][]byte{
			g(empty),
			g(serTuple(nil, nil), serTuple(nil)),
			g(serTuple(nil, i(3))),
			g(serTuple(s(""), nil), serTuple(s(""))),
			g(serTuple(s("Main St"), i(1))),
			g(serTuple(s("Main St"), i(10))),
			g(serTuple(s("Main St\x00"), i(-4))),
		}, canon: map[int][]byte{1: serTuple(nil, nil), 3: serTuple(s(""), nil)}},
		{name: "nested tuple", typ: nested, groups: [][][]byte{
			g(empty),
			g(serTuple(nil, nil)),
			g(serTuple(empty, nil)),
			g(serTuple(serTuple(nil, nil), nil), serTuple(serTuple(nil))),
			g(serTuple(serTuple(i(1), nil), s("z"))),
			g(serTuple(serTuple(i(1), i(0)), s(""))),
			g(serTuple(serTuple(i(1), i(0)), s("a"))),
			g(serTuple(serTuple(i(2)), s(""))),
		}, canon: map[int][]byte{3: serTuple(serTuple(nil, nil), nil), 7: serTuple(serTuple(i(2), nil), s(""))}},
	}
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) { checkOrder(t, oc) })
	}
}

// TestKeyTupleTrailingEmptyQuirk documents the one place we differ from
// Cassandra's TupleType.compareCustom on purpose: its trailing loop skips a
// trailing field of size 0 as if it were null ("if (size > 0) return 1"),
// making (1) == (1, ”) although (1, null) < (1, ”), which no byte order can
// reproduce. We keep (1) == (1, null) < (1, ”).
func TestKeyTupleTrailingEmptyQuirk(t *testing.T) {
	typ := datatype.NewTuple(datatype.Int, datatype.Varchar)
	short := mustKey(t, typ, serTuple(ser32(1)), false)
	withNull := mustKey(t, typ, serTuple(ser32(1), nil), false)
	withEmpty := mustKey(t, typ, serTuple(ser32(1), empty), false)
	if !bytes.Equal(short, withNull) {
		t.Fatalf("(1) and (1, null) differ: %x vs %x", short, withNull)
	}
	if bytes.Compare(withNull, withEmpty) >= 0 {
		t.Fatalf("(1, null) should sort before (1, ''): %x vs %x", withNull, withEmpty)
	}
}

func TestKeyErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  datatype.DataType
		v    []byte
	}{
		{"counter", datatype.Counter, ser64(1)},
		{"duration", datatype.Duration, []byte{2, 4, 6}},
		{"list<duration>", datatype.NewList(datatype.Duration), serCollection([]byte{2, 4, 6})},
		{"custom", datatype.NewCustom("org.apache.cassandra.db.marshal.DateRangeType"), []byte{1}},
		{"int 3 bytes", datatype.Int, []byte{1, 2, 3}},
		{"int 5 bytes", datatype.Int, []byte{1, 2, 3, 4, 5}},
		{"bigint 4 bytes", datatype.Bigint, ser32(1)},
		{"timestamp 7 bytes", datatype.Timestamp, make([]byte, 7)},
		{"smallint empty", datatype.Smallint, empty},
		{"smallint 4 bytes", datatype.Smallint, ser32(1)},
		{"tinyint empty", datatype.Tinyint, empty},
		{"boolean 2 bytes", datatype.Boolean, []byte{0, 1}},
		{"float 8 bytes", datatype.Float, serF64(1)},
		{"double 4 bytes", datatype.Double, serF32(1)},
		{"uuid 15 bytes", datatype.Uuid, make([]byte, 15)},
		{"LexicalUUIDType 15 bytes", datatype.NewCustom(lexicalUUIDType), make([]byte, 15)},
		{"other custom type", datatype.NewCustom("org.apache.cassandra.db.marshal.BytesType"), make([]byte, 15)},
		{"timeuuid 17 bytes", datatype.Timeuuid, make([]byte, 17)},
		{"date 8 bytes", datatype.Date, ser64(1)},
		{"time 4 bytes", datatype.Time, ser32(1)},
		{"inet 5 bytes", datatype.Inet, make([]byte, 5)},
		{"decimal scale only", datatype.Decimal, ser32(1)},
		{"decimal 3 bytes", datatype.Decimal, []byte{0, 0, 1}},
		{"decimal beyond the decodable range", datatype.Decimal, append(ser32(math.MinInt32), bigToTwos(new(big.Int).Exp(big.NewInt(10), big.NewInt(decimalMaxPad+1), nil))...)},
		{"list truncated count", datatype.NewList(datatype.Int), []byte{0, 0, 1}},
		{"list negative count", datatype.NewList(datatype.Int), ser32(-1)},
		{"list count too big", datatype.NewList(datatype.Int), ser32(3)},
		{"list null element", datatype.NewList(datatype.Int), append(ser32(1), ser32(-1)...)},
		{"list truncated element", datatype.NewList(datatype.Int), append(ser32(1), append(ser32(4), 1, 2)...)},
		{"list trailing bytes", datatype.NewList(datatype.Int), append(serCollection(ser32(1)), 0)},
		{"list bad element", datatype.NewList(datatype.Int), serCollection([]byte{1})},
		{"set bad element", datatype.NewSet(datatype.Int), serCollection([]byte{1})},
		{"map odd", datatype.NewMap(datatype.Int, datatype.Int), append(ser32(1), append(ser32(4), ser32(1)...)...)},
		{"map bad value", datatype.NewMap(datatype.Int, datatype.Int), serMap(ser32(1), []byte{1})},
		{"tuple too many fields", datatype.NewTuple(datatype.Int), serTuple(ser32(1), ser32(2))},
		{"tuple truncated length", datatype.NewTuple(datatype.Int), []byte{0, 0}},
		{"tuple truncated field", datatype.NewTuple(datatype.Int), append(ser32(4), 1)},
		{"tuple bad field", datatype.NewTuple(datatype.Int), serTuple([]byte{1})},
		{"nil type", nil, ser32(1)},
		{"nil list type", (*datatype.List)(nil), serCollection()},
		{"nil tuple type", (*datatype.Tuple)(nil), serTuple(ser32(1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			out, err := AppendKey(prefix, tc.typ, tc.v, false)
			if err == nil {
				t.Fatalf("AppendKey accepted %x", tc.v)
			}
			if !bytes.Equal(out, []byte("prefix")) {
				t.Fatalf("AppendKey changed dst on error: %q", out)
			}
		})
	}
}

func TestDecodeKeyErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  datatype.DataType
		b    []byte
	}{
		{"empty input int", datatype.Int, nil},
		{"empty input text", datatype.Varchar, nil},
		{"int bad header", datatype.Int, []byte{2, 0, 0, 0, 0}},
		{"int truncated", datatype.Int, []byte{1, 0x80, 0}},
		{"text unterminated", datatype.Varchar, []byte("abc")},
		{"text bad escape", datatype.Varchar, []byte{'a', 0, 2}},
		{"text escape at end", datatype.Varchar, []byte{'a', 0}},
		{"inet wrong length", datatype.Inet, []byte{1, 2, 3, 0, 1}},
		{"boolean 03", datatype.Boolean, []byte{3}},
		{"float non-canonical NaN", datatype.Float, []byte{1, 0xFF, 0x80, 0, 1}},
		{"double non-canonical NaN", datatype.Double, []byte{1, 0xFF, 0xF0, 0, 0, 0, 0, 0, 1}},
		{"varint zero length", datatype.Varint, []byte{2, 0}},
		{"varint non-minimal length prefix", datatype.Varint, []byte{2, 2, 0, 1, 5}},
		{"varint non-minimal digits", datatype.Varint, []byte{2, 1, 2, 0, 1}},
		{"varint sign mismatch", datatype.Varint, []byte{2, 1, 1, 0xFF}},
		{"varint length beyond input", datatype.Varint, []byte{2, 1, 9, 1}},
		{"varint length prefix > 8", datatype.Varint, []byte{2, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"decimal bad header", datatype.Decimal, []byte{4}},
		{"decimal no digits", datatype.Decimal, []byte{3, 0x81, 1, 0}},
		{"decimal digit > 99", datatype.Decimal, []byte{3, 0x81, 1, 101, 0}},
		{"decimal leading zero", datatype.Decimal, []byte{3, 0x81, 1, 1, 0}},
		{"decimal trailing zero", datatype.Decimal, []byte{3, 0x81, 1, 11, 1, 0}},
		{"decimal non-minimal exponent", datatype.Decimal, []byte{3, 0x82, 0, 1, 11, 0}},
		{"decimal exponent prefix > 8", datatype.Decimal, []byte{3, 0x90, 11, 0}},
		{"decimal huge exponent", datatype.Decimal, []byte{3, 0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 11, 0}},
		{"decimal huge negative exponent", datatype.Decimal, append([]byte{3, 0x77}, append(bytes.Repeat([]byte{0}, 8), 11, 0)...)},
		{"decimal exponent MinInt64", datatype.Decimal, []byte{3, 0x77, 0x80, 0, 0, 0, 0, 0, 0, 0, 11, 0}},
		{"decimal unterminated", datatype.Decimal, []byte{3, 0x81, 1, 11}},
		{"list bad marker", datatype.NewList(datatype.Int), []byte{1, 2}},
		{"list unterminated", datatype.NewList(datatype.Int), []byte{1, 1, 0}},
		{"set out of order", datatype.NewSet(datatype.Int), append(append([]byte{1, 1}, mustKey(t, datatype.Int, ser32(2), false)...), append([]byte{1}, append(mustKey(t, datatype.Int, ser32(1), false), 0)...)...)},
		{"set duplicate", datatype.NewSet(datatype.Int), append(append([]byte{1, 1}, mustKey(t, datatype.Int, ser32(1), false)...), append([]byte{1}, append(mustKey(t, datatype.Int, ser32(1), false), 0)...)...)},
		{"tuple trailing null", datatype.NewTuple(datatype.Int, datatype.Int), []byte{1, 1, 0}},
		{"tuple too many fields", datatype.NewTuple(datatype.Int), []byte{1, 1, 1, 0}},
		{"tuple bad marker", datatype.NewTuple(datatype.Int), []byte{1, 3}},
		{"counter", datatype.Counter, []byte{1, 0x80, 0, 0, 0, 0, 0, 0, 0}},
		{"duration", datatype.Duration, []byte{0}},
		{"nil type", nil, []byte{0}},
		{"nil map type", (*datatype.Map)(nil), []byte{1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, desc := range []bool{false, true} {
				b := append([]byte{}, tc.b...)
				if desc {
					complementBytes(b)
				}
				if v, _, err := DecodeKey(b, tc.typ, desc); err == nil {
					t.Fatalf("desc=%v: DecodeKey(%x) = %x, want an error", desc, b, v)
				}
			}
		})
	}
}

func TestKeyEncodingExamples(t *testing.T) {
	// Frozen examples of the on-disk layout: changing any of them changes
	// the order of existing data on disk.
	tests := []struct {
		typ  datatype.DataType
		v    []byte
		want string
	}{
		{datatype.Int, empty, "00"},
		{datatype.Int, ser32(1), "01 80000001"},
		{datatype.Int, ser32(-1), "01 7fffffff"},
		{datatype.Bigint, ser64(math.MinInt64), "01 0000000000000000"},
		{datatype.Smallint, ser16(-1), "7fff"},
		{datatype.Tinyint, ser8(0), "80"},
		{datatype.Boolean, []byte{5}, "02"},
		{datatype.Float, serF32(1), "01 bf800000"},
		{datatype.Float, serF32(-1), "01 407fffff"},
		{datatype.Double, serF64(math.Inf(-1)), "01 000fffffffffffff"},
		{datatype.Varchar, []byte("a\x00b"), "61 00ff 62 0001"},
		{datatype.Blob, empty, "0001"},
		{datatype.Uuid, serUUID(t, "cc520882-9507-44fb-8fc9-b349ecdee658"), "01 4cc52088295074fb 8fc9b349ecdee658"},
		{datatype.Uuid, serUUID(t, "2a92d750-d8dc-11e6-a2de-cf8ecd4cf053"), "01 11e6d8dc2a92d750 a2decf8ecd4cf053"},
		{datatype.Timeuuid, serUUID(t, "2a92d750-d8dc-11e6-a2de-cf8ecd4cf053"), "01 91e6d8dc2a92d750 225e4f0e4dcc70d3"},
		{datatype.Date, serU32(1 << 31), "01 80000000"},
		{datatype.Varint, serVarint("0"), "02 0101 00"},
		{datatype.Varint, serVarint("-1"), "01 fefe ff"},
		{datatype.Varint, serVarint("256"), "02 0102 0100"},
		{datatype.Decimal, serDecimal("0", 7), "02"},
		{datatype.Decimal, serDecimal("1", 0), "03 81 01 0b 00"},
		{datatype.Decimal, serDecimal("11", 1), "03 81 01 0c 00"},
		{datatype.Decimal, serDecimal("1", 2), "03 7f 0b 00"},
		{datatype.Decimal, serDecimal("-1", 0), "01 7e fe f4 ff"},
		{datatype.NewList(datatype.Int), serCollection(ser32(1)), "01 01 0180000001 00"},
		{datatype.NewTuple(datatype.Int, datatype.Int), serTuple(nil, ser32(1)), "01 01 02 0180000001 00"},
	}
	for _, tc := range tests {
		got := mustKey(t, tc.typ, tc.v, false)
		want := mustHex(t, tc.want)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendKey(%s, %x) = %x, want %x", tc.typ.AsCql(), tc.v, got, want)
		}
		gotDesc := mustKey(t, tc.typ, tc.v, true)
		complementBytes(want)
		if !bytes.Equal(gotDesc, want) {
			t.Errorf("AppendKey(%s, %x, desc) = %x, want %x", tc.typ.AsCql(), tc.v, gotDesc, want)
		}
	}
}

func TestDecodeKeyEmptyIsNotNull(t *testing.T) {
	for _, typ := range []datatype.DataType{datatype.Int, datatype.Varchar, datatype.Blob, datatype.Decimal, datatype.Varint,
		datatype.Uuid, datatype.NewList(datatype.Int), datatype.NewTuple(datatype.Int)} {
		for _, desc := range []bool{false, true} {
			k := mustKey(t, typ, nil, desc)
			v, rest, err := DecodeKey(k, typ, desc)
			if err != nil || v == nil || len(v) != 0 || len(rest) != 0 {
				t.Fatalf("%s desc=%v: DecodeKey(%x) = %v, %x, %v", typ.AsCql(), desc, k, v, rest, err)
			}
		}
	}
}

func TestAppendKeyAppends(t *testing.T) {
	dst := []byte("head")
	out := mustKey(t, datatype.Varchar, []byte("x"), false)
	got, err := AppendKey(dst, datatype.Varchar, []byte("x"), true)
	if err != nil {
		t.Fatal(err)
	}
	complementBytes(out)
	if !bytes.Equal(got, append([]byte("head"), out...)) {
		t.Fatalf("AppendKey with a prefix = %x", got)
	}
}

// ---- reference comparators: literal ports of Cassandra 4.0's Java ----

// refCompareIntegers ports IntegerType.compareIntegers.
func refCompareIntegers(l, r []byte) int {
	if len(l) == 0 {
		if len(r) == 0 {
			return 0
		}
		return -1
	}
	if len(r) == 0 {
		return 1
	}
	msbIdx := func(v []byte) int {
		i := 0
		for ; i < len(v)-1; i++ {
			b0 := int8(v[i])
			if b0 != 0 && b0 != -1 {
				break
			}
			b1 := int8(v[i+1])
			if b0 == 0 && b1 != 0 {
				if b1 > 0 {
					i++
				}
				break
			}
			if b0 == -1 && b1 != -1 {
				if b1 < 0 {
					i++
				}
				break
			}
		}
		return i
	}
	li, ri := msbIdx(l), msbIdx(r)
	ld, rd := len(l)-li, len(r)-ri
	lm, rm := int8(l[li]), int8(r[ri])
	if ld != rd {
		if lm < 0 {
			if rm < 0 {
				return rd - ld
			}
			return -1
		}
		if rm < 0 {
			return 1
		}
		return ld - rd
	}
	if lm != rm {
		return int(lm) - int(rm)
	}
	for li++; li < len(l); li++ {
		ri++
		if l[li] != r[ri] {
			return int(l[li]) - int(r[ri])
		}
	}
	return 0
}

// refCompareDecimal compares decimals numerically (BigDecimal.compareTo)
// for scales small enough to use exact rationals.
func refCompareDecimal(l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	rat := func(v []byte) *big.Rat {
		scale := int32(binary.BigEndian.Uint32(v))
		x := new(big.Rat).SetInt(twosToBig(v[4:]))
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(scale))), nil))
		if scale >= 0 {
			return x.Quo(x, p)
		}
		return x.Mul(x, p)
	}
	return rat(l).Cmp(rat(r))
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// refCompareUUID ports UUIDType.compareCustom (4.0).
// refCompareLexicalUUID is LexicalUUIDType.compareCustom:
// java.util.UUID.compareTo, the most then the least significant half as
// signed numbers; empty first.
func refCompareLexicalUUID(l, r []byte) int {
	if len(l) != 16 || len(r) != 16 {
		return sign(len(l) - len(r))
	}
	for _, off := range []int{0, 8} {
		a, b := int64(binary.BigEndian.Uint64(l[off:])), int64(binary.BigEndian.Uint64(r[off:]))
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}

func refCompareUUID(l, r []byte) int {
	if len(l) != 16 || len(r) != 16 {
		return sign(len(l) - len(r))
	}
	msb1, msb2 := binary.BigEndian.Uint64(l), binary.BigEndian.Uint64(r)
	v1, v2 := int((msb1>>12)&0xf), int((msb2>>12)&0xf)
	if v1 != v2 {
		return v1 - v2
	}
	if v1 == 1 {
		a, b := int64(timeUUIDReorder(msb1)), int64(timeUUIDReorder(msb2))
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	} else if msb1 != msb2 {
		if msb1 < msb2 {
			return -1
		}
		return 1
	}
	lsb1, lsb2 := binary.BigEndian.Uint64(l[8:]), binary.BigEndian.Uint64(r[8:])
	switch {
	case lsb1 < lsb2:
		return -1
	case lsb1 > lsb2:
		return 1
	}
	return 0
}

// refCompareTimeUUID ports TimeUUIDType.compareCustom (4.0).
func refCompareTimeUUID(l, r []byte) int {
	if len(l) != 16 || len(r) != 16 {
		return sign(len(l) - len(r))
	}
	a, b := int64(timeUUIDReorder(binary.BigEndian.Uint64(l))), int64(timeUUIDReorder(binary.BigEndian.Uint64(r)))
	if a != b {
		if a < b {
			return -1
		}
		return 1
	}
	// signedBytesToNativeLong: first byte unchanged, the others XOR 0x80,
	// then Long.compare.
	c, d := int64(binary.BigEndian.Uint64(l[8:])^0x0080808080808080), int64(binary.BigEndian.Uint64(r[8:])^0x0080808080808080)
	switch {
	case c < d:
		return -1
	case c > d:
		return 1
	}
	return 0
}

// refCompareDouble is Double.compare via doubleToLongBits semantics.
func refCompareDouble(l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	a, b := math.Float64frombits(binary.BigEndian.Uint64(l)), math.Float64frombits(binary.BigEndian.Uint64(r))
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	// equal as numbers: -0.0 < 0.0
	return sign(int(^binary.BigEndian.Uint64(l)>>63) - int(^binary.BigEndian.Uint64(r)>>63))
}

func refCompareInt32(l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	a, b := int32(binary.BigEndian.Uint32(l)), int32(binary.BigEndian.Uint32(r))
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refCompareTuple ports TupleType.compareCustom for the given field
// comparators, with the trailing-field loop treating only nulls (size < 0)
// as absent (see TestKeyTupleTrailingEmptyQuirk).
func refCompareTuple(cmps []func(a, b []byte) int, l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	o1, o2 := 0, 0
	for i := 0; len(l)-o1 > 0 && len(r)-o2 > 0; i++ {
		s1 := int32(binary.BigEndian.Uint32(l[o1:]))
		o1 += 4
		s2 := int32(binary.BigEndian.Uint32(r[o2:]))
		o2 += 4
		if s1 < 0 {
			if s2 < 0 {
				continue
			}
			return -1
		}
		if s2 < 0 {
			return 1
		}
		v1, v2 := l[o1:o1+int(s1)], r[o2:o2+int(s2)]
		o1 += int(s1)
		o2 += int(s2)
		if c := cmps[i](v1, v2); c != 0 {
			return c
		}
	}
	for len(l)-o1 > 0 {
		s := int32(binary.BigEndian.Uint32(l[o1:]))
		o1 += 4
		if s >= 0 {
			return 1
		}
	}
	for len(r)-o2 > 0 {
		s := int32(binary.BigEndian.Uint32(r[o2:]))
		o2 += 4
		if s >= 0 {
			return -1
		}
	}
	return 0
}

// refCompareList ports ListType.compareListOrSet.
func refCompareList(cmp func(a, b []byte) int, l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	el, _ := collectionElems(l, 1, "list")
	er, _ := collectionElems(r, 1, "list")
	for i := 0; i < len(el) && i < len(er); i++ {
		if c := cmp(el[i], er[i]); c != 0 {
			return c
		}
	}
	return sign(len(el) - len(er))
}

// ---- random value generators ----

func randVarint(rng *rand.Rand) []byte {
	n := rng.Intn(20)
	if rng.Intn(4) == 0 {
		n = rng.Intn(300)
	}
	if n == 0 {
		if rng.Intn(3) == 0 {
			return []byte{}
		}
		n = 1
	}
	v := make([]byte, n)
	rng.Read(v)
	// Redundant sign padding and small magnitudes, to exercise
	// findMostSignificantByte and length ties.
	switch rng.Intn(4) {
	case 0:
		for i := 0; i < n-1 && rng.Intn(3) != 0; i++ {
			v[i] = 0
		}
	case 1:
		for i := 0; i < n-1 && rng.Intn(3) != 0; i++ {
			v[i] = 0xFF
		}
	}
	return v
}

func randDecimal(rng *rand.Rand) []byte {
	if rng.Intn(20) == 0 {
		return []byte{}
	}
	digits := rng.Intn(40) + 1
	s := fmt.Sprint(rng.Intn(10))
	for i := 1; i < digits; i++ {
		s += fmt.Sprint(rng.Intn(10))
	}
	if rng.Intn(3) == 0 {
		s += strings.Repeat("0", rng.Intn(6))
	}
	if rng.Intn(2) == 0 {
		s = "-" + s
	}
	return serDecimal(s, int32(rng.Intn(81)-40))
}

func randUUID(rng *rand.Rand) []byte {
	v := make([]byte, 16)
	rng.Read(v)
	switch rng.Intn(3) {
	case 0:
		v[6] = v[6]&0x0f | 0x10
	case 1:
		v[6] = v[6]&0x0f | 0x40
	}
	if rng.Intn(3) == 0 {
		copy(v[:6], []byte{0, 0, 0, 0, 0, 0}) // timestamp ties
	}
	if rng.Intn(3) == 0 {
		v[8] = []byte{0x00, 0x7f, 0x80, 0xff}[rng.Intn(4)]
	}
	return v
}

func randDouble(rng *rand.Rand) []byte {
	specials := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.SmallestNonzeroFloat64}
	switch rng.Intn(4) {
	case 0:
		return serF64(specials[rng.Intn(len(specials))])
	case 1:
		return []byte{}
	case 2:
		return serF64Bits(rng.Uint64())
	}
	return serF64(rng.NormFloat64() * 1000)
}

func randInt32(rng *rand.Rand) []byte {
	if rng.Intn(10) == 0 {
		return []byte{}
	}
	return ser32(int32(rng.Intn(7) - 3))
}

func randText(rng *rand.Rand) []byte {
	alphabet := []byte{0, 0, 1, 'a', 'b', 0xff}
	v := make([]byte, rng.Intn(4))
	for i := range v {
		v[i] = alphabet[rng.Intn(len(alphabet))]
	}
	return v
}

func randTuple(rng *rand.Rand) []byte {
	if rng.Intn(10) == 0 {
		return []byte{}
	}
	n := rng.Intn(4)
	fields := make([][]byte, n)
	for i := range fields {
		if rng.Intn(3) == 0 {
			continue // null
		}
		switch i {
		case 0:
			fields[i] = randInt32(rng)
		case 1:
			fields[i] = randText(rng)
		case 2:
			fields[i] = randDouble(rng)
		}
	}
	return serTuple(fields...)
}

func randIntList(rng *rand.Rand) []byte {
	if rng.Intn(10) == 0 {
		return []byte{}
	}
	elems := make([][]byte, rng.Intn(4))
	for i := range elems {
		elems[i] = randInt32(rng)
	}
	return serCollection(elems...)
}

// TestKeyOrderMatchesReferenceComparators compares the encoding order with
// ports of Cassandra's comparators on many random values, both directions,
// and checks that DecodeKey gives back a value the comparator finds equal.
func TestKeyOrderMatchesReferenceComparators(t *testing.T) {
	tupleType := datatype.NewTuple(datatype.Int, datatype.Varchar, datatype.Double)
	tupleCmps := []func(a, b []byte) int{refCompareInt32, bytes.Compare, refCompareDouble}
	tests := []struct {
		name string
		typ  datatype.DataType
		gen  func(*rand.Rand) []byte
		cmp  func(a, b []byte) int
	}{
		{"varint", datatype.Varint, randVarint, refCompareIntegers},
		{"decimal", datatype.Decimal, randDecimal, refCompareDecimal},
		{"uuid", datatype.Uuid, randUUID, refCompareUUID},
		{"LexicalUUIDType", datatype.NewCustom(lexicalUUIDType), randUUID, refCompareLexicalUUID},
		{"timeuuid", datatype.Timeuuid, randUUID, refCompareTimeUUID},
		{"double", datatype.Double, randDouble, refCompareDouble},
		{"text", datatype.Varchar, randText, bytes.Compare},
		{"tuple<int,text,double>", tupleType, randTuple, func(a, b []byte) int { return refCompareTuple(tupleCmps, a, b) }},
		{"list<int>", datatype.NewList(datatype.Int), randIntList, func(a, b []byte) int { return refCompareList(refCompareInt32, a, b) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(42))
			vals := make([][]byte, 300)
			asc := make([][]byte, len(vals))
			desc := make([][]byte, len(vals))
			for i := range vals {
				vals[i] = tc.gen(rng)
				asc[i] = mustKey(t, tc.typ, vals[i], false)
				desc[i] = mustKey(t, tc.typ, vals[i], true)
				got := checkRoundTrip(t, tc.typ, asc[i], false, nil)
				checkRoundTrip(t, tc.typ, desc[i], true, got)
				if c := tc.cmp(got, vals[i]); c != 0 {
					t.Fatalf("decoded %x is not equal to %x for Cassandra", got, vals[i])
				}
			}
			for i := range vals {
				for j := range vals {
					want := sign(tc.cmp(vals[i], vals[j]))
					if got := sign(bytes.Compare(asc[i], asc[j])); got != want {
						t.Fatalf("asc: %x vs %x: key order %d, Cassandra %d (keys %x, %x)", vals[i], vals[j], got, want, asc[i], asc[j])
					}
					if got := sign(bytes.Compare(desc[i], desc[j])); got != -want {
						t.Fatalf("desc: %x vs %x: key order %d, want %d", vals[i], vals[j], got, -want)
					}
				}
			}
		})
	}
}

// TestCompositeKeyOrder builds clustering keys of mixed types and directions
// (int ASC, text DESC, timeuuid ASC, varint DESC) by appending components,
// and checks that pebble's bytewise order is the component-wise order and
// that the components decode back one after another.
func TestCompositeKeyOrder(t *testing.T) {
	type comp struct {
		typ  datatype.DataType
		desc bool
		gen  func(*rand.Rand) []byte
		cmp  func(a, b []byte) int
	}
	comps := []comp{
		{datatype.Int, false, randInt32, refCompareInt32},
		{datatype.Varchar, true, randText, bytes.Compare},
		{datatype.Timeuuid, false, func(r *rand.Rand) []byte {
			if r.Intn(2) == 0 {
				return serUUID(t, "00000000-0000-1000-8000-000000000000")
			}
			return randUUID(r)
		}, refCompareTimeUUID},
		{datatype.Varint, true, func(r *rand.Rand) []byte { return serVarint(fmt.Sprint(r.Intn(5) - 2)) }, refCompareIntegers},
	}
	rng := rand.New(rand.NewSource(7))
	type row struct {
		vals [][]byte
		key  []byte
	}
	rows := make([]row, 400)
	for i := range rows {
		for _, c := range comps {
			v := c.gen(rng)
			rows[i].vals = append(rows[i].vals, v)
			var err error
			if rows[i].key, err = AppendKey(rows[i].key, c.typ, v, c.desc); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmpRows := func(a, b row) int {
		for k, c := range comps {
			x := c.cmp(a.vals[k], b.vals[k])
			if c.desc {
				x = -x
			}
			if x != 0 {
				return sign(x)
			}
		}
		return 0
	}
	for i := range rows {
		for j := range rows {
			if got, want := sign(bytes.Compare(rows[i].key, rows[j].key)), cmpRows(rows[i], rows[j]); got != want {
				t.Fatalf("rows %x vs %x: key order %d, want %d", rows[i].vals, rows[j].vals, got, want)
			}
		}
	}
	// Sorting by key is sorting by the reference comparator.
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].key, rows[j].key) < 0 })
	for i := 1; i < len(rows); i++ {
		if cmpRows(rows[i-1], rows[i]) > 0 {
			t.Fatalf("sorted keys out of reference order at %d", i)
		}
	}
	// Decode components one after another.
	for _, r := range rows {
		rest := r.key
		for k, c := range comps {
			var v []byte
			var err error
			if v, rest, err = DecodeKey(rest, c.typ, c.desc); err != nil {
				t.Fatalf("component %d of %x: %v", k, r.key, err)
			}
			if c.cmp(v, r.vals[k]) != 0 {
				t.Fatalf("component %d decoded %x, want %x", k, v, r.vals[k])
			}
		}
		if len(rest) != 0 {
			t.Fatalf("leftover %x", rest)
		}
	}
}

// TestKeyPrefixFree checks that no encoding is a proper prefix of another of
// the same type, which is what makes composite keys compare per component.
func TestKeyPrefixFree(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, tc := range []struct {
		typ datatype.DataType
		gen func(*rand.Rand) []byte
	}{
		{datatype.Varchar, randText},
		{datatype.Varint, randVarint},
		{datatype.Decimal, randDecimal},
		{datatype.NewTuple(datatype.Int, datatype.Varchar, datatype.Double), randTuple},
		{datatype.NewList(datatype.Int), randIntList},
	} {
		for _, desc := range []bool{false, true} {
			keys := map[string]bool{}
			for i := 0; i < 300; i++ {
				keys[string(mustKey(t, tc.typ, tc.gen(rng), desc))] = true
			}
			for a := range keys {
				for b := range keys {
					if a != b && strings.HasPrefix(b, a) {
						t.Fatalf("%s desc=%v: %x is a prefix of %x", tc.typ.AsCql(), desc, a, b)
					}
				}
			}
		}
	}
}
