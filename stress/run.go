package stress

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/cqlclient"
)

// runner is one invocation of Run.
type runner struct {
	cfg     *Config
	out     io.Writer
	errOut  io.Writer
	session *gocql.Session
	lean    *leanPool // -mode lean: the workers' connections
	pool    []byte
	hdr     *hdrLog
	errs    *errorLog

	tty         bool
	termMu      sync.Mutex
	progressing bool // a progress line is on the terminal
}

// Run executes the run c describes. Interval lines and the summary go to
// out; the progress line (on a terminal), error messages and driver logs go
// to errOut. Cancelling ctx (Ctrl-C) ends the run early: operations in
// flight finish, and the summary covers what was done. The error is for a
// run that could not start (no connection, bad profile, schema refused) or
// whose output files could not be written; failed operations are counted
// in the Result.
func Run(ctx context.Context, c *Config, out, errOut io.Writer) (*Result, error) {
	r := &runner{cfg: c, out: out, errOut: errOut, tty: isTerminal(errOut)}
	r.errs = newErrorLog(errOut, r.clearProgress)
	wl, err := loadWorkload(c)
	if err != nil {
		return nil, err
	}
	r.pool = valuePool(max(c.ColSize.Max, wl.maxValueSize))
	if r.session, err = r.connect(wl); err != nil {
		return nil, err
	}
	defer r.session.Close()
	res := &Result{
		Title: c.Title, Command: c.Args, Workload: c.Command, Start: time.Now(),
		OpenLoop: c.FixedRate > 0 && !c.Throttle, Sweep: c.Sweep(), MaxErrors: c.MaxErrors,
	}
	for _, k := range wl.kinds {
		res.Ops = append(res.Ops, k.name)
	}
	res.Server = r.describeServer()
	if c.Lean {
		if res.PreparedAhead, err = r.startLean(ctx, wl); err != nil {
			return nil, err
		}
		defer r.lean.close()
		// The schema is made: gocql's session would only add its own
		// background work to the client's CPU.
		r.session.Close()
	} else {
		res.PreparedAhead = r.prepareAhead(ctx, wl)
	}
	if c.HDRFile != "" {
		if r.hdr, err = openHDRLog(c.HDRFile, res.Start, fmt.Sprint(c.Args)); err != nil {
			return nil, err
		}
	}
	if c.Populate > 0 && len(wl.populate) > 0 {
		r.populate(ctx, wl.populate)
	}
	if c.WarmupN > 0 || c.WarmupDuration > 0 {
		r.warmup(ctx, wl.kinds)
	}
	for _, threads := range c.Steps() {
		if ctx.Err() != nil {
			break
		}
		sp := stepSpec{threads: threads, n: c.N, dur: c.Duration, kinds: wl.kinds, pop: c.Pop}
		step := r.runStep(ctx, sp)
		res.Steps = append(res.Steps, step)
		r.printSummary(step, wl.kinds)
		if step.Interrupted {
			break
		}
	}
	res.Interrupted = ctx.Err() != nil
	if c.Sweep() {
		r.printSweep(res)
	}
	return res, r.writeFiles(res)
}

// startLean prepares the workload's statements on every node (in one
// CQLD_PREPARE_BATCH request where the node offers it) and opens the lean
// connections, as many as the run's largest thread count.
func (r *runner) startLean(ctx context.Context, wl *workload) ([]PrepareAhead, error) {
	c := r.cfg
	addrs := nodeAddrs(c)
	stmts := workloadStatements(wl)
	prepared := make([]map[string]*cqlclient.Prepared, len(addrs))
	var out []PrepareAhead
	for i, addr := range addrs {
		if !c.Prepared || len(stmts) == 0 {
			continue
		}
		cl, err := cqlclient.Dial(ctx, addr, dialOptions(c))
		if err != nil {
			return nil, fmt.Errorf("stress: lean mode: %w", err)
		}
		pa, p, err := r.prepareOn(ctx, cl, addr, stmts)
		cl.Close()
		if err != nil {
			return nil, fmt.Errorf("stress: lean mode: prepare on %s: %w", addr, err)
		}
		prepared[i] = p
		out = append(out, pa)
	}
	r.lean = newLeanPool(c, addrs, prepared)
	threads := slices.Max(append(c.Steps(), c.Threads))
	if err := r.lean.grow(ctx, threads); err != nil {
		r.lean.close()
		return nil, err
	}
	fmt.Fprintf(r.out, "Lean mode: %d connections to %s, one request in flight on each\n", threads, strings.Join(addrs, ","))
	return out, nil
}

