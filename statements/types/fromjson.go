package types

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datacodec"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
)

// This file is INSERT ... JSON (Cassandra's Json.java and
// UpdateStatement.ParsedInsertJson) and the conversion of decoded JSON to
// serialized values (the fromJSONObject methods of db/marshal's types).
//
// JSON is decoded the way Cassandra's Jackson ObjectMapper decodes it into
// Java objects, because the types' conversions and error messages depend
// on the Java class of each value:
//
//	null          nil
//	string        string
//	true, false   bool
//	integers      int32 (Integer), int64 (Long) or *big.Int (BigInteger),
//	              the smallest that holds the number
//	other numbers float64 (Double)
//	arrays        []any (ArrayList)
//	objects       *jsonObject (LinkedHashMap: insertion ordered)

// jsonObject is a decoded JSON object, keys in their order of appearance;
// a repeated key keeps its first position and its last value. Lookups go
// through pos so that an object of n keys decodes in O(n).
type jsonObject struct {
	keys []string
	vals []any
	pos  map[string]int
}

func (o *jsonObject) index(k string) int {
	if i, ok := o.pos[k]; ok {
		return i
	}
	return -1
}

func (o *jsonObject) put(k string, v any) {
	if i, ok := o.pos[k]; ok {
		o.vals[i] = v
		return
	}
	if o.pos == nil {
		o.pos = make(map[string]int)
	}
	o.pos[k] = len(o.keys)
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// handleCaseSensitivity is Json.handleCaseSensitivity: a key quoted with
// double quotes names a case-sensitive identifier and loses its quotes;
// any other key is lower-cased. A changed key moves to the end, as
// Java's LinkedHashMap remove and put do (onto a key already there, it
// replaces that key's value in place).
func (o *jsonObject) handleCaseSensitivity() {
	// Removed entries are marked and dropped at the end, which keeps each
	// remove and put O(1).
	n := len(o.keys)
	removed := make([]bool, n)
	for i := 0; i < n; i++ {
		k := o.keys[i]
		var renamed string
		switch {
		case len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"':
			renamed = k[1 : len(k)-1]
		case strings.ToLower(k) != k:
			renamed = strings.ToLower(k)
		default:
			continue
		}
		v := o.vals[i]
		removed[i] = true
		delete(o.pos, k)
		if j, ok := o.pos[renamed]; ok {
			o.vals[j] = v
			continue
		}
		o.pos[renamed] = len(o.keys)
		o.keys = append(o.keys, renamed)
		o.vals = append(o.vals, v)
		removed = append(removed, false)
	}
	keys, vals := o.keys[:0], o.vals[:0]
	for i := range o.keys {
		if removed[i] {
			continue
		}
		o.pos[o.keys[i]] = len(keys)
		keys = append(keys, o.keys[i])
		vals = append(vals, o.vals[i])
	}
	o.keys, o.vals = keys, vals
}

// The limits of Jackson's StreamReadConstraints (2.15 onwards, the
// defaults Cassandra runs with). Without the depth bound a document of
// brackets would recurse until the stack overflows; without the length
// bound an integer's conversion is quadratic in its digits.
const (
	maxJSONDepth        = 1000
	maxJSONNumberLength = 1000
)

// decodeJSON decodes the first JSON value of s (Jackson's readValue ignores
// what follows it).
func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := readJSONValue(d, 0)
	if err == io.EOF {
		return nil, errors.New("no content to map due to end-of-input")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("unexpected end-of-input")
	}
	return v, err
}

// readJSONValue reads one value whose enclosing arrays and objects number
// depth.
func readJSONValue(d *json.Decoder, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if depth++; depth > maxJSONDepth {
			return nil, fmt.Errorf("Depth (%d) exceeds the maximum allowed nesting depth (%d)", depth, maxJSONDepth)
		}
		switch v {
		case '[':
			list := []any{}
			for d.More() {
				e, err := readJSONValue(d, depth)
				if err != nil {
					return nil, err
				}
				list = append(list, e)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return list, nil
		case '{':
			obj := &jsonObject{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("unexpected object key %v", kt)
				}
				e, err := readJSONValue(d, depth)
				if err != nil {
					return nil, err
				}
				obj.put(k, e)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		}
		return nil, fmt.Errorf("unexpected %v", v)
	case json.Number:
		return jsonNumber(string(v))
	default: // string, bool, nil
		return v, nil
	}
}

