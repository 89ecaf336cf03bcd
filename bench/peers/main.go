//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The workload of every cell: a 100-byte value under one of 100,000 keys.
const (
	valueSize = 100
	keys      = 100000
)

// runner is one run: its flags, its temporary folder and what it found.
type runner struct {
	step        time.Duration
	clients     []int
	modes       []string
	rotate      int
	clientProcs int
	floor       bool // measure the Go floor too

	root           string // the repository
	tmp            string
	logPath        string // every client's output
	redisServer    string
	redisBenchmark string
	progress       io.Writer
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == respClientCmd {
		os.Exit(respClient(ctx, os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == floorCmd {
		os.Exit(goFloor(ctx, os.Args[2:], os.Stderr))
	}
	os.Exit(mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	step := fs.Duration("step", 5*time.Second, "length of each measured cell")
	clients := fs.String("clients", "1,16,64", "client counts, comma separated")
	modes := fs.String("modes", "periodic,batch,adaptive", "cqld commitlog_sync modes, comma separated")
	procs := fs.Int("client-procs", 0, "GOMAXPROCS of cqlstress (0: Go's default)")
	floor := fs.Bool("floor", true, "also measure the Go floor (peers go-floor: a durable server in Go that does nothing but log and answer) with the lean client")
	rotate := fs.Int("rotate", 0, "at the i-th client count the cqld modes take turns starting at mode i+rotate: give rounds rotate 0, 1, 2 so each mode goes first as often")
	keep := fs.Bool("keep", false, "keep the temporary folder (servers' logs and data, clients' output)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	r := &runner{step: *step, modes: strings.Split(*modes, ","), rotate: *rotate, clientProcs: *procs, floor: *floor, progress: stderr}
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "peers: -clients %q: want positive integers\n", *clients)
			return 2
		}
		r.clients = append(r.clients, n)
	}
	if *step <= 0 || *step > time.Minute {
		fmt.Fprintln(stderr, "peers: -step must be in (0, 1m]: the run stays a few minutes long")
		return 2
	}
	var err error
	if r.tmp, err = os.MkdirTemp("", "cqld-peers-"); err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 1
	}
	if *keep {
		fmt.Fprintln(stderr, "peers: keeping", r.tmp)
	} else {
		defer os.RemoveAll(r.tmp)
	}
	r.logPath = filepath.Join(r.tmp, "clients.log")
	cells, header, err := r.run(ctx)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "peers: interrupted; the servers it started are stopped")
		return 130
	}
	if err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 1
	}
	printReport(stdout, header, cells, r)
	return 0
}

