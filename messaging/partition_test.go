package messaging

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestTCPPartition: a node partitioned from two peers neither reaches them
// nor hears from them, requests across the cut time out and one-way
// messages are lost, each drop counted; the peers still reach each other;
// Heal restores every link on the connections already open.
func TestTCPPartition(t *testing.T) {
	a := listenTCP(t, "127.0.0.1:0", nil)
	b := listenTCP(t, "127.0.0.2:0", nil)
	c := listenTCP(t, "127.0.0.3:0", nil)
	oneWay := make(chan netip.AddrPort, 10)
	for _, n := range []*TCPTransport{a, b, c} {
		n.Handle(VerbEcho, echo)
		n.Handle(VerbGossip, func(_ context.Context, m Inbound) ([]byte, error) {
			oneWay <- m.From
			return nil, nil
		})
	}
	ask := func(from, to *TCPTransport) error {
		_, err := from.Request(ctxTimeout(t, 300*time.Millisecond), to.Addr(), VerbEcho, []byte("x"))
		return err
	}
	// Connections open before the partition stay open across it.
	for _, pair := range [][2]*TCPTransport{{a, b}, {b, a}, {c, a}} {
		if err := ask(pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}

	a.Partition([]netip.AddrPort{b.Addr(), netip.AddrPortFrom(c.Addr().Addr(), 0)})
	if got := a.Partitioned(); len(got) != 2 {
		t.Fatalf("Partitioned() = %v", got)
	}
	for _, pair := range [][2]*TCPTransport{{a, b}, {b, a}, {a, c}, {c, a}} {
		if err := ask(pair[0], pair[1]); !errors.Is(err, ErrTimeout) {
			t.Fatalf("%s to %s across the partition: %v, want ErrTimeout", pair[0].Addr(), pair[1].Addr(), err)
		}
	}
	if err := ask(b, c); err != nil {
		t.Fatalf("between the peers on one side: %v", err)
	}
	// a to b: dropped as a writes it; b to a: dropped as a reads it.
	if got := dropped(a.metrics, VerbEcho, b.Addr(), DropFault); got != 2 {
		t.Fatalf("a dropped %v echo messages to and from b, want 2", got)
	}
	for _, pair := range [][2]*TCPTransport{{a, b}, {b, a}} {
		if err := pair[0].Send(context.Background(), pair[1].Addr(), VerbGossip, []byte("lost")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both one-way messages dropped on a", func() bool {
		return dropped(a.metrics, VerbGossip, b.Addr(), DropFault) == 2
	})

	a.Heal()
	if got := a.Partitioned(); len(got) != 0 {
		t.Fatalf("Partitioned() after Heal = %v", got)
	}
	for _, pair := range [][2]*TCPTransport{{a, b}, {b, a}, {a, c}, {c, a}} {
		if err := ask(pair[0], pair[1]); err != nil {
			t.Fatalf("%s to %s after Heal: %v", pair[0].Addr(), pair[1].Addr(), err)
		}
	}
	if err := b.Send(context.Background(), a.Addr(), VerbGossip, []byte("delivered")); err != nil {
		t.Fatal(err)
	}
	if from := <-oneWay; from != b.Addr() {
		t.Fatalf("one-way message from %s, want %s", from, b.Addr())
	}
	select {
	case from := <-oneWay:
		t.Fatalf("a message sent across the partition (from %s) arrived", from)
	default:
	}
}

// TestTCPPartitionQueued: messages already queued when the partition
// starts are dropped when their turn to be written comes, a request and a
// response alike.
func TestTCPPartitionQueued(t *testing.T) {
	const delay = 10 * time.Millisecond
	clock := newFakeClock()
	a := listenTCP(t, "127.0.0.1:0", func(o *Options) { o.Clock, o.InjectedDelay = clock, delay })
	b := listenTCP(t, "127.0.0.2:0", nil)
	a.Handle(VerbEcho, echo)
	b.Handle(VerbEcho, echo)
	// Open both connections first.
	errc := make(chan error, 2)
	go func() {
		_, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, nil)
		errc <- err
	}()
	waitFor(t, "a's first request to wait for its delay", func() bool { return clock.armed() == 1 })
	clock.Advance(delay)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	// A request from a and a response from a, both waiting for a's delay.
	go func() {
		_, err := a.Request(ctxTimeout(t, 500*time.Millisecond), b.Addr(), VerbEcho, []byte("request"))
		errc <- err
	}()
	go func() {
		_, err := b.Request(ctxTimeout(t, 500*time.Millisecond), a.Addr(), VerbEcho, []byte("response"))
		errc <- err
	}()
	waitFor(t, "a's request and response to wait", func() bool { return queuedBytes(a, b.Addr()) > 0 && clock.armed() == 2 })
	a.Partition([]netip.AddrPort{b.Addr()})
	clock.Advance(delay)
	for range 2 {
		if err := <-errc; !errors.Is(err, ErrTimeout) {
			t.Fatalf("a message queued before the partition: %v, want ErrTimeout", err)
		}
	}
	if got := dropped(a.metrics, VerbEcho, b.Addr(), DropFault); got != 2 {
		t.Fatalf("a dropped %v messages, want 2", got)
	}
	if !slices.Equal(a.Partitioned(), []netip.AddrPort{b.Addr()}) {
		t.Fatalf("Partitioned() = %v", a.Partitioned())
	}
}
