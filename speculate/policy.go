package speculate

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cqld/cqld/cqlerr"
)

// Kind is what a Policy does.
type Kind int

// The kinds of SpeculativeRetryPolicy.
const (
	Never Kind = iota
	Fixed
	Percentile
	Hybrid
	Always
)

var kindNames = [...]string{Never: "NEVER", Fixed: "FIXED", Percentile: "PERCENTILE", Hybrid: "HYBRID", Always: "ALWAYS"}

func (k Kind) String() string { return kindNames[k] }

// Policy is a parsed speculative_retry. The zero value is NEVER.
type Policy struct {
	Kind Kind
	// Percentile (0 to 100, both excluded) of a Percentile or Hybrid
	// policy; Fixed, the time of a Fixed or Hybrid one (whole
	// milliseconds); Max chooses MAX rather than MIN for a Hybrid one.
	Percentile float64
	Fixed      time.Duration
	Max        bool
}

var (
	percentilePattern = regexp.MustCompile(`(?i)^([0-9.]+)p(ercentile)?$`)
	fixedPattern      = regexp.MustCompile(`(?i)^([0-9.]+)ms$`)
	hybridPattern     = regexp.MustCompile(`(?i)^(MIN|MAX)\(([0-9.]+[a-z]+)\s*,\s*([0-9.]+[a-z]+)\)$`)
)

// option is the name Cassandra's messages give the option, whichever of
// speculative_retry and additional_write_policy was parsed.
const option = "speculative_retry"

func invalid(s string) error {
	return cqlerr.ConfigErrorf("Invalid value %s for option '%s'", s, option)
}

// Parse reads a speculative_retry value. Its errors are CONFIG_ERRORs with
// Cassandra 4.0's messages.
func Parse(s string) (Policy, error) {
	switch {
	case strings.EqualFold(s, "ALWAYS"):
		return Policy{Kind: Always}, nil
	case strings.EqualFold(s, "NEVER"), strings.EqualFold(s, "NONE"):
		return Policy{Kind: Never}, nil
	case percentilePattern.MatchString(s):
		v, err := strconv.ParseFloat(percentilePattern.FindStringSubmatch(s)[1], 64)
		if err != nil {
			return Policy{}, invalid(s)
		}
		if v <= 0 || v >= 100 {
			return Policy{}, cqlerr.ConfigErrorf("Invalid value %s for PERCENTILE option '%s': must be between (0.0 and 100.0)", s, option)
		}
		return Policy{Kind: Percentile, Percentile: v}, nil
	case fixedPattern.MatchString(s):
		v, err := strconv.ParseFloat(fixedPattern.FindStringSubmatch(s)[1], 64)
		if err != nil || v > math.MaxInt32 {
			return Policy{}, invalid(s)
		}
		// Parsed as a double and kept as whole milliseconds, as Cassandra
		// does.
		return Policy{Kind: Fixed, Fixed: time.Duration(int64(v)) * time.Millisecond}, nil
	case hybridPattern.MatchString(s):
		m := hybridPattern.FindStringSubmatch(s)
		a, errA := Parse(m[2])
		b, errB := Parse(m[3])
		if errA != nil || errB != nil {
			return Policy{}, invalid(s)
		}
		if a.Kind == b.Kind {
			return Policy{}, cqlerr.ConfigErrorf("Invalid value %s for option '%s': MIN()/MAX() arguments should be of different types, but both are of type %s", s, option, a.Kind)
		}
		if a.Kind != Percentile {
			a, b = b, a
		}
		if a.Kind != Percentile || b.Kind != Fixed {
			// One of them is ALWAYS or NEVER, which the pattern does not
			// let through; a policy Cassandra could not build either.
			return Policy{}, invalid(s)
		}
		return Policy{Kind: Hybrid, Percentile: a.Percentile, Fixed: b.Fixed, Max: strings.EqualFold(m[1], "MAX")}, nil
	}
	return Policy{}, invalid(s)
}

// String is the policy as Cassandra shows it.
func (p Policy) String() string {
	switch p.Kind {
	case Always, Never:
		return p.Kind.String()
	case Percentile:
		return formatPercentile(p.Percentile)
	case Fixed:
		return strconv.FormatInt(p.Fixed.Milliseconds(), 10) + "ms"
	}
	fn := "MIN"
	if p.Max {
		fn = "MAX"
	}
	return fn + "(" + formatPercentile(p.Percentile) + "," + strconv.FormatInt(p.Fixed.Milliseconds(), 10) + "ms)"
}

// formatPercentile formats v as DecimalFormat("#.####") does, then "p".
func formatPercentile(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64) + "p"
}

// Threshold is how long a read waits for its replicas before it asks
// another (ColumnFamilyStore.sampleReadLatency): for a percentile, h's at
// now, or current while h holds no sample yet; a fixed time; for a hybrid,
// the smaller or larger of the two. NEVER is math.MaxInt64 (a read never
// waits that long); ALWAYS is zero, and the caller asks one more replica
// from the start.
func (p Policy) Threshold(h *Histogram, now time.Time, current time.Duration) time.Duration {
	switch p.Kind {
	case Never:
		return math.MaxInt64
	case Always:
		return 0
	case Fixed:
		return p.Fixed
	}
	q, ok := h.Quantile(p.Percentile/100, now)
	if !ok {
		return current
	}
	if p.Kind == Percentile {
		return q
	}
	if p.Max {
		return max(q, p.Fixed)
	}
	return min(q, p.Fixed)
}
