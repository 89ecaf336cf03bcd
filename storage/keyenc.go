package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Order-preserving key encoding of CQL values.
//
// Pebble orders keys bytewise. Cassandra orders clustering values with the
// column type's comparator (AbstractType.compare, which is compareCustom for
// most types and an unsigned byte comparison for the BYTE_ORDER ones). So
// that a clustering slice is one contiguous pebble scan, AppendKey turns a
// serialized value into bytes whose bytes.Compare order is the comparator's
// order, and DecodeKey turns them back.
//
// Properties (tested in keyenc_test.go and fuzzed in fuzz_enc_test.go):
//
//   - Order: bytes.Compare(AppendKey(a), AppendKey(b)) has the sign of
//     Cassandra's compare(a, b) for the type; values Cassandra compares as
//     equal get identical encodings (they are the same clustering row in
//     Cassandra, so they must be the same key here).
//   - Prefix-free (self-delimiting): no encoding is a proper prefix of
//     another encoding of the same type. Hence a composite key made of
//     several encodings appended one after another compares component by
//     component, and DecodeKey knows where a component ends.
//   - desc complements every byte of the ascending encoding. Complementing a
//     prefix-free code keeps it prefix-free and exactly reverses its order,
//     which is ReversedType (clustering ORDER BY ... DESC).
//   - Canonical: DecodeKey accepts only encodings AppendKey can produce, and
//     returns the canonical serialization of the value. For most types this
//     is the input itself; where Cassandra treats several serializations as
//     equal it is one representative (see "Canonical forms" below).
//
// Partition keys are not ordered by type: Cassandra orders partitions by
// (token, raw serialized key bytes unsigned), see DecoratedKey.compareTo.
// AppendKey(datatype.Blob, CompositeKey(...)) gives exactly that raw-bytes
// order, after the token.
//
// AppendKey checks what the encoding needs (lengths and structure) and
// refuses what Cassandra refuses in keys; it does not re-validate contents
// (UTF-8 of text, ASCII of ascii, the version of a timeuuid, the range of a
// time): that is type validation when values are bound, as in Cassandra.
// An empty date or time is encodable (their BYTE_ORDER comparator sorts it
// first) although Cassandra's serializers refuse it.
//
// Layout per type (ascending; bytes shown in hex). "H" is a one-byte header
// that makes the empty value (zero-length bytes, which Cassandra sorts
// before every other value of the type: Boolean.compare(isEmpty(r),
// isEmpty(l)) in compareCustom / compareComposed / compareIntegers, and
// plain byte order for BYTE_ORDER types) sort first: 00 = empty, 01.. = value.
//
//	ascii, text, blob, inet   escaped bytes: 00 -> 00 FF, then terminator 00 01
//	                          (db/marshal/AsciiType, UTF8Type, BytesType,
//	                          InetAddressType are ComparisonType.BYTE_ORDER: plain
//	                          unsigned lexicographic order, shorter prefix first;
//	                          so IPv4 and IPv6 addresses interleave by bytes, an
//	                          IPv4 address is not "before" IPv6 ones as such.)
//	int                       H=01, 4 bytes big-endian with the sign bit flipped
//	bigint, timestamp         H=01, 8 bytes, sign bit flipped (LongType.compareLongs;
//	                          TimestampType.compareCustom calls it)
//	smallint, tinyint         2 / 1 bytes, sign bit flipped, no header:
//	                          ShortType/ByteType.compareCustom read byte 0 without an
//	                          empty check and their serializers require exactly 2 / 1
//	                          bytes, so Cassandra has no empty smallint/tinyint.
//	boolean                   00 empty, 01 false, 02 true (BooleanType: 0 is false,
//	                          any other byte is true and all trues are equal)
//	float, double             H=01, IEEE bits: sign bit flipped if positive, all
//	                          bits flipped if negative, NaN canonicalised first;
//	                          this is Java's Float.compare / Double.compare order
//	                          (compareComposed -> Float.compareTo): -Inf < ... <
//	                          -0.0 < 0.0 < ... < +Inf < NaN, all NaNs equal.
//	uuid                      H=01, 16 bytes: version nibble first, then for v1
//	                          the timestamp (time_hi, time_mid, time_low), else
//	                          the other msb bits in order; then the lsb unsigned
//	                          (UUIDType.compareCustom).
//	timeuuid                  H=01, 16 bytes: reordered msb (timestamp) with the
//	                          sign bit flipped (Long.compare), then each lsb byte
//	                          XOR 80 because TimeUUIDType compares the lsb as
//	                          *signed* bytes (signedBytesToNativeLong, CASSANDRA-8730).
//	date                      H=01, the 4 bytes as is (SimpleDateType is BYTE_ORDER:
//	                          unsigned, 2^31 = 1970-01-01)
//	time                      H=01, the 8 bytes as is (TimeType is BYTE_ORDER)
//	varint                    00 empty; 01 negative: complement(L(n)), bytes;
//	                          02 non-negative: L(n), bytes. n = length of the
//	                          minimal two's complement form, L(n) = one byte
//	                          holding len(n) then n big-endian. Longer positive
//	                          = larger, longer negative = smaller; same length
//	                          compares bytewise (IntegerType.compareIntegers).
//	decimal                   00 empty, 01 negative: complement(B), 02 zero,
//	                          03 positive: B, with B = I(E) digits 00, where the
//	                          value is 0.d1d2d3... x 10^E (d1 != 0, no trailing
//	                          zero), I is an order-preserving signed varint and
//	                          digits are base-100 pairs stored as pair+1
//	                          (01..64), a last odd digit padded with 0
//	                          (DecimalType compares BigDecimal.compareTo, i.e.
//	                          numerically: 1.0 == 1.00).
//	list, set                 00 empty; 01 {01 element}... 00 (lexicographic by
//	                          element, shorter first: ListType.compareListOrSet,
//	                          used by SetType too). Set elements are sorted and
//	                          deduplicated as Cassandra stores frozen sets.
//	map                       00 empty; 01 {01 key value}... 00 (MapType.compareMaps),
//	                          entries sorted by key, a duplicated key keeps the
//	                          last value.
//	tuple, user type          00 empty; 01 {01 null | 02 field}... 00
//	                          (TupleType.compareCustom, inherited by UserType):
//	                          field by field, null before any value, a missing
//	                          trailing field equal to a null one ("handle
//	                          trailing nulls"), so trailing nulls are dropped.
//	counter, duration,        error: Cassandra refuses them in primary keys
//	custom                    ("... is not supported for PRIMARY KEY column")
//	                          and we have no comparator for custom types.
//
// Canonical forms returned by DecodeKey where Cassandra equates different
// serializations: varint in minimal two's complement; decimal with trailing
// zeros of the unscaled value removed, and a negative scale down to -32
// folded into an integer with scale 0 (1.50 -> 1.5, 1E+2 -> 100, 1E+40 stays
// 1E+40), zero as 0 with scale 0; boolean true as 01; NaN as 7fc00000 /
// 7ff8000000000000; sets and maps sorted and deduplicated; tuples and UDTs
// with all declared fields, missing trailing fields as nulls.
//
// One Cassandra quirk is deliberately not reproduced: TupleType's trailing
// loop treats a trailing field of size 0 (an empty, non-null value) like a
// null, which makes its comparator non-transitive ((1) == (1, '') and
// (1) == (1, null) but (1, null) < (1, '')). Here only nulls are dropped, so
// (1) == (1, null) < (1, '').

