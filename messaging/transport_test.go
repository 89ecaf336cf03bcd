package messaging

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// Behaviour every Transport has, run on each kind.

func forEachKind(t *testing.T, test func(t *testing.T, k kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { test(t, k) })
	}
}

func TestRequestResponse(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 3, nil)
		for _, n := range nodes {
			n.Handle(VerbRead, func(_ context.Context, m Inbound) ([]byte, error) {
				return []byte(m.From.String() + " read " + string(m.Payload) + " from " + n.Addr().String()), nil
			})
		}
		for _, from := range nodes {
			for _, to := range nodes {
				resp, err := from.Request(ctxTimeout(t, 10*time.Second), to.Addr(), VerbRead, []byte("k"))
				if err != nil {
					t.Fatal(err)
				}
				if want := from.Addr().String() + " read k from " + to.Addr().String(); string(resp) != want {
					t.Fatalf("response %q, want %q", resp, want)
				}
			}
		}
		var got Inbound
		done := make(chan struct{})
		nodes[1].Handle(VerbHint, func(_ context.Context, m Inbound) ([]byte, error) {
			got = m
			close(done)
			return nil, errors.New("ignored: one-way")
		})
		if err := nodes[0].Send(ctxTimeout(t, 10*time.Second), nodes[1].Addr(), VerbHint, []byte("h")); err != nil {
			t.Fatal(err)
		}
		<-done
		if got.From != nodes[0].Addr() || got.HostID != coreOf(nodes[0]).opts.HostID || !got.OneWay || string(got.Payload) != "h" {
			t.Fatalf("one-way handler saw %+v", got)
		}
	})
}

func TestFailures(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			if i == 0 {
				o.MaxMessageSize = 64 << 10
			}
		})
		a, b := nodes[0], nodes[1]
		b.Handle(VerbRead, func(context.Context, Inbound) ([]byte, error) {
			return nil, errors.Join(errors.New("table ks.t"), &RemoteError{Code: 42, Message: "too many tombstones"})
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
			return dropped(metricsOf(b), VerbTruncate, a.Addr(), DropNoHandler) == 1
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
	})
}

func TestTimeout(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 2, nil)
		a, b := nodes[0], nodes[1]
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
		if got := counter(metricsOf(a).Timeouts.WithLabelValues("READ", b.Addr().String())); got != 1 {
			t.Fatalf("timeouts %v, want 1", got)
		}
	})
}

// TestPeerDiesMidRequest: a request in flight to a peer that closes fails;
// it does not wait for its deadline.
func TestPeerDiesMidRequest(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 2, nil)
		a, b := nodes[0], nodes[1]
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
		if _, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, nil); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("request to a dead peer: %v, want ErrUnreachable", err)
		}
	})
}

// TestExpiredOnReceipt: a request that waits for a handler slot past its
// deadline is dropped, not handled.
func TestExpiredOnReceipt(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		clock := newFakeClock()
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			if i == 1 {
				o.Clock, o.MaxConcurrentHandlers = clock, 1
			}
		})
		a, b := nodes[0], nodes[1]
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
		waitFor(t, "the first request to be received", func() bool { return received(metricsOf(b), VerbMutation, a.Addr()) == 1 })
		go func() {
			_, err := a.Request(ctxTimeout(t, 500*time.Millisecond), b.Addr(), VerbMutation, []byte("second"))
			errc <- err
		}()
		waitFor(t, "the second request to be received", func() bool { return received(metricsOf(b), VerbMutation, a.Addr()) == 2 })
		clock.Advance(2 * time.Second) // past the second's deadline, on b's clock
		close(release)
		waitFor(t, "the expired request to be dropped", func() bool {
			return dropped(metricsOf(b), VerbMutation, a.Addr(), DropExpired) == 1
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
	})
}

