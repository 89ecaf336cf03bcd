//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// floorCmd is the subcommand that runs the Go floor: the least a durable
// server written in Go can do per SET on this machine.
const floorCmd = "go-floor"

// floorReply is the floor's answer to every command.
var floorReply = []byte("+OK\r\n")

// goFloor serves Redis's protocol as a durable server that keeps nothing
// but its log: every command read is appended to one file, and answered
// "+OK" once an fdatasync covers it. Syncs follow each other as soon as
// anyone waits, each covering every command that arrived meanwhile
// (group commit), as Redis's appendfsync always does in its event loop.
// The -arch gnet server is built as cqld's frontend is: one gnet event
// loop reads and parses, one flusher goroutine writes and syncs, and the
// answers go back to the loop to be written; -arch net is Go's own
// netpoller with a goroutine per connection. What a floor cell measures
// is what these system calls, Go's runtime and this client cost on this
// machine with no database work at all: a bound for any Go server, cqld
// included. It runs until SIGTERM.
func goFloor(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(floorCmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "address to listen on (127.0.0.1:PORT)")
	dir := fs.String("dir", "", "folder for the log file")
	arch := fs.String("arch", "gnet", "gnet (an event loop, as cqld) or net (a goroutine per connection)")
	if err := fs.Parse(args); err != nil || *addr == "" || *dir == "" {
		fmt.Fprintln(stderr, "usage: peers go-floor -addr 127.0.0.1:PORT -dir DIR [-arch gnet|net]")
		return 2
	}
	f, err := os.OpenFile(filepath.Join(*dir, "floor.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintln(stderr, "go-floor:", err)
		return 1
	}
	defer f.Close()
	lg := newFloorLog(f)
	flushCtx, stopFlush := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lg.flush(flushCtx)
	}()
	switch *arch {
	case "gnet":
		err = floorGnet(ctx, *addr, lg)
	case "net":
		err = floorNet(ctx, *addr, lg)
	default:
		err = fmt.Errorf("-arch %q: want gnet or net", *arch)
	}
	stopFlush()
	wg.Wait()
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "go-floor:", err)
		return 1
	}
	return 0
}

// floorLog is the floor's log: commands buffered by the readers, written
// and synced by one flusher, which then calls each command's done.
type floorLog struct {
	f    *os.File
	off  int64
	wake chan struct{} // the flusher's poke; buffered, 1

	mu      sync.Mutex
	buf     []byte
	waiting []func(error)
	closed  bool
}

func newFloorLog(f *os.File) *floorLog {
	return &floorLog{f: f, wake: make(chan struct{}, 1)}
}

// add buffers rec; done is called, on the flusher, once rec is durable
// (or failed to be).
func (l *floorLog) add(rec []byte, done func(error)) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		done(net.ErrClosed)
		return
	}
	l.buf = append(l.buf, rec...)
	l.waiting = append(l.waiting, done)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// flush writes and syncs what was added, back to back, until ctx ends;
// then it closes the log.
func (l *floorLog) flush(ctx context.Context) {
	defer l.close()
	var buf []byte
	var waiting []func(error)
	for {
		select {
		case <-l.wake:
		case <-ctx.Done():
			return
		}
		l.mu.Lock()
		buf, l.buf = l.buf, buf[:0]
		waiting, l.waiting = l.waiting, waiting[:0]
		l.mu.Unlock()
		if len(waiting) == 0 {
			continue
		}
		_, err := l.f.WriteAt(buf, l.off)
		if err == nil {
			l.off += int64(len(buf))
			err = unix.Fdatasync(int(l.f.Fd()))
		}
		for i, done := range waiting {
			done(err)
			waiting[i] = nil
		}
	}
}

// close fails the adds waiting for a sync, and makes later ones fail at
// once.
func (l *floorLog) close() {
	l.mu.Lock()
	l.closed = true
	waiting := l.waiting
	l.waiting = nil
	l.mu.Unlock()
	for _, done := range waiting {
		done(net.ErrClosed)
	}
}

