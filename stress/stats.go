package stress

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms hold nanoseconds from 1 µs to one minute at 3 significant
// digits; longer operations are recorded as one minute.
const (
	histLow  = int64(time.Microsecond)
	histHigh = int64(time.Minute)
	histSig  = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLow, histHigh, histSig) }

func recordDur(h *hdr.Histogram, d time.Duration) {
	v := int64(d)
	if v < histLow {
		v = histLow
	} else if v > histHigh {
		v = histHigh
	}
	_ = h.RecordValue(v) // in range by construction
}

// counts are the plain counters of one operation kind.
type counts struct {
	Ops        int64 `json:"ops"`
	Partitions int64 `json:"partitions"`
	Rows       int64 `json:"rows"`
	Errors     int64 `json:"errors"`
	// NotFound counts reads that found no row; NotApplied counts
	// conditional writes the server did not apply.
	NotFound   int64 `json:"not_found,omitempty"`
	NotApplied int64 `json:"not_applied,omitempty"`
}

func (c *counts) add(o counts) {
	c.Ops += o.Ops
	c.Partitions += o.Partitions
	c.Rows += o.Rows
	c.Errors += o.Errors
	c.NotFound += o.NotFound
	c.NotApplied += o.NotApplied
}

// kindStats is what is recorded for one operation kind: latency (from the
// intended start in an open loop), service time (open loop only), counts.
type kindStats struct {
	lat, svc *hdr.Histogram
	counts
}

func newKindStats(open bool) kindStats {
	k := kindStats{lat: newHist()}
	if open {
		k.svc = newHist()
	}
	return k
}

// merge adds o into k and, when reset, empties o.
func (k *kindStats) merge(o *kindStats, reset bool) {
	k.lat.Merge(o.lat)
	if k.svc != nil {
		k.svc.Merge(o.svc)
	}
	k.counts.add(o.counts)
	if reset {
		o.lat.Reset()
		if o.svc != nil {
			o.svc.Reset()
		}
		o.counts = counts{}
	}
}

// shard is a lock-protected set of per-kind stats; workers are spread over
// a few shards so they rarely wait on each other or on the collector.
type shard struct {
	mu    sync.Mutex
	kinds []kindStats
	_     [64]byte // keep neighbouring shards' locks off one cache line
}

// recorder collects the stats of one step. record is safe for concurrent
// use; drain is called by one collector.
type recorder struct {
	shards []shard
}

func newRecorder(nShards, nKinds int, open bool) *recorder {
	r := &recorder{shards: make([]shard, nShards)}
	for i := range r.shards {
		for range nKinds {
			r.shards[i].kinds = append(r.shards[i].kinds, newKindStats(open))
		}
	}
	return r
}

// opOutcome is what one operation reports besides its time.
type opOutcome struct {
	partitions, rows int
	notFound         bool
	notApplied       bool
}

func (r *recorder) record(shardIdx, kind int, lat, svc time.Duration, o opOutcome, failed bool) {
	s := &r.shards[shardIdx%len(r.shards)]
	s.mu.Lock()
	k := &s.kinds[kind]
	k.Ops++
	if failed {
		k.Errors++
	} else {
		recordDur(k.lat, lat)
		if k.svc != nil {
			recordDur(k.svc, svc)
		}
		k.Partitions += int64(o.partitions)
		k.Rows += int64(o.rows)
		if o.notFound {
			k.NotFound++
		}
		if o.notApplied {
			k.NotApplied++
		}
	}
	s.mu.Unlock()
}

// drain moves everything recorded since the last drain into into (one
// entry per kind) and empties the shards.
func (r *recorder) drain(into []kindStats) {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for k := range s.kinds {
			into[k].merge(&s.kinds[k], true)
		}
		s.mu.Unlock()
	}
}

// peek sums the counters recorded since the last drain (for the progress
// line), without touching histograms.
func (r *recorder) peek() counts {
	var c counts
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for k := range s.kinds {
			c.add(s.kinds[k].counts)
		}
		s.mu.Unlock()
	}
	return c
}