// Header bytes (ascending form). Frozen: they are part of the on-disk key
// format.
const (
	keyEmpty   = 0x00 // the empty value of a type with a header
	keyPresent = 0x01 // a non-empty value (fixed-size types, collections, tuples)

	keyBoolFalse = 0x01
	keyBoolTrue  = 0x02

	keyVarintNeg    = 0x01
	keyVarintNonNeg = 0x02

	keyDecimalNeg  = 0x01
	keyDecimalZero = 0x02
	keyDecimalPos  = 0x03

	keySeqEnd     = 0x00 // end of a collection / tuple
	keySeqElem    = 0x01 // a collection element (or map entry) follows
	keyTupleNull  = 0x01 // a null tuple field
	keyTupleField = 0x02 // a non-null tuple field follows

	keyEscape     = 0x00 // escaped strings: 00 FF is a 00 byte, 00 01 ends
	keyEscaped00  = 0xFF
	keyStringTerm = 0x01
)

// decimalMaxFold is how negative a decimal's scale may be and still be
// returned by DecodeKey as an integer with scale 0 (so that 100 reads back
// as 100 and not as 1E+2).
const decimalMaxFold = 32

// decimalMaxPad bounds the zeros DecodeKey appends to a decimal's unscaled
// value when its canonical scale would fall below math.MinInt32 (only for
// values with a scale near MinInt32 and many trailing zeros); AppendKey
// refuses decimals beyond it, so every key it writes decodes.
const decimalMaxPad = 1 << 20

var errKeyTruncated = errors.New("storage: truncated key component")

func keyErrorf(format string, args ...any) error {
	return fmt.Errorf("storage: "+format, args...)
}

// AppendKey appends the order-preserving encoding of the serialized CQL
// value v (protocol v4 serialization, as a driver sends it) of type t. desc
// inverts the order (clustering ORDER BY DESC). An empty value (zero-length
// bytes, which Cassandra allows for most types and sorts first) is
// encodable and sorts before every non-empty value of the type; the
// encoding is self-delimiting so composite keys (several components appended
// one after another) compare component by component. See the comment at the
// top of keyenc.go for the layout and the Cassandra comparators it follows.
//
// On error dst is returned unchanged (truncated to its original length).
func AppendKey(dst []byte, t datatype.DataType, v []byte, desc bool) ([]byte, error) {
	start := len(dst)
	out, err := appendKeyAsc(dst, t, v)
	if err != nil {
		return dst[:start], err
	}
	if desc {
		complementBytes(out[start:])
	}
	return out, nil
}

// DecodeKey reads one component from the front of b and returns the
// serialized value and the rest. The value is a fresh slice (never nil: an
// empty value is a zero-length non-nil slice, because nil would mean null).
// It fails on anything AppendKey could not have produced, and never panics.
func DecodeKey(b []byte, t datatype.DataType, desc bool) (v []byte, rest []byte, err error) {
	r := keyReader{b: b}
	if desc {
		r.mask = 0xFF
	}
	out, err := decodeKeyInto(&r, t, nil)
	if err != nil {
		return nil, b, err
	}
	if out == nil {
		out = []byte{}
	}
	return out, b[r.pos:], nil
}

