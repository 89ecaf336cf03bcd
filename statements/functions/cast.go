package functions

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements/types"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func isNumeric(c primitive.DataTypeCode) bool {
	switch c {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble,
		primitive.DataTypeCodeDecimal, primitive.DataTypeCodeCounter, primitive.DataTypeCodeVarint:
		return true
	}
	return false
}

func isText(c primitive.DataTypeCode) bool {
	return c == primitive.DataTypeCodeVarchar || c == primitive.DataTypeCodeText || c == primitive.DataTypeCodeAscii
}

// Cast is the CAST conversion between two types, nil when Cassandra
// has none.
func Cast(from, to datatype.DataType) Scalar {
	fc, tc := from.Code(), to.Code()
	switch {
	case isNumeric(fc) && isText(tc):
		return castToText(from)
	case isNumeric(fc) && isNumeric(tc) && tc != primitive.DataTypeCodeCounter:
		return func(_ Context, a [][]byte) ([]byte, error) {
			if len(a[0]) == 0 {
				return nil, nil
			}
			n, ok := decodeNumber(from, a[0])
			if !ok {
				return nil, cqlerr.Invalidf("Invalid %s value for cast", typeName(from))
			}
			return n.convert(to)
		}
	case fc == primitive.DataTypeCodeAscii && isText(tc):
		return func(_ Context, a [][]byte) ([]byte, error) { return a[0], nil }
	case isText(tc):
		switch fc {
		case primitive.DataTypeCodeInet, primitive.DataTypeCodeBoolean, primitive.DataTypeCodeTimeuuid,
			primitive.DataTypeCodeTimestamp, primitive.DataTypeCodeDate, primitive.DataTypeCodeTime,
			primitive.DataTypeCodeUuid:
			return castToText(from)
		}
	case fc == primitive.DataTypeCodeTimeuuid && (tc == primitive.DataTypeCodeDate || tc == primitive.DataTypeCodeTimestamp),
		fc == primitive.DataTypeCodeTimestamp && tc == primitive.DataTypeCodeDate,
		fc == primitive.DataTypeCodeDate && tc == primitive.DataTypeCodeTimestamp:
		return toMillis(from, to)
	}
	return nil
}

// maxCastText bounds the text a CAST of a decimal may make.
const maxCastText = 1 << 20

// castToText renders a value as CastAsTextFunction does (toCQLLiteral).
func castToText(from datatype.DataType) Scalar {
	return func(_ Context, a [][]byte) ([]byte, error) {
		switch {
		case a[0] == nil:
			return nil, nil
		case len(a[0]) == 0:
			return []byte("null"), nil
		}
		if from.Code() == primitive.DataTypeCodeDecimal {
			// A decimal is written out in full: a scale far from its
			// digits would make a string of billions of zeros.
			if u, s, ok := types.DecodeDecimal(a[0]); ok {
				if n := decimalDigits(u) + max(int64(s), -int64(s)); n > maxCastText {
					return nil, cqlerr.Invalidf("Cannot cast the decimal of scale %d to text: it would be about %d characters long", s, n)
				}
			}
		}
		return []byte(types.ValueString(from, a[0])), nil
	}
}

// number is a decoded numeric value, converted with Java's Number
// semantics.
type number struct {
	kind  byte // 'i' integer, 'f' floating point, 'v' varint, 'd' decimal
	i     int64
	f     float64
	b     *big.Int
	scale int32
}

func decodeNumber(t datatype.DataType, v []byte) (number, bool) {
	switch t.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter:
		i, ok := types.IntValue(v)
		return number{kind: 'i', i: i}, ok
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		f, ok := types.FloatValue(t, v)
		return number{kind: 'f', f: f}, ok
	case primitive.DataTypeCodeVarint:
		return number{kind: 'v', b: types.DecodeVarint(v)}, true
	case primitive.DataTypeCodeDecimal:
		u, s, ok := types.DecodeDecimal(v)
		return number{kind: 'd', b: u, scale: s}, ok
	}
	return number{}, false
}

