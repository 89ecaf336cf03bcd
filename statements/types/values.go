package types

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datacodec"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
)

// EncodeValue serializes a Go value as a cell of type t. nil is a null cell.
func EncodeValue(t datatype.DataType, v any, version primitive.ProtocolVersion) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	e, err := NewEncoder(t)
	if err != nil {
		return nil, err
	}
	return e.Encode(v, version)
}

// Encoder serializes Go values as cells of one type, as EncodeValue does,
// without looking up the type's codec for each value. It is immutable.
type Encoder struct {
	t datatype.DataType
	c datacodec.Codec
}

// NewEncoder returns the Encoder of type t.
func NewEncoder(t datatype.DataType) (*Encoder, error) {
	c, err := datacodec.NewCodec(t)
	if err != nil {
		return nil, fmt.Errorf("coordinator: codec for %v: %w", t, err)
	}
	return &Encoder{t: t, c: c}, nil
}

// Encode serializes v; nil is a null cell. A [16]byte is a uuid.
func (e *Encoder) Encode(v any, version primitive.ProtocolVersion) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if u, ok := v.([16]byte); ok {
		p := primitive.UUID(u)
		v = &p
	}
	b, err := e.c.Encode(v, version)
	if err != nil {
		return nil, fmt.Errorf("coordinator: encode %T as %v: %w", v, e.t, err)
	}
	return b, nil
}