func complementBytes(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

func typeName(t datatype.DataType) string {
	if t == nil {
		return "<nil>"
	}
	return t.AsCql()
}

func appendKeyAsc(dst []byte, t datatype.DataType, v []byte) ([]byte, error) {
	if t == nil {
		return dst, keyErrorf("no type for key component")
	}
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText, primitive.DataTypeCodeBlob:
		return appendEscaped(dst, v), nil

	case primitive.DataTypeCodeInet:
		if n := len(v); n != 0 && n != 4 && n != 16 {
			return dst, keyErrorf("invalid inet value of %d bytes", n)
		}
		return appendEscaped(dst, v), nil

	case primitive.DataTypeCodeInt:
		return appendSignedFixed(dst, v, 4, "int")
	case primitive.DataTypeCodeBigint:
		return appendSignedFixed(dst, v, 8, "bigint")
	case primitive.DataTypeCodeTimestamp:
		return appendSignedFixed(dst, v, 8, "timestamp")

	case primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTinyint:
		n := 2
		if t.Code() == primitive.DataTypeCodeTinyint {
			n = 1
		}
		if len(v) != n {
			return dst, keyErrorf("expected %d bytes for a %s, got %d", n, typeName(t), len(v))
		}
		dst = append(dst, v[0]^0x80)
		return append(dst, v[1:]...), nil

	case primitive.DataTypeCodeBoolean:
		switch {
		case len(v) == 0:
			return append(dst, keyEmpty), nil
		case len(v) > 1:
			return dst, keyErrorf("expected 1 or 0 byte for a boolean, got %d", len(v))
		case v[0] == 0:
			return append(dst, keyBoolFalse), nil
		default:
			return append(dst, keyBoolTrue), nil
		}

	case primitive.DataTypeCodeFloat:
		return appendFloatKey(dst, v, 4, "float")

	case primitive.DataTypeCodeDouble:
		return appendFloatKey(dst, v, 8, "double")

	case primitive.DataTypeCodeUuid:
		if len(v) == 0 {
			return append(dst, keyEmpty), nil
		}
		if len(v) != 16 {
			return dst, keyErrorf("expected 16 or 0 bytes for a uuid, got %d", len(v))
		}
		msb := binary.BigEndian.Uint64(v)
		dst = binary.BigEndian.AppendUint64(append(dst, keyPresent), uuidSwizzle(msb))
		return append(dst, v[8:]...), nil

	case primitive.DataTypeCodeTimeuuid:
		if len(v) == 0 {
			return append(dst, keyEmpty), nil
		}
		if len(v) != 16 {
			return dst, keyErrorf("expected 16 or 0 bytes for a timeuuid, got %d", len(v))
		}
		msb := binary.BigEndian.Uint64(v)
		dst = binary.BigEndian.AppendUint64(append(dst, keyPresent), timeUUIDReorder(msb)^(1<<63))
		for _, c := range v[8:] {
			dst = append(dst, c^0x80)
		}
		return dst, nil

	case primitive.DataTypeCodeDate:
		return appendUnsignedFixed(dst, v, 4, "date")
	case primitive.DataTypeCodeTime:
		return appendUnsignedFixed(dst, v, 8, "time")

	case primitive.DataTypeCodeVarint:
		return appendVarintKey(dst, v), nil

	case primitive.DataTypeCodeDecimal:
		return appendDecimalKey(dst, v)

	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap,
		primitive.DataTypeCodeTuple, primitive.DataTypeCodeUdt:
		sub, err := subTypes(t)
		if err != nil {
			return dst, err
		}
		switch t.Code() {
		case primitive.DataTypeCodeList:
			return appendListKey(dst, sub[0], v, false)
		case primitive.DataTypeCodeSet:
			return appendListKey(dst, sub[0], v, true)
		case primitive.DataTypeCodeMap:
			return appendMapKey(dst, sub[0], sub[1], v)
		}
		return appendTupleKey(dst, sub, v)

	case primitive.DataTypeCodeCounter, primitive.DataTypeCodeDuration:
		return dst, keyErrorf("%s type is not supported for PRIMARY KEY columns", typeName(t))

	case primitive.DataTypeCodeCustom:
		if !isLexicalUUID(t) {
			break
		}
		// java.util.UUID.compareTo: the two halves as signed longs.
		if len(v) == 0 {
			return append(dst, keyEmpty), nil
		}
		if len(v) != 16 {
			return dst, keyErrorf("UUID should be 16 or 0 bytes (%d)", len(v))
		}
		dst = append(dst, keyPresent, v[0]^0x80)
		dst = append(dst, v[1:8]...)
		dst = append(dst, v[8]^0x80)
		return append(dst, v[9:]...), nil
	}
	return dst, keyErrorf("type %s is not supported in keys", typeName(t))
}

// subTypes returns the element type of a list or set, the key and value
// types of a map, or the field types of a tuple or user type, failing
// (instead of panicking) on a nil or foreign implementation of the type.
func subTypes(t datatype.DataType) ([]datatype.DataType, error) {
	var sub []datatype.DataType
	switch x := t.(type) {
	case *datatype.List:
		if x != nil {
			sub = []datatype.DataType{x.ElementType}
		}
	case *datatype.Set:
		if x != nil {
			sub = []datatype.DataType{x.ElementType}
		}
	case *datatype.Map:
		if x != nil {
			sub = []datatype.DataType{x.KeyType, x.ValueType}
		}
	case *datatype.Tuple:
		if x != nil {
			return x.FieldTypes, nil
		}
	case *datatype.UserDefined:
		if x != nil {
			return x.FieldTypes, nil
		}
	}
	if sub == nil {
		return nil, keyErrorf("unsupported implementation %T of type code %v", t, t.Code())
	}
	return sub, nil
}

// appendFloatKey writes an IEEE float of width 4 or 8 bytes so that bytes
// order as numbers: NaN canonical as Java's floatToIntBits/doubleToLongBits,
// negatives complemented, the sign bit of the others set.
func appendFloatKey(dst, v []byte, width int, name string) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	if len(v) != width {
		return dst, keyErrorf("expected %d or 0 bytes for a %s, got %d", width, name, len(v))
	}
	var u uint64 // the float's bits at the top
	if width == 4 {
		b := binary.BigEndian.Uint32(v)
		if f := math.Float32frombits(b); f != f {
			b = 0x7fc00000
		}
		u = uint64(b) << 32
	} else {
		u = binary.BigEndian.Uint64(v)
		if f := math.Float64frombits(u); f != f {
			u = 0x7ff8000000000000
		}
	}
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u ^= 1 << 63
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], u)
	return append(append(dst, keyPresent), buf[:width]...), nil
}