// jsonNumber types a JSON number as Jackson does.
func jsonNumber(s string) (any, error) {
	fp := strings.ContainsAny(s, ".eE")
	length := len(s)
	if !fp {
		length = len(strings.TrimPrefix(s, "-"))
	}
	if length > maxJSONNumberLength {
		return nil, fmt.Errorf("Number length (%d) exceeds the maximum length (%d)", length, maxJSONNumberLength)
	}
	if fp {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("invalid number %s", s)
	}
	switch {
	case n.IsInt64() && n.Int64() >= math.MinInt32 && n.Int64() <= math.MaxInt32:
		return int32(n.Int64()), nil
	case n.IsInt64():
		return n.Int64(), nil
	}
	return n, nil
}

// javaClass is the simple name of the Java class Jackson decodes v to.
func javaClass(v any) string {
	switch v.(type) {
	case string:
		return "String"
	case int32:
		return "Integer"
	case int64:
		return "Long"
	case *big.Int:
		return "BigInteger"
	case float64:
		return "Double"
	case bool:
		return "Boolean"
	case []any:
		return "ArrayList"
	case *jsonObject:
		return "LinkedHashMap"
	}
	return "null"
}

// javaString is v's Java toString.
func javaString(v any) string {
	var b strings.Builder
	appendJavaString(&b, v)
	return b.String()
}

// appendJavaString writes v's Java toString to b: in one pass, so that a
// deep value costs its size and not its size times its depth.
func appendJavaString(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(x)
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(JavaFloatString(x, 64))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			appendJavaString(b, e)
		}
		b.WriteByte(']')
	case *jsonObject:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteByte('=')
			appendJavaString(b, x.vals[i])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// MarshalError is Cassandra's MarshalException: a value that does not fit
// its type. INSERT JSON reports it for the column it belongs to.
type MarshalError struct{ msg string }

func (e *MarshalError) Error() string { return e.msg }

// marshalf formats a MarshalError, abbreviating the values it quotes.
func marshalf(format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = statements.Abbreviate(s)
		}
	}
	return &MarshalError{msg: fmt.Sprintf(format, args...)}
}

// expected is the "Expected a ..., but got a Class: value" error.
func expected(what string, v any) error {
	return marshalf("Expected %s, but got a %s: %s", what, javaClass(v), javaString(v))
}

