package types

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cqld/cqld/cqlerr"
	"github.com/datastax/go-cassandra-native-protocol/datacodec"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
)

// timestampLayouts are the date-time forms Cassandra's TimestampSerializer
// accepts (a representative subset: date, date and time to the
// millisecond, with or without a zone).
var timestampLayouts = []string{
	"2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05Z07:00",
	"2006-01-02 15:04:05.000Z0700", "2006-01-02 15:04:05.000Z07:00", "2006-01-02 15:04:05Z0700", "2006-01-02 15:04:05Z07:00",
	"2006-01-02T15:04:05.000", "2006-01-02T15:04:05", "2006-01-02 15:04:05.000", "2006-01-02 15:04:05",
	"2006-01-02T15:04Z0700", "2006-01-02 15:04Z0700", "2006-01-02T15:04", "2006-01-02 15:04",
	"2006-01-02Z0700", "2006-01-02",
}

func parseTimestamp(s string) (time.Time, error) {
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised timestamp %q", s)
}

var timeOfDayRE = regexp.MustCompile(`^(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$`)

// parseTimeOfDay parses hh:mm:ss[.fffffffff] into nanoseconds since
// midnight.
func parseTimeOfDay(s string) (int64, error) {
	m := timeOfDayRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("unrecognised time %q", s)
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	if h > 23 || mi > 59 || sec > 59 {
		return 0, fmt.Errorf("time out of range %q", s)
	}
	frac := m[4] + strings.Repeat("0", 9-len(m[4]))
	ns, _ := strconv.ParseInt(frac, 10, 64)
	return (int64(h)*3600+int64(mi)*60+int64(sec))*1e9 + ns, nil
}

// DecimalBytes serializes a decimal literal: [int scale][varint unscaled].
func DecimalBytes(text string) ([]byte, error) {
	s := strings.ToLower(text)
	exp := 0
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return nil, cqlerr.Invalidf("Invalid decimal %s", statements.Abbreviate(text))
		}
		exp, s = e, s[:i]
	}
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
		s = s[:i] + s[i+1:]
	}
	unscaled, ok := parseInteger(s)
	// An exponent or a scale past 32 bits is Java's "Exponent overflow" or
	// "Scale out of range" (it used to wrap).
	if !ok || exp != int(int32(exp)) || scale-exp != int(int32(scale-exp)) {
		return nil, cqlerr.Invalidf("Invalid decimal %s", statements.Abbreviate(text))
	}
	scale -= exp
	out := binary.BigEndian.AppendUint32(nil, uint32(int32(scale)))
	return append(out, VarintBytes(unscaled)...), nil
}

// leafDigits is how many digits parseInteger converts with SetString.
const leafDigits = 1000

// parseInteger is new(big.Int).SetString(s, 10) for an optionally signed
// string of decimal digits, in time subquadratic in their number:
// SetString is quadratic (a 14 MB varint takes minutes). The digits are
// split so that the low part has leafDigits·2^k of them, and the parts
// are joined with one multiplication by a power of ten.
func parseInteger(s string) (*big.Int, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	if s == "" {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, false
		}
	}
	// pows[k] is 10^(leafDigits·2^k), for every split s needs.
	var pows []*big.Int
	for leafDigits<<len(pows) < len(s) {
		if len(pows) == 0 {
			pows = append(pows, new(big.Int).Exp(big.NewInt(10), big.NewInt(leafDigits), nil))
			continue
		}
		p := pows[len(pows)-1]
		pows = append(pows, new(big.Int).Mul(p, p))
	}
	n := joinDigits(s, pows)
	if neg {
		n.Neg(n)
	}
	return n, true
}