// float decodes what appendFloatKey wrote, refusing a NaN that is not
// the canonical one.
func (r *keyReader) float(out []byte, width int) ([]byte, error) {
	present, err := r.header()
	if err != nil || !present {
		return out, err
	}
	u, err := r.uint(width)
	if err != nil {
		return out, err
	}
	u <<= 64 - 8*width // the float's bits at the top, as appendFloatKey
	if u&(1<<63) != 0 {
		u ^= 1 << 63
	} else {
		u = ^u
	}
	nan := false
	if width == 4 {
		b := uint32(u >> 32)
		nan = math.Float32frombits(b) != math.Float32frombits(b) && b != 0x7fc00000
	} else {
		nan = math.Float64frombits(u) != math.Float64frombits(u) && u != 0x7ff8000000000000
	}
	if nan {
		return out, keyErrorf("non-canonical NaN in key")
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], u)
	return append(out, buf[:width]...), nil
}

// appendEscaped writes v with every 00 byte as 00 FF, then 00 01. A 00 in
// the output is always followed by FF (more bytes) or 01 (the end), so a
// value that is a prefix of another ends with 00 01 < 00 FF or 00 01 < xx,
// and shorter sorts first as in unsigned lexicographic order.
func appendEscaped(dst, v []byte) []byte {
	if len(v) <= shortEscaped {
		// A short value (an int or a uuid key as a blob, a column
		// name) is copied byte by byte: cheaper than a search and two
		// appends per 00 byte, which small numbers are full of.
		for _, b := range v {
			if b == 0 {
				dst = append(dst, keyEscape, keyEscaped00)
			} else {
				dst = append(dst, b)
			}
		}
		return append(dst, keyEscape, keyStringTerm)
	}
	for {
		i := bytes.IndexByte(v, 0)
		if i < 0 {
			dst = append(dst, v...)
			break
		}
		dst = append(dst, v[:i]...)
		dst = append(dst, keyEscape, keyEscaped00)
		v = v[i+1:]
	}
	return append(dst, keyEscape, keyStringTerm)
}

// shortEscaped is the longest value appendEscaped copies byte by byte.
const shortEscaped = 32

func appendSignedFixed(dst, v []byte, n int, name string) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	if len(v) != n {
		return dst, keyErrorf("expected %d or 0 bytes for a %s, got %d", n, name, len(v))
	}
	dst = append(dst, keyPresent, v[0]^0x80)
	return append(dst, v[1:]...), nil
}

func appendUnsignedFixed(dst, v []byte, n int, name string) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	if len(v) != n {
		return dst, keyErrorf("expected %d or 0 bytes for a %s, got %d", n, name, len(v))
	}
	dst = append(dst, keyPresent)
	return append(dst, v...), nil
}

// uuidSwizzle maps a UUID's most significant long to one whose unsigned
// order is UUIDType's: version nibble first; for version 1 the timestamp
// (TimeUUIDType.reorderTimestampBytes, whose top nibble is the version);
// for other versions the remaining bits in their order. This is
// UUIDType.asComparableBytes of Cassandra 5, which is equivalent to the 4.0
// compareCustom (version, then reordered timestamp or unsigned msb).
func uuidSwizzle(msb uint64) uint64 {
	version := (msb >> 12) & 0xf
	if version == 1 {
		return timeUUIDReorder(msb)
	}
	return version<<60 | (msb>>4)&0x0FFFFFFFFFFFF000 | msb&0xFFF
}

func uuidUnswizzle(s uint64) uint64 {
	version := s >> 60
	if version == 1 {
		return timeUUIDReorderBack(s)
	}
	return (s<<4)&0xFFFFFFFFFFFF0000 | version<<12 | s&0xFFF
}

// timeUUIDReorder is TimeUUIDType.reorderTimestampBytes: time_low(32)
// time_mid(16) version|time_hi(16) -> version|time_hi time_mid time_low.
func timeUUIDReorder(msb uint64) uint64 {
	return msb<<48 | (msb<<16)&0xFFFF00000000 | msb>>32
}

func timeUUIDReorderBack(r uint64) uint64 {
	return r<<32 | (r>>16)&0xFFFF0000 | r>>48
}

// minimalTwos strips redundant sign-extension bytes from a non-empty
// two's complement big-endian integer (IntegerType.findMostSignificantByte).
func minimalTwos(v []byte) []byte {
	for len(v) > 1 && ((v[0] == 0x00 && v[1]&0x80 == 0) || (v[0] == 0xFF && v[1]&0x80 != 0)) {
		v = v[1:]
	}
	return v
}

// appendOrderedUint writes x as one byte holding its byte length (0..8)
// then its minimal big-endian bytes: prefix-free and order-preserving.
func appendOrderedUint(dst []byte, x uint64) []byte {
	n := (bits.Len64(x) + 7) / 8
	dst = append(dst, byte(n))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(x>>(8*uint(i))))
	}
	return dst
}

