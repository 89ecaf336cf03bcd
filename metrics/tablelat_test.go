package metrics

import (
	"math"
	"sync/atomic"
	"testing"
	"time"
)

func TestTableLatencies(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	l := NewTableLatencies(clock)
	id := [16]byte{1}
	for i := 1; i <= 100; i++ {
		start := now
		now = now.Add(time.Duration(i) * time.Millisecond)
		l.Observe("read", id, start)
	}
	l.Observe("write", [16]byte{2}, now.Add(-time.Millisecond))
	dropped := false
	names := func(i [16]byte) (string, string, bool) {
		if i == id {
			return "ks", "t", !dropped
		}
		return "ks", "u", true
	}
	got := l.Snapshot("read", names)
	if len(got) != 1 || got[0].Keyspace != "ks" || got[0].Table != "t" || got[0].Count != 100 || got[0].Max < 100 || got[0].Max > 120 {
		t.Fatalf("snapshot %+v", got)
	}
	// Percentiles are bucket bounds, within 20% above the true value.
	if p := got[0].P50; p < 50 || p > 60 {
		t.Errorf("p50 %v ms", p)
	}
	if p := got[0].P99; p < 99 || p > 119 {
		t.Errorf("p99 %v ms", p)
	}
	if len(l.Snapshot("scan", names)) != 0 || len(l.Snapshot("write", names)) != 1 {
		t.Error("kinds mixed")
	}
	dropped = true
	if len(l.Snapshot("read", names)) != 0 {
		t.Error("a dropped table's figures stay")
	}
}

func TestMeter(t *testing.T) {
	now := time.Unix(0, 0)
	m := NewMeter(5*time.Minute, func() time.Time { return now })
	// Ten events a second for ten minutes.
	for i := 0; i < 600; i++ {
		m.Mark(10)
		now = now.Add(time.Second)
	}
	if r := m.Rate(); math.Abs(r-10) > 0.5 {
		t.Errorf("rate %v, want about 10", r)
	}
	now = now.Add(15 * time.Minute)
	if r := m.Rate(); r > 1 {
		t.Errorf("rate %v after 15 idle minutes", r)
	}
	now = now.Add(2 * time.Hour)
	if r := m.Rate(); r != 0 {
		t.Errorf("rate %v after two idle hours", r)
	}
}

// A meter of a total kept elsewhere rates what the total gained, read as
// seldom as a scrape reads it.
func TestMeterOf(t *testing.T) {
	now := time.Unix(0, 0)
	var total atomic.Int64
	m := NewMeterOf(5*time.Minute, func() time.Time { return now }, total.Load)
	// Ten events a second for ten minutes, the rate read at the end only.
	for i := 0; i < 600; i++ {
		total.Add(10)
		now = now.Add(time.Second)
	}
	if r := m.Rate(); math.Abs(r-10) > 1 {
		t.Errorf("rate %v, want about 10", r)
	}
	now = now.Add(15 * time.Minute)
	if r := m.Rate(); r > 1 {
		t.Errorf("rate %v after 15 idle minutes", r)
	}
	total.Add(1000)
	now = now.Add(2 * time.Hour)
	if r := m.Rate(); r != 0 {
		t.Errorf("rate %v after two idle hours", r)
	}
}

// BenchmarkTableLatenciesObserve is what each read and write of a user
// table pays for system_views' latency tables, twice (coordinator and
// replica), from every event loop and worker at once.
func BenchmarkTableLatenciesObserve(b *testing.B) {
	l := NewTableLatencies(nil)
	ids := [][16]byte{{1}, {2}, {3}, {4}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			l.Observe("write", ids[i&3], l.Now())
		}
	})
}
