//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// respClientCmd is the subcommand that runs the lean client's twin for
// Redis in a process of its own.
const respClientCmd = "resp-client"

// respClient is cqlstress's lean mode for Redis: one goroutine and one
// connection per client, one SET in flight on each, the answer read before
// the next request, all in Go. redis-benchmark drives its connections from
// one C event loop, which wakes and costs differently from Go's goroutines
// on a shared machine; this client makes the two servers' cells differ by
// the server alone. It prints one line: ops=N p50=MS p99=MS max=MS.
func respClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(respClientCmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "Redis address")
	clients := fs.Int("clients", 1, "connections, one request in flight on each")
	dur := fs.Duration("duration", 5*time.Second, "how long to run")
	if err := fs.Parse(args); err != nil || *addr == "" || *clients < 1 {
		fmt.Fprintln(stderr, "usage: peers resp-client -addr HOST:PORT -clients N -duration D")
		return 2
	}
	conns := make([]net.Conn, *clients)
	for i := range conns {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintln(stderr, "resp-client:", err)
			return 1
		}
		defer c.Close()
		conns[i] = c
	}
	value := strings.Repeat("x", valueSize)
	ctx, cancel := context.WithTimeout(ctx, *dur)
	defer cancel()
	lats := make([][]time.Duration, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats[i], errs[i] = respLoop(ctx, c, value)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(stderr, "resp-client:", err)
		return 1
	}
	all := slices.Concat(lats...)
	if len(all) == 0 {
		fmt.Fprintln(stderr, "resp-client: no request answered")
		return 1
	}
	slices.Sort(all)
	q := func(p float64) float64 {
		return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
	}
	fmt.Fprintf(stdout, respResult+"\n", len(all), wall.Seconds(), q(0.5), q(0.99), q(1))
	return 0
}

// respResult is the line respClient prints and respLean reads: requests
// answered, seconds, and p50, p99 and max latency in ms.
const respResult = "ops=%d seconds=%f p50=%f p99=%f max=%f"

// parseResp reads respClient's line into a cell of clients connections.
func parseResp(out []byte, clients int) (cell, error) {
	var c cell
	var secs float64
	if _, err := fmt.Sscanf(string(out), respResult, &c.Ops, &secs, &c.P50, &c.P99, &c.Max); err != nil || secs <= 0 || c.Ops <= 0 {
		return cell{}, fmt.Errorf("resp-client printed %q: %v", out, err)
	}
	c.Client, c.Clients, c.Rate = "lean", clients, float64(c.Ops)/secs
	return c, nil
}

// respLoop sends SETs of value under random keys on c, one at a time,
// until ctx ends, and returns each one's latency.
func respLoop(ctx context.Context, c net.Conn, value string) ([]time.Duration, error) {
	br := bufio.NewReader(c)
	var req []byte
	var lats []time.Duration
	for ctx.Err() == nil {
		key := fmt.Sprintf("key:%012d", rand.IntN(keys))
		req = fmt.Appendf(req[:0], "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(value), value)
		t := time.Now()
		if _, err := c.Write(req); err != nil {
			return lats, fmt.Errorf("write: %w", err)
		}
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lats, fmt.Errorf("read: %w", err)
		}
		lats = append(lats, time.Since(t))
		if string(line) != "+OK\r\n" {
			return lats, fmt.Errorf("SET answered %q", line)
		}
	}
	return lats, nil
}

// respLean measures SET through respClient at clients connections for
// step, after an unmeasured second, each run a process of its own.
func (r *runner) respLean(ctx context.Context, srv *server, clients int) (cell, error) {
	self, err := os.Executable()
	if err != nil {
		return cell{}, err
	}
	cmd := func(d time.Duration) *exec.Cmd {
		return command(ctx, self, respClientCmd, "-addr", srv.addr, "-clients", strconv.Itoa(clients), "-duration", d.String())
	}
	if _, err := run(cmd(time.Second), r.logPath); err != nil {
		return cell{}, err
	}
	return window(srv, func() (cell, time.Duration, error) {
		c := cmd(r.step)
		out, err := run(c, r.logPath)
		if err != nil {
			return cell{}, 0, err
		}
		res, err := parseResp(out, clients)
		if err != nil {
			return cell{}, 0, err
		}
		cpu := processCPU(c)
		res.Server, res.ClientCPU = srv.name, float64(cpu.Microseconds())/float64(res.Ops)
		return res, cpu, nil
	})
}