// fromJSONObject converts a decoded non-null JSON value to a serialized
// value of type t, as t's AbstractType.fromJSONObject does. A value that
// does not fit the type is a *MarshalError; other errors are returned as
// Cassandra raises them.
func fromJSONObject(t datatype.DataType, v any) ([]byte, error) {
	switch t.Code() {
	case primitive.DataTypeCodeVarchar:
		s, ok := v.(string)
		if !ok {
			return nil, expected("a UTF-8 string", v)
		}
		return []byte(s), nil
	case primitive.DataTypeCodeAscii:
		s, ok := v.(string)
		if !ok {
			return nil, expected("an ascii string", v)
		}
		for i := 0; i < len(s); i++ {
			if s[i] > 0x7f {
				return nil, marshalf("Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1")
			}
		}
		return []byte(s), nil
	case primitive.DataTypeCodeInt:
		switch x := v.(type) {
		case string:
			return intFromString(x, 32, "int")
		case int32:
			return binary.BigEndian.AppendUint32(nil, uint32(x)), nil
		}
		return nil, expected("an int value", v)
	case primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter:
		switch x := v.(type) {
		case string:
			return intFromString(x, 64, "long")
		case int32:
			return binary.BigEndian.AppendUint64(nil, uint64(int64(x))), nil
		case int64:
			return binary.BigEndian.AppendUint64(nil, uint64(x)), nil
		}
		return nil, expected("a bigint value", v)
	case primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTinyint:
		// ShortType and ByteType parse String.valueOf of a string or any
		// number.
		bits, name := 16, "short"
		if t.Code() == primitive.DataTypeCodeTinyint {
			bits, name = 8, "byte"
		}
		switch v.(type) {
		case string, int32, int64, *big.Int, float64:
			return intFromString(javaString(v), bits, name)
		}
		return nil, expected("a "+name+" value", v)
	case primitive.DataTypeCodeVarint:
		s := javaString(v)
		n, ok := javaBigInteger(s)
		if !ok {
			return nil, marshalf("Value '%s' is not a valid representation of a varint value", s)
		}
		return VarintBytes(n), nil
	case primitive.DataTypeCodeDecimal:
		s := javaString(v)
		if !javaDecimalRE.MatchString(s) {
			return nil, marshalf("Value '%s' is not a valid representation of a decimal value", s)
		}
		b, err := DecimalBytes(s)
		if err != nil {
			return nil, marshalf("Value '%s' is not a valid representation of a decimal value", s)
		}
		return b, nil
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		bits, name := 64, "double"
		if t.Code() == primitive.DataTypeCodeFloat {
			bits, name = 32, "float"
		}
		var f float64
		switch x := v.(type) {
		case string:
			if x == "" {
				return []byte{}, nil
			}
			var ok bool
			if f, ok = javaParseFloat(x, bits); !ok {
				return nil, marshalf("Unable to make %s from '%s'", name, x)
			}
		case int32, int64, *big.Int, float64:
			f = numberValue(x, bits)
		default:
			return nil, expected("a "+name+" value", v)
		}
		if bits == 32 {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case primitive.DataTypeCodeBoolean:
		switch x := v.(type) {
		case string:
			switch {
			case x == "" || strings.EqualFold(x, "false"):
				return []byte{0}, nil
			case strings.EqualFold(x, "true"):
				return []byte{1}, nil
			}
			return nil, marshalf("Unable to make boolean from '%s'", x)
		case bool:
			if x {
				return []byte{1}, nil
			}
			return []byte{0}, nil
		}
		return nil, expected("a boolean value", v)
	case primitive.DataTypeCodeTimestamp:
		switch x := v.(type) {
		case int32:
			return binary.BigEndian.AppendUint64(nil, uint64(int64(x))), nil
		case int64:
			return binary.BigEndian.AppendUint64(nil, uint64(x)), nil
		case string:
			return timestampFromString(x)
		}
		return nil, expected("a long or a datestring representation of a timestamp value", v)
	case primitive.DataTypeCodeDate:
		s, ok := v.(string)
		if !ok {
			return nil, expected("a string representation of a date value", v)
		}
		return dateFromString(s)
	case primitive.DataTypeCodeTime:
		s, ok := v.(string)
		if !ok {
			return nil, expected("a string representation of a time value", v)
		}
		return timeFromString(s)
	case primitive.DataTypeCodeUuid, primitive.DataTypeCodeTimeuuid:
		s, ok := v.(string)
		timeuuid := t.Code() == primitive.DataTypeCodeTimeuuid
		if !ok {
			if timeuuid {
				return nil, expected("a string representation of a timeuuid", v)
			}
			return nil, expected("a string representation of a uuid", v)
		}
		return uuidFromString(s, timeuuid)
	case primitive.DataTypeCodeCustom:
		if !isLexicalUUID(t) {
			break
		}
		s, ok := v.(string)
		if !ok {
			return nil, expected("a string representation of a uuid", v)
		}
		if s != "" && !uuidRE.MatchString(s) {
			// LexicalUUIDType.fromString's wording, not UUIDType's.
			return nil, marshalf("unable to make UUID from '%s'", s)
		}
		return uuidFromString(s, false)
	case primitive.DataTypeCodeInet:
		s, ok := v.(string)
		if !ok {
			return nil, expected("a string representation of an inet value", v)
		}
		if s == "" {
			return []byte{}, nil
		}
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, marshalf("Unable to make inet address from '%s'", s)
		}
		if v4 := ip.To4(); v4 != nil {
			return []byte(v4), nil
		}
		return []byte(ip.To16()), nil
	case primitive.DataTypeCodeBlob:
		s, ok := v.(string)
		if !ok {
			return nil, marshalf("Value '%s' is not a valid blob representation: java.lang.%s cannot be cast to java.lang.String", javaString(v), javaClass(v))
		}
		if !strings.HasPrefix(s, "0x") {
			return nil, marshalf("Value '%s' is not a valid blob representation: String representation of blob is missing 0x prefix: %s", s, s)
		}
		b, err := hex.DecodeString(s[2:])
		if err != nil {
			return nil, marshalf("Value '%s' is not a valid blob representation: cannot parse '%s' as hex bytes", s, s[2:])
		}
		return b, nil
	case primitive.DataTypeCodeDuration:
		s, ok := v.(string)
		if !ok {
			return nil, expected("a string representation of a duration", v)
		}
		if s == "" {
			return []byte{}, nil
		}
		d, err := parseDurationText(s)
		if err != nil {
			return nil, err
		}
		return EncodeValue(datatype.Duration, d, primitive.ProtocolVersion5)
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		v, err := decodeNested(v)
		if err != nil {
			return nil, err
		}
		list, ok := v.([]any)
		elem, kind, want, sorted := datatype.DataType(nil), "list", "a list", false
		if lt, isList := t.(*datatype.List); isList {
			elem = lt.ElementType
		} else {
			elem, kind, want, sorted = t.(*datatype.Set).ElementType, "set", "a list (representing a set)", true
		}
		if !ok {
			return nil, expected(want, v)
		}
		keys := make([][]byte, 0, len(list))
		for _, e := range list {
			if e == nil {
				return nil, marshalf("Invalid null element in %s", kind)
			}
			b, err := fromJSONObject(elem, e)
			if err != nil {
				return nil, err
			}
			keys = append(keys, b)
		}
		return EncodeCollection(keys, nil, elem, nil, sorted)
	case primitive.DataTypeCodeMap:
		mt := t.(*datatype.Map)
		v, err := decodeNested(v)
		if err != nil {
			return nil, err
		}
		obj, ok := v.(*jsonObject)
		if !ok {
			return nil, expected("a map", v)
		}
		keys, values := make([][]byte, 0, len(obj.keys)), make([][]byte, 0, len(obj.keys))
		for i, k := range obj.keys {
			if obj.vals[i] == nil {
				return nil, marshalf("Invalid null value in map")
			}
			kb, err := fromJSONObject(mt.KeyType, k)
			if err != nil {
				return nil, err
			}
			vb, err := fromJSONObject(mt.ValueType, obj.vals[i])
			if err != nil {
				return nil, err
			}
			keys, values = append(keys, kb), append(values, vb)
		}
		return EncodeCollection(keys, values, mt.KeyType, mt.ValueType, true)
	case primitive.DataTypeCodeTuple:
		tt := t.(*datatype.Tuple)
		v, err := decodeNested(v)
		if err != nil {
			return nil, err
		}
		list, ok := v.([]any)
		if !ok {
			return nil, expected("a list representation of a tuple", v)
		}
		if len(list) > len(tt.FieldTypes) {
			return nil, marshalf("Tuple contains extra items (expected %d): %s", len(tt.FieldTypes), javaString(v))
		}
		if len(list) < len(tt.FieldTypes) {
			return nil, marshalf("Tuple is missing items (expected %d): %s", len(tt.FieldTypes), javaString(v))
		}
		buf := []byte{}
		for i, e := range list {
			var b []byte
			if e != nil {
				if b, err = fromJSONObject(tt.FieldTypes[i], e); err != nil {
					return nil, err
				}
			}
			buf = AppendBytes(buf, b)
		}
		return buf, nil
	case primitive.DataTypeCodeUdt:
		ut := t.(*datatype.UserDefined)
		v, err := decodeNested(v)
		if err != nil {
			return nil, err
		}
		obj, ok := v.(*jsonObject)
		if !ok {
			return nil, expected("a map", v)
		}
		obj.handleCaseSensitivity()
		buf := []byte{}
		found := 0
		for i, name := range ut.FieldNames {
			var b []byte
			if j := obj.index(name); j >= 0 && obj.vals[j] != nil {
				if b, err = fromJSONObject(ut.FieldTypes[i], obj.vals[j]); err != nil {
					return nil, err
				}
				found++
			}
			buf = AppendBytes(buf, b)
		}
		if found != len(obj.keys) {
			for _, k := range obj.keys {
				known := false
				for _, name := range ut.FieldNames {
					known = known || name == k
				}
				if !known {
					return nil, marshalf("Unknown field '%s' in value of user defined type %s", k, ut.Name)
				}
			}
		}
		return buf, nil
	}
	return nil, marshalf("JSON values of type %s are not supported", statements.TypeString(t, false))
}

