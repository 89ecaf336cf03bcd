package test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/frontend"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/stress"
)

// instantHandler answers every EXECUTE at once with VOID (what a write
// returns) and hands everything else (handshake queries, schema, PREPARE)
// to a real coordinator, so drivers connect as usual.
type instantHandler struct{ next frontend.Handler }

func (h instantHandler) Handle(ctx context.Context, req *protocol.Request) *protocol.Response {
	if req.Message.GetOpCode() == primitive.OpCodeExecute {
		return &protocol.Response{Message: &message.VoidResult{}}
	}
	return h.next.Handle(ctx, req)
}

// TestCqlstressInstantServerProcess is not a test: BenchmarkCqlstressCeiling
// runs the test binary again with CQLSTRESS_INSTANT_SERVER=1 to serve from
// another process (so the benchmark's CPU time is the client's alone). It
// prints the address, then serves until its standard input closes.
func TestCqlstressInstantServerProcess(t *testing.T) {
	if os.Getenv("CQLSTRESS_INSTANT_SERVER") != "1" {
		t.Skip("helper process of BenchmarkCqlstressCeiling")
	}
	node, _ := newNode(t)
	addr := node.Addr()
	// The node's own frontend makes way for one with the instant handler
	// on the same port, which is the port system.local advertises.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := node.Frontend().Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	fe := frontend.New(instantHandler{node.Coord}, frontend.Options{Addr: addr, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := fe.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ADDR %s\n", fe.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = fe.Shutdown(ctx)
	os.Exit(0) // the node's frontend is already shut down; skip its cleanup
}

// startInstantServer starts the helper process and returns its address.
func startInstantServer(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCqlstressInstantServerProcess$")
	cmd.Env = append(os.Environ(), "CQLSTRESS_INSTANT_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return a
		}
	}
	b.Fatalf("instant server did not start: %v", sc.Err())
	return ""
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCqlstressCeiling measures how many writes per second cqlstress
// drives against a server that answers every EXECUTE instantly (in another
// process), and its CPU per operation, beside a bare gocql loop sending the
// same INSERTs with the same settings from as many goroutines.
//
//	flock /tmp/cqld-bench.lock go test -run '^$' -bench BenchmarkCqlstressCeiling -benchtime 200000x ./test/
func BenchmarkCqlstressCeiling(b *testing.B) {
	addr := startInstantServer(b)
	for _, threads := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("cqlstress/threads=%d", threads), func(b *testing.B) {
			args := strings.Fields(fmt.Sprintf("write n=%d -rate threads=%d -node %s -log interval=1h -max-errors 0", b.N, threads, addr))
			c, err := stress.Parse(args)
			if err != nil {
				b.Fatal(err)
			}
			cpu := cpuTime(b)
			b.ResetTimer()
			res, err := stress.Run(context.Background(), c, io.Discard, io.Discard)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			t := res.Steps[0].Total
			if t.Errors > 0 || t.Ops != int64(b.N) {
				b.Fatalf("%d ops, %d errors", t.Ops, t.Errors)
			}
			b.ReportMetric(t.OpRate, "ops/s")
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N)/1e3, "cpu-µs/op")
		})
		b.Run(fmt.Sprintf("gocql/threads=%d", threads), func(b *testing.B) {
			c, err := stress.Parse([]string{"write", "n=1", "-node", addr})
			if err != nil {
				b.Fatal(err)
			}
			s, err := stress.Cluster(c, io.Discard).CreateSession()
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			stmt := `INSERT INTO keyspace1.standard1 (key, "C0", "C1", "C2", "C3", "C4") VALUES (?, ?, ?, ?, ?, ?)`
			if err := s.Query(stmt, []byte("k"), nil, nil, nil, nil, nil).Exec(); err != nil {
				b.Fatal(err) // the table exists: the cqlstress run above created it
			}
			val := make([]byte, 34)
			var next atomic.Int64
			var failed atomic.Int64
			var wg sync.WaitGroup
			cpu := cpuTime(b)
			b.ResetTimer()
			start := time.Now()
			for range threads {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := make([]byte, 8)
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						binary.BigEndian.PutUint64(key, uint64(i))
						if err := s.Query(stmt, key, val, val, val, val, val).Exec(); err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d errors", failed.Load())
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "ops/s")
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}
