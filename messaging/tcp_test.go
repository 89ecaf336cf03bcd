package messaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTCPRequestResponse(t *testing.T) {
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

func TestTCPPeerDiesMidRequest(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	started := make(chan struct{})
	b.Handle(VerbRead, func(ctx context.Context, _ Inbound) ([]byte, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	errc := make(chan error, 1)
	go func() {
		_, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, nil)
		errc <- err
	}()
	<-started
	b.Close()
	if err := <-errc; !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("request to a peer that died: %v, want ErrConnectionLost", err)
	}
	// And the next one fails at once: nothing listens there now.
	if _, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("request to a dead peer: %v, want ErrUnreachable", err)
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

func TestTCPFailures(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.MaxMessageSize = 64 << 10 })
	b := listenTCP(t, "127.0.0.2:0", nil)
	b.Handle(VerbRead, func(context.Context, Inbound) ([]byte, error) {
		return nil, fmt.Errorf("table ks.t: %w", &RemoteError{Code: 42, Message: "too many tombstones"})
	})
	b.Handle(VerbMutation, func(context.Context, Inbound) ([]byte, error) { return nil, errors.New("disk full") })
	ctx := ctxTimeout(t, 10*time.Second)

	_, err := a.Request(ctx, b.Addr(), VerbRead, nil)
	if re, ok := errors.AsType[*RemoteError](err); !ok || re.Code != 42 || re.Message != "too many tombstones" || re.Peer != b.Addr() {
		t.Fatalf("handler's RemoteError: %v", err)
	}
	_, err = a.Request(ctx, b.Addr(), VerbMutation, nil)
	if re, ok := errors.AsType[*RemoteError](err); !ok || re.Code != FailureUnknown || re.Message != "disk full" {
		t.Fatalf("handler's error: %v", err)
	}
	_, err = a.Request(ctx, b.Addr(), VerbTruncate, nil)
	if re, ok := errors.AsType[*RemoteError](err); !ok || re.Code != FailureNoHandler || !strings.Contains(re.Message, "TRUNCATE") {
		t.Fatalf("verb without a handler: %v", err)
	}
	if err := a.Send(ctx, b.Addr(), VerbTruncate, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the one-way message without a handler to be counted", func() bool {
		return dropped(b.metrics, VerbTruncate, a.Addr(), DropNoHandler) == 1
	})
	if _, err := a.Request(ctx, b.Addr(), VerbRead, make([]byte, 64<<10)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("message over MaxMessageSize: %v", err)
	}
	a.Close()
	if _, err := a.Request(ctx, b.Addr(), VerbRead, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("request after Close: %v", err)
	}
	if err := a.Send(ctx, b.Addr(), VerbRead, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after Close: %v", err)
	}
}

func TestTCPTimeout(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	deadlines := make(chan time.Duration, 1)
	b.Handle(VerbRead, func(ctx context.Context, _ Inbound) ([]byte, error) {
		d, _ := ctx.Deadline()
		deadlines <- time.Until(d)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, err := a.Request(ctxTimeout(t, 200*time.Millisecond), b.Addr(), VerbRead, nil)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request past its deadline: %v", err)
	}
	if d := <-deadlines; d <= 0 || d > 200*time.Millisecond {
		t.Fatalf("handler's deadline %v from now, want within the request's 200ms", d)
	}
	if got := counter(a.metrics.Timeouts.WithLabelValues("READ", b.Addr().String())); got != 1 {
		t.Fatalf("timeouts %v, want 1", got)
	}
}

// TestTCPExpiredOnReceipt: a request that waits for a handler slot past its
// deadline is dropped, not handled.
func TestTCPExpiredOnReceipt(t *testing.T) {
	clock := newFakeClock()
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", func(o *Options) { o.Clock = clock; o.MaxConcurrentHandlers = 1 })
	release := make(chan struct{})
	var handled []string
	b.Handle(VerbMutation, func(_ context.Context, m Inbound) ([]byte, error) {
		handled = append(handled, string(m.Payload))
		<-release
		return nil, nil
	})
	errc := make(chan error, 2)
	go func() {
		_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbMutation, []byte("first"))
		errc <- err
	}()
	waitFor(t, "the first request to be received", func() bool { return received(b.metrics, VerbMutation, a.Addr()) == 1 })
	go func() {
		_, err := a.Request(ctxTimeout(t, time.Second), b.Addr(), VerbMutation, []byte("second"))
		errc <- err
	}()
	waitFor(t, "the second request to be received", func() bool { return received(b.metrics, VerbMutation, a.Addr()) == 2 })
	clock.Advance(6 * time.Second) // past the second's deadline, on b's clock
	close(release)
	waitFor(t, "the expired request to be dropped", func() bool {
		return dropped(b.metrics, VerbMutation, a.Addr(), DropExpired) == 1
	})
	if err := <-errc; err != nil {
		t.Fatalf("first request: %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrTimeout) {
		t.Fatalf("expired request: %v, want ErrTimeout", err)
	}
	if len(handled) != 1 || handled[0] != "first" {
		t.Fatalf("handled %q, want only the first", handled)
	}
}

// TestTCPInjectedDelay: the delay holds what a node sends, and only that.
func TestTCPInjectedDelay(t *testing.T) {
	const delay = 10 * time.Millisecond
	clock := newFakeClock()
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.Clock = clock; o.InjectedDelay = delay })
	b := listenTCP(t, "127.0.0.2:0", nil)
	a.Handle(VerbEcho, echo)
	b.Handle(VerbEcho, echo)

	// a to b: the request waits out a's delay; b's response does not wait.
	errc := make(chan error, 1)
	go func() {
		_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("a->b"))
		errc <- err
	}()
	waitFor(t, "a's request to wait for its delay", func() bool { return clock.armed() == 1 })
	if got := received(b.metrics, VerbEcho, a.Addr()); got != 0 {
		t.Fatal("the request arrived before its delay")
	}
	clock.Advance(delay - time.Nanosecond)
	if clock.armed() != 1 {
		t.Fatal("the request left before its delay")
	}
	clock.Advance(time.Nanosecond)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	// b to a: the request arrives at once; a's response waits.
	go func() {
		_, err := b.Request(ctxTimeout(t, 10*time.Second), a.Addr(), VerbEcho, []byte("b->a"))
		errc <- err
	}()
	waitFor(t, "a's response to wait for its delay", func() bool { return clock.armed() == 1 })
	if got := received(a.metrics, VerbEcho, b.Addr()); got != 2 {
		t.Fatalf("a received %v messages, want the first response and the request at once", got)
	}
	select {
	case err := <-errc:
		t.Fatalf("the response arrived before its delay (%v)", err)
	default:
	}
	clock.Advance(delay)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestTCPInjectedDelayConcurrent: messages sent during one delay all leave
