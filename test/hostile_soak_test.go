package test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

var (
	soak      = flag.Bool("cqld.soak", false, "TestHostileSoak: run the hostile-client soak (a few minutes)")
	soakBin   = flag.String("cqld.soak.bin", "", "TestHostileSoak: the cqld binary to soak (default: build ../cmd/cqld)")
	soakPhase = flag.Duration("cqld.soak.phase", 12*time.Second, "TestHostileSoak: how long each attack runs")
	soakOnly  = flag.String("cqld.soak.only", "", "TestHostileSoak: run only the attacks whose names contain this")
	soakRows  = flag.Int("cqld.soak.rows", 64<<10, "TestHostileSoak: rows of 1 KB in soak.big, which the unpaged attack reads whole")
	// The soak runs each attack in a process of its own, this test binary
	// run as TestSoakAttacker with these flags.
	soakAttackName = flag.String("cqld.soak.attack", "", "TestSoakAttacker: the attack to run")
	soakAddr       = flag.String("cqld.soak.addr", "", "TestSoakAttacker: the node to attack")
)

// soakNoFile is the descriptor limit the soaked node runs under, so that
// the descriptor attack can reach it.
const soakNoFile = 4096

// TestHostileSoak runs a well-behaved client beside each attack of issue
// 16 in turn, against one cqld process with its default limits: JSON
// nesting, descriptor exhaustion, unread answers, partial frames,
// tokenizer amplification, unpaged results, extreme decimals, slowloris
// and a greedy client, with a quiet phase before and after. For each it
// prints the good client's operations, errors and latency percentiles,
// and the node's peak and final RSS. It fails if the node dies, logs a
// panic, or the good client gets no answers during an attack. Behind
// -cqld.soak: it takes a few minutes (docs/benchmarks/hostile-soak.txt).
func TestHostileSoak(t *testing.T) {
	if !*soak {
		t.Skip("the hostile soak runs with -cqld.soak")
	}
	bin := *soakBin
	if bin == "" {
		bin = cqldBinary(t)
	}
	dir := t.TempDir()
	node := startSoakNode(t, bin, dir)
	env := &soakEnv{addr: node.addr}
	env.prepare(t)

	good := newGoodClient(t, node.addr)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); good.run(ctx) }()
	defer func() { cancel(); wg.Wait() }()

	t.Logf("cqld %s, RLIMIT_NOFILE %d, %v per phase, soak.big %d rows of 1 KB, %d CPUs shared with other agents",
		bin, soakNoFile, *soakPhase, *soakRows, runtimeCPUs())
	t.Logf("%-15s %6s %6s %5s %8s %8s %8s %9s %9s %9s %6s %6s %6s  %s", "phase", "took", "ops", "errs", "p50", "p99", "max",
		"heap-peak", "rss-peak", "rss-end", "cpu", "c-cpu", "a-cpu", "attack")
	t.Logf("(ops, errs, p50/p99/max: the good client's; heap: the node's Go heap in use; cpu: the node's, c-cpu: the good client's process, a-cpu: the attacker's process)")
	for _, ph := range soakPhases {
		if *soakOnly != "" && !strings.Contains(ph.name, *soakOnly) && ph.name != "quiet" {
			continue
		}
		good.reset()
		peaks := node.sample()
		began, nodeCPU, ownCPU := time.Now(), node.cpu(), selfCPU()
		summary, attackCPU := runAttack(t, ph, env)
		took := time.Since(began)
		st := good.stats()
		rssPeak, heapPeak := peaks()
		t.Logf("%-15s %5.1fs %6d %5d %8s %8s %8s %8dM %8dM %8dM %5.1fs %5.1fs %5.1fs  %s", ph.name, took.Seconds(), st.ops, st.errs, st.p50, st.p99, st.max,
			heapPeak>>20, rssPeak>>20, node.rss()>>20, (node.cpu() - nodeCPU).Seconds(), (selfCPU() - ownCPU).Seconds(), attackCPU.Seconds(), summary)
		if len(st.errKinds) > 0 {
			t.Logf("%-15s good client's errors: %s", "", st.errKinds)
		}
		if node.exited() {
			t.Fatalf("cqld exited during %s:\n%s", ph.name, node.tail())
		}
		if st.ops == 0 {
			t.Errorf("%s: the good client got no answer", ph.name)
		}
	}
	if log := node.log(); strings.Contains(log, "panic") || strings.Contains(log, "fatal error") {
		t.Errorf("cqld's log says panic or fatal:\n%s", node.tail())
	}
}