// javaF2L is Java's (long) of a double: truncation, saturation, NaN is 0.
func javaF2L(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaF2I is Java's (int) of a double.
func javaF2I(f float64) int32 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// integerLowBits is BigDecimal.toBigInteger().longValue(): the low 64
// bits of the value truncated to an integer, found without computing the
// integer when it is huge: with a scale of -64 or less the integer is a
// multiple of 10^64, so of 2^64, and its low bits are 0; with a scale past
// the unscaled value's digits it is 0.
func (n number) integerLowBits() int64 {
	if n.kind == 'v' {
		return lowBits(n.b)
	}
	switch scale := int64(n.scale); {
	case scale <= -64:
		return 0
	case scale <= 0:
		return lowBits(new(big.Int).Mul(n.b, pow10(-scale)))
	case scale > decimalDigits(n.b):
		return 0
	default:
		return lowBits(new(big.Int).Quo(n.b, pow10(scale)))
	}
}

// decimalDigits is an upper bound of the decimal digits of |b|.
func decimalDigits(b *big.Int) int64 {
	return int64(b.BitLen())*30103/100000 + 1
}

// decimalExponent is about log10 of a decimal's magnitude, within one.
func (n number) decimalExponent() int64 {
	return decimalDigits(n.b) - int64(n.scale)
}

func pow10(n int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
}

// lowBits is BigInteger.longValue: the low 64 bits.
func lowBits(b *big.Int) int64 {
	u := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return int64(u)
}

func (n number) longValue() int64 {
	switch n.kind {
	case 'i':
		return n.i
	case 'f':
		return javaF2L(n.f)
	}
	return n.integerLowBits()
}

func (n number) intValue() int32 {
	if n.kind == 'f' {
		return javaF2I(n.f)
	}
	return int32(n.longValue())
}

func (n number) doubleValue() float64 {
	switch n.kind {
	case 'i':
		return float64(n.i)
	case 'f':
		return n.f
	case 'v':
		f, _ := new(big.Float).SetInt(n.b).Float64()
		return f
	}
	if d, ok := n.decimalOutOfRange(); ok {
		return d
	}
	f, _ := n.decimalRat().Float64()
	return f
}

func (n number) floatValue() float32 {
	switch n.kind {
	case 'i':
		return float32(n.i)
	case 'f':
		return float32(n.f)
	case 'v':
		f, _ := new(big.Float).SetInt(n.b).Float32()
		return f
	}
	if d, ok := n.decimalOutOfRange(); ok {
		return float32(d)
	}
	f, _ := n.decimalRat().Float32()
	return f
}

// decimalOutOfRange is the double a decimal far outside a double's range
// rounds to (an infinity, or a zero), as BigDecimal.doubleValue gives it,
// without computing the power of ten its scale names.
func (n number) decimalOutOfRange() (float64, bool) {
	sign := float64(n.b.Sign())
	switch e := n.decimalExponent(); {
	case sign == 0:
		return 0, true
	case e > 400:
		return math.Inf(int(sign)), true
	case e < -400:
		return math.Copysign(0, sign), true
	}
	return 0, false
}

// decimalRat is a decimal number's exact value.
func (n number) decimalRat() *big.Rat {
	r := new(big.Rat).SetInt(n.b)
	if n.scale > 0 {
		return r.Quo(r, new(big.Rat).SetInt(pow10(int64(n.scale))))
	}
	return r.Mul(r, new(big.Rat).SetInt(pow10(-int64(n.scale))))
}

// convert serializes the number as type t, as CastFcts converts it.
func (n number) convert(t datatype.DataType) ([]byte, error) {
	switch t.Code() {
	case primitive.DataTypeCodeTinyint:
		return []byte{byte(int8(n.intValue()))}, nil
	case primitive.DataTypeCodeSmallint:
		return binary.BigEndian.AppendUint16(nil, uint16(int16(n.intValue()))), nil
	case primitive.DataTypeCodeInt:
		return binary.BigEndian.AppendUint32(nil, uint32(n.intValue())), nil
	case primitive.DataTypeCodeBigint:
		return binary.BigEndian.AppendUint64(nil, uint64(n.longValue())), nil
	case primitive.DataTypeCodeFloat:
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(n.floatValue())), nil
	case primitive.DataTypeCodeDouble:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(n.doubleValue())), nil
	case primitive.DataTypeCodeVarint:
		return types.VarintBytes(big.NewInt(n.longValue())), nil
	case primitive.DataTypeCodeDecimal:
		// BigDecimal.valueOf(doubleValue()): the decimal of Double.toString.
		d := n.doubleValue()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, cqlerr.Invalidf("Cannot convert %s to a decimal", types.JavaFloatString(d, 64))
		}
		return types.DecimalBytes(types.JavaFloatString(d, 64))
	}
	return nil, cqlerr.Invalidf("Cannot cast to %s", typeName(t))
}
