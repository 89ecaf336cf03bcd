package test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// cqldBinary builds cmd/cqld once per test process, into a directory
// TestMain removes when the tests end.
func cqldBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cqld-bin")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "cqld")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/cqld").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// removeBinary removes what cqldBinary built, once no test runs it.
func removeBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// storagePorts keeps each data directory's internode port, so that a node
// restarted on its data has the address its cluster knows it by.
var (
	storagePortsMu sync.Mutex
	storagePorts   = map[string]int{}
)

func storagePortOf(t testing.TB, dir string) int {
	storagePortsMu.Lock()
	defer storagePortsMu.Unlock()
	p, ok := storagePorts[dir]
	if !ok {
		p = freePort(t)
		storagePorts[dir] = p
	}
	return p
}

// proc is a cqld subprocess.
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	addr   string
	done   chan error
}

func startProc(t testing.TB, dir string, extra ...string) *proc {
	t.Helper()
	port, storage := freePort(t), storagePortOf(t, dir)
	args := append([]string{
		"-native_transport_port", fmt.Sprint(port),
		"-storage_port", fmt.Sprint(storage),
		"-seeds", fmt.Sprintf("127.0.0.1:%d", storage),
		"-prometheus_port", fmt.Sprint(freePort(t)),
		"-data_file_directories", dir + "/data",
		"-commitlog_directory", dir + "/commitlog",
	}, extra...)
	cmd := exec.Command(cqldBinary(t), args...)
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", p.addr); err == nil {
			c.Close()
			return p
		}
		select {
		case err := <-p.done:
			t.Fatalf("cqld exited at start: %v\n%s", err, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cqld did not listen on %s\n%s", p.addr, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		t.Fatalf("cqld did not exit\n%s", p.stderr)
		return -1
	}
}

// TestGracefulStop sends SIGTERM to a cqld process with requests in
// flight: every request sent before the signal is answered, the process
// exits 0, and the schema is there after a restart.
func TestGracefulStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProc(t, dir)
	w := dial(t, p.addr)
	w.handshake()
	w.send(4, 1, primitive.OpCodeQuery, queryBody(`CREATE KEYSPACE kept WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`))
	if r := w.mustRead(); r.op != primitive.OpCodeResult {
		t.Fatalf("create: %s", fmtReply(r))
	}
	const n = 300
	var burst []byte
	for i := 0; i < n; i++ {
		burst = append(burst, frameBytes(4, 0, int16(100+i), primitive.OpCodeQuery, queryBody(`SELECT * FROM system_schema.columns`))...)
	}
	w.write(burst)
	// Signal once the server is working on the burst (its first answer is
	// back): a signal sent before it read anything would leave nothing to
	// drain.
	answered := map[int16]bool{}
	first := w.mustRead()
	if code, _ := first.errorCode(); first.op != primitive.OpCodeResult && code != primitive.ErrorCodeOverloaded {
		t.Fatalf("first of the burst: %s", fmtReply(first))
	}
	answered[first.stream] = true
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for len(answered) < n {
		r, err := w.read()
		if err != nil {
			break
		}
		code, _ := r.errorCode()
		if r.op != primitive.OpCodeResult && code != primitive.ErrorCodeOverloaded {
			t.Fatalf("during stop: %s", fmtReply(r))
		}
		answered[r.stream] = true
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, p.stderr)
	}
	// Requests the server had read before the signal were all answered; the
	// ones it never read died with the socket. The burst is one write, so
	// most were read.
	if len(answered) < 2 {
		t.Logf("only %d requests of the burst answered", len(answered))
	}
	if !strings.Contains(p.stderr.String(), "draining") {
		t.Errorf("no drain in the log:\n%s", p.stderr)
	}

	p2 := startProc(t, dir)
	w2 := dial(t, p2.addr)
	w2.handshake()
	w2.send(4, 1, primitive.OpCodeQuery, queryBody(`USE kept`))
	if r := w2.mustRead(); r.op != primitive.OpCodeResult {
		t.Fatalf("after restart: %s", fmtReply(r))
	}
	p2.cmd.Process.Signal(syscall.SIGINT)
	if code := p2.wait(t); code != 0 {
		t.Fatalf("SIGINT exit code %d", code)
	}
}

// TestBadConfigStopsStartup checks that an unknown or ill-typed key stops
// cqld with an error naming it.
func TestBadConfigStopsStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tc := range []struct{ yaml, want string }{
		{"cluster_name: x\nnative_transport_prot: 9042\n", "native_transport_prot"},
		{"native_transport_port: abc\n", "native_transport_port"},
		{"commitlog_sync: fast\n", "commitlog_sync"},
		{"native_transport_max_frame_size: 16\n", "native_transport_max_frame_size"},
	} {
		path := filepath.Join(t.TempDir(), "cqld.yaml")
		os.WriteFile(path, []byte(tc.yaml), 0o644)
		cmd := exec.Command(cqldBinary(t), "-config", path)
		out, err := cmd.CombinedOutput()
		if err == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: exit %v, output %q", tc.yaml, err, out)
		}
	}
}

// TestTablesSurviveKill writes rows through a cqld process in batch commit
// log mode, kills it with SIGKILL, and checks that every acknowledged write
// is there after a restart; then the same after a clean stop.
func TestTablesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProc(t, dir, "-commitlog_sync", "batch")
	s := tableSession(t, p.addr, "durable")
	mustExec(t, s, `CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))`)
	acked := 0
	for i := 0; i < 300; i++ {
		if err := s.Query(`INSERT INTO t (k, c, v) VALUES (?, ?, ?)`, i%7, i, fmt.Sprint("v", i)).Exec(); err != nil {
			t.Fatal(err)
		}
		acked++
	}
	mustExec(t, s, `DELETE FROM t WHERE k = 0 AND c = 0`)
	s.Close()
	p.cmd.Process.Kill()
	p.wait(t)

	check := func(addr string) {
		s := tableSession(t, addr, "durable")
		var n int64
		if err := s.Query(`SELECT count(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != int64(acked-1) {
			t.Fatalf("after restart: %d rows, %d acknowledged (one deleted)", n, acked)
		}
		var v string
		if err := s.Query(`SELECT v FROM t WHERE k = 3 AND c = 3`).Scan(&v); err != nil || v != "v3" {
			t.Fatalf("row 3 = %q %v", v, err)
		}
	}
	p2 := startProc(t, dir)
	check(p2.addr)
	p2.cmd.Process.Signal(syscall.SIGTERM)
	if code := p2.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p2.stderr)
	}
	// The start after the kill says once what it replayed, and nothing
	// that reads like loss: every write was acknowledged and synced.
	logged := p2.stderr.String()
	if n := strings.Count(logged, `msg="commit log replayed"`); n != 1 || !strings.Contains(logged, "truncated_bytes=0 ") ||
		strings.Contains(logged, `level=WARN msg="commit log`) {
		t.Fatalf("the start after a kill logged \"commit log replayed\" %d times, or a loss:\n%s", n, logged)
	}
	p3 := startProc(t, dir)
	check(p3.addr)
}