// runAttack runs one phase's attack for the phase's length and returns
// what it did and the CPU it took. The attackers run in a process of
// their own, as a hostile client would: in the good client's process
// they would compete with it for its CPUs and its Go scheduler, and a
// stall of the good client would tell nothing about the node.
func runAttack(t *testing.T, ph soakAttack, env *soakEnv) (string, time.Duration) {
	if ph.name == "quiet" {
		time.Sleep(*soakPhase)
		return "none", 0
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakAttacker$", "-cqld.soak.attack="+ph.name, "-cqld.soak.addr="+env.addr,
		"-cqld.soak.phase="+soakPhase.String(), fmt.Sprint("-cqld.soak.rows=", *soakRows))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The attacks stop by themselves once the phase ends; some then check
	// the node (a new client served), within half a minute.
	timer := time.AfterFunc(*soakPhase+time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if summary, ok := strings.CutPrefix(line, soakSummary); ok {
			return summary, cpu
		}
	}
	t.Errorf("%s: the attacker process gave no summary (%v):\n%s", ph.name, err, out.String())
	return "no summary", cpu
}

// soakSummary starts the line in which an attacker process says what it did.
const soakSummary = "SOAK-SUMMARY "

// TestSoakAttacker is one attack of TestHostileSoak, in a process of its
// own (runAttack); it runs only when asked for with -cqld.soak.attack.
func TestSoakAttacker(t *testing.T) {
	if *soakAttackName == "" {
		t.Skip("an attacker of TestHostileSoak, run by it")
	}
	i := slices.IndexFunc(soakPhases, func(ph soakAttack) bool { return ph.name == *soakAttackName })
	if i < 0 {
		t.Fatalf("no attack %q", *soakAttackName)
	}
	ctx, stop := context.WithTimeout(context.Background(), *soakPhase)
	defer stop()
	summary := soakPhases[i].attack(ctx, &soakEnv{addr: *soakAddr})
	<-ctx.Done()
	fmt.Println(soakSummary + summary)
}

// soakAttack is one phase: it starts its goroutines, which stop when ctx
// ends, and returns what it did, once ctx has ended.
type soakAttack struct {
	name   string
	attack func(ctx context.Context, env *soakEnv) string
}

var soakPhases = []soakAttack{
	{"quiet", func(ctx context.Context, _ *soakEnv) string { <-ctx.Done(); return "none" }},
	{"json-depth", attackJSONDepth},
	{"fd-exhaustion", attackDescriptors},
	{"unread-answers", attackUnread},
	{"partial-frames", attackPartialFrames},
	{"tokenizer", attackTokenizer},
	{"unpaged", attackUnpaged},
	{"decimals", attackDecimals},
	{"slowloris", attackSlowloris},
	{"greedy", attackGreedy},
	{"quiet", func(ctx context.Context, _ *soakEnv) string { <-ctx.Done(); return "none" }},
}

// soakEnv is what the attacks share: the node's address and its data.
type soakEnv struct {
	addr string
}

// soakBlobs is how many 4 KB values soak.blobs holds.
const soakBlobs = 256