// joinDigits converts the digits s. REQUIRES: pows as parseInteger makes
// them for s or a longer string.
func joinDigits(s string, pows []*big.Int) *big.Int {
	k := len(pows) - 1
	for k >= 0 && leafDigits<<k >= len(s) {
		k--
	}
	if k < 0 {
		n, _ := new(big.Int).SetString(s, 10)
		return n
	}
	low := leafDigits << k
	n := joinDigits(s[:len(s)-low], pows)
	n.Mul(n, pows[k])
	return n.Add(n, joinDigits(s[len(s)-low:], pows))
}

// VarintBytes is a big.Int as a minimal two's-complement big-endian value,
// as Java's BigInteger.toByteArray writes it. (The protocol library's
// varint codec gets negative numbers and 128 wrong.)
func VarintBytes(n *big.Int) []byte {
	switch n.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// Negative: two's complement of |n| in the fewest bytes whose top bit
	// is set.
	size := (n.BitLen() + 8) / 8
	mod := new(big.Int).Lsh(big.NewInt(1), uint(size*8))
	b := new(big.Int).Add(mod, n).Bytes()
	for len(b) < size {
		b = append([]byte{0xff}, b...)
	}
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

var durationRE = regexp.MustCompile(`(?i)(\d+)(y|mo|w|d|h|ms|m|s|us|µs|ns)`)

// ParseDuration parses the 1h30m form of a duration literal (ISO 8601
// forms are left for later) into months, days and nanoseconds.
func ParseDuration(s string) (datacodec.CqlDuration, error) {
	var d datacodec.CqlDuration
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	matches := durationRE.FindAllStringSubmatchIndex(body, -1)
	if len(matches) == 0 || matches[0][0] != 0 {
		return d, fmt.Errorf("unsupported duration format")
	}
	end := 0
	for _, m := range matches {
		if m[0] != end {
			return d, fmt.Errorf("unsupported duration format")
		}
		end = m[1]
		n, _ := strconv.ParseInt(body[m[2]:m[3]], 10, 64)
		switch strings.ToLower(body[m[4]:m[5]]) {
		case "y":
			d.Months += int32(n * 12)
		case "mo":
			d.Months += int32(n)
		case "w":
			d.Days += int32(n * 7)
		case "d":
			d.Days += int32(n)
		case "h":
			d.Nanos += time.Duration(n) * time.Hour
		case "m":
			d.Nanos += time.Duration(n) * time.Minute
		case "s":
			d.Nanos += time.Duration(n) * time.Second
		case "ms":
			d.Nanos += time.Duration(n) * time.Millisecond
		case "us", "µs":
			d.Nanos += time.Duration(n) * time.Microsecond
		case "ns":
			d.Nanos += time.Duration(n)
		}
	}
	if end != len(body) {
		return d, fmt.Errorf("unsupported duration format")
	}
	if neg {
		d.Months, d.Days, d.Nanos = -d.Months, -d.Days, -d.Nanos
	}
	return d, nil
}

// DateOf is a CQL date: days since the epoch, offset by 2^31.
func DateOf(t time.Time) []byte {
	days := t.UTC().Unix() / 86400
	if t.UTC().Unix() < 0 && t.UTC().Unix()%86400 != 0 {
		days--
	}
	return binary.BigEndian.AppendUint32(nil, uint32(days+1<<31))
}

// IntWidth is an integer type's size in bits and the Java type Cassandra
// names in its errors about it.
func IntWidth(code primitive.DataTypeCode) (int, string) {
	switch code {
	case primitive.DataTypeCodeTinyint:
		return 8, "byte"
	case primitive.DataTypeCodeSmallint:
		return 16, "short"
	case primitive.DataTypeCodeInt:
		return 32, "int"
	}
	return 64, "long"
}

// FixedInt serializes n as a big-endian integer of bits bits.
func FixedInt(n int64, bits int) []byte {
	switch bits {
	case 8:
		return []byte{byte(n)}
	case 16:
		return binary.BigEndian.AppendUint16(nil, uint16(n))
	case 32:
		return binary.BigEndian.AppendUint32(nil, uint32(n))
	}
	return binary.BigEndian.AppendUint64(nil, uint64(n))
}