// LiteralBytes serializes a CQL literal as a value of type t, with
// Cassandra's wording when the literal does not fit the type.
func LiteralBytes(t datatype.DataType, lit *statements.Literal, column string) ([]byte, error) {
	if lit.Kind == statements.LiteralNull {
		return nil, nil
	}
	bad := func() error {
		return cqlerr.Invalidf("Invalid %s constant (%s) for \"%s\" of type %s",
			literalKindName(lit.Kind), lit.Text, column, statements.TypeString(t, false))
	}
	var v any
	switch t.Code() {
	case primitive.DataTypeCodeVarchar, primitive.DataTypeCodeAscii:
		if lit.Kind != statements.LiteralString {
			return nil, bad()
		}
		if t.Code() == primitive.DataTypeCodeAscii {
			for i := 0; i < len(lit.Text); i++ {
				if lit.Text[i] > 0x7f {
					return nil, cqlerr.Invalidf("Invalid ASCII character in string literal: %s", lit.Text)
				}
			}
		}
		if err := ValidateValue(t, []byte(lit.Text), column); err != nil {
			return nil, err
		}
		return []byte(lit.Text), nil
	case primitive.DataTypeCodeTimestamp:
		switch lit.Kind {
		case statements.LiteralInteger:
			n, err := strconv.ParseInt(lit.Text, 10, 64)
			if err != nil {
				return nil, bad()
			}
			return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
		case statements.LiteralString:
			ts, err := parseTimestamp(lit.Text)
			if err != nil {
				return nil, cqlerr.Invalidf("Unable to coerce '%s' to a formatted date (long)", lit.Text)
			}
			return binary.BigEndian.AppendUint64(nil, uint64(ts.UnixMilli())), nil
		}
		return nil, bad()
	case primitive.DataTypeCodeDate:
		switch lit.Kind {
		case statements.LiteralInteger:
			n, err := strconv.ParseUint(lit.Text, 10, 32)
			if err != nil {
				return nil, bad()
			}
			return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
		case statements.LiteralString:
			d, err := time.Parse("2006-01-02", lit.Text)
			if err != nil {
				return nil, cqlerr.Invalidf("Unable to coerce '%s' to a formatted date (long)", lit.Text)
			}
			return DateOf(d), nil
		}
		return nil, bad()
	case primitive.DataTypeCodeTime:
		switch lit.Kind {
		case statements.LiteralInteger:
			n, err := strconv.ParseInt(lit.Text, 10, 64)
			if err != nil || n < 0 || n >= 86400e9 {
				return nil, bad()
			}
			return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
		case statements.LiteralString:
			n, err := parseTimeOfDay(lit.Text)
			if err != nil {
				return nil, cqlerr.Invalidf("Unable to coerce '%s' to a formatted time (long)", lit.Text)
			}
			return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
		}
		return nil, bad()
	case primitive.DataTypeCodeDecimal:
		if lit.Kind != statements.LiteralInteger && lit.Kind != statements.LiteralFloat {
			return nil, bad()
		}
		b, err := DecimalBytes(lit.Text)
		if err != nil {
			return nil, bad()
		}
		return b, nil
	case primitive.DataTypeCodeDuration:
		if lit.Kind != statements.LiteralDuration {
			return nil, bad()
		}
		d, err := parseDurationText(lit.Text)
		if err != nil {
			return nil, err
		}
		return EncodeValue(t, d, primitive.ProtocolVersion5)
	case primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint, primitive.DataTypeCodeSmallint,
		primitive.DataTypeCodeTinyint, primitive.DataTypeCodeCounter:
		if lit.Kind != statements.LiteralInteger {
			return nil, bad()
		}
		// Out of range is Cassandra's "Unable to make <java type> from".
		bits, java := IntWidth(t.Code())
		n, err := strconv.ParseInt(lit.Text, 10, bits)
		if err != nil {
			return nil, cqlerr.Invalidf("Unable to make %s from '%s'", java, lit.Text)
		}
		return FixedInt(n, bits), nil
	case primitive.DataTypeCodeVarint:
		if lit.Kind != statements.LiteralInteger {
			return nil, bad()
		}
		n, ok := parseInteger(lit.Text)
		if !ok {
			return nil, bad()
		}
		return VarintBytes(n), nil
	case primitive.DataTypeCodeDouble, primitive.DataTypeCodeFloat:
		if lit.Kind != statements.LiteralInteger && lit.Kind != statements.LiteralFloat {
			return nil, bad()
		}
		f, err := strconv.ParseFloat(lit.Text, 64)
		if err != nil {
			return nil, bad()
		}
		if t.Code() == primitive.DataTypeCodeFloat {
			v = float32(f)
		} else {
			v = f
		}
	case primitive.DataTypeCodeBoolean:
		if lit.Kind != statements.LiteralBoolean {
			return nil, bad()
		}
		v = strings.EqualFold(lit.Text, "true")
	case primitive.DataTypeCodeUuid, primitive.DataTypeCodeTimeuuid:
		if lit.Kind != statements.LiteralUUID {
			return nil, bad()
		}
		u, err := primitive.ParseUuid(lit.Text)
		if err != nil {
			return nil, bad()
		}
		if t.Code() == primitive.DataTypeCodeTimeuuid && u[6]>>4 != 1 {
			return nil, cqlerr.Invalidf("TimeUUID supports only version 1 UUIDs")
		}
		v = u
	case primitive.DataTypeCodeInet:
		if lit.Kind != statements.LiteralString {
			return nil, bad()
		}
		ip := net.ParseIP(lit.Text)
		if ip == nil {
			return nil, cqlerr.Invalidf("Unable to make inet address from '%s'", lit.Text)
		}
		v = ip
	case primitive.DataTypeCodeBlob:
		if lit.Kind != statements.LiteralHex {
			return nil, bad()
		}
		b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(lit.Text, "0x"), "0X"))
		if err != nil {
			return nil, bad()
		}
		return b, nil
	case primitive.DataTypeCodeUdt, primitive.DataTypeCodeTuple, primitive.DataTypeCodeList,
		primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		return nil, bad()
	case primitive.DataTypeCodeCustom:
		if !isLexicalUUID(t) {
			return nil, cqlerr.Invalidf("Literals of type %s are not supported here yet", statements.TypeString(t, false))
		}
		// Cassandra skips type checks for custom types
		// (Constants.Literal.parsedValue): a blob is taken as the value's
		// bytes, any other constant is read by LexicalUUIDType.fromString.
		var b []byte
		switch {
		case lit.Kind == statements.LiteralHex:
			var err error
			if b, err = hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(lit.Text, "0x"), "0X")); err != nil {
				return nil, bad()
			}
		case lit.Text == "":
			b = []byte{}
		default:
			u, err := primitive.ParseUuid(lit.Text)
			if err != nil {
				return nil, cqlerr.Invalidf("unable to make UUID from '%s'", lit.Text)
			}
			b = u[:]
		}
		if err := ValidateValue(t, b, column); err != nil {
			return nil, err
		}
		return b, nil
	default:
		return nil, cqlerr.Invalidf("Literals of type %s are not supported here yet", statements.TypeString(t, false))
	}
	return EncodeValue(t, v, primitive.ProtocolVersion4)
}

// EncodeCollection serializes a list, set or map from its elements: keys,
// and values for a map (nil for lists and sets). Sets and maps are stored
// sorted and deduplicated, the later of two equal map keys winning, as in
// Cassandra.
func EncodeCollection(keys, values [][]byte, keyType, valueType datatype.DataType, sorted bool) ([]byte, error) {
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(keys)))
	for i, k := range keys {
		if k == nil || (values != nil && values[i] == nil) {
			return nil, cqlerr.Invalidf("null is not supported inside collections")
		}
		buf = AppendBytes(buf, k)
		if values != nil {
			buf = AppendBytes(buf, values[i])
		}
	}
	if !sorted {
		return buf, nil
	}
	return normalizeEntries(buf, keyType, valueType)
}

// AppendBytes appends b as a [bytes]: its length then its bytes, or -1
// for a null.
func AppendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func literalKindName(k statements.LiteralKind) string {
	switch k {
	case statements.LiteralString:
		return "STRING"
	case statements.LiteralInteger:
		return "INTEGER"
	case statements.LiteralFloat:
		return "FLOAT"
	case statements.LiteralBoolean:
		return "BOOLEAN"
	case statements.LiteralUUID:
		return "UUID"
	case statements.LiteralHex:
		return "HEX"
	case statements.LiteralDuration:
		return "DURATION"
	}
	return "NULL"
}