// run prepares the binaries and measures every server in turn.
func (r *runner) run(ctx context.Context) ([]cell, []string, error) {
	if err := r.prepare(ctx); err != nil {
		return nil, nil, err
	}
	header := r.describe()
	for _, h := range header {
		fmt.Fprintln(r.progress, h)
	}
	var cells []cell
	add := func(c cell, err error) error {
		if err != nil {
			return fmt.Errorf("%s, %s, %d clients: %w", c.Server, c.Client, c.Clients, err)
		}
		var fsync string
		if sp := c.Sync; sp != nil {
			fsync = fmt.Sprintf(", %.1f appends/sync, fsync mean %.0f us, p90 %.0f us", sp.PerSync, sp.Mean, sp.P90)
		}
		fmt.Fprintf(r.progress, "%-14s %-16s %3d clients: %9.0f ops/s, p50 %.3f ms, client %.1f us/op, server %.1f us/op (kernel %.1f), others %.2f cores%s\n",
			c.Server, c.Client, c.Clients, c.Rate, c.P50, c.ClientCPU, c.ServerCPU, c.ServerSys, c.Others, fsync)
		cells = append(cells, c)
		return nil
	}
	lean := func(srv *server, n int) error {
		c, err := r.respLean(ctx, srv, n)
		c.Server, c.Client, c.Clients = srv.name, "lean", n
		return add(c, err)
	}
	err := r.withRedis(func(srv *server) error {
		for _, n := range r.clients {
			c, err := r.redisBench(ctx, srv, n)
			c.Server, c.Client, c.Clients = srv.name, "redis-benchmark", n
			if err := add(c, err); err != nil {
				return err
			}
			if err := lean(srv, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if r.floor {
		for _, arch := range floorArchs {
			err := r.withFloor(arch, func(srv *server) error {
				for _, n := range r.clients {
					if err := lean(srv, n); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
		}
	}
	// NB: the cqld nodes are all up for the whole run and take turns at
	// each client count, the first turn rotating, so that a mode is not
	// measured minutes after another, on a machine that has drifted, or
	// always right after another's cell, its flushes and the kernel's
	// writeback of its data still running.
	var nodes []*server
	defer func() {
		for _, srv := range nodes {
			srv.stop()
		}
	}()
	for _, mode := range r.modes {
		srv, err := r.startCqld(mode)
		if err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, srv)
	}
	for i, n := range r.clients {
		for j := range nodes {
			srv := nodes[(i+r.rotate+j)%len(nodes)]
			for _, client := range []string{"lean", "gocql"} {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				c, err := r.cqlstress(ctx, srv, client, n)
				c.Server, c.Client, c.Clients = srv.name, client, n
				if err := add(c, err); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return cells, header, nil
}

// prepare builds cqld and cqlstress from the repository and finds Redis,
// installing Debian's redis-server when it is missing.
func (r *runner) prepare(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 || strings.TrimSpace(string(out)) == os.DevNull {
		return errors.New("run from inside the cqld repository (go env GOMOD finds no module)")
	}
	r.root = filepath.Dir(strings.TrimSpace(string(out)))
	for _, b := range []string{"cqld", "cqlstress"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(r.tmp, b), "./cmd/"+b)
		cmd.Dir = r.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/%s: %w\n%s", b, err, out)
		}
	}
	if r.redisServer, err = exec.LookPath("redis-server"); err != nil {
		fmt.Fprintln(r.progress, "redis-server is missing: apt-get install -y redis-server")
		cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "redis-server")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get install redis-server (run apt-get update first, as root): %w\n%s", err, out)
		}
		if r.redisServer, err = exec.LookPath("redis-server"); err != nil {
			return err
		}
	}
	if r.redisBenchmark, err = exec.LookPath("redis-benchmark"); err != nil {
		return fmt.Errorf("redis-benchmark (Debian's redis-tools): %w", err)
	}
	return nil
}

// describe is the run's header: when, what, where.
func (r *runner) describe() []string {
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.root
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	commit := git("rev-parse", "--short", "HEAD")
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		commit += " (with uncommitted changes)"
	}
	redis, _ := exec.Command(r.redisServer, "--version").Output()
	load, _ := os.ReadFile("/proc/loadavg")
	return []string{
		fmt.Sprintf("date %s, cqld %s, %s, %s", time.Now().UTC().Format(time.RFC3339), commit, runtime.Version(), strings.TrimSpace(string(redis))),
		fmt.Sprintf("%d CPUs, load average %s", runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " ")),
		fmt.Sprintf("cells of %v; SET / UPDATE of a %d-byte value under one of %d keys; clients %v", r.step, valueSize, keys, r.clients),
	}
}

// withRedis runs f against a Redis with appendfsync always, stopped by
// its PID afterwards.
func (r *runner) withRedis(f func(*server) error) error {
	return r.withServer("Redis always", "redis", r.redisServer, func(port int, dir string) []string {
		return []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir, "--appendonly", "yes", "--appendfsync", "always",
			"--save", "", "--daemonize", "no", "--protected-mode", "yes"}
	}, f)
}

// floorArchs are the Go floor's builds (see goFloor), measured in turn.
var floorArchs = []string{"gnet", "net"}

// floorName is the server name of the Go floor built as arch.
func floorName(arch string) string { return "Go floor " + arch }

// withFloor runs f against this program's Go floor built as arch (see
// goFloor), stopped by its PID afterwards.
func (r *runner) withFloor(arch string, f func(*server) error) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return r.withServer(floorName(arch), "floor-"+arch, self, func(port int, dir string) []string {
		return []string{floorCmd, "-addr", fmt.Sprintf("127.0.0.1:%d", port), "-dir", dir, "-arch", arch}
	}, f)
}

// withServer starts bin on 127.0.0.1 at a free port with args(port, dir),
// dir a fresh folder named folder in the run's, its log beside it; runs
// f against it; and stops it by its PID.
func (r *runner) withServer(name, folder, bin string, args func(port int, dir string) []string, f func(*server) error) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	dir := filepath.Join(r.tmp, folder)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	srv, err := startServer(name, fmt.Sprintf("127.0.0.1:%d", port), dir+".log", bin, args(port, dir)...)
	if err != nil {
		return err
	}
	defer srv.stop()
	return f(srv)
}

// startCqld starts a fresh cqld node with commitlog_sync mode, its data
// in a folder of its own and its ports its own, so that the nodes of
// several modes run side by side; the caller stops it by its PID.
func (r *runner) startCqld(mode string) (*server, error) {
	var ports [3]int
	for i := 0; i < len(ports); {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports[:i], p) { // a port drawn twice is drawn again
			ports[i] = p
			i++
		}
	}
	port, mport, sport := ports[0], ports[1], ports[2]
	dir := filepath.Join(r.tmp, "cqld-"+mode)
	srv, err := startServer("cqld "+mode, fmt.Sprintf("127.0.0.1:%d", port), dir+".log", filepath.Join(r.tmp, "cqld"),
		"-rpc_address", "127.0.0.1", "-listen_address", "127.0.0.1", "-native_transport_port", strconv.Itoa(port),
		"-storage_port", strconv.Itoa(sport), "-seeds", fmt.Sprintf("127.0.0.1:%d", sport),
		"-prometheus_address", "127.0.0.1", "-prometheus_port", strconv.Itoa(mport), "-commitlog_sync", mode,
		"-data_file_directories", dir+"/data", "-commitlog_directory", dir+"/commitlog",
		"-saved_caches_directory", dir+"/saved_caches", "-hints_directory", dir+"/hints")
	if err != nil {
		return nil, err
	}
	srv.metrics = fmt.Sprintf("127.0.0.1:%d", mport)
	return srv, nil
}