// TestInjectedDelay: the delay holds what a node sends, and only that.
func TestInjectedDelay(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		const delay = 10 * time.Millisecond
		clock := newFakeClock()
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			if i == 0 {
				o.Clock, o.InjectedDelay = clock, delay
			}
		})
		a, b := nodes[0], nodes[1]
		a.Handle(VerbEcho, echo)
		b.Handle(VerbEcho, echo)

		// a to b: the request waits out a's delay; b's response does not.
		errc := make(chan error, 1)
		go func() {
			_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, []byte("a->b"))
			errc <- err
		}()
		waitFor(t, "a's request to wait for its delay", func() bool { return clock.armed() == 1 })
		if got := received(metricsOf(b), VerbEcho, a.Addr()); got != 0 {
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
		if got := received(metricsOf(a), VerbEcho, b.Addr()); got != 2 {
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
	})
}

// TestInjectedDelayConcurrent: messages sent during one delay all leave
// when it ends, not one delay after another.
func TestInjectedDelayConcurrent(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		const delay, n = time.Second, 8
		clock := newFakeClock()
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			if i == 0 {
				o.Clock, o.InjectedDelay = clock, delay
			}
		})
		a, b := nodes[0], nodes[1]
		b.Handle(VerbEcho, echo)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, nil)
				errs <- err
			})
			// Spread the sends over half a delay.
			waitFor(t, "the request to be queued", func() bool {
				return queuedBytes(a, b.Addr()) == int64((i+1)*messageHeaderLen)
			})
			clock.Advance(delay / n / 2)
		}
		// Now half a delay has passed since the first and one sixteenth
		// since the last; a delay more lets every one through, where a
		// writer sleeping a delay per message would have let one.
		clock.Advance(delay)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestQueueBound fills a queue that a delay holds back: exactly as many
// messages fit as MaxQueueBytes allows, then sends fail at once.
func TestQueueBound(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		const limit, size = 64 << 10, 1000
		clock := newFakeClock()
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			if i == 0 {
				o.Clock, o.InjectedDelay, o.MaxQueueBytes, o.MaxMessageSize = clock, time.Hour, limit, 16<<10
			}
		})
		a, b := nodes[0], nodes[1]
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
		if _, err := a.Request(ctx, b.Addr(), VerbMutation, make([]byte, size)); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("request to a full queue: %v", err)
		}
		if got := dropped(metricsOf(a), VerbMutation, b.Addr(), DropQueueFull); got != 2 {
			t.Fatalf("queue_full drops %v, want 2", got)
		}
	})
}

// TestStalledPeer: a peer whose handlers are all stuck stops taking
// messages; the queue toward it fills to MaxQueueBytes, never more, and
// then sends fail at once.
func TestStalledPeer(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		const limit, size = 256 << 10, 4 << 10
		nodes := k.nodes(t, 2, func(i int, o *Options) {
			o.MaxQueueBytes, o.MaxMessageSize, o.MaxConcurrentHandlers = limit, 64<<10, 1
		})
		a, b := nodes[0], nodes[1]
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
		// Over TCP, socket buffers absorb some megabytes first.
		const maxSends = 64 << 20 / size
		var err error
		sent := 0
		for ; sent < maxSends && err == nil; sent++ {
			err = a.Send(ctx, b.Addr(), VerbMutation, make([]byte, size))
			if q := queuedBytes(a, b.Addr()); q > limit {
				t.Fatalf("%d bytes queued, limit %d", q, limit)
			}
		}
		if !errors.Is(err, ErrQueueFull) {
			t.Fatalf("after %d sends of %d bytes to a stalled peer: %v, want ErrQueueFull", sent, size, err)
		}
	})
}

