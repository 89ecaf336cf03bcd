package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
)

// This file renders values the way Cassandra 4.0 does for SELECT JSON and
// toJson() (AbstractType.toJSONString) and for CAST(... AS text)
// (TypeSerializer.toCQLLiteral), including Java's number formatting.

// JSONColumns turns a result row into the single "[json]" column of SELECT
// JSON: Selection.rowToJson.
type JSONColumns struct {
	keys  [][]byte // `"name": ` per column, with Cassandra's quoting
	types []datatype.DataType
}

func NewJSONColumns(cols []*message.ColumnMetadata) *JSONColumns {
	j := &JSONColumns{}
	for _, c := range cols {
		name := c.Name
		// Names that are not all lower case are quoted as CQL identifiers.
		if name != strings.ToLower(name) {
			name = `"` + name + `"`
		}
		k := appendJSONString(nil, name)
		k = append(k, ": "...)
		j.keys = append(j.keys, k)
		j.types = append(j.types, c.Type)
	}
	return j
}

func (j *JSONColumns) Row(vals [][]byte) []byte {
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, j.keys[i]...)
		switch {
		case v == nil:
			b = append(b, "null"...)
		case len(v) == 0:
			b = append(b, `""`...)
		default:
			b = AppendJSONValue(b, j.types[i], v)
		}
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, escaped as Jackson's
// JsonStringEncoder.quoteAsString does (Json.quoteAsJsonString).
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\r':
			b = append(b, `\r`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return append(b, '"')
}

// AppendJSONValue appends the JSON form of a non-null serialized value.
func AppendJSONValue(b []byte, t datatype.DataType, v []byte) []byte {
	if len(v) == 0 {
		switch t.Code() {
		case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
			return append(b, `""`...)
		case primitive.DataTypeCodeBlob:
			return append(b, `"0x"`...)
		}
		return append(b, `""`...)
	}
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		return appendJSONString(b, string(v))
	case primitive.DataTypeCodeBoolean, primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint,
		primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter,
		primitive.DataTypeCodeVarint:
		return append(b, ValueString(t, v)...)
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		// JSON has no NaN or infinities: Cassandra writes null.
		f, ok := FloatValue(t, v)
		if ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return append(b, "null"...)
		}
		return append(b, ValueString(t, v)...)
	case primitive.DataTypeCodeDecimal:
		unscaled, scale, ok := DecodeDecimal(v)
		if !ok {
			return append(b, `""`...)
		}
		return append(b, BigDecimalString(unscaled, scale, false)...)
	case primitive.DataTypeCodeTimestamp:
		if len(v) != 8 {
			return append(b, `""`...)
		}
		ms := int64(binary.BigEndian.Uint64(v))
		return appendJSONString(b, time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")+"Z")
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		var et datatype.DataType
		if l, ok := t.(*datatype.List); ok {
			et = l.ElementType
		} else if s, ok := t.(*datatype.Set); ok {
			et = s.ElementType
		}
		elems, ok := SplitCollection(v, 1)
		if !ok || et == nil {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, e := range elems {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONElem(b, et, e)
		}
		return append(b, ']')
	case primitive.DataTypeCodeMap:
		m, _ := t.(*datatype.Map)
		elems, ok := SplitCollection(v, 2)
		if !ok || m == nil {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		for i := 0; i+1 < len(elems); i += 2 {
			if i > 0 {
				b = append(b, ", "...)
			}
			// Map keys must be JSON strings: a key whose JSON form is not a
			// string is written as a string holding that JSON.
			k := appendJSONElem(nil, m.KeyType, elems[i])
			if len(k) > 0 && k[0] == '"' {
				b = append(b, k...)
			} else {
				b = appendJSONString(b, string(k))
			}
			b = append(b, ": "...)
			b = appendJSONElem(b, m.ValueType, elems[i+1])
		}
		return append(b, '}')
	case primitive.DataTypeCodeTuple:
		tt, _ := t.(*datatype.Tuple)
		if tt == nil {
			return append(b, "[]"...)
		}
		fields := SplitFields(v, len(tt.FieldTypes))
		b = append(b, '[')
		for i, f := range fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONElem(b, tt.FieldTypes[i], f)
		}
		return append(b, ']')
	case primitive.DataTypeCodeUdt:
		ut, _ := t.(*datatype.UserDefined)
		if ut == nil {
			return append(b, "{}"...)
		}
		fields := SplitFields(v, len(ut.FieldTypes))
		b = append(b, '{')
		for i, f := range fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			name := ut.FieldNames[i]
			if name != strings.ToLower(name) {
				name = `"` + name + `"`
			}
			b = appendJSONString(b, name)
			b = append(b, ": "...)
			b = appendJSONElem(b, ut.FieldTypes[i], f)
		}
		return append(b, '}')
	}
	// uuid, timeuuid, inet, date, time, duration, blob: strings.
	return appendJSONString(b, ValueString(t, v))
}

