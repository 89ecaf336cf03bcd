package stress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
)

// Dist is a parsed distribution of integers, such as a key population or a
// value size. It is immutable and safe for concurrent use; each worker draws
// from it through its own Sampler.
type Dist struct {
	Kind     string  // fixed, seq, uniform, gaussian, exp, zipf
	Min, Max int64   // inclusive bounds (Min == Max for fixed)
	Param    float64 // gaussian: stdvrng (default 3); exp: rate; zipf: exponent s (> 1)
	seq      *atomic.Int64
}

// Sampler draws values from a Dist. It is not safe for concurrent use.
type Sampler interface {
	Next() int64
}

// ParseDist parses cassandra-stress's distribution syntax: fixed(N),
// uniform(MIN..MAX), gaussian(MIN..MAX[,STDVRNG]), exp(MIN..MAX),
// zipf(MIN..MAX[,S]) and seq(MIN..MAX). Numbers take k, m and b suffixes
// (1M is a million).
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("stress: distribution %q: want name(args), e.g. uniform(1..100)", s)
	}
	name := strings.ToLower(s[:open])
	args := strings.Split(s[open+1:len(s)-1], ",")
	d := Dist{Kind: name}
	if name == "fixed" {
		if len(args) != 1 {
			return Dist{}, fmt.Errorf("stress: distribution %q: fixed takes one value", s)
		}
		v, err := parseCount(args[0])
		if err != nil {
			return Dist{}, fmt.Errorf("stress: distribution %q: %w", s, err)
		}
		d.Min, d.Max = v, v
		return d, nil
	}
	lo, hi, err := parseRange(args[0])
	if err != nil {
		return Dist{}, fmt.Errorf("stress: distribution %q: %w", s, err)
	}
	d.Min, d.Max = lo, hi
	switch name {
	case "uniform", "seq":
		if len(args) > 1 {
			return Dist{}, fmt.Errorf("stress: distribution %q: %s takes only a range", s, name)
		}
	case "gaussian", "normal", "gauss", "exp", "zipf":
		d.Param = map[string]float64{"gaussian": 3, "normal": 3, "gauss": 3, "exp": 0, "zipf": 1.1}[name]
		if name != "exp" && name != "zipf" {
			d.Kind = "gaussian"
		}
		if len(args) > 2 {
			return Dist{}, fmt.Errorf("stress: distribution %q: too many arguments", s)
		}
		if len(args) == 2 {
			if d.Param, err = strconv.ParseFloat(strings.TrimSpace(args[1]), 64); err != nil {
				return Dist{}, fmt.Errorf("stress: distribution %q: %w", s, err)
			}
		}
		if d.Kind == "zipf" && d.Param <= 1 {
			return Dist{}, fmt.Errorf("stress: distribution %q: the zipf exponent must be > 1", s)
		}
		if d.Kind == "gaussian" && d.Param <= 0 {
			return Dist{}, fmt.Errorf("stress: distribution %q: stdvrng must be > 0", s)
		}
	default:
		return Dist{}, fmt.Errorf("stress: distribution %q: unknown kind %q (fixed, seq, uniform, gaussian, exp, zipf)", s, name)
	}
	if d.Kind == "seq" {
		d.seq = new(atomic.Int64)
	}
	return d, nil
}

// Seq is the sequence MIN..MAX shared by all workers: each value is drawn
// once before the sequence wraps.
func Seq(lo, hi int64) Dist { return Dist{Kind: "seq", Min: lo, Max: hi, seq: new(atomic.Int64)} }

// Fixed is the constant v.
func Fixed(v int64) Dist { return Dist{Kind: "fixed", Min: v, Max: v} }

func (d Dist) String() string {
	switch d.Kind {
	case "fixed":
		return fmt.Sprintf("fixed(%d)", d.Min)
	case "uniform", "seq":
		return fmt.Sprintf("%s(%d..%d)", d.Kind, d.Min, d.Max)
	}
	return fmt.Sprintf("%s(%d..%d,%g)", d.Kind, d.Min, d.Max, d.Param)
}

// Size is the number of distinct values.
func (d Dist) Size() int64 { return d.Max - d.Min + 1 }

// Sampler returns a sampler drawing with r.
func (d Dist) Sampler(r *rand.Rand) Sampler {
	span := uint64(d.Max - d.Min + 1)
	switch d.Kind {
	case "fixed":
		return fixedSampler(d.Min)
	case "seq":
		return &seqSampler{d.seq, d.Min, span}
	case "gaussian":
		mean := float64(d.Min+d.Max) / 2
		return &gaussSampler{r, d.Min, d.Max, mean, (mean - float64(d.Min)) / d.Param}
	case "exp":
		rate := d.Param
		if rate == 0 {
			rate = 10 / float64(span) // nearly all of the mass inside the range
		}
		return &expSampler{r, d.Min, span, rate}
	case "zipf":
		return &zipfSampler{rand.NewZipf(r, d.Param, 1, span-1), d.Min}
	}
	return &uniformSampler{r, d.Min, span}
}

type fixedSampler int64

func (f fixedSampler) Next() int64 { return int64(f) }

type seqSampler struct {
	n    *atomic.Int64
	min  int64
	span uint64
}

func (s *seqSampler) Next() int64 { return s.min + int64(uint64(s.n.Add(1)-1)%s.span) }

type uniformSampler struct {
	r    *rand.Rand
	min  int64
	span uint64
}

func (s *uniformSampler) Next() int64 { return s.min + int64(s.r.Uint64N(s.span)) }

type gaussSampler struct {
	r            *rand.Rand
	min, max     int64
	mean, stddev float64
}

func (s *gaussSampler) Next() int64 {
	for range 64 {
		v := int64(math.Round(s.r.NormFloat64()*s.stddev + s.mean))
		if v >= s.min && v <= s.max {
			return v
		}
	}
	return int64(s.mean)
}

type expSampler struct {
	r    *rand.Rand
	min  int64
	span uint64
	rate float64
}

func (s *expSampler) Next() int64 {
	return s.min + int64(uint64(s.r.ExpFloat64()/s.rate)%s.span)
}

type zipfSampler struct {
	z   *rand.Zipf
	min int64
}

func (s *zipfSampler) Next() int64 { return s.min + int64(s.z.Uint64()) }

// parseRange parses "MIN..MAX".
func parseRange(s string) (int64, int64, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "..")
	if !ok {
		return 0, 0, fmt.Errorf("range %q: want MIN..MAX", s)
	}
	l, err := parseCount(lo)
	if err != nil {
		return 0, 0, err
	}
	h, err := parseCount(hi)
	if err != nil {
		return 0, 0, err
	}
	if h < l {
		return 0, 0, fmt.Errorf("range %q: MAX below MIN", s)
	}
	return l, h, nil
}

// parseCount parses a non-negative integer with an optional k, m or b
// suffix (powers of 1000, as cassandra-stress reads them).
func parseCount(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mul := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mul = 1e3
		case 'm', 'M':
			mul = 1e6
		case 'b', 'B':
			mul = 1e9
		}
		if mul != 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return v * mul, nil
}