// decodeNested is how collections, tuples and user types take a string:
// as the JSON of the value (which is how non-string map keys are written).
func decodeNested(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	d, err := decodeJSON(s)
	if err != nil {
		return nil, marshalf("Error decoding JSON string: %v", err)
	}
	if d == nil {
		return nil, marshalf("Error decoding JSON string: null is not a value here")
	}
	return d, nil
}

// intFromString is Integer.parseInt and friends (the empty string is the
// empty value).
func intFromString(s string, bits int, name string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return nil, marshalf("Unable to make %s from '%s'", name, s)
	}
	return FixedInt(n, bits), nil
}

var javaBigIntegerRE = regexp.MustCompile(`^[+-]?[0-9]+$`)

// javaBigInteger is new BigInteger(s).
func javaBigInteger(s string) (*big.Int, bool) {
	if !javaBigIntegerRE.MatchString(s) {
		return nil, false
	}
	return parseInteger(s)
}

// javaDecimalRE is the grammar of new BigDecimal(s).
var javaDecimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

var (
	javaFloatRE    = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?$`)
	javaHexFloatRE = regexp.MustCompile(`^[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?$`)
)

// javaParseFloat is Float.parseFloat (bits 32) or Double.parseDouble.
func javaParseFloat(s string, bits int) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := strings.TrimLeft(s, "+-")
	neg := strings.HasPrefix(s, "-")
	if len(s)-len(body) <= 1 {
		switch body {
		case "NaN":
			return math.NaN(), true
		case "Infinity":
			if neg {
				return math.Inf(-1), true
			}
			return math.Inf(1), true
		}
	}
	if !javaFloatRE.MatchString(s) && !javaHexFloatRE.MatchString(s) {
		return 0, false
	}
	s = strings.TrimRight(s, "fFdD")
	f, err := strconv.ParseFloat(s, bits)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// numberValue is Number.floatValue (bits 32) or doubleValue.
func numberValue(v any, bits int) float64 {
	var bf *big.Float
	switch x := v.(type) {
	case float64:
		if bits == 32 {
			return float64(float32(x))
		}
		return x
	case int32:
		bf = new(big.Float).SetInt64(int64(x))
	case int64:
		bf = new(big.Float).SetInt64(x)
	case *big.Int:
		bf = new(big.Float).SetInt(x)
	}
	if bits == 32 {
		f, _ := bf.Float32()
		return float64(f)
	}
	f, _ := bf.Float64()
	return f
}

var rawNumberRE = regexp.MustCompile(`^-?[0-9]+$`)

// timestampFromString is TimestampType.fromString.
func timestampFromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	var ms int64
	switch {
	case strings.EqualFold(s, "now"):
		ms = time.Now().UnixMilli()
	case rawNumberRE.MatchString(s):
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, marshalf("Unable to make long (for date) from: '%s'", s)
		}
		ms = n
	default:
		ts, err := parseTimestamp(s)
		if err != nil {
			return nil, marshalf("Unable to coerce '%s' to a formatted date (long)", s)
		}
		ms = ts.UnixMilli()
	}
	return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
}

var dateRE = regexp.MustCompile(`^(-?[0-9]{1,9})-([0-9]{1,2})-([0-9]{1,2})$`)

// dateFromString is SimpleDateSerializer.dateStringToDays: days since the
// epoch offset by 2^31, or that raw unsigned number.
func dateFromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	if rawNumberRE.MatchString(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > math.MaxUint32 {
			return nil, marshalf("Unable to make unsigned int (for date) from: '%s'", s)
		}
		return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
	}
	m := dateRE.FindStringSubmatch(s)
	if m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
		if mo >= 1 && mo <= 12 && d >= 1 && t.Day() == d {
			return DateOf(t), nil
		}
	}
	return nil, marshalf("Unable to coerce '%s' to a formatted date (long)", s)
}

// timeFromString is TimeSerializer.timeStringToLong.
func timeFromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	if rawNumberRE.MatchString(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n >= 86400e9 {
			return nil, marshalf("Unable to make long (for time) from: '%s'", s)
		}
		return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
	}
	n, err := parseTimeOfDay(strings.TrimSpace(s))
	if err != nil {
		return nil, marshalf("(TimeType) Unable to coerce '%s' to a formatted time (long)", s)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// uuidFromString is UUIDType.fromString or TimeUUIDType.fromString.
func uuidFromString(s string, timeuuid bool) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	if !uuidRE.MatchString(s) {
		if timeuuid {
			return nil, marshalf("Unknown timeuuid representation: %s", s)
		}
		return nil, marshalf("Unable to make UUID from '%s'", s)
	}
	u, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil {
		return nil, marshalf("Unable to make UUID from '%s'", s)
	}
	if timeuuid && u[6]>>4 != 1 {
		return nil, marshalf("TimeUUID supports only version 1 UUIDs")
	}
	return u, nil
}

var (
	isoDurationRE     = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?$`)
	isoWeekDurationRE = regexp.MustCompile(`^P([0-9]+)W$`)
	isoAltDurationRE  = regexp.MustCompile(`^P([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})$`)
)

