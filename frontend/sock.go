package frontend

import (
	"net"

	"github.com/panjf2000/gnet/v2"
)

// sock is what a connection's state machine (conn.go, write.go) uses of
// its socket: the calls it makes of a gnet.Conn. A plaintext connection
// is a gnet.Conn on an event loop; a TLS connection is a tlsSock driven by
// goroutines of its own (tls.go), which keeps gnet's contract: the
// Reader calls and Write/Writev are made by one goroutine at a time (the
// one running onTraffic), bytes from Peek live until Discard, Write copies
// what the socket does not take at once, Wake makes onTraffic run again
// soon on that goroutine, and Wake and Close are safe from any goroutine.
type sock interface {
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	InboundBuffered() int
	OutboundBuffered() int
	Write(b []byte) (int, error)
	Writev(bs [][]byte) (int, error)
	Wake(cb gnet.AsyncCallback) error
	Close() error
	RemoteAddr() net.Addr
}

var _ sock = gnet.Conn(nil)