// appendOrderedInt writes x prefix-free and order-preserving: 80+n then n
// bytes of x for x >= 0; 7F-n then the complemented n bytes of ^x (= -x-1)
// for x < 0, so that larger magnitudes of negatives sort lower.
func appendOrderedInt(dst []byte, x int64) []byte {
	if x >= 0 {
		u := uint64(x)
		n := (bits.Len64(u) + 7) / 8
		dst = append(dst, byte(0x80+n))
		for i := n - 1; i >= 0; i-- {
			dst = append(dst, byte(u>>(8*uint(i))))
		}
		return dst
	}
	u := ^uint64(x)
	n := (bits.Len64(u) + 7) / 8
	dst = append(dst, byte(0x7F-n))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, ^byte(u>>(8*uint(i))))
	}
	return dst
}

func appendVarintKey(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, keyEmpty)
	}
	v = minimalTwos(v)
	if v[0]&0x80 != 0 {
		dst = append(dst, keyVarintNeg)
		start := len(dst)
		dst = appendOrderedUint(dst, uint64(len(v)))
		complementBytes(dst[start:])
	} else {
		dst = append(dst, keyVarintNonNeg)
		dst = appendOrderedUint(dst, uint64(len(v)))
	}
	return append(dst, v...)
}

// twosToBig parses a non-empty big-endian two's complement integer.
func twosToBig(v []byte) *big.Int {
	x := new(big.Int)
	if v[0]&0x80 == 0 {
		return x.SetBytes(v)
	}
	c := make([]byte, len(v))
	for i, b := range v {
		c[i] = ^b
	}
	x.SetBytes(c) // -x-1
	x.Add(x, big.NewInt(1))
	return x.Neg(x)
}

// bigToTwos returns the minimal big-endian two's complement form of x.
func bigToTwos(x *big.Int) []byte {
	switch x.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := x.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	y := new(big.Int).Neg(x)
	y.Sub(y, big.NewInt(1)) // -x-1 >= 0
	b := y.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xFF}, b...)
	}
	return b
}

func appendDecimalKey(dst, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	if len(v) < 5 {
		return dst, keyErrorf("invalid decimal value of %d bytes", len(v))
	}
	scale := int64(int32(binary.BigEndian.Uint32(v)))
	unscaled := twosToBig(v[4:])
	sign := unscaled.Sign()
	if sign == 0 {
		return append(dst, keyDecimalZero), nil
	}
	digits := new(big.Int).Abs(unscaled).Text(10)
	trimmed := strings.TrimRight(digits, "0")
	zeros := int64(len(digits) - len(trimmed))
	// value = 0.trimmed x 10^exp
	exp := int64(len(trimmed)) + zeros - scale
	if canonScale := scale - zeros; canonScale < math.MinInt32-decimalMaxPad {
		// DecodeKey could not rebuild it with an int32 scale without
		// padding more than decimalMaxPad zeros; refuse it up front so
		// that every key written can be read back.
		return dst, keyErrorf("decimal with scale %d and %d trailing zeros is out of the supported range", scale, zeros)
	}
	if sign > 0 {
		dst = append(dst, keyDecimalPos)
		return appendDecimalBody(dst, exp, trimmed), nil
	}
	dst = append(dst, keyDecimalNeg)
	start := len(dst)
	dst = appendDecimalBody(dst, exp, trimmed)
	complementBytes(dst[start:])
	return dst, nil
}

func appendDecimalBody(dst []byte, exp int64, digits string) []byte {
	dst = appendOrderedInt(dst, exp)
	for i := 0; i < len(digits); i += 2 {
		p := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			p += digits[i+1] - '0'
		}
		dst = append(dst, p+1)
	}
	return append(dst, 0x00)
}

// collectionElems splits a protocol v3+ collection ([int n]{[int len][bytes]}
// with 2*n values for a map) into its values.
func collectionElems(v []byte, perEntry int, what string) ([][]byte, error) {
	if len(v) < 4 {
		return nil, keyErrorf("invalid %s value of %d bytes", what, len(v))
	}
	n := int32(binary.BigEndian.Uint32(v))
	if n < 0 {
		return nil, keyErrorf("invalid %s size %d", what, n)
	}
	v = v[4:]
	total := int64(n) * int64(perEntry)
	if total > int64(len(v)/4) {
		return nil, keyErrorf("%s of %d elements does not fit in %d bytes", what, n, len(v))
	}
	elems := make([][]byte, 0, total)
	for i := int64(0); i < total; i++ {
		if len(v) < 4 {
			return nil, keyErrorf("truncated %s element", what)
		}
		l := int32(binary.BigEndian.Uint32(v))
		v = v[4:]
		if l < 0 {
			return nil, keyErrorf("null is not supported inside a %s", what)
		}
		if int64(l) > int64(len(v)) {
			return nil, keyErrorf("truncated %s element", what)
		}
		elems = append(elems, v[:l])
		v = v[l:]
	}
	if len(v) != 0 {
		return nil, keyErrorf("%d extra bytes after %s elements", len(v), what)
	}
	return elems, nil
}

func appendListKey(dst []byte, elem datatype.DataType, v []byte, isSet bool) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	what := "list"
	if isSet {
		what = "set"
	}
	elems, err := collectionElems(v, 1, what)
	if err != nil {
		return dst, err
	}
	if !isSet {
		dst = append(dst, keyPresent)
		for _, e := range elems {
			dst = append(dst, keySeqElem)
			if dst, err = appendKeyAsc(dst, elem, e); err != nil {
				return dst, err
			}
		}
		return append(dst, keySeqEnd), nil
	}
	encs := make([][]byte, len(elems))
	for i, e := range elems {
		if encs[i], err = appendKeyAsc(nil, elem, e); err != nil {
			return dst, err
		}
	}
	sort.Slice(encs, func(i, j int) bool { return bytes.Compare(encs[i], encs[j]) < 0 })
	dst = append(dst, keyPresent)
	for i, e := range encs {
		if i > 0 && bytes.Equal(e, encs[i-1]) {
			continue
		}
		dst = append(dst, keySeqElem)
		dst = append(dst, e...)
	}
	return append(dst, keySeqEnd), nil
}

