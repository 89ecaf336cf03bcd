package types

import (
	"bytes"
	"encoding/binary"
	"sort"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
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

// ValidateValue checks that v is a well-formed serialized value of type t,
// so that nothing malformed is ever stored. nil (null) is always valid.
func ValidateValue(t datatype.DataType, v []byte, name string) error {
	if v == nil {
		return nil
	}
	bad := func(what string) error {
		return cqlerr.Invalidf("Invalid value for column %s of type %s: %s", name, statements.TypeString(t, false), what)
	}
	code := t.Code()
	if size, ok := fixedSizes[code]; ok {
		if len(v) != size && !(len(v) == 0 && code != primitive.DataTypeCodeTinyint && code != primitive.DataTypeCodeSmallint) {
			return cqlerr.Invalidf("Expected %d or 0 byte %s (%d)", size, statements.TypeString(t, false), len(v))
		}
		if code == primitive.DataTypeCodeTimeuuid && len(v) == 16 && v[6]>>4 != 1 {
			return bad("Unsupported UUID version for timeuuid")
		}
		return nil
	}
	switch code {
	case primitive.DataTypeCodeCustom:
		if isLexicalUUID(t) && len(v) != 16 && len(v) != 0 {
			return cqlerr.Invalidf("UUID should be 16 or 0 bytes (%d)", len(v))
		}
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
	case primitive.DataTypeCodeDuration:
		return validateDuration(v)
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		var elem datatype.DataType
		if l, ok := t.(*datatype.List); ok {
			elem = l.ElementType
		} else {
			elem = t.(*datatype.Set).ElementType
		}
		return WalkCollection(v, func(b []byte) error { return validateElem(elem, b, name) }, nil)
	case primitive.DataTypeCodeMap:
		m := t.(*datatype.Map)
		return WalkCollection(v,
			func(b []byte) error { return validateElem(m.KeyType, b, name) },
			func(b []byte) error { return validateElem(m.ValueType, b, name) })
	case primitive.DataTypeCodeTuple:
		tt := t.(*datatype.Tuple)
		rest := v
		for i := 0; len(rest) > 0; i++ {
			if i >= len(tt.FieldTypes) {
				return bad("too many tuple fields")
			}
			b, r, ok := ReadBytes(rest)
			if !ok {
				return bad("truncated tuple")
			}
			if err := ValidateValue(tt.FieldTypes[i], b, name); err != nil {
				return err
			}
			rest = r
		}
	case primitive.DataTypeCodeUdt:
		return validateUDT(t.(*datatype.UserDefined), v, name)
	}
	return nil
}

// validateDuration checks a duration value as Cassandra's
// DurationSerializer.validate does, with its messages: three vints, months
// and days of 32 bits, all three of one sign. A value whose vints run past
// its end (where Cassandra fails with an internal error) is refused too;
// bytes after the third vint are allowed, as Cassandra allows them.
func validateDuration(v []byte) error {
	if len(v) < 3 {
		return cqlerr.Invalidf("Expected at least 3 bytes for a duration (%d)", len(v))
	}
	months, rest, ok := readSignedVInt(v)
	days, rest, ok2 := readSignedVInt(rest)
	nanos, _, ok3 := readSignedVInt(rest)
	if !ok || !ok2 || !ok3 {
		return cqlerr.Invalidf("Invalid duration value: its months, days and nanoseconds need more than its %d bytes", len(v))
	}
	if months != int64(int32(months)) {
		return cqlerr.Invalidf("The duration months must be a 32 bits integer but was: %d", months)
	}
	if days != int64(int32(days)) {
		return cqlerr.Invalidf("The duration days must be a 32 bits integer but was: %d", days)
	}
	if !(months >= 0 && days >= 0 && nanos >= 0 || months <= 0 && days <= 0 && nanos <= 0) {
		return cqlerr.Invalidf("The duration months, days and nanoseconds must be all of the same sign (%d, %d, %d)", months, days, nanos)
	}
	return nil
}

// validateUDT checks a user type value as Cassandra's
// UserTypeSerializer.validate does, with its messages: fewer fields than
// declared are allowed (ALTER TYPE ADD makes old values shorter), more
// are not.
func validateUDT(ut *datatype.UserDefined, v []byte, name string) error {
	rest := v
	for i, fname := range ut.FieldNames {
		if len(rest) == 0 {
			return nil
		}
		if len(rest) < 4 {
			return cqlerr.Invalidf("Not enough bytes to read size of %dth field %s", i, fname)
		}
		b, r, ok := ReadBytes(rest)
		if !ok {
			return cqlerr.Invalidf("Not enough bytes to read %dth field %s", i, fname)
		}
		if err := ValidateValue(ut.FieldTypes[i], b, name+"."+fname); err != nil {
			return err
		}
		rest = r
	}
	if len(rest) != 0 {
		return cqlerr.Invalidf("Invalid remaining data after end of UDT value")
	}
	return nil
}

// fieldTypesOf returns the field types of a tuple or user type, nil for
// other types.
func fieldTypesOf(t datatype.DataType) []datatype.DataType {
	switch x := t.(type) {
	case *datatype.Tuple:
		return x.FieldTypes
	case *datatype.UserDefined:
		return x.FieldTypes
	}
	return nil
}

func validateElem(t datatype.DataType, b []byte, name string) error {
	if b == nil {
		return cqlerr.Invalidf("null is not supported inside collections")
	}
	return ValidateValue(t, b, name)
}

// WalkCollection visits the elements (or keys and values) of a serialized
// v3+ collection, failing on truncation.
func WalkCollection(v []byte, key, value func([]byte) error) error {
	if len(v) < 4 {
		return cqlerr.Invalidf("Not enough bytes to read a collection")
	}
	n := int(int32(binary.BigEndian.Uint32(v)))
	rest := v[4:]
	if n < 0 {
		return cqlerr.Invalidf("Invalid negative collection size %d", n)
	}
	for i := 0; i < n; i++ {
		b, r, ok := ReadBytes(rest)
		if !ok {
			return cqlerr.Invalidf("Not enough bytes to read a collection element")
		}
		if err := key(b); err != nil {
			return err
		}
		rest = r
		if value != nil {
			b, r, ok = ReadBytes(rest)
			if !ok {
				return cqlerr.Invalidf("Not enough bytes to read a map value")
			}
			if err := value(b); err != nil {
				return err
			}
			rest = r
		}
	}
	if len(rest) != 0 {
		return cqlerr.Invalidf("Unexpected extraneous bytes after collection value")
	}
	return nil
}

// ReadBytes reads an [int]-prefixed value (negative length: null).
func ReadBytes(b []byte) (v, rest []byte, ok bool) {
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

// HasUnordered reports whether values of t contain a set or a map, whose
// serialized form Cassandra normalises (elements sorted, duplicates
// dropped) before storing it.
func HasUnordered(t datatype.DataType) bool {
	switch x := t.(type) {
	case *datatype.Set, *datatype.Map:
		return true
	case *datatype.List:
		return HasUnordered(x.ElementType)
	case *datatype.Tuple, *datatype.UserDefined:
		for _, f := range fieldTypesOf(x) {
			if HasUnordered(f) {
				return true
			}
		}
	}
	return false
}

// NormalizeValue returns v with every set and map inside it sorted by
// element order and deduplicated (the last duplicate wins for maps), as
// Cassandra stores frozen collections. REQUIRES: ValidateValue(t, v) passed.
func NormalizeValue(t datatype.DataType, v []byte) ([]byte, error) {
	if v == nil || !HasUnordered(t) {
		return v, nil
	}
	switch x := t.(type) {
	case *datatype.List:
		var elems [][]byte
		if err := WalkCollection(v, func(e []byte) error {
			n, err := NormalizeValue(x.ElementType, e)
			elems = append(elems, n)
			return err
		}, nil); err != nil {
			return nil, err
		}
		out := binary.BigEndian.AppendUint32(nil, uint32(len(elems)))
		for _, e := range elems {
			out = AppendBytes(out, e)
		}
		return out, nil
	case *datatype.Tuple, *datatype.UserDefined:
		fts := fieldTypesOf(x)
		var out []byte
		rest := v
		for i := 0; len(rest) > 0; i++ {
			b, r, _ := ReadBytes(rest)
			n, err := NormalizeValue(fts[i], b)
			if err != nil {
				return nil, err
			}
			out = AppendBytes(out, n)
			rest = r
		}
		if out == nil {
			out = []byte{}
		}
		return out, nil
	case *datatype.Set:
		return normalizeEntries(v, x.ElementType, nil)
	case *datatype.Map:
		return normalizeEntries(v, x.KeyType, x.ValueType)
	}
	return v, nil
}

func normalizeEntries(v []byte, kt, vt datatype.DataType) ([]byte, error) {
	type entry struct{ k, v, order []byte }
	var entries []entry
	var cur *entry
	var valueFn func([]byte) error
	if vt != nil {
		valueFn = func(val []byte) error {
			nv, err := NormalizeValue(vt, val)
			cur.v = nv
			return err
		}
	}
	err := WalkCollection(v, func(k []byte) error {
		nk, err := NormalizeValue(kt, k)
		if err != nil {
			return err
		}
		order, err := storage.AppendKey(nil, kt, nk, false)
		if err != nil {
			return cqlerr.Invalidf("%v", err)
		}
		entries = append(entries, entry{k: nk, order: order})
		cur = &entries[len(entries)-1]
		return nil
	}, valueFn)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return bytes.Compare(entries[i].order, entries[j].order) < 0 })
	out := entries[:0]
	for _, e := range entries {
		if len(out) > 0 && bytes.Equal(out[len(out)-1].order, e.order) {
			out[len(out)-1] = e
			continue
		}
		out = append(out, e)
	}
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(out)))
	for _, e := range out {
		buf = AppendBytes(buf, e.k)
		if vt != nil {
			buf = AppendBytes(buf, e.v)
		}
	}
	return buf, nil
}

// isLexicalUUID reports whether t is the custom LexicalUUIDType.
func isLexicalUUID(t datatype.DataType) bool {
	c, ok := t.(*datatype.Custom)
	return ok && c.ClassName == statements.LexicalUUIDType
}
