package storage

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// fuzzKeyType describes how the fuzzers turn arbitrary bytes into a value
// of a type.
type fuzzKeyType struct {
	typ datatype.DataType
	// size > 0: the value is the input cut or zero-padded to size bytes
	// (an empty input stays empty when allowEmpty). size 0: any bytes.
	size       int
	allowEmpty bool
	// mustEncode: every value shaped as above is valid for AppendKey.
	mustEncode bool
	// identity: DecodeKey returns exactly the encoded value.
	identity bool
	// cmp, if set, is a port of Cassandra's comparator, used to check
	// that a canonicalised value is still equal to the original and, in
	// FuzzKeyOrder, that the key order is the comparator's.
	cmp func(a, b []byte) int
}

var fuzzKeyTypes = []fuzzKeyType{
	{typ: datatype.Blob, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Varchar, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Ascii, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Int, size: 4, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareInt32},
	{typ: datatype.Bigint, size: 8, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareSigned},
	{typ: datatype.Timestamp, size: 8, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareSigned},
	{typ: datatype.Uuid, size: 16, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareUUID},
	{typ: datatype.Timeuuid, size: 16, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareTimeUUID},
	{typ: datatype.Double, size: 8, allowEmpty: true, mustEncode: true, cmp: refCompareDouble},
	{typ: datatype.Float, size: 4, allowEmpty: true, mustEncode: true, cmp: refCompareFloat},
	{typ: datatype.Varint, mustEncode: true, cmp: refCompareIntegers},
	{typ: datatype.Decimal, cmp: refCompareDecimalSmall},
	{typ: datatype.Inet, size: 4, allowEmpty: true, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Inet, size: 16, allowEmpty: true, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Boolean, size: 1, allowEmpty: true, mustEncode: true},
	{typ: datatype.Date, size: 4, allowEmpty: true, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Time, size: 8, allowEmpty: true, mustEncode: true, identity: true, cmp: bytes.Compare},
	{typ: datatype.Smallint, size: 2, mustEncode: true, identity: true},
	{typ: datatype.Tinyint, size: 1, mustEncode: true, identity: true},
	{typ: datatype.NewList(datatype.Int)},
	{typ: datatype.NewSet(datatype.Varchar)},
	{typ: datatype.NewMap(datatype.Varchar, datatype.Varint)},
	{typ: datatype.NewTuple(datatype.Int, datatype.Varchar, datatype.Double)},
	{typ: datatype.NewTuple(datatype.NewList(datatype.Decimal), datatype.Boolean)},
	{typ: datatype.NewCustom(lexicalUUIDType), size: 16, allowEmpty: true, mustEncode: true, identity: true, cmp: refCompareLexicalUUID},
}

func (ft fuzzKeyType) shape(data []byte) []byte {
	if ft.size == 0 || (ft.allowEmpty && len(data) == 0) {
		return data
	}
	v := make([]byte, ft.size)
	copy(v, data)
	return v
}

