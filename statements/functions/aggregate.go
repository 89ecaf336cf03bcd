package functions

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// AggKind is which aggregate function a Sig is (AggregateFcts).
type AggKind uint8

const (
	AggNone      AggKind = iota // a scalar function
	AggCountRows                // count(*): rows, nulls included
	AggCount
	AggMin
	AggMax
	AggSum
	AggAvg
	AggUser // a user-defined aggregate: Sig.User
)

// Aggregate is one aggregate function applied to values of type Type
// (counters as bigint).
type Aggregate struct {
	Kind AggKind
	Type datatype.DataType
}

// AggState is an aggregate's state for one group; the zero value is the
// state before the first row.
type AggState struct {
	n        int64 // rows counted, or values averaged
	i        int64 // integer sum
	overflow bool  // the integer or float sum overflowed into big or bigF
	big      *big.Int
	// Kahan summation of floating point values.
	sum, comp, simple float64
	bigF              *big.Float
	// decimal sum or average: dec scaled by 10^-scale.
	dec   *big.Int
	scale int32
	// err is why the values cannot be aggregated; Result returns it.
	err error
	// min and max
	best, key, scratch []byte
	// a user-defined aggregate's state, once started
	user    []byte
	started bool
}

// Add feeds one row's value v (nil for a null) to the aggregate.
func (a *Aggregate) Add(st *AggState, v []byte) {
	if a.Kind == AggCountRows {
		st.n++
		return
	}
	if v == nil {
		return
	}
	switch a.Kind {
	case AggCount:
		st.n++
	case AggMin, AggMax:
		k, err := storage.AppendKey(st.scratch[:0], a.Type, v, false)
		if err != nil {
			k = append(st.scratch[:0], v...)
		}
		if st.best == nil || (a.Kind == AggMin && bytes.Compare(k, st.key) < 0) || (a.Kind == AggMax && bytes.Compare(k, st.key) > 0) {
			st.best = v
			st.key, st.scratch = k, st.key
		} else {
			st.scratch = k
		}
	case AggSum, AggAvg:
		if len(v) == 0 {
			return
		}
		a.accumulate(st, v)
	}
}

func (a *Aggregate) accumulate(st *AggState, v []byte) {
	avg := a.Kind == AggAvg
	switch a.Type.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint:
		x, ok := types.IntValue(v)
		if !ok {
			return
		}
		if !avg {
			st.i += x // wraps around like Java's sum in the column's type
			return
		}
		// AvgAggregate: a long sum that switches to BigInteger on overflow.
		st.n++
		if st.overflow {
			st.big.Add(st.big, big.NewInt(x))
			return
		}
		prev := st.i
		st.i += x
		if (prev^st.i)&(x^st.i) < 0 {
			st.overflow = true
			st.big = new(big.Int).Add(big.NewInt(prev), big.NewInt(x))
		}
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		x, ok := types.FloatValue(a.Type, v)
		if !ok {
			return
		}
		if avg {
			st.n++
			if st.overflow {
				st.bigF.Add(st.bigF, new(big.Float).SetFloat64(x))
				return
			}
		}
		prev := st.sum
		st.simple += x
		tmp := x - st.comp
		rounded := st.sum + tmp
		st.comp = (rounded - st.sum) - tmp
		st.sum = rounded
		if avg && math.IsInf(st.sum, 0) && !math.IsInf(x, 0) {
			st.overflow = true
			st.bigF = new(big.Float).SetPrec(256).SetFloat64(prev)
			st.bigF.Add(st.bigF, new(big.Float).SetFloat64(x))
		}
	case primitive.DataTypeCodeVarint:
		if st.big == nil {
			st.big = new(big.Int)
		}
		st.big.Add(st.big, types.DecodeVarint(v))
		st.n++
	case primitive.DataTypeCodeDecimal:
		u, s, ok := types.DecodeDecimal(v)
		if !ok {
			return
		}
		if st.dec == nil {
			st.dec = new(big.Int)
		}
		if st.err != nil {
			return
		}
		if !avg {
			st.dec, st.scale, st.err = decimalAdd(st.dec, st.scale, u, s)
			return
		}
		// avg = avg + (value - avg) / count, rounded HALF_EVEN at the
		// scale of the difference.
		st.n++
		du, ds, err := decimalAdd(u, s, new(big.Int).Neg(st.dec), st.scale)
		if err != nil {
			st.err = err
			return
		}
		q := quoHalfEven(du, st.n)
		st.dec, st.scale, st.err = decimalAdd(st.dec, st.scale, q, ds)
	}
}

