package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestPreparedLint(t *testing.T) {
	reg := NewRegistry()
	m := NewPrepared(reg)
	m.Hits.Inc()
	m.Entries.Set(3)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	if got := testutil.ToFloat64(m.Entries); got != 3 {
		t.Errorf("entries = %v", got)
	}
}
