package speculate

import (
	"testing"
	"time"
)

// Quantiles land on the bucket holding them, within the buckets' 20%.
func TestHistogramQuantiles(t *testing.T) {
	now := time.Unix(0, 0)
	h := NewHistogram(now)
	if _, ok := h.Quantile(0.99, now); ok {
		t.Fatal("an empty histogram has a quantile")
	}
	for i := 1; i <= 1000; i++ {
		h.Add(time.Duration(i)*time.Millisecond, now)
	}
	for q, want := range map[float64]time.Duration{0.5: 500 * time.Millisecond, 0.99: 990 * time.Millisecond, 0.01: 10 * time.Millisecond} {
		got, ok := h.Quantile(q, now)
		if !ok || got < want || got > want*6/5 {
			t.Errorf("quantile %v: %v, want %v to %v", q, got, want, want*6/5)
		}
	}
	if b := bucket(time.Hour * 1000000); b != bucketCount-1 {
		t.Errorf("a huge latency falls in bucket %d", b)
	}
	if b := bucket(0); b != 0 {
		t.Errorf("zero falls in bucket %d", b)
	}
}

// Old samples count for less: a minute later a new sample weighs twice an
// old one, ten minutes later a thousand times, and past the landmark's
// reset the weights keep their proportions.
func TestHistogramDecays(t *testing.T) {
	start := time.Unix(0, 0)
	h := NewHistogram(start)
	for range 60 {
		h.Add(100*time.Millisecond, start)
	}
	// 50 fast samples a minute later outweigh 60 slow ones of before
	// (they count as 100): the median is fast.
	later := start.Add(time.Minute)
	for range 50 {
		h.Add(time.Millisecond, later)
	}
	if got, _ := h.Quantile(0.5, later); got > 2*time.Millisecond {
		t.Fatalf("median %v a minute later, want the new samples' 1 ms", got)
	}
	// At the same instant 50 new samples do not outweigh 60 old ones.
	h2 := NewHistogram(start)
	for range 60 {
		h2.Add(100*time.Millisecond, start)
	}
	for range 50 {
		h2.Add(time.Millisecond, start)
	}
	if got, _ := h2.Quantile(0.5, start); got < 100*time.Millisecond {
		t.Fatalf("median %v, want the majority's 100 ms", got)
	}
	// Hours on, through several landmark resets, one new sample outweighs
	// everything before.
	much := start.Add(5 * time.Hour)
	h.Add(time.Second, much)
	if got, _ := h.Quantile(0.5, much); got < time.Second {
		t.Fatalf("median %v five hours on, want the last sample's 1 s", got)
	}
	if !h.landmark.Equal(much) {
		t.Fatalf("landmark %v, want it moved to %v", h.landmark, much)
	}
}
