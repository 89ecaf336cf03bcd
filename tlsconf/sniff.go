package tlsconf

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
)

// RecordHandshake is the content type of a TLS handshake record: the first
// byte a TLS client sends. Neither a CQL frame (which starts with its
// protocol version) nor cqld's internode hello (which starts with "CQLM")
// starts with it.
const RecordHandshake = 0x16

// PeekFirstByte waits for a connection's first byte and returns it,
// leaving it unread (MSG_PEEK), so that whatever serves the connection
// next reads it from the start. It honours nc's read deadline.
func PeekFirstByte(nc net.Conn) (byte, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, errors.New("tlsconf: not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		b    [1]byte
		n    int
		rerr error
	)
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		return rerr != syscall.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return b[0], nil
}

// rawCloser is a TLS connection whose Close closes the socket at once,
// without the close_notify alert crypto/tls would otherwise try to send
// for up to five seconds to a peer that may not be reading.
type rawCloser struct {
	*tls.Conn
	raw net.Conn
}

// Close implements net.Conn.
func (c rawCloser) Close() error { return c.raw.Close() }

// CloseAbruptly wraps a TLS connection so that Close closes raw, its
// socket, at once.
func CloseAbruptly(tc *tls.Conn, raw net.Conn) net.Conn { return rawCloser{tc, raw} }
