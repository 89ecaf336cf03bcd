package stress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// The interval and summary layouts follow cassandra-stress, so that people
// (and scripts) used to it find the same columns and field names.

func (r *runner) printHeader(sp stepSpec, open bool) {
	r.clearProgress()
	mode := fmt.Sprintf("%d threads", sp.threads)
	switch {
	case open:
		mode = fmt.Sprintf("fixed %s op/s, %d threads (latency from intended start; svc = service time)", commas(int64(r.cfg.FixedRate)), sp.threads)
	case r.cfg.FixedRate > 0:
		mode = fmt.Sprintf("throttle %s op/s, %d threads (latency from actual start)", commas(int64(r.cfg.FixedRate)), sp.threads)
	}
	fmt.Fprintf(r.out, "Running %s with %s\n", strings.Join(kindNames(sp.kinds), ","), mode)
	fmt.Fprintf(r.out, "%-6s %10s, %8s, %8s, %8s, %8s, %8s, %8s, %8s, %8s, %8s, %7s, %6s", "type",
		"total ops", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time", "errors")
	if open {
		fmt.Fprintf(r.out, ", %8s, %8s", "svc med", "svc .99")
	}
	fmt.Fprintln(r.out)
}

// printInterval prints one interval; total is the step's operations so far.
func (r *runner) printInterval(s Interval, total int64, open bool) {
	r.clearProgress()
	l := s.Latency
	fmt.Fprintf(r.out, "%-6s %10d, %8.0f, %8.0f, %8.0f, %8.3f, %8.3f, %8.3f, %8.3f, %8.3f, %8.3f, %7.1f, %6d",
		"total,", total, s.OpRate, s.PartitionRate, s.RowRate, l.Mean, l.Median, l.P95, l.P99, l.P999, l.Max, s.Time, s.Errors)
	if open && s.ServiceTime != nil {
		fmt.Fprintf(r.out, ", %8.3f, %8.3f", s.ServiceTime.Median, s.ServiceTime.P99)
	}
	fmt.Fprintln(r.out)
}

// printSummary prints cassandra-stress's "Results:" block.
func (r *runner) printSummary(st Step, kinds []kindDef) {
	w := r.out
	names := kindNames(kinds)
	by := func(f func(Summary) string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, strings.ToUpper(n)+": "+f(st.ByOp[n]))
		}
		return " [" + strings.Join(parts, ", ") + "]"
	}
	rate := func(unit string, f func(Summary) float64) string {
		return fmt.Sprintf("%s %s%s", commas(int64(f(st.Total)+0.5)), unit,
			by(func(s Summary) string { return commas(int64(f(s)+0.5)) + " " + unit }))
	}
	lat := func(f func(Latency) float64) string {
		return fmt.Sprintf("%.3f ms%s", f(st.Total.Latency), by(func(s Summary) string { return fmt.Sprintf("%.3f ms", f(s.Latency)) }))
	}
	fmt.Fprintln(w, "\nResults:")
	line := func(name, v string) { fmt.Fprintf(w, "%-30s: %s\n", name, v) }
	line("Op rate", rate("op/s", func(s Summary) float64 { return s.OpRate }))
	line("Partition rate", rate("pk/s", func(s Summary) float64 { return s.PartitionRate }))
	line("Row rate", rate("row/s", func(s Summary) float64 { return s.RowRate }))
	pcts := []struct {
		name string
		f    func(Latency) float64
	}{
		{"mean", func(l Latency) float64 { return l.Mean }},
		{"median", func(l Latency) float64 { return l.Median }},
		{"75th percentile", func(l Latency) float64 { return l.P75 }},
		{"95th percentile", func(l Latency) float64 { return l.P95 }},
		{"99th percentile", func(l Latency) float64 { return l.P99 }},
		{"99.9th percentile", func(l Latency) float64 { return l.P999 }},
		{"max", func(l Latency) float64 { return l.Max }},
	}
	for _, p := range pcts {
		line("Latency "+p.name, lat(p.f))
	}
	if st.Total.ServiceTime != nil {
		for _, p := range pcts {
			line("Service time "+p.name, fmt.Sprintf("%.3f ms", p.f(*st.Total.ServiceTime)))
		}
	}
	line("Total partitions", fmt.Sprintf("%s%s", commas(st.Total.Partitions), by(func(s Summary) string { return commas(s.Partitions) })))
	line("Total errors", fmt.Sprintf("%s%s", commas(st.Total.Errors), by(func(s Summary) string { return commas(s.Errors) })))
	if len(st.ErrorKinds) > 0 {
		line("Errors by kind", formatKinds(st.ErrorKinds))
	}
	line("Timeouts", commas(st.Timeouts))
	if st.Total.NotFound > 0 {
		line("Reads finding no row", commas(st.Total.NotFound)+" (write those keys first: -populate, or a write run over the same -pop)")
	}
	if st.Total.NotApplied > 0 {
		line("Conditions not applied", commas(st.Total.NotApplied))
	}
	if st.ClientCPU != nil {
		line("Client CPU", fmt.Sprintf("%.1f us/op, %.2f cores (the whole cqlstress process)", st.ClientCPU.PerOp, st.ClientCPU.Cores))
	}
	d := time.Duration(st.Total.Seconds * float64(time.Second))
	line("Total operation time", fmt.Sprintf("%02d:%02d:%02d (%.2f s)", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60, st.Total.Seconds))
	if st.TargetRate > 0 && !st.Interrupted && st.Total.OpRate < 0.95*st.TargetRate {
		line("Behind schedule", fmt.Sprintf("%s of the %s op/s asked: the server or -rate threads=%d could not keep up",
			commas(int64(st.Total.OpRate)), commas(int64(st.TargetRate)), st.Threads))
	}
	if st.Interrupted {
		line("Interrupted", "yes (Ctrl-C): the figures cover the operations done until then")
	}
	fmt.Fprintln(w)
}

