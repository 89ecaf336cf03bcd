package functions

import (
	"encoding/binary"
	"time"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements/types"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Scalar is a scalar function's implementation: args are its arguments'
// serialized values (nil for a null), the result is a serialized value.
type Scalar func(c Context, args [][]byte) ([]byte, error)

// Context is what a function sees of the statement that runs it.
type Context interface {
	// Now is the statement's time, the same for every call within it.
	Now() time.Time
	// Warn adds a warning to the statement's answer (a user-defined
	// function that ran longer than its warn timeout).
	Warn(msg string)
}

// nativeFunctions are the native functions by name, each with its
// signatures in Cassandra's declaration order.
var nativeFunctions = map[string][]*Sig{}

func regFn(name string, ret datatype.DataType, impl Scalar, params ...datatype.DataType) {
	nativeFunctions[name] = append(nativeFunctions[name], &Sig{Name: name, Params: params, Ret: ret, Impl: impl})
}

func regAgg(name string, kind AggKind, ret datatype.DataType, param datatype.DataType) {
	nativeFunctions[name] = append(nativeFunctions[name], &Sig{Name: name, Params: []datatype.DataType{param}, Ret: ret, Agg: kind})
}

// nativeTypes are CQL3Type.Native in declaration order, varchar aside.
var nativeTypes = []datatype.DataType{
	datatype.Ascii, datatype.Bigint, datatype.Blob, datatype.Boolean, datatype.Counter, datatype.Date,
	datatype.Decimal, datatype.Double, datatype.Duration, datatype.Float, datatype.Inet, datatype.Int,
	datatype.Smallint, datatype.Varchar, datatype.Time, datatype.Timestamp, datatype.Timeuuid,
	datatype.Tinyint, datatype.Uuid, datatype.Varint,
}

// numericTypes are the types sum and avg accept, in AggregateFcts order.
var numericTypes = []datatype.DataType{
	datatype.Tinyint, datatype.Smallint, datatype.Int, datatype.Bigint, datatype.Float,
	datatype.Double, datatype.Decimal, datatype.Varint, datatype.Counter,
}

func init() {
	// Aggregates (AggregateFcts.all).
	for _, t := range numericTypes {
		regAgg("sum", AggSum, t, t)
	}
	for _, t := range numericTypes {
		regAgg("avg", AggAvg, t, t)
	}
	for _, t := range nativeTypes {
		regAgg("count", AggCount, datatype.Bigint, t)
		regAgg("max", AggMax, t, t)
		regAgg("min", AggMin, t, t)
	}

	// Time functions (TimeFcts.all).
	now := func(c Context, _ [][]byte) ([]byte, error) { return NewTimeUUID(c.Now()), nil }
	regFn("now", datatype.Timeuuid, now)
	regFn("currenttimeuuid", datatype.Timeuuid, now)
	regFn("currenttimestamp", datatype.Timestamp, func(c Context, _ [][]byte) ([]byte, error) {
		return binary.BigEndian.AppendUint64(nil, uint64(c.Now().UnixMilli())), nil
	})
	regFn("currentdate", datatype.Date, func(c Context, _ [][]byte) ([]byte, error) { return types.DateOf(c.Now()), nil })
	regFn("currenttime", datatype.Time, func(c Context, _ [][]byte) ([]byte, error) {
		n := c.Now().UTC()
		d := n.Sub(time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC))
		return binary.BigEndian.AppendUint64(nil, uint64(d.Nanoseconds())), nil
	})
	regFn("mintimeuuid", datatype.Timeuuid, timeuuidBound(false), datatype.Timestamp)
	regFn("maxtimeuuid", datatype.Timeuuid, timeuuidBound(true), datatype.Timestamp)
	regFn("dateof", datatype.Timestamp, toMillis(datatype.Timeuuid, datatype.Timestamp), datatype.Timeuuid)
	regFn("unixtimestampof", datatype.Bigint, toMillis(datatype.Timeuuid, datatype.Bigint), datatype.Timeuuid)
	regFn("todate", datatype.Date, toMillis(datatype.Timeuuid, datatype.Date), datatype.Timeuuid)
	regFn("todate", datatype.Date, toMillis(datatype.Timestamp, datatype.Date), datatype.Timestamp)
	regFn("totimestamp", datatype.Timestamp, toMillis(datatype.Timeuuid, datatype.Timestamp), datatype.Timeuuid)
	regFn("totimestamp", datatype.Timestamp, toMillis(datatype.Date, datatype.Timestamp), datatype.Date)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Timeuuid, datatype.Bigint), datatype.Timeuuid)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Timestamp, datatype.Bigint), datatype.Timestamp)
	regFn("tounixtimestamp", datatype.Bigint, toMillis(datatype.Date, datatype.Bigint), datatype.Date)

	regFn("uuid", datatype.Uuid, func(Context, [][]byte) ([]byte, error) { return NewRandomUUID(), nil })

	// Blob conversions (BytesConversionFcts.all): <type>asblob and
	// blobas<type> for the native types but blob, and varchar. (Cassandra
	// also has emptyasblob and blobasempty, of its EmptyType, which no
	// column can have.)
	for _, t := range nativeTypes {
		if t.Code() == primitive.DataTypeCodeBlob {
			continue
		}
		regBlobConversions(typeName(t), t)
	}
	regBlobConversions("varchar", datatype.Varchar)
}

