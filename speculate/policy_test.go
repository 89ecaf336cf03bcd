package speculate

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

// Parse takes what Cassandra 4.0's SpeculativeRetryPolicy.fromString
// takes, shows it as Cassandra stores it, and refuses the rest with its
// words.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"99p", "99p"},
		{"99PERCENTILE", "99p"},
		{"99.5percentile", "99.5p"},
		{"50.123456p", "50.1235p"},
		{"0.1P", "0.1p"},
		{"50ms", "50ms"},
		{"50MS", "50ms"},
		{"12.9ms", "12ms"},
		{"0ms", "0ms"},
		{"always", "ALWAYS"},
		{"ALWAYS", "ALWAYS"},
		{"none", "NEVER"},
		{"Never", "NEVER"},
		{"min(99p,50ms)", "MIN(99p,50ms)"},
		{"MAX(50ms, 90PERCENTILE)", "MAX(90p,50ms)"},
		{"MIN(1ms ,  75p)", "MIN(75p,1ms)"},
	} {
		p, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := p.String(); got != tc.out {
			t.Errorf("Parse(%q) shows as %q, want %q", tc.in, got, tc.out)
		}
		if again, err := Parse(p.String()); err != nil || again.String() != p.String() {
			t.Errorf("%q does not parse back: %+v %v", p.String(), again, err)
		}
	}
	for in, msg := range map[string]string{
		"":                "Invalid value  for option 'speculative_retry'",
		"99":              "Invalid value 99 for option 'speculative_retry'",
		"99x":             "Invalid value 99x for option 'speculative_retry'",
		"1.2.3p":          "Invalid value 1.2.3p for option 'speculative_retry'",
		"1.2.3ms":         "Invalid value 1.2.3ms for option 'speculative_retry'",
		"5s":              "Invalid value 5s for option 'speculative_retry'",
		"100p":            "Invalid value 100p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)",
		"0p":              "Invalid value 0p for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)",
		"MIN(99p,50p)":    "Invalid value MIN(99p,50p) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type PERCENTILE",
		"MAX(1ms,2ms)":    "Invalid value MAX(1ms,2ms) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type FIXED",
		"MIN(100p,50ms)":  "Invalid value MIN(100p,50ms) for option 'speculative_retry'",
		"MIN(99p,5s)":     "Invalid value MIN(99p,5s) for option 'speculative_retry'",
		"AVG(99p,50ms)":   "Invalid value AVG(99p,50ms) for option 'speculative_retry'",
		"MIN(ALWAYS,1ms)": "Invalid value MIN(ALWAYS,1ms) for option 'speculative_retry'",
	} {
		_, err := Parse(in)
		var ce *cqlerr.Error
		if !errors.As(err, &ce) || ce.Code != primitive.ErrorCodeConfigError || ce.Msg != msg {
			t.Errorf("Parse(%q) = %v, want CONFIG_ERROR %q", in, err, msg)
		}
	}
}

// The threshold of each kind: a percentile of the samples (kept as it was
// while there are none), a fixed time, the MIN or MAX of both, never, at
// once.
func TestThreshold(t *testing.T) {
	now := time.Unix(1000, 0)
	empty := NewHistogram(now)
	h := NewHistogram(now)
	for i := range 100 {
		d := time.Millisecond
		if i == 99 {
			d = time.Second
		}
		h.Add(d, now)
	}
	current := 2500 * time.Millisecond
	p := func(s string) Policy {
		t.Helper()
		p, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	near := func(got, want time.Duration) bool { return got >= want && got <= want*6/5 }
	for _, tc := range []struct {
		policy string
		h      *Histogram
		want   time.Duration
		exact  bool
	}{
		{"99p", empty, current, true},
		{"99p", h, time.Millisecond, false},
		{"99.5p", h, time.Second, false},
		{"50ms", h, 50 * time.Millisecond, true},
		{"MIN(99.5p,50ms)", h, 50 * time.Millisecond, true},
		{"MAX(99p,50ms)", h, 50 * time.Millisecond, true},
		{"MAX(99.5p,50ms)", h, time.Second, false},
		{"MIN(99p,50ms)", empty, current, true},
		{"NEVER", h, math.MaxInt64, true},
		{"ALWAYS", h, 0, true},
	} {
		got := p(tc.policy).Threshold(tc.h, now, current)
		if tc.exact && got != tc.want || !tc.exact && !near(got, tc.want) {
			t.Errorf("%s: threshold %v, want %v", tc.policy, got, tc.want)
		}
	}
}
