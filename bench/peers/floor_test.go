//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRespCommand(t *testing.T) {
	set := "*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$2\r\nab\r\n"
	for _, tc := range []struct {
		in   string
		want int
		bad  bool
	}{
		{in: set, want: len(set)},
		{in: set + set[:7], want: len(set)},
		{in: set[:len(set)-1]},
		{in: set[:3]},
		{in: ""},
		{in: "*0\r\n", want: 4},
		{in: "+OK\r\n", bad: true},
		{in: "*1\r\n:5\r\n", bad: true},
		{in: "*x\r\n", bad: true},
		{in: "*1\r\n$-1\r\n", bad: true},
		{in: "*" + strings.Repeat("1", 40), bad: true},
	} {
		n, err := respCommand([]byte(tc.in))
		if (err != nil) != tc.bad || n != tc.want {
			t.Errorf("respCommand(%q) = %d, %v; want %d, error %v", tc.in, n, err, tc.want, tc.bad)
		}
	}
}

// Each build of the Go floor answers a SET only once it is in the log
// file, and the file holds every SET answered, in order.
func TestGoFloor(t *testing.T) {
	for _, arch := range floorArchs {
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			var stderr bytes.Buffer
			code := 0
			go func() {
				defer wg.Done()
				code = goFloor(ctx, []string{"-addr", addr, "-dir", dir, "-arch", arch}, &stderr)
			}()
			defer func() {
				cancel()
				wg.Wait()
				if code != 0 {
					t.Errorf("go-floor exited %d: %s", code, stderr.String())
				}
			}()
			var c net.Conn
			for deadline := time.Now().Add(10 * time.Second); ; {
				if c, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			br := bufio.NewReader(c)
			var sent bytes.Buffer
			for i := range 20 {
				cmd := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$6\r\nkey:%02d\r\n$%d\r\n%s\r\n", i, valueSize, strings.Repeat("v", valueSize))
				// The command arrives in two parts: the floor must wait
				// for the rest.
				for _, part := range []string{cmd[:9], cmd[9:]} {
					if _, err := io.WriteString(c, part); err != nil {
						t.Fatal(err)
					}
					time.Sleep(time.Millisecond)
				}
				line, err := br.ReadString('\n')
				if err != nil || line != "+OK\r\n" {
					t.Fatalf("SET %d answered %q, %v", i, line, err)
				}
				sent.WriteString(cmd)
				logged, err := os.ReadFile(filepath.Join(dir, "floor.log"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(logged, sent.Bytes()) {
					t.Fatalf("after SET %d the log holds %d bytes, want the %d sent", i, len(logged), sent.Len())
				}
			}
			// A malformed command closes the connection.
			if _, err := io.WriteString(c, "+PING\r\n"); err != nil {
				t.Fatal(err)
			}
			if line, err := br.ReadString('\n'); err == nil {
				t.Errorf("a malformed command answered %q", line)
			}
		})
	}
}
