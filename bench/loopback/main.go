// Command loopback measures the bulk TCP throughput of one connection on
// this machine's loopback, the ceiling a stream between two local nodes
// runs under: a client writes 1 MiB buffers to a server that reads and
// discards them, for -dur, and it prints MB/s. bench/join.sh runs it
// beside a node's join so the streaming rate reads as a fraction of it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "where the server listens")
	dur := flag.Duration("dur", 3*time.Second, "how long the client writes")
	flag.Parse()
	if err := run(*addr, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "loopback:", err)
		os.Exit(1)
	}
}

func run(addr string, dur time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	read := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			read <- 0
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		read <- n
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	start := time.Now()
	var sent int64
	for time.Since(start) < dur {
		n, err := c.Write(buf)
		sent += int64(n)
		if err != nil {
			c.Close()
			return err
		}
	}
	if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	got := <-read
	secs := time.Since(start).Seconds()
	fmt.Printf("loopback: one TCP connection, 1 MiB writes: %d MiB in %.2f s = %.0f MB/s\n", got>>20, secs, float64(got)/secs/1e6)
	_ = sent
	return nil
}
