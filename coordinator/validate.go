package coordinator

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
)

// fixedSizes are the serialized sizes of fixed-size types; 0 bytes (the
// empty value) is accepted for them too, as Cassandra does.
var fixedSizes = map[primitive.DataTypeCode]int{
	primitive.DataTypeCodeInt:       4,
	primitive.DataTypeCodeBigint:    8,
	primitive.DataTypeCodeCounter:   8,
	primitive.DataTypeCodeSmallint:  2,
	primitive.DataTypeCodeTinyint:   1,
	primitive.DataTypeCodeBoolean:   1,
	primitive.DataTypeCodeFloat:     4,
	primitive.DataTypeCodeDouble:    8,
	primitive.DataTypeCodeTimestamp: 8,
	primitive.DataTypeCodeDate:      4,
	primitive.DataTypeCodeTime:      8,
	primitive.DataTypeCodeUuid:      16,
	primitive.DataTypeCodeTimeuuid:  16,
}

// validateValue checks that v is a well-formed serialized value of type t,
// so that nothing malformed is ever stored. nil (null) is always valid.
func validateValue(t datatype.DataType, v []byte, name string) error {
	if v == nil {
		return nil
	}
	bad := func(what string) error {
		return invalidf("Invalid value for column %s of type %s: %s", name, statements.TypeString(t, false), what)
	}
	code := t.Code()
	if size, ok := fixedSizes[code]; ok {
		if len(v) != size && !(len(v) == 0 && code != primitive.DataTypeCodeTinyint && code != primitive.DataTypeCodeSmallint) {
			return invalidf("Expected %d or 0 byte %s (%d)", size, statements.TypeString(t, false), len(v))
		}
		if code == primitive.DataTypeCodeTimeuuid && len(v) == 16 && v[6]>>4 != 1 {
			return bad("Unsupported UUID version for timeuuid")
		}
		return nil
	}
	switch code {
	case primitive.DataTypeCodeVarchar:
		if !utf8.Valid(v) {
			return bad("String didn't validate.")
		}
	case primitive.DataTypeCodeAscii:
		for _, c := range v {
			if c > 0x7f {
				return bad("Invalid byte for ascii")
			}
		}
	case primitive.DataTypeCodeInet:
		if len(v) != 4 && len(v) != 16 && len(v) != 0 {
			return bad("Expected 4 or 16 byte inet address")
		}
	case primitive.DataTypeCodeDecimal:
		if len(v) != 0 && len(v) < 4 {
			return bad("Expected at least 4 bytes for a decimal")
		}
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		var elem datatype.DataType
		if l, ok := t.(*datatype.List); ok {
			elem = l.ElementType
		} else {
			elem = t.(*datatype.Set).ElementType
		}
		return walkCollection(v, func(b []byte) error { return validateElem(elem, b, name) }, nil)
	case primitive.DataTypeCodeMap:
		m := t.(*datatype.Map)
		return walkCollection(v,
			func(b []byte) error { return validateElem(m.KeyType, b, name) },
			func(b []byte) error { return validateElem(m.ValueType, b, name) })
	case primitive.DataTypeCodeTuple:
		tt := t.(*datatype.Tuple)
		rest := v
		for i := 0; len(rest) > 0; i++ {
			if i >= len(tt.FieldTypes) {
				return bad("too many tuple fields")
			}
			b, r, ok := readBytes(rest)
			if !ok {
				return bad("truncated tuple")
			}
			if err := validateValue(tt.FieldTypes[i], b, name); err != nil {
				return err
			}
			rest = r
		}
	}
	return nil
}

func validateElem(t datatype.DataType, b []byte, name string) error {
	if b == nil {
		return invalidf("null is not supported inside collections")
	}
	return validateValue(t, b, name)
}

// walkCollection visits the elements (or keys and values) of a serialized
// v3+ collection, failing on truncation.
func walkCollection(v []byte, key, value func([]byte) error) error {
	if len(v) < 4 {
		return invalidf("Not enough bytes to read a collection")
	}
	n := int(int32(binary.BigEndian.Uint32(v)))
	rest := v[4:]
	if n < 0 {
		return invalidf("Invalid negative collection size %d", n)
	}
	for i := 0; i < n; i++ {
		b, r, ok := readBytes(rest)
		if !ok {
			return invalidf("Not enough bytes to read a collection element")
		}
		if err := key(b); err != nil {
			return err
		}
		rest = r
		if value != nil {
			b, r, ok = readBytes(rest)
			if !ok {
				return invalidf("Not enough bytes to read a map value")
			}
			if err := value(b); err != nil {
				return err
			}
			rest = r
		}
	}
	if len(rest) != 0 {
		return invalidf("Unexpected extraneous bytes after collection value")
	}
	return nil
}

// readBytes reads an [int]-prefixed value (negative length: null).
func readBytes(b []byte) (v, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	if n < 0 {
		return nil, b, true
	}
	if n > len(b) {
		return nil, nil, false
	}
	return b[:n], b[n:], true
}