func appendMapKey(dst []byte, kt, vt datatype.DataType, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	elems, err := collectionElems(v, 2, "map")
	if err != nil {
		return dst, err
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, len(elems)/2)
	for i := range entries {
		if entries[i].k, err = appendKeyAsc(nil, kt, elems[2*i]); err != nil {
			return dst, err
		}
		if entries[i].v, err = appendKeyAsc(nil, vt, elems[2*i+1]); err != nil {
			return dst, err
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return bytes.Compare(entries[i].k, entries[j].k) < 0 })
	dst = append(dst, keyPresent)
	for i, e := range entries {
		if i+1 < len(entries) && bytes.Equal(e.k, entries[i+1].k) {
			continue // a later duplicate key wins, as in a map literal
		}
		dst = append(dst, keySeqElem)
		dst = append(dst, e.k...)
		dst = append(dst, e.v...)
	}
	return append(dst, keySeqEnd), nil
}

func appendTupleKey(dst []byte, types []datatype.DataType, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, keyEmpty), nil
	}
	var fields [][]byte // nil entry = null field
	for len(v) > 0 {
		if len(fields) >= len(types) {
			return dst, keyErrorf("expected %d values for a tuple or user type, but got more", len(types))
		}
		if len(v) < 4 {
			return dst, keyErrorf("truncated tuple field")
		}
		l := int32(binary.BigEndian.Uint32(v))
		v = v[4:]
		if l < 0 {
			fields = append(fields, nil)
			continue
		}
		if int64(l) > int64(len(v)) {
			return dst, keyErrorf("truncated tuple field")
		}
		fields = append(fields, v[:l:l])
		v = v[l:]
	}
	for len(fields) > 0 && fields[len(fields)-1] == nil {
		fields = fields[:len(fields)-1]
	}
	dst = append(dst, keyPresent)
	var err error
	for i, f := range fields {
		if f == nil {
			dst = append(dst, keyTupleNull)
			continue
		}
		dst = append(dst, keyTupleField)
		if dst, err = appendKeyAsc(dst, types[i], f); err != nil {
			return dst, err
		}
	}
	return append(dst, keySeqEnd), nil
}

// keyReader reads an encoded key, undoing the desc complement (mask FF).
type keyReader struct {
	b    []byte
	pos  int
	mask byte
}

func (r *keyReader) next() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errKeyTruncated
	}
	c := r.b[r.pos] ^ r.mask
	r.pos++
	return c, nil
}

// appendN appends the next n bytes, unmasked, to out.
func (r *keyReader) appendN(out []byte, n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.pos < n {
		return out, errKeyTruncated
	}
	start := len(out)
	out = append(out, r.b[r.pos:r.pos+n]...)
	if r.mask != 0 {
		complementBytes(out[start:])
	}
	r.pos += n
	return out, nil
}

func (r *keyReader) uint(n int) (uint64, error) {
	if len(r.b)-r.pos < n {
		return 0, errKeyTruncated
	}
	var x uint64
	for i := 0; i < n; i++ {
		x = x<<8 | uint64(r.b[r.pos+i]^r.mask)
	}
	r.pos += n
	return x, nil
}

func (r *keyReader) orderedUint() (uint64, error) {
	n, err := r.next()
	if err != nil {
		return 0, err
	}
	if n > 8 {
		return 0, keyErrorf("invalid length prefix in key")
	}
	if n > 0 && r.pos < len(r.b) && r.b[r.pos]^r.mask == 0 {
		return 0, keyErrorf("non-minimal length prefix in key")
	}
	return r.uint(int(n))
}

func (r *keyReader) orderedInt() (int64, error) {
	h, err := r.next()
	if err != nil {
		return 0, err
	}
	var n int
	neg := h < 0x80
	if neg {
		n = 0x7F - int(h)
	} else {
		n = int(h) - 0x80
	}
	if n > 8 {
		return 0, keyErrorf("invalid integer prefix in key")
	}
	u, err := r.uint(n)
	if err != nil {
		return 0, err
	}
	if neg {
		u = ^u
		if n < 8 {
			u &= 1<<(8*uint(n)) - 1
		}
	}
	if n > 0 && u>>(8*uint(n-1)) == 0 {
		return 0, keyErrorf("non-minimal integer in key")
	}
	if u > math.MaxInt64 {
		return 0, keyErrorf("integer out of range in key")
	}
	if neg {
		return -int64(u) - 1, nil
	}
	return int64(u), nil
}

