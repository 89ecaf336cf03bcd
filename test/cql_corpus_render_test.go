package test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
)

// corpusAnswer is a statement's answer as the protocol carries it: column
// names and types, and each row's values as raw bytes (nil for null). Every
// corpus session, whatever its transport, reduces an answer to this, and
// lines renders it, so one renderer serves them all.
type corpusAnswer struct {
	cols  []corpusColumn
	rows  [][][]byte
	error string // the rendered ERROR ("error <code name>: <message>"), or ""
}

type corpusColumn struct {
	name string
	typ  datatype.DataType
}

// lines is the answer in the corpus files' format.
func (a corpusAnswer) lines() []string {
	switch {
	case a.error != "":
		return []string{a.error}
	case len(a.cols) == 0:
		return []string{"ok"}
	}
	names := make([]string, len(a.cols))
	for i, c := range a.cols {
		names[i] = c.name
	}
	out := []string{strings.Join(names, " | ")}
	for _, row := range a.rows {
		vals := make([]string, len(a.cols))
		for i, c := range a.cols {
			if i >= len(row) {
				vals[i] = "<missing>"
				continue
			}
			vals[i] = renderCQL(c.typ, row[i])
		}
		out = append(out, strings.Join(vals, " | "))
	}
	return out
}

var corpusErrorNames = map[primitive.ErrorCode]string{
	0x0000: "ServerError", 0x000A: "ProtocolError", 0x0100: "BadCredentials",
	0x1000: "Unavailable", 0x1001: "Overloaded", 0x1002: "IsBootstrapping",
	0x1003: "Truncate", 0x1100: "WriteTimeout", 0x1200: "ReadTimeout",
	0x1300: "ReadFailure", 0x1400: "FunctionFailure", 0x1500: "WriteFailure",
	0x2000: "SyntaxError", 0x2100: "Unauthorized", 0x2200: "Invalid",
	0x2300: "ConfigError", 0x2400: "AlreadyExists", 0x2500: "Unprepared",
}

// corpusError renders an ERROR answer.
func corpusError(code primitive.ErrorCode, msg string) string {
	name, ok := corpusErrorNames[code]
	if !ok {
		name = fmt.Sprintf("0x%04x", uint32(code))
	}
	return fmt.Sprintf("error %s: %s", name, strings.ReplaceAll(msg, "\n", " "))
}

const corpusDurationClass = "org.apache.cassandra.db.marshal.DurationType"

// renderCQL renders a value of type dt as a CQL literal; nil is null.
func renderCQL(dt datatype.DataType, b []byte) string {
	if b == nil {
		return "null"
	}
	if dt == nil {
		return fmt.Sprintf("<bad unknown type 0x%x>", b)
	}
	if c, ok := dt.(*datatype.Custom); ok && c.ClassName == corpusDurationClass {
		// A duration before v5, which has no code for it.
		dt = datatype.Duration
	}
	if c, ok := dt.(*datatype.Custom); ok && c.ClassName == statements.LexicalUUIDType {
		// As gocql reads it, so both runs of the corpus render it alike.
		dt = datatype.Uuid
	}
	switch dt.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar:
		return "'" + strings.ReplaceAll(string(b), "'", "''") + "'"
	case primitive.DataTypeCodeBlob, primitive.DataTypeCodeCustom:
		return "0x" + hex.EncodeToString(b)
	case primitive.DataTypeCodeBoolean:
		if len(b) == 1 {
			return strconv.FormatBool(b[0] != 0)
		}
	case primitive.DataTypeCodeTinyint:
		if len(b) == 1 {
			return strconv.Itoa(int(int8(b[0])))
		}
	case primitive.DataTypeCodeSmallint:
		if len(b) == 2 {
			return strconv.Itoa(int(int16(binary.BigEndian.Uint16(b))))
		}
	case primitive.DataTypeCodeInt:
		if len(b) == 4 {
			return strconv.Itoa(int(int32(binary.BigEndian.Uint32(b))))
		}
	case primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter:
		if len(b) == 8 {
			return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10)
		}
	case primitive.DataTypeCodeVarint:
		return corpusVarint(b).String()
	case primitive.DataTypeCodeDecimal:
		if len(b) >= 4 {
			return corpusDecimal(int32(binary.BigEndian.Uint32(b)), corpusVarint(b[4:]))
		}
	case primitive.DataTypeCodeFloat:
		if len(b) == 4 {
			return corpusFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32)
		}
	case primitive.DataTypeCodeDouble:
		if len(b) == 8 {
			return corpusFloat(math.Float64frombits(binary.BigEndian.Uint64(b)), 64)
		}
	case primitive.DataTypeCodeTimestamp:
		if len(b) == 8 {
			ms := int64(binary.BigEndian.Uint64(b))
			return "'" + time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") + "'"
		}
	case primitive.DataTypeCodeDate:
		if len(b) == 4 {
			days := int64(binary.BigEndian.Uint32(b)) - 1<<31
			return "'" + time.Unix(days*86400, 0).UTC().Format("2006-01-02") + "'"
		}
	case primitive.DataTypeCodeTime:
		if len(b) == 8 {
			ns := int64(binary.BigEndian.Uint64(b))
			return fmt.Sprintf("'%02d:%02d:%02d.%09d'", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
		}
	case primitive.DataTypeCodeUuid, primitive.DataTypeCodeTimeuuid:
		if len(b) == 16 {
			return fmt.Sprintf("%x-%x-%x-%x-%x", b[:4], b[4:6], b[6:8], b[8:10], b[10:])
		}
	case primitive.DataTypeCodeInet:
		if len(b) == 4 || len(b) == 16 {
			return "'" + net.IP(b).String() + "'"
		}
	case primitive.DataTypeCodeDuration:
		if d, ok := corpusDuration(b); ok {
			return d
		}
	case primitive.DataTypeCodeList:
		if s, ok := corpusCollection(dt.(*datatype.List).ElementType, nil, b, "[", "]"); ok {
			return s
		}
	case primitive.DataTypeCodeSet:
		if s, ok := corpusCollection(dt.(*datatype.Set).ElementType, nil, b, "{", "}"); ok {
			return s
		}
	case primitive.DataTypeCodeMap:
		m := dt.(*datatype.Map)
		if s, ok := corpusCollection(m.KeyType, m.ValueType, b, "{", "}"); ok {
			return s
		}
	case primitive.DataTypeCodeTuple:
		if s, ok := corpusFields(dt.(*datatype.Tuple).FieldTypes, nil, b, "(", ")"); ok {
			return s
		}
	case primitive.DataTypeCodeUdt:
		u := dt.(*datatype.UserDefined)
		if s, ok := corpusFields(u.FieldTypes, u.FieldNames, b, "{", "}"); ok {
			return s
		}
	}
	return fmt.Sprintf("<bad %s 0x%x>", dt, b)
}

