package messaging

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

func TestInmemPartition(t *testing.T) {
	network := NewInmemNetwork()
	nodes := inmemNodes(t, network, 3, nil)
	a, b, c := nodes[0], nodes[1], nodes[2]
	for _, n := range nodes {
		n.Handle(VerbEcho, echo)
	}
	ask := func(from, to *InmemTransport) error {
		_, err := from.Request(ctxTimeout(t, 100*time.Millisecond), to.Addr(), VerbEcho, []byte("x"))
		return err
	}
	network.Partition([]netip.AddrPort{a.Addr()}, []netip.AddrPort{b.Addr(), c.Addr()})
	for _, pair := range [][2]*InmemTransport{{a, b}, {b, a}, {c, a}} {
		if err := ask(pair[0], pair[1]); !errors.Is(err, ErrTimeout) {
			t.Fatalf("%s to %s across the partition: %v, want ErrTimeout", pair[0].Addr(), pair[1].Addr(), err)
		}
	}
	if err := ask(b, c); err != nil {
		t.Fatalf("within one side: %v", err)
	}
	if got := dropped(a.metrics, VerbEcho, b.Addr(), DropFault); got != 1 {
		t.Fatalf("a's drops toward b %v, want 1", got)
	}
	network.Heal()
	for _, pair := range [][2]*InmemTransport{{a, b}, {b, a}, {c, a}} {
		if err := ask(pair[0], pair[1]); err != nil {
			t.Fatalf("%s to %s after Heal: %v", pair[0].Addr(), pair[1].Addr(), err)
		}
	}
}

func TestInmemDisconnect(t *testing.T) {
	network := NewInmemNetwork()
	nodes := inmemNodes(t, network, 2, nil)
	a, b := nodes[0], nodes[1]
	started := make(chan struct{}, 1)
	b.Handle(VerbRead, func(ctx context.Context, _ Inbound) ([]byte, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	b.Handle(VerbEcho, echo)
	errc := make(chan error, 1)
	go func() {
		_, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, nil)
		errc <- err
	}()
	<-started
	network.Disconnect(a.Addr(), b.Addr())
	if err := <-errc; !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("request in flight on a cut link: %v, want ErrConnectionLost", err)
	}
	if _, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("request on a cut link: %v, want ErrUnreachable", err)
	}
	if err := b.Send(ctxTimeout(t, time.Minute), a.Addr(), VerbEcho, nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("send on a cut link, the other way: %v, want ErrUnreachable", err)
	}
	network.Connect(a.Addr(), b.Addr())
	if resp, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, []byte("back")); err != nil || string(resp) != "back" {
		t.Fatalf("after Connect: %q, %v", resp, err)
	}
}

func TestInmemFaults(t *testing.T) {
	network := NewInmemNetwork()
	clock := newFakeClock()
	nodes := inmemNodes(t, network, 2, func(i int, o *Options) { o.Clock = clock })
	a, b := nodes[0], nodes[1]
	handled := make(chan string, 4)
	b.Handle(VerbRead, func(_ context.Context, m Inbound) ([]byte, error) {
		handled <- string(m.Payload)
		return m.Payload, nil
	})

	// Lose READ responses only: the handler runs, the caller times out.
	network.SetFault(func(from, to netip.AddrPort, verb Verb, response bool) Fault {
		return Fault{Drop: verb == VerbRead && response}
	})
	if _, err := a.Request(ctxTimeout(t, 100*time.Millisecond), b.Addr(), VerbRead, []byte("lost")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("request whose response is lost: %v, want ErrTimeout", err)
	}
	if got := <-handled; got != "lost" {
		t.Fatalf("handled %q", got)
	}

	// Delay requests from a by a second.
	network.SetFault(func(from, to netip.AddrPort, verb Verb, response bool) Fault {
		if from == a.Addr() {
			return Fault{Delay: time.Second}
		}
		return Fault{}
	})
	errc := make(chan error, 1)
	go func() {
		_, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbRead, []byte("late"))
		errc <- err
	}()
	waitFor(t, "the request to wait out its delay", func() bool { return clock.armed() == 1 })
	select {
	case got := <-handled:
		t.Fatalf("%q handled before its delay", got)
	default:
	}
	clock.Advance(time.Second)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	network.SetFault(nil)
}

// TestInmemRestart: a closed transport's address is free for a new one,
// which its peers reach as before.
func TestInmemRestart(t *testing.T) {
	network := NewInmemNetwork()
	nodes := inmemNodes(t, network, 2, nil)
	a, b := nodes[0], nodes[1]
	if _, err := network.NewTransport(testOptions(t, b.Addr().String())); err == nil {
		t.Fatal("two transports at one address")
	}
	b.Close()
	if _, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, nil); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("request to a closed transport: %v, want ErrUnreachable", err)
	}
	b2, err := network.NewTransport(testOptions(t, b.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	b2.Handle(VerbEcho, echo)
	if resp, err := a.Request(ctxTimeout(t, time.Minute), b.Addr(), VerbEcho, []byte("again")); err != nil || string(resp) != "again" {
		t.Fatalf("request to the restarted transport: %q, %v", resp, err)
	}
}

// A request sent under WithTrace reaches its handler with the session id;
// one sent without has none, and the payload is the sender's either way.
func TestTraceTravels(t *testing.T) {
	network := NewInmemNetwork()
	nodes := inmemNodes(t, network, 2, nil)
	type seen struct {
		trace   [16]byte
		traced  bool
		payload string
	}
	got := make(chan seen, 2)
	nodes[1].Handle(VerbEcho, func(_ context.Context, m Inbound) ([]byte, error) {
		got <- seen{m.Trace, m.Traced, string(m.Payload)}
		return m.Payload, nil
	})
	id := [16]byte{1, 2, 3, 15: 9}
	ctx := WithTrace(ctxTimeout(t, time.Second), id)
	if _, err := nodes[0].Request(ctx, nodes[1].Addr(), VerbEcho, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; !s.traced || s.trace != id || s.payload != "x" {
		t.Fatalf("traced request arrived as %+v", s)
	}
	if _, err := nodes[0].Request(ctxTimeout(t, time.Second), nodes[1].Addr(), VerbEcho, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.traced || s.payload != "y" {
		t.Fatalf("untraced request arrived as %+v", s)
	}
}