// maxScaleGap bounds the scales two decimals added exactly may be apart:
// the sum has the larger scale, so its digits grow by the gap (adding
// 1E+2147483647 and 1 would need two billion digits, in Java as here).
const maxScaleGap = 100_000

// decimalAdd adds two decimals; the result has the larger scale.
func decimalAdd(a *big.Int, as int32, b *big.Int, bs int32) (*big.Int, int32, error) {
	gap := int64(as) - int64(bs)
	if gap > maxScaleGap || gap < -maxScaleGap {
		return nil, 0, cqlerr.Invalidf("Cannot add decimals of scales %d and %d exactly: the sum would have %d digits more", as, bs, max(gap, -gap))
	}
	switch {
	case gap < 0:
		a = new(big.Int).Mul(a, pow10(-gap))
		as = bs
	case gap > 0:
		b = new(big.Int).Mul(b, pow10(gap))
	}
	return new(big.Int).Add(a, b), as, nil
}

// quoHalfEven is u / n rounded half to even.
func quoHalfEven(u *big.Int, n int64) *big.Int {
	d := big.NewInt(n)
	q, r := new(big.Int).QuoRem(u, d, new(big.Int))
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if c := r2.Cmp(d); c > 0 || (c == 0 && q.Bit(0) == 1) {
		if u.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// Result is the aggregate of the values added to st, or why there is none.
func (a *Aggregate) Result(st *AggState) ([]byte, error) {
	if st.err != nil {
		return nil, st.err
	}
	return a.result(st), nil
}

func (a *Aggregate) result(st *AggState) []byte {
	switch a.Kind {
	case AggCountRows, AggCount:
		return binary.BigEndian.AppendUint64(nil, uint64(st.n))
	case AggMin, AggMax:
		return st.best
	}
	avg := a.Kind == AggAvg
	switch a.Type.Code() {
	case primitive.DataTypeCodeTinyint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint:
		x := st.i
		if avg {
			switch {
			case st.n == 0:
				x = 0
			case st.overflow:
				x = lowBits(new(big.Int).Quo(st.big, big.NewInt(st.n)))
			default:
				x /= st.n
			}
		}
		bits, _ := types.IntWidth(a.Type.Code())
		return types.FixedInt(x, bits)
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		var f float64
		switch {
		case avg && st.n == 0:
		case st.overflow:
			f, _ = new(big.Float).Quo(st.bigF, new(big.Float).SetInt64(st.n)).Float64()
		default:
			f = st.sum + st.comp
			if math.IsNaN(f) && math.IsInf(st.simple, 0) {
				f = st.simple
			}
			if avg {
				f /= float64(st.n)
			}
		}
		if a.Type.Code() == primitive.DataTypeCodeFloat {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f)))
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f))
	case primitive.DataTypeCodeVarint:
		if st.big == nil {
			return types.VarintBytes(new(big.Int))
		}
		if avg {
			return types.VarintBytes(new(big.Int).Quo(st.big, big.NewInt(st.n)))
		}
		return types.VarintBytes(st.big)
	case primitive.DataTypeCodeDecimal:
		if st.dec == nil {
			return types.EncodeDecimal(new(big.Int), 0)
		}
		return types.EncodeDecimal(st.dec, st.scale)
	}
	return nil
}
