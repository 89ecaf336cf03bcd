package stress

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is a latency distribution in milliseconds.
type Latency struct {
	Mean   float64 `json:"mean_ms"`
	Median float64 `json:"median_ms"`
	P75    float64 `json:"p75_ms"`
	P95    float64 `json:"p95_ms"`
	P99    float64 `json:"p99_ms"`
	P999   float64 `json:"p999_ms"`
	Max    float64 `json:"max_ms"`
}

func latencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(v int64) float64 { return float64(v) / 1e6 }
	return Latency{
		Mean: h.Mean() / 1e6, Median: ms(h.ValueAtQuantile(50)), P75: ms(h.ValueAtQuantile(75)),
		P95: ms(h.ValueAtQuantile(95)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), Max: ms(h.Max()),
	}
}

// Point is the latency (ms) at a percentile.
type Point struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// spectrumPercentiles are where a step's latency distribution is sampled
// for the percentile chart (HdrHistogram's usual plot).
var spectrumPercentiles = []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.75, 99.9, 99.95, 99.99, 99.995, 99.999, 100}

func spectrum(h *hdr.Histogram) []Point {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	pts := make([]Point, len(spectrumPercentiles))
	for i, p := range spectrumPercentiles {
		pts[i] = Point{p, float64(h.ValueAtQuantile(p)) / 1e6}
	}
	return pts
}

// Summary describes a span of a run: a whole step, one operation kind or
// one interval.
type Summary struct {
	counts
	Seconds       float64 `json:"seconds"`
	OpRate        float64 `json:"op_rate"`
	PartitionRate float64 `json:"partition_rate"`
	RowRate       float64 `json:"row_rate"`
	// Latency is measured from the intended start in an open loop
	// (coordinated omission corrected) and from the actual start otherwise.
	Latency Latency `json:"latency"`
	// ServiceTime, open loop only, is measured from the actual start.
	ServiceTime *Latency `json:"service_time,omitempty"`
}

func summarize(k *kindStats, secs float64) Summary {
	s := Summary{counts: k.counts, Seconds: secs, Latency: latencyOf(k.lat)}
	if secs > 0 {
		s.OpRate = float64(k.Ops) / secs
		s.PartitionRate = float64(k.Partitions) / secs
		s.RowRate = float64(k.Rows) / secs
	}
	if k.svc != nil {
		l := latencyOf(k.svc)
		s.ServiceTime = &l
	}
	return s
}

// Interval is one reporting interval; Time is its end, in seconds since the
// step began.
type Interval struct {
	Time float64 `json:"time"`
	Summary
}

// Step is one run at one thread count (the only step of a run that is not
// a sweep).
type Step struct {
	Threads    int                `json:"threads"`
	TargetRate float64            `json:"target_rate,omitempty"`
	Total      Summary            `json:"total"`
	ByOp       map[string]Summary `json:"by_op"`
	ErrorKinds map[string]int64   `json:"error_kinds,omitempty"`
	// Timeouts counts the operations of ErrorKinds whose outcome is
	// unknown because nobody answered in time: the server's write and
	// read timeouts (a conditional write's contention timeout among
	// them), CAS_WRITE_UNKNOWN, and the client's own timeout.
	Timeouts int64 `json:"timeouts"`
	// Spectrum is the step's latency at fixed percentiles (and
	// ServiceSpectrum the service time's, open loop only).
	Spectrum        []Point    `json:"spectrum"`
	ServiceSpectrum []Point    `json:"service_spectrum,omitempty"`
	Intervals       []Interval `json:"intervals"`
	Interrupted     bool       `json:"interrupted,omitempty"`
	// ClientCPU is what cqlstress itself spent on the step; nil where the
	// system does not tell.
	ClientCPU *ClientCPU `json:"client_cpu,omitempty"`
}

// ClientCPU is the CPU time (user and system) of the whole cqlstress
// process over a step: driver or lean client, workers and collector. It
// tells how much of the machine the client took from a server beside it.
type ClientCPU struct {
	PerOp float64 `json:"us_per_op"` // microseconds per operation
	Cores float64 `json:"cores"`     // CPU seconds per second of the step
}

// Result is everything a run measured; it is what -json writes and what
// `cqlstress chart` reads.
type Result struct {
	Title    string    `json:"title"`
	Command  []string  `json:"command"`
	Workload string    `json:"workload"`
	Ops      []string  `json:"ops"`
	Start    time.Time `json:"start"`
	Server   Server    `json:"server"`
	// PreparedAhead is, per node, the batch PREPARE made before the run.
	PreparedAhead []PrepareAhead `json:"prepared_ahead,omitempty"`
	OpenLoop      bool           `json:"open_loop"`
	Sweep         bool           `json:"sweep"`
	MaxErrors     int64          `json:"max_errors"`
	Steps         []Step         `json:"steps"`
	// Interrupted is set when the run was stopped (Ctrl-C) before its end,
	// perhaps while populating, before any step.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Server is what the contacted node says about itself (system.local).
type Server struct {
	Cluster        string `json:"cluster"`
	ReleaseVersion string `json:"release_version"`
	DataCenter     string `json:"data_center"`
	Protocol       int    `json:"protocol"`
}

// Errors is the number of failed operations over all steps.
func (r *Result) Errors() int64 {
	var n int64
	for _, s := range r.Steps {
		n += s.Total.Errors
	}
	return n
}

// OK reports whether the run stayed within -max-errors and was not
// interrupted.
func (r *Result) OK() bool {
	return !r.Interrupted && r.Errors() <= r.MaxErrors
}

// WriteJSON writes r to path.
func (r *Result) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("stress: encode result: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("stress: write result: %w", err)
	}
	return nil
}

// ReadResult reads a result written by WriteJSON.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stress: read result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("stress: read result %s: %w", path, err)
	}
	return &r, nil
}