func refCompareSigned(l, r []byte) int {
	if len(l) == 0 || len(r) == 0 {
		return sign(len(l) - len(r))
	}
	a, b := int64(binary.BigEndian.Uint64(l)), int64(binary.BigEndian.Uint64(r))
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// refCompareFloat is Float.compare, through the exact float64 conversion.
func refCompareFloat(l, r []byte) int {
	widen := func(v []byte) []byte {
		if len(v) == 0 {
			return v
		}
		return serF64(float64(math.Float32frombits(binary.BigEndian.Uint32(v))))
	}
	return refCompareDouble(widen(l), widen(r))
}

// refCompareDecimalSmall compares decimals whose scales are small enough
// for exact rationals; others are reported as 0 (unknown) and skipped.
func refCompareDecimalSmall(l, r []byte) int {
	if !decimalSmallOK(l) || !decimalSmallOK(r) {
		return 0
	}
	return refCompareDecimal(l, r)
}

func fuzzSeedKeys(f *testing.F) {
	seeds := [][]byte{
		nil, {0}, {0, 0}, {0xFF}, {0x80}, []byte("hello\x00world"),
		ser32(-1), ser64(1), serF64(-0.0), serF32Bits(0x7fc00001),
		serVarint("-129"), serVarint("123456789012345678901234567890"), {0, 0, 0, 1},
		serDecimal("-1000", 2), serDecimal("0", 5), serDecimal("15", -3), serDecimal("7", -40),
		serCollection(ser32(1), ser32(-2)), serCollection([]byte("b"), []byte("a"), []byte("b")),
		serMap([]byte("k"), serVarint("5"), []byte("a"), []byte{0xFF}),
		serTuple(ser32(3), nil, serF64(2)), serTuple(nil), serTuple(serCollection(serDecimal("1", 1)), []byte{1}),
	}
	for i, s := range seeds {
		f.Add(uint8(i), s, i%2 == 0)
	}
	// LexicalUUIDType, the last type: both halves' sign bits.
	lexical := uint8(len(fuzzKeyTypes) - 1)
	f.Add(lexical, []byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false)
	f.Add(lexical, []byte{}, true)
}

// FuzzKeyRoundTrip: for arbitrary bytes shaped into a value of one of
// fuzzKeyTypes, AppendKey succeeds where it must, DecodeKey returns a
// canonical value (one that re-encodes to the same key and, for most types,
// is the value itself), the rest of the input is untouched, and desc is the
// complement of asc.
func FuzzKeyRoundTrip(f *testing.F) {
	fuzzSeedKeys(f)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, desc bool) {
		ft := fuzzKeyTypes[int(sel)%len(fuzzKeyTypes)]
		v := ft.shape(data)
		k, err := AppendKey(nil, ft.typ, v, desc)
		if err != nil {
			if ft.mustEncode {
				t.Fatalf("AppendKey(%s, %x): %v", ft.typ.AsCql(), v, err)
			}
			return
		}
		other, err := AppendKey([]byte("x"), ft.typ, v, !desc)
		if err != nil {
			t.Fatalf("AppendKey(%s, %x, %v) failed only in one direction: %v", ft.typ.AsCql(), v, !desc, err)
		}
		other = other[1:]
		complementBytes(other)
		if !bytes.Equal(k, other) {
			t.Fatalf("desc is not the complement of asc: %x vs %x", k, other)
		}
		junk := []byte{0x00, 0x01, 0xFF}
		got, rest, err := DecodeKey(append(append([]byte{}, k...), junk...), ft.typ, desc)
		if err != nil {
			t.Fatalf("DecodeKey(%s, %x): %v", ft.typ.AsCql(), k, err)
		}
		if !bytes.Equal(rest, junk) {
			t.Fatalf("rest = %x, want %x", rest, junk)
		}
		if got == nil {
			t.Fatal("DecodeKey returned nil")
		}
		if ft.identity && !bytes.Equal(got, v) {
			t.Fatalf("DecodeKey(%s) = %x, want %x", ft.typ.AsCql(), got, v)
		}
		if ft.cmp != nil && ft.cmp(got, v) != 0 {
			t.Fatalf("%s: decoded %x is not equal to %x for Cassandra", ft.typ.AsCql(), got, v)
		}
		again, err := AppendKey(nil, ft.typ, got, desc)
		if err != nil || !bytes.Equal(again, k) {
			t.Fatalf("%s: re-encoding %x = %x, %v; want %x", ft.typ.AsCql(), got, again, err, k)
		}
	})
}