// respCommand is the length of the first whole RESP command (an array of
// bulk strings) in b: 0 when b holds only part of one.
func respCommand(b []byte) (int, error) {
	n, i, ok, err := respInt(b, 0, '*')
	if !ok || err != nil {
		return 0, err
	}
	for range n {
		var size int
		if size, i, ok, err = respInt(b, i, '$'); !ok || err != nil {
			return 0, err
		}
		if i += size + 2; i > len(b) {
			return 0, nil
		}
	}
	return i, nil
}

// respInt reads a RESP header line at b[i:]: kind, a decimal count, CRLF.
// ok is false when the line is not whole yet.
func respInt(b []byte, i int, kind byte) (n, next int, ok bool, err error) {
	end := bytes.Index(b[i:], []byte("\r\n"))
	if end < 0 {
		if len(b)-i > 32 {
			return 0, 0, false, errors.New("go-floor: a header line longer than 32 bytes")
		}
		return 0, 0, false, nil
	}
	line := b[i : i+end]
	if len(line) < 2 || line[0] != kind {
		return 0, 0, false, fmt.Errorf("go-floor: %q where a %q header was due", line, kind)
	}
	n, err = strconv.Atoi(string(line[1:]))
	if err != nil || n < 0 || n > 1<<20 {
		return 0, 0, false, fmt.Errorf("go-floor: header %q", line)
	}
	return n, i + end + 2, true, nil
}

// floorGnet serves on one gnet event loop, as cqld's frontend does on two
// processors.
func floorGnet(ctx context.Context, addr string, lg *floorLog) error {
	h := &floorHandler{log: lg, booted: make(chan gnet.Engine, 1)}
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case eng := <-h.booted:
			select {
			case <-ctx.Done():
				eng.Stop(context.Background())
			case <-stopped:
			}
		case <-stopped:
		}
	}()
	return gnet.Run(h, "tcp://"+addr, gnet.WithNumEventLoop(1), gnet.WithTCPNoDelay(gnet.TCPNoDelay))
}

type floorHandler struct {
	gnet.BuiltinEventEngine
	log    *floorLog
	booted chan gnet.Engine
}

func (h *floorHandler) OnBoot(eng gnet.Engine) gnet.Action {
	h.booted <- eng
	return gnet.None
}

func (h *floorHandler) OnTraffic(c gnet.Conn) gnet.Action {
	for {
		b, _ := c.Peek(-1)
		n, err := respCommand(b)
		if err != nil {
			return gnet.Close
		}
		if n == 0 {
			return gnet.None
		}
		h.log.add(b[:n], func(err error) {
			if err != nil {
				c.Close()
				return
			}
			c.AsyncWrite(floorReply, nil)
		})
		c.Discard(n)
	}
}

// floorNet serves with a goroutine per connection, each reading a
// command, waiting for its sync, and answering.
func floorNet(ctx context.Context, addr string, lg *floorLog) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			floorServe(c, lg)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
		}()
	}
}

// floorServe answers the commands of one connection, one at a time.
func floorServe(c net.Conn, lg *floorLog) {
	br := bufio.NewReaderSize(c, 64<<10)
	done := make(chan error, 1)
	ack := func(err error) { done <- err }
	for {
		if _, err := br.Peek(1); err != nil { // waits for a command
			return
		}
		for {
			b, _ := br.Peek(br.Buffered())
			n, err := respCommand(b)
			if err != nil {
				return
			}
			if n > 0 {
				lg.add(b[:n], ack)
				if err := <-done; err != nil {
					return
				}
				br.Discard(n)
				if _, err := c.Write(floorReply); err != nil {
					return
				}
				break
			}
			if br.Buffered() == br.Size() { // a command larger than the buffer
				return
			}
			if _, err := br.Peek(br.Buffered() + 1); err != nil { // waits for more
				return
			}
		}
	}
}
