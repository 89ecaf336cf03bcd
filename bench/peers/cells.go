//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cqld/cqld/stress"
)

// cell is one measurement: a client kind at a client count against one
// server.
type cell struct {
	Server  string // "Redis always", "cqld batch", ...
	Client  string // "redis-benchmark", "lean", "gocql"
	Clients int

	Ops           int64
	Rate          float64 // operations per second
	P50, P99, Max float64 // milliseconds
	// ClientCPU and ServerCPU are microseconds of CPU (user and system)
	// per operation; ServerSys is the server's part in the kernel (system
	// calls, and the loopback TCP work they do for both ends).
	ClientCPU, ServerCPU, ServerSys float64
	// Others is the cores the rest of the machine used meanwhile.
	Others float64
	// Sync is what cqld's commit log syncs did meanwhile (nil for Redis).
	Sync *syncSpread
}

// window measures what the machine and srv spent while run ran: run
// returns the cell's figures and the CPU its client process used; window
// fills in the server's CPU per operation and the others' cores.
func window(srv *server, run func() (cell, time.Duration, error)) (cell, error) {
	var sync0, sync1 syncSnapshot
	var errSync0, errSync1 error
	if srv.metrics != "" {
		sync0, errSync0 = scrapeSyncs(srv.metrics)
	}
	busy0, err0 := machineBusy()
	srv0, sys0, err1 := srv.cpu()
	start := time.Now()
	c, clientCPU, err := run()
	wall := time.Since(start)
	busy1, err2 := machineBusy()
	srv1, sys1, err3 := srv.cpu()
	if srv.metrics != "" {
		sync1, errSync1 = scrapeSyncs(srv.metrics)
	}
	if err != nil {
		return c, err
	}
	if err := errors.Join(err0, err1, err2, err3); err != nil {
		return c, fmt.Errorf("cpu accounting: %w", err)
	}
	if err := errors.Join(errSync0, errSync1); err != nil {
		return c, fmt.Errorf("commit log metrics: %w", err)
	}
	if srv.metrics != "" {
		c.Sync = sync1.since(sync0, wall)
	}
	if c.Ops > 0 {
		c.ServerCPU = float64((srv1 - srv0).Microseconds()) / float64(c.Ops)
		c.ServerSys = float64((sys1 - sys0).Microseconds()) / float64(c.Ops)
	}
	others := busy1 - busy0 - (srv1 - srv0) - clientCPU
	c.Others = max(0, others.Seconds()/wall.Seconds())
	return c, nil
}

// machineBusy is the CPU time every process has used since boot (the cpu
// line of /proc/stat less idle and iowait).
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errors.New("/proc/stat: no cpu line")
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += n
	}
	return ticks(busy), nil
}

// processCPU is what an exited process used, user and system.
func processCPU(cmd *exec.Cmd) time.Duration {
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// run runs cmd and returns its output, also appended to logPath; it fails
// with the output's tail.
func run(cmd *exec.Cmd, logPath string) ([]byte, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "$ %s\n", strings.Join(cmd.Args, " "))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	logf.Write(out.Bytes())
	if err != nil {
		tail := out.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, tail)
	}
	return out.Bytes(), nil
}

// redisBench measures SET through redis-benchmark -P 1 at clients
// connections for about step: a short pilot run (not measured) tells how
// many requests fill the step.
func (r *runner) redisBench(ctx context.Context, srv *server, clients int) (cell, error) {
	host, port, _ := strings.Cut(srv.addr, ":")
	bench := func(n int) (*exec.Cmd, []string, error) {
		cmd := command(ctx, r.redisBenchmark, "-h", host, "-p", port, "-c", strconv.Itoa(clients), "-P", "1",
			"-t", "set", "-n", strconv.Itoa(n), "-d", strconv.Itoa(valueSize), "-r", strconv.Itoa(keys), "--csv")
		out, err := run(cmd, r.logPath)
		if err != nil {
			return cmd, nil, err
		}
		row, err := setRow(out)
		return cmd, row, err
	}
	_, pilot, err := bench(max(2000, 200*clients))
	if err != nil {
		return cell{}, err
	}
	rps, _ := strconv.ParseFloat(pilot[1], 64)
	n := max(1000, int(rps*r.step.Seconds()))
	return window(srv, func() (cell, time.Duration, error) {
		cmd, row, err := bench(n)
		if err != nil {
			return cell{}, 0, err
		}
		// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
		f := make([]float64, len(row))
		for i := 1; i < len(row); i++ {
			f[i], _ = strconv.ParseFloat(row[i], 64)
		}
		cpu := processCPU(cmd)
		return cell{Server: srv.name, Client: "redis-benchmark", Clients: clients, Ops: int64(n), Rate: f[1],
			P50: f[4], P99: f[6], Max: f[7], ClientCPU: float64(cpu.Microseconds()) / float64(n)}, cpu, nil
	})
}

// setRow is the SET row of redis-benchmark --csv's output.
func setRow(out []byte) ([]string, error) {
	cr := csv.NewReader(bytes.NewReader(out))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark's output: %w", err)
	}
	for _, row := range rows {
		if len(row) == 8 && row[0] == "SET" {
			return row, nil
		}
	}
	return nil, fmt.Errorf("redis-benchmark printed no SET row:\n%s", out)
}

// cqlstress measures cqlstress's update against srv with client (lean or
// gocql) at clients threads for step, after an unmeasured run of a second
// in a process of its own.
func (r *runner) cqlstress(ctx context.Context, srv *server, client string, clients int) (cell, error) {
	mode := []string{"-mode", "lean"}
	if client == "gocql" {
		mode = []string{"-mode", "connections=4", "coalesce=0s"}
	}
	args := func(dur time.Duration, json string) []string {
		a := []string{"update", "duration=" + dur.String(), "-rate", "threads=" + strconv.Itoa(clients),
			"-node", srv.addr, "-pop", fmt.Sprintf("dist=uniform(1..%d)", keys), "-col", fmt.Sprintf("size=fixed(%d)", valueSize),
			"-log", "interval=1m"}
		a = append(a, mode...)
		if json != "" {
			a = append(a, "-json", json)
		}
		return a
	}
	if _, err := run(r.clientCommand(ctx, args(time.Second, "")...), r.logPath); err != nil {
		return cell{}, err
	}
	json := filepath.Join(r.tmp, "cell.json")
	return window(srv, func() (cell, time.Duration, error) {
		cmd := r.clientCommand(ctx, args(r.step, json)...)
		if _, err := run(cmd, r.logPath); err != nil {
			return cell{}, 0, err
		}
		res, err := stress.ReadResult(json)
		if err != nil {
			return cell{}, 0, err
		}
		if len(res.Steps) != 1 || res.Steps[0].Total.Errors > 0 {
			return cell{}, 0, fmt.Errorf("cqlstress: %d steps, %d errors", len(res.Steps), res.Errors())
		}
		st := res.Steps[0]
		c := cell{Server: srv.name, Client: client, Clients: clients, Ops: st.Total.Ops, Rate: st.Total.OpRate,
			P50: st.Total.Latency.Median, P99: st.Total.Latency.P99, Max: st.Total.Latency.Max}
		if st.ClientCPU != nil {
			c.ClientCPU = st.ClientCPU.PerOp
		}
		return c, processCPU(cmd), nil
	})
}

// clientCommand is cqlstress with args, with GOMAXPROCS set when asked.
func (r *runner) clientCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := command(ctx, filepath.Join(r.tmp, "cqlstress"), args...)
	if r.clientProcs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(r.clientProcs))
	}
	return cmd
}
