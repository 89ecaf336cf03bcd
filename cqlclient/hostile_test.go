package cqlclient

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// TestHostileServerAnswer: a server that answers a query with a 16-byte
// ROWS body claiming 2^31-1 rows gets an error for that query; the client
// neither tries to allocate the rows nor loses the connection, and the
// next query on it is answered.
func TestHostileServerAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer func() { <-done }()
	go func() {
		defer close(done)
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serveHostile(nc)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, l.Addr().String(), Options{Version: primitive.ProtocolVersion4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Query(ctx, "SELECT * FROM t", nil); err == nil || !strings.Contains(err.Error(), "rows need at least") {
		t.Fatalf("hostile ROWS answered %v", err)
	}
	r, err := c.Query(ctx, "SELECT * FROM t", nil)
	if err != nil {
		t.Fatalf("the connection did not survive: %v", err)
	}
	if _, ok := r.(*message.VoidResult); !ok {
		t.Fatalf("second query answered %v", r)
	}
}

// serveHostile plays a server: SUPPORTED, READY, then a first QUERY gets
// the hostile ROWS body and every later one VOID.
func serveHostile(nc net.Conn) {
	br := bufio.NewReader(nc)
	for n := 0; ; n++ {
		var hdr [protocol.HeaderLen]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		h, _ := protocol.ParseHeader(hdr[:])
		if _, err := br.Discard(h.BodyLen); err != nil {
			return
		}
		var op primitive.OpCode
		var body []byte
		switch h.OpCode {
		case primitive.OpCodeOptions:
			op, body = primitive.OpCodeSupported, []byte{0, 0}
		case primitive.OpCodeStartup:
			op = primitive.OpCodeReady
		case primitive.OpCodeQuery:
			op, body = primitive.OpCodeResult, []byte{0, 0, 0, 1} // VOID
			if n == 2 {
				body = []byte{0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}
			}
		default:
			return
		}
		out := []byte{0x80 | byte(h.Version), 0, 0, 0, byte(op)}
		binary.BigEndian.PutUint16(out[2:], uint16(h.Stream))
		out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
		if _, err := nc.Write(append(out, body...)); err != nil {
			return
		}
	}
}