// connect opens the run's session and creates the schema. A profile's
// keyspace is created first, on a session of its own, so that the run's
// session can use it as its keyspace.
func (r *runner) connect(wl *workload) (*gocql.Session, error) {
	c := r.cfg
	s, err := Cluster(c, r.errOut).CreateSession()
	if err != nil {
		return nil, fmt.Errorf("stress: connect to %v: %w", c.Nodes, err)
	}
	if err := wl.schema(s); err != nil || wl.keyspace == "" {
		if err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	s.Close()
	cl := Cluster(c, r.errOut)
	cl.Keyspace = wl.keyspace
	if s, err = cl.CreateSession(); err != nil {
		return nil, fmt.Errorf("stress: connect to %v, keyspace %s: %w", c.Nodes, wl.keyspace, err)
	}
	if err := wl.tables(s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// describeServer reads system.local and prints cassandra-stress's
// "Connected to cluster" line.
func (r *runner) describeServer() Server {
	sv := Server{Protocol: r.cfg.ProtoVersion}
	// Not prepared (gocql prepares what starts with SELECT), so the
	// server's EXECUTE count is the workload's alone.
	err := r.session.Query(`/* cqlstress */ SELECT cluster_name, release_version, data_center FROM system.local WHERE key = 'local'`).
		Scan(&sv.Cluster, &sv.ReleaseVersion, &sv.DataCenter)
	if err != nil {
		fmt.Fprintf(r.errOut, "cqlstress: system.local: %v\n", err)
	}
	comp := r.cfg.Compression
	if comp == "" {
		comp = "none"
	}
	mode := "prepared"
	if !r.cfg.Prepared {
		mode = "simple"
	}
	conns := fmt.Sprintf("gocql, %d connections per host", r.cfg.Connections)
	if r.cfg.Lean {
		conns = "lean client, one connection per thread with one request in flight"
	}
	fmt.Fprintf(r.out, "Connected to cluster %q (release %s, data center %s) at %s: protocol v%d, %s statements, compression %s, %s, CL %s\n",
		sv.Cluster, sv.ReleaseVersion, sv.DataCenter, strings.Join(r.cfg.Nodes, ","), sv.Protocol, mode, comp, conns, r.cfg.CL)
	return sv
}

func (r *runner) writeFiles(res *Result) error {
	if r.hdr != nil {
		if err := r.hdr.Close(); err != nil {
			return err
		}
	}
	if r.cfg.JSONFile != "" {
		if err := res.WriteJSON(r.cfg.JSONFile); err != nil {
			return err
		}
	}
	if r.cfg.ChartFile != "" {
		if err := WriteChart(r.cfg.ChartFile, []*Result{res}); err != nil {
			return err
		}
	}
	return nil
}

// warmup runs the workload unmeasured (closed loop, the run's largest
// thread count), so connections, prepared statements, the JIT of a Java
// server and caches are warm when measuring starts.
func (r *runner) warmup(ctx context.Context, kinds []kindDef) {
	c := r.cfg
	sp := stepSpec{threads: c.Steps()[len(c.Steps())-1], n: c.WarmupN, dur: c.WarmupDuration,
		kinds: kinds, pop: c.Pop, quiet: true}
	st := r.runStep(ctx, sp)
	fmt.Fprintf(r.out, "Warmed up: %s ops in %.1f s (%s op/s), %d errors\n",
		commas(st.Total.Ops), st.Total.Seconds, commas(int64(st.Total.OpRate)), st.Total.Errors)
}

// populate writes every key of the first Populate values of the
// population once, with the run's thread count, before measuring.
func (r *runner) populate(ctx context.Context, kinds []kindDef) {
	c := r.cfg
	threads := c.Threads
	if c.Sweep() {
		threads = c.ThreadsMax
	}
	for _, k := range kinds {
		k.weight = 1
		sp := stepSpec{threads: threads, n: c.Populate, kinds: []kindDef{k},
			pop: Seq(c.Pop.Min, c.Pop.Min+c.Populate-1), quiet: true}
		st := r.runStep(ctx, sp)
		fmt.Fprintf(r.out, "Populated %s keys %d..%d: %s ops in %.1f s (%s op/s), %d errors\n",
			k.name, c.Pop.Min, c.Pop.Min+c.Populate-1, commas(st.Total.Ops),
			st.Total.Seconds, commas(int64(st.Total.OpRate)), st.Total.Errors)
	}
}

// stepSpec is one measured (or, when quiet, populating) stretch of load.
type stepSpec struct {
	threads int
	n       int64
	dur     time.Duration
	kinds   []kindDef
	pop     Dist
	quiet   bool
}

// stepState is what a step's workers share.
type stepState struct {
	sp       *stepSpec
	rec      *recorder
	tickets  atomic.Int64
	stopped  atomic.Bool
	stopCh   chan struct{} // closed with stopped set: wakes sleeping open-loop workers
	start    time.Time
	deadline time.Time
	paced    bool    // operations are due on a schedule (fixed or throttle)
	open     bool    // paced, and latency counts from the intended start
	period   float64 // ns between intended starts
	cum      []int   // cumulative kind weights
}

func (r *runner) runStep(ctx context.Context, sp stepSpec) Step {
	c := r.cfg
	paced := c.FixedRate > 0 && !sp.quiet
	open := paced && !c.Throttle
	st := &stepState{sp: &sp, paced: paced, open: open, stopCh: make(chan struct{}),
		rec: newRecorder(min(sp.threads, 4*runtime.GOMAXPROCS(0)), len(sp.kinds), open)}
	if paced {
		st.period = 1e9 / c.FixedRate
	}
	total := 0
	for _, k := range sp.kinds {
		total += k.weight
		st.cum = append(st.cum, total)
	}
	cpu0, cpuOK := processCPU()
	st.start = time.Now()
	st.deadline = st.start.Add(sp.dur)
	var wg sync.WaitGroup
	for i := range sp.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(i, st)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	step := Step{Threads: sp.threads, TargetRate: c.FixedRate, ByOp: map[string]Summary{}}
	if sp.quiet {
		step.TargetRate = 0
	}
	nk := len(sp.kinds)
	iv, cum := make([]kindStats, nk), make([]kindStats, nk)
	for k := range nk {
		iv[k], cum[k] = newKindStats(open), newKindStats(open)
	}
	ivTotal := newKindStats(open)
	last := st.start
	var doneOps int64
	// flush ends an interval at now: one line, HDR log entries, totals.
	flush := func(now time.Time) {
		st.rec.drain(iv)
		ivTotal.lat.Reset()
		if ivTotal.svc != nil {
			ivTotal.svc.Reset()
		}
		ivTotal.counts = counts{}
		for k := range iv {
			ivTotal.merge(&iv[k], false)
			if r.hdr != nil && !sp.quiet {
				r.hdr.write(sp.kinds[k].name, &iv[k], last, now)
			}
			cum[k].merge(&iv[k], true)
		}
		s := Interval{Time: now.Sub(st.start).Seconds(), Summary: summarize(&ivTotal, now.Sub(last).Seconds())}
		step.Intervals = append(step.Intervals, s)
		doneOps += s.Ops
		if !sp.quiet {
			r.printInterval(s, doneOps, open)
		}
		last = now
	}
	if !sp.quiet {
		r.printHeader(sp, open)
	}
	tick := time.NewTicker(c.Interval)
	defer tick.Stop()
	var progress <-chan time.Time
	if r.tty {
		pt := time.NewTicker(250 * time.Millisecond)
		defer pt.Stop()
		progress = pt.C
	}
	stopping := ctx.Done()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-stopping:
			st.stopped.Store(true)
			close(st.stopCh)
			step.Interrupted = true
			stopping = nil
		case now := <-tick.C:
			flush(now)
		case now := <-progress:
			r.showProgress(st, cum, now)
		}
	}
	end := time.Now()
	cpu1, _ := processCPU()
	if st.rec.peek().Ops > 0 || len(step.Intervals) == 0 {
		flush(end)
	}
	r.clearProgress()
	secs := end.Sub(st.start).Seconds()
	all := newKindStats(open)
	for k := range cum {
		all.merge(&cum[k], false)
		step.ByOp[sp.kinds[k].name] = summarize(&cum[k], secs)
	}
	step.Total = summarize(&all, secs)
	if cpuOK && step.Total.Ops > 0 {
		step.ClientCPU = &ClientCPU{
			PerOp: float64(cpu1-cpu0) / 1e3 / float64(step.Total.Ops),
			Cores: (cpu1 - cpu0).Seconds() / secs,
		}
	}
	step.Spectrum, step.ServiceSpectrum = spectrum(all.lat), spectrum(all.svc)
	step.ErrorKinds = r.errs.take()
	step.Timeouts = timeouts(step.ErrorKinds)
	return step
}

// work is one worker goroutine: it takes tickets until the step's bound.
func (r *runner) work(id int, st *stepState) {
	sp := st.sp
	var lean *leanConn
	if r.lean != nil {
		lean = r.lean.conn(id)
	}
	w := newWorker(id, r.session, lean, r.cfg, r.pool)
	ops := make([]opFunc, len(sp.kinds))
	for i, k := range sp.kinds {
		ops[i] = k.bind(w)
	}
	keys := sp.pop.Sampler(w.rnd)
	var timer *time.Timer
	for !st.stopped.Load() {
		t := st.tickets.Add(1) - 1
		if sp.n > 0 && t >= sp.n {
			return
		}
		var intended time.Time
		if st.paced {
			intended = st.start.Add(time.Duration(float64(t) * st.period))
			// A duration is wall-clock time: operations still queued
			// behind schedule at the end are not run.
			if sp.dur > 0 && (!intended.Before(st.deadline) || time.Now().After(st.deadline)) {
				return
			}
			if d := time.Until(intended); d > 0 {
				if timer == nil {
					timer = time.NewTimer(d)
				} else {
					timer.Reset(d)
				}
				select {
				case <-timer.C:
				case <-st.stopCh:
					return
				}
			}
		} else if sp.dur > 0 && time.Now().After(st.deadline) {
			return
		}
		k := pickKind(w.rnd, st.cum)
		seed := keys.Next()
		began := time.Now()
		o, err := ops[k](seed)
		end := time.Now()
		svc := end.Sub(began)
		lat := svc
		if st.open {
			lat = end.Sub(intended)
		}
		if err != nil {
			r.errs.add(sp.kinds[k].name, err)
		}
		st.rec.record(id, k, lat, svc, o, err != nil)
	}
}

func pickKind(r *rand.Rand, cum []int) int {
	if len(cum) == 1 {
		return 0
	}
	x := r.IntN(cum[len(cum)-1])
	for i, c := range cum {
		if x < c {
			return i
		}
	}
	return len(cum) - 1
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