// appendJSONElem is AppendJSONValue for a collection element or field,
// where null is possible (tuple and user type fields).
func appendJSONElem(b []byte, t datatype.DataType, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return AppendJSONValue(b, t, v)
}

// SplitCollection splits a serialized collection into its elements (per
// entries of n values: 1 for lists and sets, 2 for maps).
func SplitCollection(v []byte, n int) ([][]byte, bool) {
	if len(v) < 4 {
		return nil, false
	}
	count := int(int32(binary.BigEndian.Uint32(v)))
	rest := v[4:]
	if count < 0 || count*n*4 > len(rest) {
		return nil, false
	}
	out := make([][]byte, 0, count*n)
	for i := 0; i < count*n; i++ {
		e, r, ok := ReadBytes(rest)
		if !ok {
			return nil, false
		}
		out = append(out, e)
		rest = r
	}
	return out, true
}

// SplitFields splits a serialized tuple or user type value into n fields;
// missing trailing fields are null.
func SplitFields(v []byte, n int) [][]byte {
	out := make([][]byte, n)
	rest := v
	for i := 0; i < n && len(rest) > 0; i++ {
		e, r, ok := ReadBytes(rest)
		if !ok {
			break
		}
		out[i] = e
		rest = r
	}
	return out
}

// ValueString is a value as TypeSerializer.toString renders it (what CAST
// to text returns): numbers as Java prints them, timestamps as
// yyyy-MM-dd'T'HH:mm:ss.SSSZ, blobs as 0x..., and so on.
func ValueString(t datatype.DataType, v []byte) string {
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		return string(v)
	case primitive.DataTypeCodeBoolean:
		if len(v) > 0 && v[0] != 0 {
			return "true"
		}
		return "false"
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter:
		n, _ := IntValue(v)
		return strconv.FormatInt(n, 10)
	case primitive.DataTypeCodeVarint:
		return DecodeVarint(v).String()
	case primitive.DataTypeCodeFloat:
		if len(v) == 4 {
			return JavaFloatString(float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 32)
		}
	case primitive.DataTypeCodeDouble:
		if len(v) == 8 {
			return JavaFloatString(math.Float64frombits(binary.BigEndian.Uint64(v)), 64)
		}
	case primitive.DataTypeCodeDecimal:
		if unscaled, scale, ok := DecodeDecimal(v); ok {
			return BigDecimalString(unscaled, scale, true)
		}
	case primitive.DataTypeCodeTimestamp:
		if len(v) == 8 {
			ms := int64(binary.BigEndian.Uint64(v))
			return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000") + "Z"
		}
	case primitive.DataTypeCodeDate:
		if len(v) == 4 {
			days := int64(binary.BigEndian.Uint32(v)) - 1<<31
			return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		}
	case primitive.DataTypeCodeTime:
		if len(v) == 8 {
			n := int64(binary.BigEndian.Uint64(v))
			return fmt.Sprintf("%02d:%02d:%02d.%09d", n/3600e9, n/60e9%60, n/1e9%60, n%1e9)
		}
	case primitive.DataTypeCodeUuid, primitive.DataTypeCodeTimeuuid:
		if len(v) == 16 {
			return uuidString(v)
		}
	case primitive.DataTypeCodeInet:
		return javaHostAddress(v)
	case primitive.DataTypeCodeDuration:
		if s, ok := durationString(v); ok {
			return s
		}
	case primitive.DataTypeCodeBlob:
		return "0x" + fmt.Sprintf("%x", v)
	case primitive.DataTypeCodeCustom:
		if isLexicalUUID(t) && len(v) == 16 {
			return uuidString(v)
		}
	}
	return "0x" + fmt.Sprintf("%x", v)
}