// prepare creates the attacks' tables and data.
func (e *soakEnv) prepare(t *testing.T) {
	s := soakSession(t, e.addr, 8)
	defer s.Close()
	for _, q := range []string{
		`CREATE KEYSPACE soak WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE soak.kv (k int PRIMARY KEY, v text)`,
		`CREATE TABLE soak.big (k int, c int, v text, PRIMARY KEY (k, c))`,
		`CREATE TABLE soak.blobs (k int PRIMARY KEY, v blob)`,
		`CREATE TABLE soak.json (k int PRIMARY KEY, v list<int>)`,
		`CREATE TABLE soak.dec (k int PRIMARY KEY, d decimal)`,
		`INSERT INTO soak.dec (k, d) VALUES (1, 1E+2147483647)`,
		`INSERT INTO soak.dec (k, d) VALUES (2, 1E-2147483647)`,
		`INSERT INTO soak.dec (k, d) VALUES (3, 1)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	value := strings.Repeat("x", 1000)
	blob := bytes.Repeat([]byte{7}, 4096)
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < *soakRows; i += 32 {
				err := s.Query(`INSERT INTO soak.big (k, c, v) VALUES (?, ?, ?)`, i%64, i, value).Exec()
				if err == nil && i < soakBlobs {
					err = s.Query(`INSERT INTO soak.blobs (k, v) VALUES (?, ?)`, i, blob).Exec()
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("loading soak.big: %v", err)
	}
}

func soakSession(t testing.TB, addr string, conns int) *gocql.Session {
	c := gocqlCluster(addr)
	c.NumConns = conns
	c.Timeout = 10 * time.Second
	c.Consistency = gocql.One
	c.RetryPolicy = nil
	c.Logger = discardLogger{}
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type discardLogger struct{}

func (discardLogger) Print(...any)          {}
func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}

// attackJSONDepth: four clients insert JSON documents of a million nested
// brackets (2 MB) in a loop, through INSERT JSON and fromJson().
func attackJSONDepth(ctx context.Context, e *soakEnv) string {
	deep := strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000)
	doc := `{"k": 1, "v": ` + deep + `}`
	return loopSessions(ctx, e, 4, func(s *gocql.Session, i int) error {
		if i%2 == 0 {
			return s.Query(`INSERT INTO soak.json JSON ?`, doc).Exec()
		}
		return s.Query(`INSERT INTO soak.json (k, v) VALUES (1, fromJson(?))`, deep).Exec()
	})
}

// attackTokenizer: four clients send 10 MB of '(' as a query.
func attackTokenizer(ctx context.Context, e *soakEnv) string {
	q := "SELECT " + strings.Repeat("(", 10<<20)
	return loopSessions(ctx, e, 4, func(s *gocql.Session, _ int) error { return s.Query(q).Exec() })
}

// attackUnpaged: four clients read soak.big (-cqld.soak.rows of 1 KB)
// unpaged with LIMIT 2^31-1.
func attackUnpaged(ctx context.Context, e *soakEnv) string {
	return loopSessions(ctx, e, 4, func(s *gocql.Session, _ int) error {
		return s.Query(`SELECT * FROM soak.big LIMIT 2147483647`).PageSize(0).Iter().Close()
	})
}

// attackDecimals: four clients cast, sum and render decimals whose scale
// is at either end of an int.
func attackDecimals(ctx context.Context, e *soakEnv) string {
	qs := []string{
		`SELECT CAST(d AS text) FROM soak.dec WHERE k = 1`,
		`SELECT CAST(d AS double), CAST(d AS varint), CAST(d AS bigint) FROM soak.dec WHERE k = 2`,
		`SELECT sum(d), avg(d) FROM soak.dec`,
		`SELECT JSON d FROM soak.dec`,
		`SELECT toJson(d) FROM soak.dec WHERE k = 2`,
	}
	return loopSessions(ctx, e, 4, func(s *gocql.Session, i int) error {
		return s.Query(qs[i%len(qs)]).Iter().Close()
	})
}

// loopSessions runs n clients, each with a session of its own, calling
// do until ctx ends, and counts the answers by kind.
func loopSessions(ctx context.Context, e *soakEnv, n int, do func(s *gocql.Session, i int) error) string {
	var tally errTally
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := gocqlCluster(e.addr)
			c.NumConns = 1
			c.Timeout = 30 * time.Second
			c.RetryPolicy = nil
			c.Logger = discardLogger{}
			s, err := c.CreateSession()
			if err != nil {
				tally.add(err)
				return
			}
			defer s.Close()
			for i := 0; ctx.Err() == nil; i++ {
				tally.add(do(s, i))
			}
		}()
	}
	<-ctx.Done()
	wg.Wait()
	return tally.String()
}

// attackDescriptors: connections from 127.0.0.2 until the node's
// descriptors run out, held for the phase.
func attackDescriptors(ctx context.Context, e *soakEnv) string {
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	var conns []net.Conn
	failed := 0
	for i := 0; i < soakNoFile+500 && ctx.Err() == nil; i++ {
		c, err := d.DialContext(ctx, "tcp", e.addr)
		if err != nil {
			failed++
			continue
		}
		conns = append(conns, c)
	}
	<-ctx.Done()
	for _, c := range conns {
		c.Close()
	}
	// Once they are gone, the node takes a new client again.
	closed := time.Now()
	for time.Since(closed) < 30*time.Second {
		if w, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
			c := &rawConn{c: w, br: bufio.NewReader(w)}
			_, err = w.Write(frameBytes(4, 0, 1, primitive.OpCodeStartup, startupBody()))
			r, rerr := c.read()
			w.Close()
			if err == nil && rerr == nil && r.op == primitive.OpCodeReady {
				return fmt.Sprintf("%d connected, %d dials failed; a new client served %v after they closed",
					len(conns), failed, time.Since(closed).Round(time.Millisecond))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("%d connected, %d dials failed; NO new client served within 30 s after they closed", len(conns), failed)
}

// attackUnread: 64 connections pipeline SELECTs of 4 KB rows and never
// read the answers.
func attackUnread(ctx context.Context, e *soakEnv) string {
	var sent atomic.Int64
	stops := rawClients(ctx, e, 64, func(ctx context.Context, c *rawConn) {
		var buf []byte
		for i := 0; ctx.Err() == nil; i++ {
			buf = buf[:0]
			for j := range 64 {
				buf = append(buf, frameBytes(4, 0, int16(1+(i*64+j)%32000), primitive.OpCodeQuery,
					queryBody(fmt.Sprintf("SELECT v FROM soak.blobs WHERE k = %d", j%soakBlobs)))...)
			}
			c.c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.c.Write(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					continue // the node stopped reading us: good
				}
				return
			}
			sent.Add(64)
		}
	})
	started := stops()
	return fmt.Sprintf("%d requests written, %s", sent.Load(), started)
}

// attackPartialFrames: 32 connections each send all of a 16 MiB frame but
// its last byte, and hold it.
func attackPartialFrames(ctx context.Context, e *soakEnv) string {
	const size = 16<<20 - 64
	body := queryBody(strings.Repeat(" ", size-7))
	frame := frameBytes(4, 0, 9, primitive.OpCodeQuery, body)
	var refused atomic.Int64
	stops := rawClients(ctx, e, 32, func(ctx context.Context, c *rawConn) {
		c.c.SetWriteDeadline(time.Now().Add(*soakPhase))
		if _, err := c.c.Write(frame[:len(frame)-1]); err != nil {
			return
		}
		c.c.SetReadDeadline(time.Now().Add(time.Until(deadlineOf(ctx))))
		if r, err := c.read(); err == nil && r.op == primitive.OpCodeError {
			refused.Add(1)
		}
		<-ctx.Done()
	})
	started := stops()
	return fmt.Sprintf("%d frames refused at once (OVERLOADED), %s", refused.Load(), started)
}

// attackSlowloris: 500 connections send a STARTUP one byte a second.
func attackSlowloris(ctx context.Context, e *soakEnv) string {
	startup := frameBytes(4, 0, 1, primitive.OpCodeStartup, startupBody())
	var closed atomic.Int64
	var wg sync.WaitGroup
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := d.DialContext(ctx, "tcp", e.addr)
			if err != nil {
				return
			}
			defer c.Close()
			gone := make(chan struct{})
			go func() {
				defer close(gone)
				if _, err := c.Read(make([]byte, 64)); err == io.EOF || errors.Is(err, syscall.ECONNRESET) {
					closed.Add(1)
				}
			}()
			defer func() { c.Close(); <-gone }()
			for i := 0; ctx.Err() == nil; i++ {
				if _, err := c.Write(startup[i%len(startup) : i%len(startup)+1]); err != nil {
					return
				}
				select {
				case <-ctx.Done():
				case <-gone:
					return
				case <-time.After(time.Second):
				}
			}
		}()
	}
	<-ctx.Done()
	wg.Wait()
	return fmt.Sprintf("500 connections, %d closed by the node", closed.Load())
}

// attackGreedy: one connection keeps 2000 reads in flight.
func attackGreedy(ctx context.Context, e *soakEnv) string {
	var answered, overloaded atomic.Int64
	stops := rawClients(ctx, e, 1, func(ctx context.Context, c *rawConn) {
		const inFlight = 2000
		go func() {
			for {
				c.c.SetReadDeadline(time.Now().Add(2 * time.Second))
				r, err := c.read()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					continue
				}
				answered.Add(1)
				if code, _ := r.errorCode(); code == primitive.ErrorCodeOverloaded {
					overloaded.Add(1)
				}
			}
		}()
		var sent int64
		var buf []byte
		for ctx.Err() == nil {
			for sent-answered.Load() < inFlight {
				buf = append(buf[:0], frameBytes(4, 0, int16(1+sent%32000), primitive.OpCodeQuery,
					queryBody(fmt.Sprintf("SELECT * FROM soak.big WHERE k = %d LIMIT 100", sent%64)))...)
				if _, err := c.c.Write(buf); err != nil {
					return
				}
				sent++
			}
			time.Sleep(time.Millisecond)
		}
	})
	started := stops()
	return fmt.Sprintf("%d answered, %d of them OVERLOADED, %s", answered.Load(), overloaded.Load(), started)
}

// rawConn is a hand-driven v4 connection of an attacker.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func (c *rawConn) read() (reply, error) {
	w := wire{c: c.c, br: c.br}
	return w.read()
}

// rawClients runs n attackers, each on a connection from 127.0.0.2 that
// has done STARTUP; the returned func waits for them and says how many
// could not connect.
func rawClients(ctx context.Context, e *soakEnv, n int, run func(ctx context.Context, c *rawConn)) func() string {
	var wg sync.WaitGroup
	var failed atomic.Int64
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := d.DialContext(ctx, "tcp", e.addr)
			if err != nil {
				failed.Add(1)
				return
			}
			defer nc.Close()
			c := &rawConn{c: nc, br: bufio.NewReaderSize(nc, 1<<16)}
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := nc.Write(frameBytes(4, 0, 1, primitive.OpCodeStartup, startupBody())); err != nil {
				failed.Add(1)
				return
			}
			if r, err := c.read(); err != nil || r.op != primitive.OpCodeReady {
				failed.Add(1)
				return
			}
			nc.SetDeadline(time.Time{})
			stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
			defer stop()
			run(ctx, c)
		}()
	}
	return func() string {
		<-ctx.Done()
		wg.Wait()
		return fmt.Sprintf("%d of %d connections failed at start", failed.Load(), n)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// errTally counts outcomes by kind.
type errTally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *errTally) add(err error) {
	kind := "ok"
	var re gocql.RequestError
	switch {
	case err == nil:
	case errors.As(err, &re):
		kind = fmt.Sprintf("0x%04x", re.Code())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, gocql.ErrTimeoutNoResponse):
		kind = "timeout"
	default:
		kind = "other"
	}
	t.mu.Lock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	t.n[kind]++
	t.mu.Unlock()
}

func (t *errTally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []string
	for k := range t.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, t.n[k]))
	}
	return strings.Join(parts, " ")
}

// goodClient writes and reads single rows of soak.kv at about 200 a
// second, recording each one's latency.
type goodClient struct {
	s    *gocql.Session
	mu   sync.Mutex
	lat  []time.Duration
	errs errTally
}

func newGoodClient(t *testing.T, addr string) *goodClient {
	s := soakSession(t, addr, 2) // at ONE from its start
	t.Cleanup(s.Close)
	return &goodClient{s: s}
}

func (g *goodClient) run(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	value := strings.Repeat("g", 100)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		k := rand.IntN(10000)
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		start := time.Now()
		var err error
		if i%2 == 0 {
			err = g.s.Query(`INSERT INTO soak.kv (k, v) VALUES (?, ?)`, k, value).WithContext(qctx).Exec()
		} else {
			var v string
			err = g.s.Query(`SELECT v FROM soak.kv WHERE k = ?`, k).WithContext(qctx).Scan(&v)
			if errors.Is(err, gocql.ErrNotFound) {
				err = nil
			}
		}
		took := time.Since(start)
		cancel()
		if ctx.Err() != nil {
			return
		}
		g.mu.Lock()
		if err != nil {
			g.errs.add(err)
		} else {
			g.lat = append(g.lat, took)
		}
		g.mu.Unlock()
	}
}

func (g *goodClient) reset() {
	g.mu.Lock()
	g.lat = g.lat[:0]
	g.errs = errTally{}
	g.mu.Unlock()
}

type goodStats struct {
	ops, errs     int
	p50, p99, max time.Duration
	errKinds      string
}

func (g *goodClient) stats() goodStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	lat := slices.Clone(g.lat)
	slices.Sort(lat)
	st := goodStats{ops: len(lat), errKinds: g.errs.String()}
	for _, n := range g.errs.n {
		st.errs += n
	}
	if len(lat) > 0 {
		st.p50 = lat[len(lat)/2].Round(10 * time.Microsecond)
		st.p99 = lat[len(lat)*99/100].Round(10 * time.Microsecond)
		st.max = lat[len(lat)-1].Round(10 * time.Microsecond)
	}
	return st
}

// soakNode is a cqld process under a low descriptor limit.
type soakNode struct {
	cmd     *exec.Cmd
	addr    string
	metrics string
	stderr  *lockedBuffer
	done    chan struct{}
}

func startSoakNode(t *testing.T, bin, dir string) *soakNode {
	port, storage, mport := freePort(t), storagePortOf(t, dir), freePort(t)
	args := []string{
		"-native_transport_port", fmt.Sprint(port),
		"-storage_port", fmt.Sprint(storage),
		"-seeds", fmt.Sprintf("127.0.0.1:%d", storage),
		"-prometheus_port", fmt.Sprint(mport),
		"-data_file_directories", dir + "/data",
		"-commitlog_directory", dir + "/commitlog",
	}
	// ulimit in the shell that execs cqld: Go raises its soft limit to
	// the hard one, so both are set.
	cmd := exec.Command("sh", append([]string{"-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, soakNoFile), bin}, args...)...)
	n := &soakNode{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), metrics: fmt.Sprintf("127.0.0.1:%d", mport),
		stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = n.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(n.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-n.done })
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", n.addr); err == nil {
			c.Close()
			return n
		}
		if n.exited() || time.Now().After(deadline) {
			t.Fatalf("cqld did not start:\n%s", n.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *soakNode) exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// rss is the process's resident set in bytes.
func (n *soakNode) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// heap is the node's Go heap in use, from its metrics endpoint.
func (n *soakNode) heap() int64 {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + n.metrics + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int64(f)
		}
	}
	return 0
}

// sample samples the RSS every 50 ms and the heap every 250 ms until the
// returned func is called, which returns their peaks.
func (n *soakNode) sample() func() (rss, heap int64) {
	var rss, heap atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if r := n.rss(); r > rss.Load() {
				rss.Store(r)
			}
			if i%5 == 0 {
				if h := n.heap(); h > heap.Load() {
					heap.Store(h)
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, int64) { close(stop); <-done; return rss.Load(), heap.Load() }
}

// cpu is the process's user and system CPU time so far.
func (n *soakNode) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (n *soakNode) log() string { return n.stderr.String() }

func (n *soakNode) tail() string {
	s := n.log()
	return s[max(0, len(s)-4000):]
}

// lockedBuffer is a bytes.Buffer written by a process and read by tests.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func runtimeCPUs() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(b, []byte("processor\t:"))
}

var _ io.Writer = (*lockedBuffer)(nil)
