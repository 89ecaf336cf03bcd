package messaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTCPSizesAndCompression(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		t.Run(fmt.Sprintf("lz4=%v", lz4), func(t *testing.T) {
			withLZ4 := func(o *Options) { o.LZ4 = lz4 }
			a := listenTCP(t, "127.0.0.1:0", withLZ4)
			b := listenTCP(t, "127.0.0.2:0", withLZ4)
			var got Inbound
			b.Handle(VerbRead, func(_ context.Context, m Inbound) ([]byte, error) {
				got = m
				return append([]byte("read:"), m.Payload...), nil
			})
			a.Handle(VerbEcho, echo)

			resp, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbRead, []byte("k1"))
			if err != nil {
				t.Fatal(err)
			}
			if string(resp) != "read:k1" {
				t.Fatalf("response %q, want %q", resp, "read:k1")
			}
			if got.From != a.Addr() || got.HostID != a.opts.HostID || got.Verb != VerbRead || got.OneWay {
				t.Fatalf("handler saw %+v, want from %s", got, a.Addr())
			}

			// The other way, and messages of every size class: empty,
			// several segments (over 128 KiB), the large connection.
			for _, size := range []int{0, 1000, 200 << 10, 3 << 20} {
				payload := bytes.Repeat([]byte("abcdefgh"), size/8)
				resp, err := b.Request(ctxTimeout(t, 10*time.Second), a.Addr(), VerbEcho, payload)
				if err != nil {
					t.Fatalf("%d bytes: %v", size, err)
				}
				if !bytes.Equal(resp, payload) {
					t.Fatalf("%d bytes: echo differs (%d bytes back)", size, len(resp))
				}
			}
			b.mu.Lock()
			p := b.peers[a.Addr()]
			small, large := p.conns[0] != nil, p.conns[1] != nil
			b.mu.Unlock()
			if !small || !large {
				t.Fatalf("small connection %v, large %v: want both used", small, large)
			}
		})
	}
}

// TestTCPConcurrentRequests proves requests are multiplexed on one
// connection: every handler waits until all of them run at once.
func TestTCPConcurrentRequests(t *testing.T) {
	const callers, rounds = 16, 20
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	var (
		mu      sync.Mutex
		running int
		all     = make(chan struct{})
	)
	b.Handle(VerbMutation, func(ctx context.Context, m Inbound) ([]byte, error) {
		if bytes.HasPrefix(m.Payload, []byte("round 0 ")) {
			mu.Lock()
			running++
			if running == callers {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
				return nil, errors.New("the first requests never all ran at once")
			}
		}
		return append([]byte("ack "), m.Payload...), nil
	})

	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			for r := range rounds {
				req := fmt.Sprintf("round %d caller %d", r, i)
				resp, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbMutation, []byte(req))
				if err == nil && string(resp) != "ack "+req {
					err = fmt.Errorf("request %q got response %q", req, resp)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	b.mu.Lock()
	conns := len(b.accepted)
	b.mu.Unlock()
	if conns != 1 {
		t.Fatalf("%d connections accepted, want 1", conns)
	}
}

func TestTCPReconnect(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.2:%d", freePort(t, "127.0.0.2"))
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, addr, nil)
	b.Handle(VerbEcho, echo)
	if _, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("1")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("2")); err == nil {
		t.Fatal("request to a closed peer succeeded")
	}
	b2 := listenTCP(t, addr, nil)
	b2.Handle(VerbEcho, echo)
	resp, err := a.Request(ctxTimeout(t, 10*time.Second), b2.Addr(), VerbEcho, []byte("3"))
	if err != nil || string(resp) != "3" {
		t.Fatalf("after the peer restarted: %q, %v", resp, err)
	}
}

func TestTCPGarbageOnThePort(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	b.Handle(VerbEcho, echo)

	// expectClosed reads from nc until the peer closes it.
	expectClosed := func(nc net.Conn) {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, nc)
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("connection not closed by the peer: %v", err)
		}
	}
	dial := func() net.Conn {
		t.Helper()
		nc, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		return nc
	}

	// Garbage instead of a hello, such as an HTTP client.
	nc := dial()
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	expectClosed(nc)
	if got := counter(b.metrics.ConnectionErrors.WithLabelValues("handshake")); got != 1 {
		t.Fatalf("handshake errors %v, want 1", got)
	}

	// A good handshake, then bytes that are not segments.
	nc = dial()
	h := hello{version: wireVersion, kind: helloInitiate, cluster: "Test Cluster", addr: netip.MustParseAddrPort("127.0.0.9:7000")}
	nc.Write(appendHello(nil, &h))
	if r, err := readHello(nc); err != nil || r.kind != helloAccept {
		t.Fatalf("handshake: %+v, %v", r, err)
	}
	nc.Write(bytes.Repeat([]byte{0xff}, 64))
	expectClosed(nc)
	if got := counter(b.metrics.ConnectionErrors.WithLabelValues("stream")); got != 1 {
		t.Fatalf("stream errors %v, want 1", got)
	}

	// The node keeps serving.
	if resp, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("still")); err != nil || string(resp) != "still" {
		t.Fatalf("after garbage: %q, %v", resp, err)
	}
}

