package speculate

import (
	"math"
	"sync"
	"time"
)

// Shape of a Histogram, as Cassandra's DecayingEstimatedHistogramReservoir
// over EstimatedHistogram's offsets.
const (
	bucketCount = 164
	// halfTime is the age at which a sample weighs half as much as a new
	// one; the landmark moves every landmarkReset.
	halfTime      = time.Minute
	landmarkReset = 30 * time.Minute
)

// offsets are the buckets' upper bounds in microseconds: 1, 2, 3, ...,
// each about 1.2 times the last once that is more than one apart.
var offsets = func() []int64 {
	out := make([]int64, bucketCount)
	out[0] = 1
	for i := 1; i < bucketCount; i++ {
		next := int64(math.Round(float64(out[i-1]) * 1.2))
		out[i] = max(next, out[i-1]+1)
	}
	return out
}()

// meanLifetime is τ of the forward decay: weights grow as exp(age/τ),
// doubling every halfTime.
var meanLifetime = halfTime.Seconds() / math.Ln2

// Histogram is a decaying histogram of latencies. Safe for concurrent use.
type Histogram struct {
	mu       sync.Mutex
	landmark time.Time
	weights  [bucketCount]float64
}

// NewHistogram returns an empty histogram whose landmark is now.
func NewHistogram(now time.Time) *Histogram { return &Histogram{landmark: now} }

// Add records latency d at time now.
func (h *Histogram) Add(d time.Duration, now time.Time) {
	i := bucket(d)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rescale(now)
	h.weights[i] += math.Exp(now.Sub(h.landmark).Seconds() / meanLifetime)
}

// bucket is the index of the first bucket whose bound holds d, the last
// one for anything larger.
func bucket(d time.Duration) int {
	us := d.Microseconds()
	lo, hi := 0, bucketCount-1
	for lo < hi {
		mid := (lo + hi) / 2
		if offsets[mid] >= us {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// rescale moves the landmark to now once it is landmarkReset old,
// dividing the weights so that they keep their proportions. REQUIRES: mu.
func (h *Histogram) rescale(now time.Time) {
	age := now.Sub(h.landmark)
	if age < landmarkReset {
		return
	}
	f := math.Exp(-age.Seconds() / meanLifetime)
	for i := range h.weights {
		h.weights[i] *= f
	}
	h.landmark = now
}

// Quantile is the bound of the bucket in which the quantile q (0 to 1) of
// the weighted samples lies, as Cassandra's snapshot's getValue, and false
// when the histogram holds no sample.
func (h *Histogram) Quantile(q float64, now time.Time) (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rescale(now)
	total := 0.0
	for _, w := range h.weights {
		total += w
	}
	if total == 0 {
		return 0, false
	}
	target, seen := total*q, 0.0
	for i, w := range h.weights {
		if seen += w; seen >= target && w > 0 {
			return time.Duration(offsets[i]) * time.Microsecond, true
		}
	}
	return time.Duration(offsets[bucketCount-1]) * time.Microsecond, true
}
