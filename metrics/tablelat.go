package metrics

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// TableLatencies keeps per-table latency figures, as Cassandra's
// TableMetrics timers do for system_views' latency tables: for each kind
// (a read, a range scan or a write, measured where the replica runs it or
// where the coordinator answers it) and table, how many, a histogram of
// their durations and a five-minute rate. It is safe for concurrent use;
// Observe takes no lock once a table's timer exists.
type TableLatencies struct {
	now    func() time.Time
	timers sync.Map // latencyKey → *Timer
}

type latencyKey struct {
	kind string
	id   [16]byte
}

// NewTableLatencies returns empty figures read by the clock now (nil:
// time.Now), which drives the rates.
func NewTableLatencies(now func() time.Time) *TableLatencies {
	if now == nil {
		now = time.Now
	}
	return &TableLatencies{now: now}
}

// Now is the clock latencies are measured by.
func (t *TableLatencies) Now() time.Time { return t.now() }

// Observe records one latency of kind for table id, of an operation that
// began at start. A nil TableLatencies records nothing.
func (t *TableLatencies) Observe(kind string, id [16]byte, start time.Time) {
	if t == nil {
		return
	}
	now := t.now()
	k := latencyKey{kind, id}
	tm, ok := t.timers.Load(k)
	if !ok {
		tm, _ = t.timers.LoadOrStore(k, newTimer(t.now))
	}
	tm.(*Timer).observe(now.Sub(start), now)
}

// TableLatency is one table's figures of a kind: milliseconds, and a rate
// per second.
type TableLatency struct {
	Keyspace, Table string
	Count           int64
	P50, P99, Max   float64
	PerSecond       float64
}