func uuidString(v []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", v[0:4], v[4:6], v[6:8], v[8:10], v[10:16])
}

// IntValue decodes a tinyint, smallint, int or bigint (by its length).
func IntValue(v []byte) (int64, bool) {
	switch len(v) {
	case 1:
		return int64(int8(v[0])), true
	case 2:
		return int64(int16(binary.BigEndian.Uint16(v))), true
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v))), true
	case 8:
		return int64(binary.BigEndian.Uint64(v)), true
	}
	return 0, false
}

func FloatValue(t datatype.DataType, v []byte) (float64, bool) {
	switch {
	case t.Code() == primitive.DataTypeCodeFloat && len(v) == 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(v))), true
	case t.Code() == primitive.DataTypeCodeDouble && len(v) == 8:
		return math.Float64frombits(binary.BigEndian.Uint64(v)), true
	}
	return 0, false
}

// DecodeVarint decodes a two's-complement big-endian integer.
func DecodeVarint(v []byte) *big.Int {
	n := new(big.Int).SetBytes(v)
	if len(v) > 0 && v[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(v))))
	}
	return n
}

func DecodeDecimal(v []byte) (*big.Int, int32, bool) {
	if len(v) < 4 {
		return nil, 0, false
	}
	return DecodeVarint(v[4:]), int32(binary.BigEndian.Uint32(v)), true
}

func EncodeDecimal(unscaled *big.Int, scale int32) []byte {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 8), uint32(scale))
	return append(out, VarintBytes(unscaled)...)
}

// BigDecimalString is Java's BigDecimal.toPlainString (plain) or
// BigDecimal.toString.
func BigDecimalString(unscaled *big.Int, scale int32, plain bool) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	sc := int(scale)
	if plain {
		switch {
		case sc == 0:
			return sign + digits
		case sc < 0:
			if unscaled.Sign() == 0 {
				return "0"
			}
			return sign + digits + strings.Repeat("0", -sc)
		case len(digits) > sc:
			return sign + digits[:len(digits)-sc] + "." + digits[len(digits)-sc:]
		default:
			return sign + "0." + strings.Repeat("0", sc-len(digits)) + digits
		}
	}
	adjusted := -sc + len(digits) - 1
	if sc >= 0 && adjusted >= -6 {
		return BigDecimalString(unscaled, scale, true)
	}
	s := sign + digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	s += "E"
	if adjusted > 0 {
		s += "+"
	}
	return s + strconv.Itoa(adjusted)
}

// JavaFloatString is Java's Float.toString (bits 32) or Double.toString
// (bits 64): plain between 10^-3 and 10^7, computerized scientific
// notation otherwise, always with a fractional part.
func JavaFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, bits)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// javaHostAddress is InetAddress.getHostAddress: dotted IPv4 (also for an
// IPv4-mapped IPv6 address) or eight uncompressed hexadecimal groups.
func javaHostAddress(v []byte) string {
	ip := net.IP(v)
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	if len(v) != 16 {
		return "0x" + fmt.Sprintf("%x", v)
	}
	parts := make([]string, 8)
	for i := range parts {
		parts[i] = strconv.FormatUint(uint64(binary.BigEndian.Uint16(v[2*i:])), 16)
	}
	return strings.Join(parts, ":")
}

