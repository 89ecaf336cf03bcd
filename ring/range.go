package ring

import (
	"fmt"
	"math"
)

// Range is the token range (Start, End] of Cassandra's Range<Token>: the
// tokens t with Start < t <= End, wrapping past math.MaxInt64 to
// math.MinInt64 when Start >= End. Start == End is the whole ring (a ring
// of one token owns everything), as Range.contains treats it.
type Range struct {
	Start, End int64
}

// Contains reports whether token t is in the range.
func (r Range) Contains(t int64) bool {
	if r.Start < r.End {
		return r.Start < t && t <= r.End
	}
	return t > r.Start || t <= r.End
}

// Width is the number of tokens in the range; the whole ring is 2^64,
// which does not fit, so it reports whole instead.
func (r Range) Width() (n uint64, whole bool) {
	if r.Start == r.End {
		return 0, true
	}
	return uint64(r.End) - uint64(r.Start), false
}

// Fraction is the share of the ring the range covers, in [0, 1].
func (r Range) Fraction() float64 {
	n, whole := r.Width()
	if whole {
		return 1
	}
	return float64(n) / ringSize
}

// ringSize is the number of Murmur3 tokens, 2^64, as a float.
const ringSize float64 = 1 << 64

func (r Range) String() string { return fmt.Sprintf("(%d,%d]", r.Start, r.End) }

// split returns the token a fraction f of the way from Start to End, never
// Start itself. REQUIRES: the range holds at least two tokens.
func (r Range) split(f float64) int64 {
	n, whole := r.Width()
	if whole {
		n = math.MaxUint64
	}
	step := uint64(f * float64(n))
	if step == 0 {
		step = 1
	}
	if step >= n {
		step = n - 1
	}
	return int64(uint64(r.Start) + step)
}
