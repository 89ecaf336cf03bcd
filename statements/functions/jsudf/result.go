package jsudf

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/dop251/goja"

	"github.com/cqld/cqld/statements/types"
)

// ---- JavaScript to CQL ----

// fromJS serializes a call's result v as type t (nil for null or
// undefined).
func fromJS(rt *goja.Runtime, t datatype.DataType, v goja.Value) ([]byte, error) {
	if v == nil || goja.IsNull(v) || goja.IsUndefined(v) {
		return nil, nil
	}
	wrong := func() error {
		return fmt.Errorf("cannot return %s as %s", kindOf(v), typeName(t))
	}
	ex := v.Export()
	switch t.Code() {
	case primitive.DataTypeCodeAscii, primitive.DataTypeCodeVarchar, primitive.DataTypeCodeText:
		s, ok := ex.(string)
		if !ok {
			return nil, wrong()
		}
		return []byte(s), nil
	case primitive.DataTypeCodeBoolean:
		b, ok := ex.(bool)
		if !ok {
			return nil, wrong()
		}
		if b {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt,
		primitive.DataTypeCodeBigint, primitive.DataTypeCodeCounter, primitive.DataTypeCodeTime:
		n, ok := integer(ex)
		if !ok {
			return nil, wrong()
		}
		bits, _ := types.IntWidth(t.Code())
		if t.Code() == primitive.DataTypeCodeTime && (n < 0 || n >= 86400e9) {
			return nil, fmt.Errorf("time %d is out of range", n)
		}
		return types.FixedInt(n, bits), nil // Number.intValue() and the others wrap
	case primitive.DataTypeCodeFloat:
		f, ok := number(ex)
		if !ok {
			return nil, wrong()
		}
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
	case primitive.DataTypeCodeDouble:
		f, ok := number(ex)
		if !ok {
			return nil, wrong()
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case primitive.DataTypeCodeVarint:
		switch n := ex.(type) {
		case *big.Int:
			return types.VarintBytes(n), nil
		case int64:
			return types.VarintBytes(big.NewInt(n)), nil
		case float64:
			if math.IsInf(n, 0) || math.IsNaN(n) {
				return nil, wrong()
			}
			b, _ := new(big.Float).SetFloat64(math.Trunc(n)).Int(nil)
			return types.VarintBytes(b), nil
		}
		return nil, wrong()
	case primitive.DataTypeCodeDecimal:
		var text string
		switch n := ex.(type) {
		case int64:
			text = strconv.FormatInt(n, 10)
		case float64:
			// new BigDecimal(number.toString()), as Cassandra converts.
			text = types.JavaFloatString(n, 64)
		case *big.Int:
			text = n.String()
		default:
			return nil, wrong()
		}
		return types.DecimalBytes(text)
	case primitive.DataTypeCodeTimestamp, primitive.DataTypeCodeDate:
		if ms, ok := dateMillis(v); ok {
			if t.Code() == primitive.DataTypeCodeTimestamp {
				return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
			}
			days := ms / 86400000
			if ms < 0 && ms%86400000 != 0 {
				days--
			}
			return binary.BigEndian.AppendUint32(nil, uint32(days+1<<31)), nil
		}
		if n, ok := integer(ex); ok && t.Code() == primitive.DataTypeCodeTimestamp {
			return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
		}
	case primitive.DataTypeCodeBlob:
		switch b := ex.(type) {
		case goja.ArrayBuffer:
			return append([]byte{}, b.Bytes()...), nil
		case []byte:
			return append([]byte{}, b...), nil
		}
		return nil, wrong()
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		o, ok := v.(*goja.Object)
		if !ok || o.ClassName() != "Array" {
			return nil, wrong()
		}
		et := elementType(t)
		n := int(o.Get("length").ToInteger())
		elems := make([][]byte, n)
		for i := range n {
			e, err := fromJS(rt, et, o.Get(strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		return types.EncodeCollection(elems, nil, et, nil, t.Code() == primitive.DataTypeCodeSet)
	case primitive.DataTypeCodeMap:
		mt := t.(*datatype.Map)
		o, ok := v.(*goja.Object)
		if !ok {
			return nil, wrong()
		}
		var keys, vals [][]byte
		add := func(k, val goja.Value) error {
			kb, err := fromJS(rt, mt.KeyType, k)
			if err != nil {
				return err
			}
			vb, err := fromJS(rt, mt.ValueType, val)
			if err != nil {
				return err
			}
			keys, vals = append(keys, kb), append(vals, vb)
			return nil
		}
		// A Map's entries in insertion order, or an object's properties.
		entries, err := rt.RunString("(function(m) { return m instanceof Map ? Array.from(m.entries()) : null; })")
		if err != nil {
			return nil, err
		}
		fn, _ := goja.AssertFunction(entries)
		arr, err := fn(goja.Undefined(), o)
		if err != nil {
			return nil, err
		}
		if goja.IsNull(arr) {
			for _, k := range o.Keys() {
				if err := add(rt.ToValue(k), o.Get(k)); err != nil {
					return nil, err
				}
			}
		} else {
			ao := arr.ToObject(rt)
			for i := range int(ao.Get("length").ToInteger()) {
				kv := ao.Get(strconv.Itoa(i)).ToObject(rt)
				if err := add(kv.Get("0"), kv.Get("1")); err != nil {
					return nil, err
				}
			}
		}
		return types.EncodeCollection(keys, vals, mt.KeyType, mt.ValueType, true)
	case primitive.DataTypeCodeTuple, primitive.DataTypeCodeUdt:
		o, ok := v.(*goja.Object)
		if !ok {
			return nil, wrong()
		}
		var out []byte
		if tt, ok := t.(*datatype.Tuple); ok {
			if o.ClassName() != "Array" {
				return nil, wrong()
			}
			for i, ft := range tt.FieldTypes {
				b, err := fromJS(rt, ft, o.Get(strconv.Itoa(i)))
				if err != nil {
					return nil, err
				}
				out = types.AppendBytes(out, b)
			}
			return out, nil
		}
		ut := t.(*datatype.UserDefined)
		for i, ft := range ut.FieldTypes {
			b, err := fromJS(rt, ft, o.Get(ut.FieldNames[i]))
			if err != nil {
				return nil, err
			}
			out = types.AppendBytes(out, b)
		}
		return out, nil
	}
	// uuid, timeuuid, inet, duration, and timestamps and dates as text:
	// parsed as fromJson parses a string.
	s, ok := ex.(string)
	if !ok {
		return nil, wrong()
	}
	q, _ := json.Marshal(s)
	return types.FromJSONText(t, string(q))
}

// integer is a number as Number.longValue() takes it: truncated.
func integer(ex any) (int64, bool) {
	switch n := ex.(type) {
	case int64:
		return n, true
	case float64:
		if math.IsNaN(n) {
			return 0, true
		}
		return int64(n), true
	case *big.Int:
		return n.Int64(), true
	}
	return 0, false
}

func number(ex any) (float64, bool) {
	switch n := ex.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(n).Float64()
		return f, true
	}
	return 0, false
}

// dateMillis is a Date's time in milliseconds.
func dateMillis(v goja.Value) (int64, bool) {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "Date" {
		return 0, false
	}
	getTime, ok := goja.AssertFunction(o.Get("getTime"))
	if !ok {
		return 0, false
	}
	ms, err := getTime(o)
	if err != nil {
		return 0, false
	}
	f := ms.ToFloat()
	if math.IsNaN(f) {
		return 0, false
	}
	return int64(f), true
}

// kindOf names a JavaScript value's kind for errors.
func kindOf(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		return "an object of class " + o.ClassName()
	}
	switch v.Export().(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case *big.Int:
		return "a BigInt"
	}
	return v.String()
}
