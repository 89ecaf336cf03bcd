package gossip

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/messaging"
)

// transportPair returns two gossip transports on one InmemNetwork, without
// memberlist: tests play both sides of memberlist's stream patterns.
func transportPair(t *testing.T) (dialer, acceptor *transport) {
	t.Helper()
	net := messaging.NewInmemNetwork()
	mk := func(k int) *transport {
		mt := inmemTransport(t, net, k, hostID(k))
		tr := newTransport(mt, time.Second, NewMetrics(prometheus.NewRegistry()), testLogger())
		t.Cleanup(func() {
			tr.Shutdown()
			mt.Close()
		})
		return tr
	}
	return mk(1), mk(2)
}

func testLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// accept plays memberlist's handleConn: it reads the whole request, writes
// answer in two writes and closes, and returns what it read.
func accept(t *testing.T, tr *transport, answer []byte) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		c := <-tr.StreamCh()
		req, err := io.ReadAll(c)
		if err != nil {
			t.Errorf("acceptor read: %v", err)
		}
		half := len(answer) / 2
		c.Write(answer[:half])
		c.Write(answer[half:])
		c.Close()
		got <- req
	}()
	return got
}

func TestStreamExchange(t *testing.T) {
	d, a := transportPair(t)
	answer := bytes.Repeat([]byte{6, 1, 2}, 1000)
	got := accept(t, a, answer)
	c, err := d.DialTimeout(a.self.String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{6, 'p', 'u'})
	c.Write([]byte("sh"))
	resp, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(resp, answer) {
		t.Fatalf("dialer read %d bytes, %v; want %d", len(resp), err, len(answer))
	}
	if req := <-got; string(req) != "\x06push" {
		t.Errorf("acceptor read %q", req)
	}
	if _, err := c.Write([]byte{1}); !errors.Is(err, errExchanged) {
		t.Errorf("a write after the exchange: %v, want errExchanged", err)
	}
	c.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a read after Close: %v", err)
	}
}

func TestStreamOneWay(t *testing.T) {
	d, a := transportPair(t)
	got := accept(t, a, nil)
	c, _ := d.DialTimeout(a.self.String(), time.Second)
	c.Write([]byte{8, 'u', 's', 'e', 'r'})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if req := <-got; string(req) != "\x08user" {
		t.Errorf("acceptor read %q", req)
	}
}

func TestStreamUnansweredTimesOut(t *testing.T) {
	d, a := transportPair(t)
	held := make(chan net.Conn, 1)
	go func() { held <- <-a.StreamCh() }()
	c, _ := d.DialTimeout(a.self.String(), time.Second)
	c.SetDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write([]byte{6, 0})
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, messaging.ErrTimeout) {
		t.Errorf("an unanswered stream: %v, want ErrTimeout", err)
	}
	(<-held).Close()
}

func TestStreamBounds(t *testing.T) {
	d, a := transportPair(t)
	c, _ := d.DialTimeout(a.self.String(), time.Second)
	if _, err := c.Write(make([]byte, maxStreamSize+1)); err == nil {
		t.Error("a write over maxStreamSize was buffered")
	}
	if _, err := d.WriteTo(make([]byte, maxPacketSize+1), a.self.String()); err == nil {
		t.Error("a packet over maxPacketSize was sent")
	}
	if _, err := d.WriteTo([]byte{0}, "not an address"); err == nil {
		t.Error("a packet to a bad address was sent")
	}
}

func TestPacket(t *testing.T) {
	d, a := transportPair(t)
	if _, err := d.WriteTo([]byte{0, 1, 2}, a.self.String()); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-a.PacketCh():
		if !bytes.Equal(p.Buf, []byte{0, 1, 2}) || p.From.String() != d.self.String() {
			t.Errorf("received %x from %s", p.Buf, p.From)
		}
	case <-time.After(waitLimit):
		t.Fatal("no packet")
	}
}

func TestShutdownEndsWaitingStreams(t *testing.T) {
	d, a := transportPair(t)
	held := make(chan net.Conn, 1)
	go func() { held <- <-a.StreamCh() }()
	c, _ := d.DialTimeout(a.self.String(), time.Second)
	c.SetDeadline(time.Now().Add(waitLimit))
	c.Write([]byte{6, 0})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	conn := <-held // the acceptor's handler now waits for its Close
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Error("the dialer's read succeeded after the acceptor shut down")
	}
	conn.Close()
	if _, err := d.DialTimeout(a.self.String(), time.Second); err != nil {
		t.Fatal("the dialer's transport is still open:", err)
	}
	d.Shutdown()
	if _, err := d.DialTimeout(a.self.String(), time.Second); err == nil {
		t.Error("dial after Shutdown succeeded")
	}
}

// TestUnreachablePacketIsRemoteFailure: memberlist takes a failed send
// for the peer's failure only as a *net.OpError.
func TestUnreachablePacketIsRemoteFailure(t *testing.T) {
	d, _ := transportPair(t)
	_, err := d.WriteTo([]byte{0}, "127.0.0.99:7000")
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" || !errors.Is(err, messaging.ErrUnreachable) {
		t.Errorf("a packet to no node: %#v, want a *net.OpError writing, wrapping ErrUnreachable", err)
	}
}