func TestTCPForeignClusterRefused(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.ClusterName = "alpha" })
	b := listenTCP(t, "127.0.0.2:0", func(o *Options) { o.ClusterName = "beta" })
	b.Handle(VerbEcho, echo)
	_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, nil)
	if !errors.Is(err, ErrClusterMismatch) {
		t.Fatalf("request to a foreign node: %v, want ErrClusterMismatch", err)
	}
	for _, name := range []string{`"alpha"`, `"beta"`} {
		if !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name cluster %s", err, name)
		}
	}
	if got := counter(b.metrics.ConnectionErrors.WithLabelValues("foreign")); got != 1 {
		t.Fatalf("foreign connections refused %v, want 1", got)
	}
	if got := counter(a.metrics.ConnectionErrors.WithLabelValues("refused")); got != 1 {
		t.Fatalf("connections refused by the peer %v, want 1", got)
	}
	if got := received(b.metrics, VerbEcho, a.Addr()); got != 0 {
		t.Fatalf("the foreign node's message was received (%v)", got)
	}
}

func TestTCPAddressInUse(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	if b, err := ListenTCP(testOptions(t, a.Addr().String())); err == nil {
		b.Close()
		t.Fatalf("two transports listen on %s", a.Addr())
	}
}

// TestTCPSilentConnection: a connection that never sends its hello is
// closed after HandshakeTimeout, and does not hold up Close.
func TestTCPSilentConnection(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.HandshakeTimeout = 50 * time.Millisecond })
	nc, err := net.Dial("tcp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("silent connection not closed: %v", err)
	}

	b := listenTCP(t, "127.0.0.2:0", func(o *Options) { o.HandshakeTimeout = time.Hour })
	nc2, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	waitFor(t, "the connection to be accepted", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.accepted) == 1
	})
	closed := make(chan struct{})
	go func() {
		b.Close()
		close(closed)
	}()
	waitFor(t, "Close with a connection in its handshake", func() bool {
		select {
		case <-closed:
			return true
		default:
			return false
		}
	})
}

// A request whose connection fails while enqueue is pushing it, the
// failure taking its call first (and giving the caller its error), is
// not sent again on a new connection: the peer would run a request its
// caller was told failed. The race is staged by holding the connection's
// queue while the call is in its table.
func TestTCPRequestFailedDuringPushIsNotResent(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	var (
		mu   sync.Mutex
		seen []string
	)
	b.Handle(VerbEcho, func(_ context.Context, m Inbound) ([]byte, error) {
		mu.Lock()
		seen = append(seen, string(m.Payload))
		mu.Unlock()
		return m.Payload, nil
	})
	if _, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("before")); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	c := a.peers[b.Addr()].conns[0]
	a.mu.Unlock()

	c.q.mu.Lock() // the push waits here, its call in the table
	results := make(chan error, 2)
	go func() {
		if err := a.RequestAsync(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("failed"), func(_ []byte, err error) { results <- err }); err != nil {
			results <- err
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.calls.mu.Lock()
		n := len(c.calls.calls)
		c.calls.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			c.q.mu.Unlock()
			t.Fatal("the request never reached the connection's call table")
		}
	}
	// The connection fails as fail does, its call table first.
	lost := fmt.Errorf("%w: staged", ErrConnectionLost)
	c.failed.Store(true)
	c.calls.failAll(lost, false)
	c.q.err = lost
	c.q.mu.Unlock()
	if err := <-results; !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("the request failed with %v", err)
	}
	c.fail(lost) // the rest of the failure: its goroutines end

	if _, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("after")); err != nil {
		t.Fatal(err)
	}
	b.Close() // waits for its handlers
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != "[before after]" {
		t.Fatalf("the peer ran %q", seen)
	}
}