// printSweep prints one row per thread count.
func (r *runner) printSweep(res *Result) {
	w := r.out
	fmt.Fprintln(w, "Sweep summary:")
	fmt.Fprintf(w, "%8s, %10s, %10s, %10s, %8s, %8s, %8s, %8s, %8s, %8s, %8s, %9s\n",
		"threads", "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "errors", "cpu us/op")
	for _, s := range res.Steps {
		writeSweepRow(w, s)
	}
}

func writeSweepRow(w io.Writer, s Step) {
	t, l := s.Total, s.Total.Latency
	cpu := "-"
	if s.ClientCPU != nil {
		cpu = fmt.Sprintf("%.1f", s.ClientCPU.PerOp)
	}
	fmt.Fprintf(w, "%8d, %10.0f, %10.0f, %10.0f, %8.3f, %8.3f, %8.3f, %8.3f, %8.3f, %8.3f, %8d, %9s\n",
		s.Threads, t.OpRate, t.PartitionRate, t.RowRate, l.Mean, l.Median, l.P95, l.P99, l.P999, l.Max, t.Errors, cpu)
}

// showProgress rewrites the progress line on the terminal.
func (r *runner) showProgress(st *stepState, cum []kindStats, now time.Time) {
	c := st.rec.peek()
	for k := range cum {
		c.add(cum[k].counts)
	}
	el := now.Sub(st.start).Seconds()
	of, ofTime := "", ""
	if st.sp.n > 0 {
		of = " of " + commas(st.sp.n)
	} else if st.sp.dur > 0 {
		ofTime = fmt.Sprintf(" of %.0fs", st.sp.dur.Seconds())
	}
	r.termMu.Lock()
	defer r.termMu.Unlock()
	fmt.Fprintf(r.errOut, "\r\033[K%.1fs%s  %s%s ops  %s op/s  %d errors  (Ctrl-C stops with a summary)",
		el, ofTime, commas(c.Ops), of, commas(int64(float64(c.Ops)/max(el, 1e-9))), c.Errors)
	r.progressing = true
}

// clearProgress removes the progress line before other output.
func (r *runner) clearProgress() {
	r.termMu.Lock()
	defer r.termMu.Unlock()
	if r.progressing {
		fmt.Fprint(r.errOut, "\r\033[K")
		r.progressing = false
	}
}

func kindNames(kinds []kindDef) []string {
	var n []string
	for _, k := range kinds {
		n = append(n, k.name)
	}
	return n
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