// Snapshot returns the figures of kind, by keyspace and table, of the
// tables names knows; the others' (dropped tables) are forgotten.
func (t *TableLatencies) Snapshot(kind string, names func(id [16]byte) (keyspace, table string, ok bool)) []TableLatency {
	var out []TableLatency
	t.timers.Range(func(key, tm any) bool {
		k := key.(latencyKey)
		ks, table, ok := names(k.id)
		switch {
		case !ok:
			t.timers.Delete(k)
		case k.kind == kind:
			l := tm.(*Timer).snapshot()
			l.Keyspace, l.Table = ks, table
			out = append(out, l)
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Keyspace != out[j].Keyspace {
			return out[i].Keyspace < out[j].Keyspace
		}
		return out[i].Table < out[j].Table
	})
	return out
}

// latencyOffsets are the upper bounds, in nanoseconds, of a Timer's
// buckets: Cassandra's EstimatedHistogram offsets (each about 1.2 times
// the last), up to an hour.
var latencyOffsets = func() []int64 {
	out := []int64{1}
	for last := int64(1); last < int64(time.Hour); {
		next := int64(math.Round(float64(last) * 1.2))
		if next == last {
			next++
		}
		out = append(out, next)
		last = next
	}
	return out
}()

// Timer is one table's latencies of a kind: a histogram whose percentiles
// and maximum are its buckets' upper bounds, as Cassandra's are, and a
// meter.
type Timer struct {
	buckets []atomic.Int64
	count   atomic.Int64
	max     atomic.Int64
	rate    *Meter
}

func newTimer(now func() time.Time) *Timer {
	return &Timer{buckets: make([]atomic.Int64, len(latencyOffsets)+1), rate: NewMeter(5*time.Minute, now)}
}

// observe records d, which ended at now (a reading of the meter's clock).
func (t *Timer) observe(d time.Duration, now time.Time) {
	ns := max(int64(d), 0)
	t.buckets[sort.Search(len(latencyOffsets), func(i int) bool { return latencyOffsets[i] >= ns })].Add(1)
	t.count.Add(1)
	for m := t.max.Load(); ns > m && !t.max.CompareAndSwap(m, ns); m = t.max.Load() {
	}
	t.rate.MarkAt(1, now)
}

func (t *Timer) snapshot() TableLatency {
	counts := make([]int64, len(t.buckets))
	var n int64
	for i := range t.buckets {
		counts[i] = t.buckets[i].Load()
		n += counts[i]
	}
	pct := func(p float64) float64 {
		if n == 0 {
			return 0
		}
		want := int64(math.Ceil(p * float64(n)))
		var seen int64
		for i, c := range counts {
			if seen += c; seen >= want {
				if i == len(latencyOffsets) {
					return float64(t.max.Load()) / 1e6
				}
				return float64(latencyOffsets[i]) / 1e6
			}
		}
		return 0
	}
	return TableLatency{Count: t.count.Load(),
		P50: round3(pct(0.5)), P99: round3(pct(0.99)), Max: round3(pct(1)), PerSecond: t.rate.Rate()}
}

// round3 rounds half up to three decimals, as TableMetricTables does.
func round3(v float64) float64 { return math.Floor(v*1000+0.5) / 1000 }

// Meter is a rate of events per second, an exponentially weighted moving
// average over a window as Codahale's Meter keeps (ticking every five
// seconds), driven by an injected clock. It is safe for concurrent use;
// Mark takes no lock but at a tick.
type Meter struct {
	now       func() time.Time
	alpha     float64
	uncounted atomic.Int64
	next      atomic.Int64 // unix nanoseconds of the next tick
	// total, when set, is the count the meter rates (NewMeterOf), seen
	// its value at the last tick.
	total func() int64

	mu     sync.Mutex
	rate   float64 // per second
	primed bool
	last   time.Time
	seen   int64
}

const meterTick = 5 * time.Second

// NewMeter returns a meter averaging over window, read by the clock now.
func NewMeter(window time.Duration, now func() time.Time) *Meter {
	m := &Meter{now: now, alpha: 1 - math.Exp(-meterTick.Seconds()/window.Seconds()), last: now()}
	m.next.Store(m.last.Add(meterTick).UnixNano())
	return m
}

// NewMeterOf returns a meter of the events total counts, a count that
// only grows and that its owner keeps anyway: counting an event costs
// the meter nothing, and it ticks when its rate is read, the events since
// the last tick spread evenly over the ticks passed. It is not marked.
func NewMeterOf(window time.Duration, now func() time.Time, total func() int64) *Meter {
	m := NewMeter(window, now)
	m.total, m.seen = total, total()
	return m
}

// Mark counts n events.
func (m *Meter) Mark(n int64) { m.MarkAt(n, m.now()) }

// MarkAt counts n events at now, a reading of the meter's clock: meters
// of one clock marked together share one reading.
func (m *Meter) MarkAt(n int64, now time.Time) {
	m.uncounted.Add(n)
	if now.UnixNano() >= m.next.Load() {
		m.mu.Lock()
		m.tick(now)
		m.mu.Unlock()
	}
}

// Rate is the events per second.
func (m *Meter) Rate() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tick(m.now())
	return m.rate
}

// tick folds the events counted in each whole tick since the last into
// the average. REQUIRES: m.mu held.
func (m *Meter) tick(now time.Time) {
	if now.Sub(m.last) > time.Hour {
		// Idle so long that the average has decayed to nothing.
		m.rate, m.primed, m.last = 0, true, now
		m.uncounted.Store(0)
		if m.total != nil {
			m.seen = m.total()
		}
	}
	if ticks := int64(now.Sub(m.last) / meterTick); ticks > 0 {
		// Marked events all fall in the first tick passed, marks having
		// ticked the meter at every tick they met; a total's are spread.
		events, over := m.uncounted.Swap(0), int64(1)
		if m.total != nil {
			t := m.total()
			events, over, m.seen = t-m.seen, ticks, t
		}
		for i := int64(0); i < ticks; i, m.last = i+1, m.last.Add(meterTick) {
			instant := 0.0
			if i < over {
				instant = float64(events) / float64(over) / meterTick.Seconds()
			}
			if m.primed {
				m.rate += m.alpha * (instant - m.rate)
			} else {
				m.rate, m.primed = instant, true
			}
		}
	}
	m.next.Store(m.last.Add(meterTick).UnixNano())
}