// parseDurationText is Duration.from: the 1h30m form, or ISO 8601
// (P1Y2M3DT4H5M6S, P2W, P0001-02-03T04:05:06).
func parseDurationText(s string) (datacodec.CqlDuration, error) {
	neg := strings.HasPrefix(s, "-")
	source := strings.TrimPrefix(s, "-")
	bad := cqlerr.Invalidf("Unable to convert '%s' to a duration", statements.Abbreviate(source))
	if !strings.HasPrefix(source, "P") {
		d, err := ParseDuration(s)
		if err != nil {
			return d, bad
		}
		return d, nil
	}
	num := func(x string) int64 {
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	var d datacodec.CqlDuration
	var years, months, days, hours, minutes, seconds int64
	switch {
	case strings.HasSuffix(source, "W"):
		m := isoWeekDurationRE.FindStringSubmatch(source)
		if m == nil {
			return d, bad
		}
		days = num(m[1]) * 7
	case strings.Contains(source, "-"):
		m := isoAltDurationRE.FindStringSubmatch(source)
		if m == nil {
			return d, bad
		}
		years, months, days, hours, minutes, seconds = num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6])
	default:
		m := isoDurationRE.FindStringSubmatch(source)
		if m == nil {
			return d, bad
		}
		years, months, days, hours, minutes, seconds = num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6])
	}
	d.Months = int32(years*12 + months)
	d.Days = int32(days)
	d.Nanos = time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute + time.Duration(seconds)*time.Second
	if neg {
		d.Months, d.Days, d.Nanos = -d.Months, -d.Days, -d.Nanos
	}
	return d, nil
}

