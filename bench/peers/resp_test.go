//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
)

// answerSETs answers every RESP command read on c with reply, checking
// that each is a SET of a key and a valueSize-byte value.
func answerSETs(t *testing.T, c net.Conn, reply string) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		var parts []string
		head, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if head != "*3\r\n" {
			t.Errorf("command header %q", head)
			return
		}
		for range 3 {
			if _, err := br.ReadString('\n'); err != nil { // $len
				return
			}
			arg, err := br.ReadString('\n')
			if err != nil {
				return
			}
			parts = append(parts, strings.TrimSuffix(arg, "\r\n"))
		}
		if parts[0] != "SET" || !strings.HasPrefix(parts[1], "key:") || len(parts[2]) != valueSize {
			t.Errorf("command %q", parts)
			return
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

// serveSETs listens on loopback and answers SETs with reply until the
// test ends.
func serveSETs(t *testing.T, reply string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go answerSETs(t, c, reply)
		}
	}()
	return l.Addr().String()
}

// TestRespClient: the twin client sends well-formed SETs on every
// connection, and what it prints is what respLean reads.
func TestRespClient(t *testing.T) {
	addr := serveSETs(t, "+OK\r\n")
	var out, errOut bytes.Buffer
	if code := respClient(context.Background(), []string{"-addr", addr, "-clients", "4", "-duration", "200ms"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	c, err := parseResp(out.Bytes(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if c.Ops < 4 || c.Rate <= 0 || c.P50 <= 0 || c.P50 > c.P99 || c.P99 > c.Max || c.Clients != 4 || c.Client != "lean" {
		t.Errorf("parsed %+v from %q", c, out.String())
	}
}

// An answer other than +OK fails the run: a cell never counts refused
// writes.
func TestRespClientRefused(t *testing.T) {
	addr := serveSETs(t, "-ERR disk full\r\n")
	var out, errOut bytes.Buffer
	if code := respClient(context.Background(), []string{"-addr", addr, "-clients", "1", "-duration", "200ms"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "disk full") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, errOut.String(), out.String())
	}
}