func corpusVarint(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// corpusDecimal renders unscaled × 10^-scale as Java's BigDecimal.toString.
func corpusDecimal(scale int32, unscaled *big.Int) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := int64(len(digits)) - 1 - int64(scale)
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + digits
		}
		if int(scale) >= len(digits) {
			return sign + "0." + strings.Repeat("0", int(scale)-len(digits)) + digits
		}
		return sign + digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	exp := strconv.FormatInt(adjusted, 10)
	if adjusted >= 0 {
		exp = "+" + exp
	}
	return sign + m + "E" + exp
}

func corpusFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0" // as Java's Double.toString, to tell floats from integers
	}
	return s
}

func corpusVint(b []byte) (int64, []byte, bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	first := b[0]
	n := 0
	for n < 8 && first&(0x80>>n) != 0 {
		n++
	}
	if len(b) < n+1 {
		return 0, nil, false
	}
	v := uint64(first & (0xff >> (n + 1)))
	if n == 8 {
		v = 0
	}
	for i := 1; i <= n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return int64(v>>1) ^ -int64(v&1), b[n+1:], true
}

// corpusDuration renders a duration as Cassandra's Duration.toString.
func corpusDuration(b []byte) (string, bool) {
	months, b, ok1 := corpusVint(b)
	days, b, ok2 := corpusVint(b)
	nanos, b, ok3 := corpusVint(b)
	if !ok1 || !ok2 || !ok3 || len(b) != 0 {
		return "", false
	}
	var sb strings.Builder
	if months < 0 || days < 0 || nanos < 0 {
		sb.WriteString("-")
		months, days, nanos = -months, -days, -nanos
	}
	part := func(v int64, unit string) {
		if v != 0 {
			sb.WriteString(strconv.FormatInt(v, 10) + unit)
		}
	}
	part(months/12, "y")
	part(months%12, "mo")
	part(days, "d")
	part(nanos/3600e9, "h")
	part(nanos/60e9%60, "m")
	part(nanos/1e9%60, "s")
	part(nanos/1e6%1000, "ms")
	part(nanos/1e3%1000, "us")
	part(nanos%1000, "ns")
	if sb.Len() == 0 || sb.String() == "-" {
		return "0s", true
	}
	return sb.String(), true
}

// corpusElem reads one [bytes] element: an int length (negative for null),
// then that many bytes. A null element is returned as nil.
func corpusElem(b []byte) (elem, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 {
		return nil, b, true
	}
	if int(n) > len(b) {
		return nil, nil, false
	}
	return b[:n:n], b[n:], true
}

// appendCorpusElem appends e as a [bytes] element, nil as null.
func appendCorpusElem(b, e []byte) []byte {
	if e == nil {
		return binary.BigEndian.AppendUint32(b, math.MaxUint32)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
	return append(b, e...)
}

// corpusCollection renders a list or set (val nil) or a map: an int count,
// then the elements (key and value for a map).
func corpusCollection(elem, val datatype.DataType, b []byte, open, end string) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	var parts []string
	for i := 0; i < n; i++ {
		e, rest, ok := corpusElem(b)
		if !ok {
			return "", false
		}
		b = rest
		part := renderCQL(elem, e)
		if val != nil {
			v, rest, ok := corpusElem(b)
			if !ok {
				return "", false
			}
			b = rest
			part += ": " + renderCQL(val, v)
		}
		parts = append(parts, part)
	}
	return open + strings.Join(parts, ", ") + end, len(b) == 0
}

// corpusFields renders a tuple (names nil) or a UDT: one element per field,
// where the value may stop early, leaving the last fields null.
func corpusFields(types []datatype.DataType, names []string, b []byte, open, end string) (string, bool) {
	var parts []string
	for i, t := range types {
		var e []byte
		if len(b) > 0 {
			var ok bool
			if e, b, ok = corpusElem(b); !ok {
				return "", false
			}
		}
		part := renderCQL(t, e)
		if names != nil {
			part = names[i] + ": " + part
		}
		parts = append(parts, part)
	}
	return open + strings.Join(parts, ", ") + end, len(b) == 0
}