// JSONReceiver is a column INSERT JSON may set.
type JSONReceiver struct {
	Name string
	Type datatype.DataType
}

// JSONRow is the values an INSERT JSON object gives its columns: for each
// receiver, whether the object names it and the value (nil for null).
type JSONRow struct {
	Present []bool
	Vals    [][]byte
}

// ParseJSONRow is Json.parseJson: the object's keys are column names,
// case-insensitive unless quoted; unknown keys are an error.
func ParseJSONRow(text string, cols []JSONReceiver) (*JSONRow, error) {
	v, err := decodeJSON(text)
	if err != nil {
		return nil, cqlerr.Invalidf("Could not decode JSON string as a map: %v. (String was: %s)", err, statements.Abbreviate(text))
	}
	if v == nil {
		return nil, cqlerr.Invalidf("Got null for INSERT JSON values")
	}
	obj, ok := v.(*jsonObject)
	if !ok {
		return nil, cqlerr.Invalidf("Could not decode JSON string as a map: cannot deserialize a %s as a map. (String was: %s)", javaClass(v), statements.Abbreviate(text))
	}
	obj.handleCaseSensitivity()
	row := &JSONRow{Present: make([]bool, len(cols)), Vals: make([][]byte, len(cols))}
	used := make([]bool, len(obj.keys))
	for i, c := range cols {
		j := obj.index(c.Name)
		if j < 0 {
			continue
		}
		used[j] = true
		row.Present[i] = true
		if obj.vals[j] == nil {
			continue // an explicit null
		}
		b, err := fromJSONObject(c.Type, obj.vals[j])
		if err != nil {
			var me *MarshalError
			if errors.As(err, &me) {
				return nil, cqlerr.Invalidf("Error decoding JSON value for %s: %s", c.Name, me.msg)
			}
			return nil, err
		}
		if b == nil {
			b = []byte{}
		}
		row.Vals[i] = b
	}
	for j, k := range obj.keys {
		if !used[j] {
			return nil, cqlerr.Invalidf("JSON values map contains unrecognized column: %s", statements.Abbreviate(k))
		}
	}
	return row, nil
}

// FromJSONText is the conversion of fromJson(text) for a receiver of type
// t: the JSON null is a null. As in Cassandra's FromJsonFct, text that is
// not JSON and a value that does not fit t fail the function (a
// *cqlerr.FunctionFailure, FUNCTION_FAILURE); other errors are returned as
// Cassandra raises them.
func FromJSONText(t datatype.DataType, text string) ([]byte, error) {
	v, err := decodeJSON(text)
	if err != nil {
		return nil, fromJSONFailure(fmt.Sprintf("Could not decode JSON string '%s': %v", statements.Abbreviate(text), err), err)
	}
	if v == nil {
		return nil, nil
	}
	b, err := fromJSONObject(t, v)
	var me *MarshalError
	if errors.As(err, &me) {
		return nil, fromJSONFailure("org.apache.cassandra.serializers.MarshalException: "+me.msg, me)
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func fromJSONFailure(detail string, cause error) error {
	return &cqlerr.FunctionFailure{Keyspace: "system", Function: "fromjson", Args: []string{"text"}, Detail: detail, Err: cause}
}