func regBlobConversions(name string, t datatype.DataType) {
	regFn(name+"asblob", datatype.Blob, func(_ Context, a [][]byte) ([]byte, error) { return a[0], nil }, t)
	from := "blobas" + name
	regFn(from, t, func(_ Context, a [][]byte) ([]byte, error) {
		if a[0] != nil {
			if err := types.ValidateValue(t, a[0], from); err != nil {
				return nil, cqlerr.Invalidf("In call to function %s, value 0x%x is not a valid binary representation for type %s", from, a[0], typeName(t))
			}
		}
		return a[0], nil
	}, datatype.Blob)
}

func timeuuidBound(max bool) Scalar {
	return func(_ Context, a [][]byte) ([]byte, error) {
		if len(a[0]) != 8 {
			return nil, nil
		}
		return BoundTimeUUID(int64(binary.BigEndian.Uint64(a[0])), max), nil
	}
}

// toMillis converts between the temporal types through milliseconds since
// the epoch (TemporalType.toTimeInMillis / fromTimeInMillis).
func toMillis(from, to datatype.DataType) Scalar {
	return func(_ Context, a [][]byte) ([]byte, error) {
		v := a[0]
		if len(v) == 0 {
			return nil, nil
		}
		var ms int64
		switch from.Code() {
		case primitive.DataTypeCodeTimeuuid:
			m, ok := TimeUUIDMillis(v)
			if !ok {
				return nil, cqlerr.Invalidf("Invalid timeuuid %s", types.ValueString(from, v))
			}
			ms = m
		case primitive.DataTypeCodeTimestamp:
			if len(v) != 8 {
				return nil, nil
			}
			ms = int64(binary.BigEndian.Uint64(v))
		case primitive.DataTypeCodeDate:
			if len(v) != 4 {
				return nil, nil
			}
			ms = (int64(binary.BigEndian.Uint32(v)) - 1<<31) * 86400000
		}
		if to.Code() == primitive.DataTypeCodeDate {
			// SimpleDateSerializer.timeInMillisToDay: toDays truncates.
			return binary.BigEndian.AppendUint32(nil, uint32(int32(ms/86400000))-1<<31), nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
	}
}

// Lookup returns the signatures of the native function name (lower case,
// without "system."), in Cassandra's declaration order; none when there is
// no such function. token, writetime, ttl and toJson are not here: they
// depend on the table or the column they are applied to.
func Lookup(name string) []*Sig { return nativeFunctions[name] }
