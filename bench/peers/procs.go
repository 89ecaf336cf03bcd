//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is a server process this run started; stop ends it.
type server struct {
	name string
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
	log  string        // where its output goes
	// metrics is where a cqld node serves Prometheus ("" for Redis).
	metrics string
}

// command is exec.Command with the child killed should this process die
// first.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// startServer starts bin with args (its output to logPath) and waits, at
// most 30 s, until addr accepts connections.
func startServer(name, addr, logPath, bin string, args ...string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	s := &server{name: name, addr: addr, cmd: command(context.Background(), bin, args...), done: make(chan struct{}), log: logPath}
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before listening (%v); its log: %s", name, s.err, logPath)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s not listening on %s after 30 s; its log: %s", name, addr, logPath)
		}
	}
}

// cpu is the CPU time the server has used so far, all of it and the
// part in the kernel (from /proc/PID/stat).
func (s *server) cpu() (all, sys time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count fields after its closing one. utime and stime are fields 14
	// and 15, in clock ticks.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("%s: short /proc stat", s.name)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	return ticks(u + st), ticks(st), nil
}

// ticks converts clock ticks to a duration: USER_HZ is 100 on Linux.
func ticks(n int64) time.Duration { return time.Duration(n) * 10 * time.Millisecond }

// stop sends SIGTERM to the server's PID, waits up to 15 s, then kills it.
// It is safe to call more than once.
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// freePort is a port free on 127.0.0.1, drawn below Linux's ephemeral
// range (32768-60999), so no outgoing connection takes it before the
// server binds it.
func freePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("no free port in 20000-31999")
}