func decodeKeyInto(r *keyReader, t datatype.DataType, out []byte) ([]byte, error) {
	if t == nil {
		return out, keyErrorf("no type for key component")
	}
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText, primitive.DataTypeCodeBlob:
		return r.escaped(out)

	case primitive.DataTypeCodeInet:
		start := len(out)
		out, err := r.escaped(out)
		if err != nil {
			return out, err
		}
		if n := len(out) - start; n != 0 && n != 4 && n != 16 {
			return out, keyErrorf("invalid inet value of %d bytes", n)
		}
		return out, nil

	case primitive.DataTypeCodeInt:
		return r.signedFixed(out, 4)
	case primitive.DataTypeCodeBigint, primitive.DataTypeCodeTimestamp:
		return r.signedFixed(out, 8)

	case primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTinyint:
		n := 2
		if t.Code() == primitive.DataTypeCodeTinyint {
			n = 1
		}
		start := len(out)
		out, err := r.appendN(out, n)
		if err != nil {
			return out, err
		}
		out[start] ^= 0x80
		return out, nil

	case primitive.DataTypeCodeBoolean:
		h, err := r.next()
		if err != nil {
			return out, err
		}
		switch h {
		case keyEmpty:
			return out, nil
		case keyBoolFalse:
			return append(out, 0), nil
		case keyBoolTrue:
			return append(out, 1), nil
		}
		return out, keyErrorf("invalid boolean in key")

	case primitive.DataTypeCodeFloat:
		return r.float(out, 4)

	case primitive.DataTypeCodeDouble:
		return r.float(out, 8)

	case primitive.DataTypeCodeCustom:
		if !isLexicalUUID(t) {
			break
		}
		present, err := r.header()
		if err != nil || !present {
			return out, err
		}
		start := len(out)
		if out, err = r.appendN(out, 16); err != nil {
			return out, err
		}
		out[start] ^= 0x80
		out[start+8] ^= 0x80
		return out, nil

	case primitive.DataTypeCodeUuid:
		present, err := r.header()
		if err != nil || !present {
			return out, err
		}
		s, err := r.uint(8)
		if err != nil {
			return out, err
		}
		out = binary.BigEndian.AppendUint64(out, uuidUnswizzle(s))
		return r.appendN(out, 8)

	case primitive.DataTypeCodeTimeuuid:
		present, err := r.header()
		if err != nil || !present {
			return out, err
		}
		s, err := r.uint(8)
		if err != nil {
			return out, err
		}
		out = binary.BigEndian.AppendUint64(out, timeUUIDReorderBack(s^(1<<63)))
		start := len(out)
		if out, err = r.appendN(out, 8); err != nil {
			return out, err
		}
		for i := start; i < len(out); i++ {
			out[i] ^= 0x80
		}
		return out, nil

	case primitive.DataTypeCodeDate:
		return r.unsignedFixed(out, 4)
	case primitive.DataTypeCodeTime:
		return r.unsignedFixed(out, 8)

	case primitive.DataTypeCodeVarint:
		return r.varint(out)
	case primitive.DataTypeCodeDecimal:
		return r.decimal(out)

	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap,
		primitive.DataTypeCodeTuple, primitive.DataTypeCodeUdt:
		sub, err := subTypes(t)
		if err != nil {
			return out, err
		}
		switch t.Code() {
		case primitive.DataTypeCodeList:
			return r.collection(out, sub[0], nil, false)
		case primitive.DataTypeCodeSet:
			return r.collection(out, sub[0], nil, true)
		case primitive.DataTypeCodeMap:
			return r.collection(out, sub[0], sub[1], true)
		}
		return r.tuple(out, sub)

	case primitive.DataTypeCodeCounter, primitive.DataTypeCodeDuration:
		return out, keyErrorf("%s type is not supported for PRIMARY KEY columns", typeName(t))
	}
	return out, keyErrorf("type %s is not supported in keys", typeName(t))
}

// header reads the empty/present header of a fixed-size type.
func (r *keyReader) header() (present bool, err error) {
	h, err := r.next()
	if err != nil {
		return false, err
	}
	switch h {
	case keyEmpty:
		return false, nil
	case keyPresent:
		return true, nil
	}
	return false, keyErrorf("invalid header byte %#x in key", h)
}

func (r *keyReader) signedFixed(out []byte, n int) ([]byte, error) {
	present, err := r.header()
	if err != nil || !present {
		return out, err
	}
	start := len(out)
	if out, err = r.appendN(out, n); err != nil {
		return out, err
	}
	out[start] ^= 0x80
	return out, nil
}

func (r *keyReader) unsignedFixed(out []byte, n int) ([]byte, error) {
	present, err := r.header()
	if err != nil || !present {
		return out, err
	}
	return r.appendN(out, n)
}

func (r *keyReader) escaped(out []byte) ([]byte, error) {
	for {
		i := bytes.IndexByte(r.b[r.pos:], keyEscape^r.mask)
		if i < 0 {
			return out, errKeyTruncated
		}
		out, _ = r.appendN(out, i)
		r.pos++ // the escape byte
		c, err := r.next()
		if err != nil {
			return out, err
		}
		switch c {
		case keyEscaped00:
			out = append(out, 0)
		case keyStringTerm:
			return out, nil
		default:
			return out, keyErrorf("invalid escape in key")
		}
	}
}

func (r *keyReader) varint(out []byte) ([]byte, error) {
	h, err := r.next()
	if err != nil {
		return out, err
	}
	var n uint64
	switch h {
	case keyEmpty:
		return out, nil
	case keyVarintNeg:
		r.mask ^= 0xFF
		n, err = r.orderedUint()
		r.mask ^= 0xFF
	case keyVarintNonNeg:
		n, err = r.orderedUint()
	default:
		return out, keyErrorf("invalid varint header in key")
	}
	if err != nil {
		return out, err
	}
	if n == 0 || n > uint64(len(r.b)-r.pos) {
		return out, errKeyTruncated
	}
	start := len(out)
	if out, err = r.appendN(out, int(n)); err != nil {
		return out, err
	}
	v := out[start:]
	if (v[0]&0x80 != 0) != (h == keyVarintNeg) || len(minimalTwos(v)) != len(v) {
		return out, keyErrorf("non-canonical varint in key")
	}
	return out, nil
}

