package test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// parentTB lends a parent benchmark's lifetime (TempDir, Cleanup) to set-up
// run from inside one of its sub-benchmarks, so what it starts outlives the
// sub-benchmark, while a failure stops the sub-benchmark's goroutine (the
// only one allowed to call FailNow).
type parentTB struct {
	testing.TB // the parent
	sub        testing.TB
}

func (p parentTB) Fatal(args ...any)                 { p.sub.Fatal(args...) }
func (p parentTB) Fatalf(format string, args ...any) { p.sub.Fatalf(format, args...) }
func (p parentTB) FailNow()                          { p.sub.FailNow() }
func (p parentTB) Skip(args ...any)                  { p.sub.Skip(args...) }
func (p parentTB) Skipf(format string, args ...any)  { p.sub.Skipf(format, args...) }
func (p parentTB) SkipNow()                          { p.sub.SkipNow() }

// limitsDir is ../shared/limits seen from the repository root, or
// $SHARED_LIMITS; "" when it is not there.
func limitsDir() string {
	dir := os.Getenv("SHARED_LIMITS")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "limits") // from test/
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(abs, "cqlecho", "main.go")); err != nil {
		return ""
	}
	return abs
}

// startCqlecho builds the loopback ceiling server, runs it on a free port
// until tb ends, and returns its address once it accepts. It skips sub when
// the limits folder is missing.
func startCqlecho(sub testing.TB, tb testing.TB) string {
	dir := limitsDir()
	if dir == "" {
		sub.Skip("../shared/limits/cqlecho not found (set SHARED_LIMITS to the limits folder)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("go tool for building cqlecho: %v", err)
	}
	bin := filepath.Join(tb.TempDir(), "cqlecho")
	build := exec.Command(goBin, "build", "-o", bin, "./cqlecho")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("build cqlecho in %s: %v\n%s", dir, err, out)
	}

	addr := "127.0.0.1:" + strconv.Itoa(freePort(tb))
	cmd := exec.Command(bin, "server", "-addr", addr, "-life", "600s")
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start cqlecho: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			tb.Fatalf("cqlecho exited before accepting on %s: %v", addr, err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("cqlecho not accepting on %s after 10s: %v", addr, err)
		}
	}
}

// rtConn is one benchmark client connection with one request in flight.
type rtConn struct {
	c      net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	stream int16
	reply  primitive.OpCode
	req    [9]byte // v4 OPTIONS, no body
	hdr    [9]byte
}

// rtDeadline bounds a whole sub-benchmark run so a server that stops
// answering fails the benchmark instead of hanging it.
const rtDeadline = 10 * time.Minute

func dialRT(addr string, stream int16, reply primitive.OpCode) (*rtConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Now().Add(rtDeadline)); err != nil {
		c.Close()
		return nil, err
	}
	k := &rtConn{c: c, r: bufio.NewReaderSize(c, 4<<10), w: bufio.NewWriterSize(c, 4<<10), stream: stream, reply: reply}
	copy(k.req[:], frameBytes(4, 0, stream, primitive.OpCodeOptions, nil))
	return k, nil
}

func (k *rtConn) close() { k.c.Close() }

// handshake sends STARTUP and expects READY on the connection's stream.
func (k *rtConn) handshake() error {
	k.w.Write(frameBytes(4, 0, k.stream, primitive.OpCodeStartup, startupBody()))
	if err := k.w.Flush(); err != nil {
		return err
	}
	op, err := k.readReply()
	if err != nil {
		return fmt.Errorf("STARTUP: %w", err)
	}
	if op != primitive.OpCodeReady {
		return fmt.Errorf("STARTUP answered with %v", op)
	}
	return nil
}

var errStream = errors.New("reply on the wrong stream")

// readReply reads one frame, header and body, and returns its opcode.
func (k *rtConn) readReply() (primitive.OpCode, error) {
	if _, err := io.ReadFull(k.r, k.hdr[:]); err != nil {
		return 0, err
	}
	if int16(binary.BigEndian.Uint16(k.hdr[2:4])) != k.stream {
		return 0, errStream
	}
	if _, err := k.r.Discard(int(binary.BigEndian.Uint32(k.hdr[5:9]))); err != nil {
		return 0, err
	}
	return primitive.OpCode(k.hdr[4]), nil
}

// run makes n round trips. It does not allocate unless it fails.
func (k *rtConn) run(n int) error {
	for i := 0; i < n; i++ {
		k.w.Write(k.req[:])
		if err := k.w.Flush(); err != nil {
			return err
		}
		op, err := k.readReply()
		if err != nil {
			return err
		}
		if op != k.reply {
			return fmt.Errorf("OPTIONS answered with %v, want %v", op, k.reply)
		}
	}
	return nil
}