// durationString is Cassandra's Duration.toString (1y2mo3d4h5m6s...).
func durationString(v []byte) (string, bool) {
	months, rest, ok := readSignedVInt(v)
	if !ok {
		return "", false
	}
	days, rest, ok := readSignedVInt(rest)
	if !ok {
		return "", false
	}
	nanos, rest, ok := readSignedVInt(rest)
	if !ok || len(rest) != 0 {
		return "", false
	}
	var sb strings.Builder
	if months < 0 || days < 0 || nanos < 0 {
		sb.WriteByte('-')
	}
	unit := func(n, div int64, u string) int64 {
		if n == 0 || n < div {
			return n
		}
		sb.WriteString(strconv.FormatInt(n/div, 10))
		sb.WriteString(u)
		return n % div
	}
	abs := func(n int64) int64 {
		if n < 0 {
			return -n
		}
		return n
	}
	unit(unit(abs(months), 12, "y"), 1, "mo")
	unit(abs(days), 1, "d")
	if nanos != 0 {
		r := unit(abs(nanos), 3600e9, "h")
		r = unit(r, 60e9, "m")
		r = unit(r, 1e9, "s")
		r = unit(r, 1e6, "ms")
		r = unit(r, 1e3, "us")
		unit(r, 1, "ns")
	}
	return sb.String(), true
}

// readSignedVInt reads one of Cassandra's zig-zag encoded variable length
// integers (VIntCoding.readVInt).
func readSignedVInt(b []byte) (int64, []byte, bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	first := b[0]
	extra := 0
	for m := byte(0x80); m != 0 && first&m != 0; m >>= 1 {
		extra++
	}
	if len(b) < 1+extra {
		return 0, nil, false
	}
	u := uint64(first & (0xff >> uint(extra)))
	if extra == 8 {
		u = 0
	}
	for i := 1; i <= extra; i++ {
		u = u<<8 | uint64(b[i])
	}
	return int64(u>>1) ^ -int64(u&1), b[1+extra:], true
}

// CQLLiteral is v written as a CQL literal of type t, as Cassandra's
// toCQLLiteral writes it (an aggregate's INITCOND in
// system_schema.aggregates): strings and the types CQL writes as strings
// quoted, collections, tuples and user types in their literal forms.
func CQLLiteral(t datatype.DataType, v []byte) string {
	if v == nil {
		return "null"
	}
	join := func(open, close string, parts []string) string { return open + strings.Join(parts, ", ") + close }
	switch tt := t.(type) {
	case *datatype.List, *datatype.Set:
		var et datatype.DataType
		open, close := "[", "]"
		if l, ok := tt.(*datatype.List); ok {
			et = l.ElementType
		} else {
			et, open, close = tt.(*datatype.Set).ElementType, "{", "}"
		}
		var parts []string
		_ = WalkCollection(v, func(b []byte) error { parts = append(parts, CQLLiteral(et, b)); return nil }, nil)
		return join(open, close, parts)
	case *datatype.Map:
		var parts []string
		var key string
		_ = WalkCollection(v, func(b []byte) error { key = CQLLiteral(tt.KeyType, b); return nil },
			func(b []byte) error { parts = append(parts, key+": "+CQLLiteral(tt.ValueType, b)); return nil })
		return join("{", "}", parts)
	case *datatype.Tuple:
		var parts []string
		for i, f := range SplitFields(v, len(tt.FieldTypes)) {
			parts = append(parts, CQLLiteral(tt.FieldTypes[i], f))
		}
		return join("(", ")", parts)
	case *datatype.UserDefined:
		var parts []string
		for i, f := range SplitFields(v, len(tt.FieldTypes)) {
			parts = append(parts, statements.TypeString(&datatype.UserDefined{Name: tt.FieldNames[i]}, false)+": "+CQLLiteral(tt.FieldTypes[i], f))
		}
		return join("{", "}", parts)
	}
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText,
		primitive.DataTypeCodeTimestamp, primitive.DataTypeCodeDate, primitive.DataTypeCodeTime, primitive.DataTypeCodeInet:
		return "'" + strings.ReplaceAll(ValueString(t, v), "'", "''") + "'"
	}
	return ValueString(t, v)
}