func (r *keyReader) decimal(out []byte) ([]byte, error) {
	h, err := r.next()
	if err != nil {
		return out, err
	}
	switch h {
	case keyEmpty:
		return out, nil
	case keyDecimalZero:
		return append(out, 0, 0, 0, 0, 0), nil
	case keyDecimalPos, keyDecimalNeg:
	default:
		return out, keyErrorf("invalid decimal header in key")
	}
	neg := h == keyDecimalNeg
	if neg {
		r.mask ^= 0xFF
		defer func() { r.mask ^= 0xFF }()
	}
	exp, err := r.orderedInt()
	if err != nil {
		return out, err
	}
	var digits []byte
	for {
		c, err := r.next()
		if err != nil {
			return out, err
		}
		if c == 0 {
			break
		}
		if c > 100 {
			return out, keyErrorf("invalid decimal digits in key")
		}
		digits = append(digits, '0'+(c-1)/10, '0'+(c-1)%10)
	}
	if len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 || digits[0] == '0' || digits[len(digits)-1] == '0' {
		return out, keyErrorf("non-canonical decimal in key")
	}
	// value = 0.digits x 10^exp = digits x 10^-(len-exp)
	if exp < math.MinInt64+int64(len(digits)) {
		return out, keyErrorf("decimal exponent out of range in key")
	}
	scale := int64(len(digits)) - exp
	pad := int64(0)
	switch {
	case scale > math.MaxInt32:
		return out, keyErrorf("decimal scale out of range in key")
	case scale < 0 && scale >= -decimalMaxFold:
		pad, scale = -scale, 0
	case scale < math.MinInt32:
		pad, scale = math.MinInt32-scale, math.MinInt32
	}
	if pad > decimalMaxPad {
		return out, keyErrorf("decimal exponent out of range in key")
	}
	s := string(digits) + strings.Repeat("0", int(pad))
	u, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return out, keyErrorf("invalid decimal digits in key")
	}
	if neg {
		u.Neg(u)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(int32(scale)))
	return append(out, bigToTwos(u)...), nil
}

// collection decodes a list, a set or a map: elements of type elem, each
// followed by a value of type val for a map (val nil otherwise). A set's
// elements and a map's keys must be strictly increasing (sorted and
// deduplicated, as AppendKey writes them).
func (r *keyReader) collection(out []byte, elem, val datatype.DataType, ordered bool) ([]byte, error) {
	what := "collection"
	if val != nil {
		what = "map"
	}
	h, err := r.next()
	if err != nil {
		return out, err
	}
	switch h {
	case keyEmpty:
		return out, nil
	case keyPresent:
	default:
		return out, keyErrorf("invalid %s header in key", what)
	}
	countAt := len(out)
	out = append(out, 0, 0, 0, 0)
	var count uint32
	var prev []byte
	for {
		m, err := r.next()
		if err != nil {
			return out, err
		}
		if m == keySeqEnd {
			break
		}
		if m != keySeqElem {
			return out, keyErrorf("invalid %s marker in key", what)
		}
		encStart := r.pos
		if out, err = r.lengthPrefixed(out, elem); err != nil {
			return out, err
		}
		if ordered {
			enc := r.b[encStart:r.pos]
			if prev != nil && r.cmpAsc(prev, enc) >= 0 {
				if val != nil {
					return out, keyErrorf("map keys out of order in key")
				}
				return out, keyErrorf("set elements out of order in key")
			}
			prev = enc
		}
		if val != nil {
			if out, err = r.lengthPrefixed(out, val); err != nil {
				return out, err
			}
		}
		count++
	}
	binary.BigEndian.PutUint32(out[countAt:], count)
	return out, nil
}

func (r *keyReader) tuple(out []byte, types []datatype.DataType) ([]byte, error) {
	h, err := r.next()
	if err != nil {
		return out, err
	}
	switch h {
	case keyEmpty:
		return out, nil
	case keyPresent:
	default:
		return out, keyErrorf("invalid tuple header in key")
	}
	i := 0
	lastNull := false
	for ; ; i++ {
		m, err := r.next()
		if err != nil {
			return out, err
		}
		if m == keySeqEnd {
			break
		}
		if i >= len(types) {
			return out, keyErrorf("too many tuple fields in key")
		}
		switch m {
		case keyTupleNull:
			out = binary.BigEndian.AppendUint32(out, 0xFFFFFFFF)
			lastNull = true
		case keyTupleField:
			if out, err = r.lengthPrefixed(out, types[i]); err != nil {
				return out, err
			}
			lastNull = false
		default:
			return out, keyErrorf("invalid tuple marker in key")
		}
	}
	if lastNull {
		return out, keyErrorf("non-canonical trailing null in key")
	}
	for ; i < len(types); i++ {
		out = binary.BigEndian.AppendUint32(out, 0xFFFFFFFF)
	}
	return out, nil
}

// lengthPrefixed decodes one value and appends it as [int len][bytes].
func (r *keyReader) lengthPrefixed(out []byte, t datatype.DataType) ([]byte, error) {
	at := len(out)
	out = append(out, 0, 0, 0, 0)
	out, err := decodeKeyInto(r, t, out)
	if err != nil {
		return out, err
	}
	n := len(out) - at - 4
	if n > math.MaxInt32 {
		return out, keyErrorf("value too large")
	}
	binary.BigEndian.PutUint32(out[at:], uint32(n))
	return out, nil
}

// cmpAsc compares two raw encodings in ascending terms.
func (r *keyReader) cmpAsc(a, b []byte) int {
	c := bytes.Compare(a, b)
	if r.mask != 0 {
		return -c
	}
	return c
}

// lexicalUUIDType is the custom type of 16-byte values ordered as
// java.util.UUID.compareTo orders them (statements.LexicalUUIDType).
const lexicalUUIDType = "org.apache.cassandra.db.marshal.LexicalUUIDType"

func isLexicalUUID(t datatype.DataType) bool {
	c, ok := t.(*datatype.Custom)
	return ok && c.ClassName == lexicalUUIDType
}