// FuzzDecodeKey: DecodeKey never panics on arbitrary bytes, and whatever it
// accepts is canonical: re-encoding the value gives back exactly the bytes
// it consumed.
func FuzzDecodeKey(f *testing.F) {
	for i := range fuzzKeyTypes {
		for _, s := range [][]byte{nil, {0}, {1}, {2, 1, 5, 0}, {1, 1, 0x80, 0, 0, 1, 0}, {3, 0x81, 1, 0x0b, 0}} {
			f.Add(uint8(i), s, false)
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, b []byte, desc bool) {
		ft := fuzzKeyTypes[int(sel)%len(fuzzKeyTypes)]
		v, rest, err := DecodeKey(b, ft.typ, desc)
		if err != nil {
			return
		}
		if len(rest) > len(b) || !bytes.Equal(rest, b[len(b)-len(rest):]) {
			t.Fatalf("rest %x is not a suffix of %x", rest, b)
		}
		consumed := b[:len(b)-len(rest)]
		k, err := AppendKey(nil, ft.typ, v, desc)
		if err != nil {
			t.Fatalf("DecodeKey(%s, %x) = %x, which AppendKey rejects: %v", ft.typ.AsCql(), b, v, err)
		}
		if !bytes.Equal(k, consumed) {
			t.Fatalf("DecodeKey(%s) accepted non-canonical %x (value %x encodes as %x)", ft.typ.AsCql(), consumed, v, k)
		}
	})
}

// FuzzKeyOrder: for two arbitrary values of a type with a reference
// comparator, the key order is Cassandra's order, ascending and descending.
func FuzzKeyOrder(f *testing.F) {
	f.Add(uint8(10), serVarint("-1"), []byte{0xFF, 0xFF})
	f.Add(uint8(11), serDecimal("10", 1), serDecimal("1", 0))
	f.Add(uint8(7), serUUID(f, "00000000-0000-1000-8000-000000000000"), serUUID(f, "00000000-0000-1000-0000-000000000000"))
	f.Add(uint8(8), serF64(-0.0), serF64(0))
	f.Fuzz(func(t *testing.T, sel uint8, a, b []byte) {
		ft := fuzzKeyTypes[int(sel)%len(fuzzKeyTypes)]
		if ft.cmp == nil {
			return
		}
		a, b = ft.shape(a), ft.shape(b)
		ka, err1 := AppendKey(nil, ft.typ, a, false)
		kb, err2 := AppendKey(nil, ft.typ, b, false)
		if err1 != nil || err2 != nil {
			if ft.mustEncode {
				t.Fatalf("AppendKey failed: %v / %v", err1, err2)
			}
			return
		}
		if ft.typ == datatype.Decimal && (!decimalSmallOK(a) || !decimalSmallOK(b)) {
			return
		}
		want := sign(ft.cmp(a, b))
		if got := sign(bytes.Compare(ka, kb)); got != want {
			t.Fatalf("%s: %x vs %x: key order %d, Cassandra %d", ft.typ.AsCql(), a, b, got, want)
		}
		da, _ := AppendKey(nil, ft.typ, a, true)
		db, _ := AppendKey(nil, ft.typ, b, true)
		if got := sign(bytes.Compare(da, db)); got != -want {
			t.Fatalf("%s desc: %x vs %x: key order %d, want %d", ft.typ.AsCql(), a, b, got, -want)
		}
	})
}

func decimalSmallOK(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	if len(v) < 5 || len(v) > 64 {
		return false
	}
	s := int32(binary.BigEndian.Uint32(v))
	return s > -200 && s < 200
}

// FuzzDecodeCell: DecodeCell never panics, and what it accepts re-encodes
// to the same bytes.
func FuzzDecodeCell(f *testing.F) {
	f.Add(Cell{Timestamp: 1, Value: []byte("v")}.Append(nil))
	f.Add(Cell{Timestamp: 2, TTL: 3, LocalDeletionTime: 4, Value: []byte{}}.Append(nil))
	f.Add(Cell{Timestamp: 5, LocalDeletionTime: 6, Tombstone: true}.Append(nil))
	f.Add([]byte{1, 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCell(b)
		if err != nil {
			return
		}
		if again := c.Append(nil); !bytes.Equal(again, b) {
			t.Fatalf("DecodeCell(%x) = %+v, which encodes as %x", b, c, again)
		}
		_ = c.IsLive(0)
		_ = Reconcile(c, c)
	})
}