// TestRequestAsync: an asynchronous request's result comes to its
// callback, once: the response, the handler's error, a timeout at the
// context's deadline (counted), or the connection's failure.
func TestRequestAsync(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 2, nil)
		a, b := nodes[0], nodes[1]
		ar := a.(AsyncRequester)
		type answer struct {
			resp []byte
			err  error
		}
		ask := func(ctx context.Context, verb Verb, payload []byte) answer {
			t.Helper()
			got := make(chan answer, 2)
			if err := ar.RequestAsync(ctx, b.Addr(), verb, payload, func(resp []byte, err error) { got <- answer{resp, err} }); err != nil {
				t.Fatal(err)
			}
			r := <-got
			select {
			case again := <-got:
				t.Fatalf("a second result: %+v", again)
			case <-time.After(20 * time.Millisecond):
			}
			return r
		}
		b.Handle(VerbEcho, echo)
		if r := ask(ctxTimeout(t, time.Minute), VerbEcho, []byte("hi")); r.err != nil || string(r.resp) != "hi" {
			t.Fatalf("echo: %q %v", r.resp, r.err)
		}
		// Without a deadline of its own it takes RequestTimeout's.
		if r := ask(context.Background(), VerbEcho, []byte("hi")); r.err != nil || string(r.resp) != "hi" {
			t.Fatalf("echo without a deadline: %q %v", r.resp, r.err)
		}
		b.Handle(VerbTruncate, func(context.Context, Inbound) ([]byte, error) { return nil, errors.New("refused") })
		var re *RemoteError
		if r := ask(ctxTimeout(t, time.Minute), VerbTruncate, nil); !errors.As(r.err, &re) || re.Message != "refused" {
			t.Fatalf("handler error: %v", r.err)
		}
		b.Handle(VerbRead, func(ctx context.Context, _ Inbound) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		if r := ask(ctxTimeout(t, 100*time.Millisecond), VerbRead, nil); !errors.Is(r.err, ErrTimeout) {
			t.Fatalf("past its deadline: %v", r.err)
		}
		if got := counter(metricsOf(a).Timeouts.WithLabelValues("READ", b.Addr().String())); got != 1 {
			t.Fatalf("timeouts %v, want 1", got)
		}
		// The peer going away fails a request in flight at once.
		got := make(chan error, 1)
		if err := ar.RequestAsync(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, nil, func(_ []byte, err error) { got <- err }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // let it reach the handler
		b.Close()
		select {
		case err := <-got:
			if err == nil {
				t.Fatal("a request to a closed peer succeeded")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a request to a closed peer waits for its deadline")
		}
	})
}

// TestHandleAsync: a verb served asynchronously answers its requests with
// what its handler replies, at once or later from another goroutine, its
// errors as failures; it takes the place of the verb's Handler.
func TestHandleAsync(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		nodes := k.nodes(t, 2, nil)
		a, b := nodes[0], nodes[1]
		b.Handle(VerbEcho, func(context.Context, Inbound) ([]byte, error) { return []byte("worker"), nil })
		deadlines := make(chan time.Duration, 4)
		b.(AsyncServer).HandleAsync(VerbEcho, func(deadline time.Time, m Inbound, reply func([]byte, error)) bool {
			deadlines <- time.Until(deadline)
			switch string(m.Payload) {
			case "now":
				reply([]byte("at once"), nil)
			case "later":
				go func() {
					time.Sleep(10 * time.Millisecond)
					reply([]byte("later"), nil)
				}()
			case "declined":
				return false
			default:
				reply(nil, errors.New("refused"))
			}
			return true
		})
		for in, want := range map[string]string{"now": "at once", "later": "later", "declined": "worker"} {
			out, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, []byte(in))
			if err != nil || string(out) != want {
				t.Fatalf("%s: %q %v", in, out, err)
			}
			if d := <-deadlines; d <= 0 || d > time.Minute {
				t.Fatalf("handler's deadline %v from now", d)
			}
		}
		var re *RemoteError
		if _, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, []byte("x")); !errors.As(err, &re) || re.Message != "refused" {
			t.Fatalf("refused: %v", err)
		}
		b.(AsyncServer).HandleAsync(VerbEcho, nil)
		if out, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, nil); err != nil || string(out) != "worker" {
			t.Fatalf("once removed, the handler answers: %q %v", out, err)
		}
	})
}