// when it ends, not one delay after another.
func TestTCPInjectedDelayConcurrent(t *testing.T) {
	const delay, n = time.Second, 8
	clock := newFakeClock()
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.Clock = clock; o.InjectedDelay = delay })
	b := listenTCP(t, "127.0.0.2:0", nil)
	b.Handle(VerbEcho, echo)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, nil)
			errs <- err
		})
		clock.Advance(delay / n / 2) // spread over half a delay
	}
	waitFor(t, "every request to be queued", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		p := a.peers[b.Addr()]
		return p != nil && p.budget.used.Load() == int64(n*messageHeaderLen)
	})
	clock.Advance(delay)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTCPBackpressure: with its peer stalled, a node's queue toward it
// fills to MaxQueueBytes and then sends fail at once.
func TestTCPBackpressure(t *testing.T) {
	const limit, size = 256 << 10, 4 << 10
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.MaxQueueBytes = limit; o.MaxMessageSize = 64 << 10 })
	b := listenTCP(t, "127.0.0.2:0", func(o *Options) { o.MaxConcurrentHandlers = 1 })
	stall := make(chan struct{})
	defer close(stall)
	b.Handle(VerbMutation, func(ctx context.Context, _ Inbound) ([]byte, error) {
		select {
		case <-stall:
		case <-ctx.Done():
		}
		return nil, nil
	})
	b.Handle(VerbEcho, echo)
	ctx := ctxTimeout(t, time.Minute)
	if _, err := a.Request(ctx, b.Addr(), VerbEcho, nil); err != nil {
		t.Fatal(err) // connected
	}
	payload := make([]byte, size)
	// Socket buffers absorb some megabytes before the queue fills.
	const maxSends = 64 << 20 / size
	var err error
	sent := 0
	for ; sent < maxSends && err == nil; sent++ {
		err = a.Send(ctx, b.Addr(), VerbMutation, payload)
		a.mu.Lock()
		used := a.peers[b.Addr()].budget.used.Load()
		a.mu.Unlock()
		if used > limit {
			t.Fatalf("%d bytes queued, limit %d", used, limit)
		}
	}
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("after %d sends of %d bytes to a stalled peer: %v, want ErrQueueFull", sent, size, err)
	}
	t.Logf("queue full after %d sends of %d bytes", sent, size)
	if _, err := a.Request(ctx, b.Addr(), VerbMutation, payload); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("request to a stalled peer: %v, want ErrQueueFull", err)
	}
	if got := dropped(a.metrics, VerbMutation, b.Addr(), DropQueueFull); got != 2 {
		t.Fatalf("queue_full drops %v, want 2", got)
	}
}

// TestQueueBound fills a queue that a delay holds back: exactly as many
// messages fit as MaxQueueBytes allows.
func TestQueueBound(t *testing.T) {
	const limit, size = 64 << 10, 1000
	clock := newFakeClock()
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) {
		o.Clock, o.InjectedDelay, o.MaxQueueBytes, o.MaxMessageSize = clock, time.Hour, limit, 16<<10
	})
	b := listenTCP(t, "127.0.0.2:0", nil)
	ctx := ctxTimeout(t, 10*time.Hour)
	n := 0
	for ; n < 1000; n++ {
		if err := a.Send(ctx, b.Addr(), VerbMutation, make([]byte, size)); err != nil {
			if !errors.Is(err, ErrQueueFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if want := limit / (messageHeaderLen + size); n != want {
		t.Fatalf("%d messages queued, want %d", n, want)
	}
}
