package messaging

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"unicode/utf8"
)

// The handshake (drawn in doc.go) is one hello each way before any segment:
// the dialer's initiate, then the acceptor's accept or refuse. Its layout is
// the same in every version, so a peer of another version can still read a
// refusal.
const (
	helloMagic     = "CQLM"
	helloPrefixLen = 10 // magic, version, kind, flags, reason, body length
	helloCRCLen    = 4
	maxHelloBody   = 4 << 10
	hostIDLen      = 16

	helloInitiate = 1
	helloAccept   = 2
	helloRefuse   = 3

	// Flags of an initiate.
	helloLZ4   = 1 << 0 // the connection's segments are LZ4-compressed
	helloLarge = 1 << 1 // the connection carries the dialer's large messages
	helloFlags = helloLZ4 | helloLarge

	// Reasons of a refuse.
	refuseCluster = 1
	refuseVersion = 2
	refuseBad     = 3
)

type hello struct {
	version byte
	kind    byte
	flags   byte
	reason  byte
	cluster string
	hostID  [hostIDLen]byte
	addr    netip.AddrPort // the sender's internode address
	detail  string         // a refusal's explanation
}

func appendHello(dst []byte, h *hello) []byte {
	start := len(dst)
	dst = append(dst, helloMagic...)
	dst = append(dst, h.version, h.kind, h.flags, h.reason, 0, 0)
	body := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.cluster)))
	dst = append(dst, h.cluster...)
	dst = append(dst, h.hostID[:]...)
	addr := h.addr.String()
	dst = append(dst, byte(len(addr)))
	dst = append(dst, addr...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.detail)))
	dst = append(dst, h.detail...)
	binary.BigEndian.PutUint16(dst[body-2:], uint16(len(dst)-body))
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

// checkHelloPrefix checks the fixed start of a hello and returns the length
// of the whole hello. Garbage fails here, before waiting for more bytes.
func checkHelloPrefix(p []byte) (int, error) {
	if len(p) < helloPrefixLen {
		return 0, fmt.Errorf("%w: %d-byte hello", ErrHandshake, len(p))
	}
	if string(p[:len(helloMagic)]) != helloMagic {
		return 0, fmt.Errorf("%w: bad magic %x", ErrHandshake, p[:len(helloMagic)])
	}
	n := int(binary.BigEndian.Uint16(p[helloPrefixLen-2:]))
	if n > maxHelloBody {
		return 0, fmt.Errorf("%w: %d-byte hello body, limit %d", ErrHandshake, n, maxHelloBody)
	}
	return helloPrefixLen + n + helloCRCLen, nil
}

// decodeHello decodes one whole hello. It never panics.
func decodeHello(b []byte) (hello, error) {
	n, err := checkHelloPrefix(b)
	if err != nil {
		return hello{}, err
	}
	if len(b) != n {
		return hello{}, fmt.Errorf("%w: hello of %d bytes, its header says %d", ErrHandshake, len(b), n)
	}
	if got, want := crc32.ChecksumIEEE(b[:n-helloCRCLen]), binary.BigEndian.Uint32(b[n-helloCRCLen:]); got != want {
		return hello{}, fmt.Errorf("%w: hello CRC32 %08x, received %08x", ErrHandshake, got, want)
	}
	h := hello{version: b[4], kind: b[5], flags: b[6], reason: b[7]}
	r := byteReader{b: b[helloPrefixLen : n-helloCRCLen]}
	cluster := r.next(int(r.uint16()))
	copy(h.hostID[:], r.next(hostIDLen))
	addr := r.next(int(r.byte()))
	detail := r.next(int(r.uint16()))
	if r.short || len(r.b) != 0 {
		return hello{}, fmt.Errorf("%w: hello body does not match its fields", ErrHandshake)
	}
	if !utf8.Valid(cluster) || !utf8.Valid(detail) {
		return hello{}, fmt.Errorf("%w: hello text is not UTF-8", ErrHandshake)
	}
	h.cluster, h.detail = string(cluster), string(detail)
	if h.addr, err = netip.ParseAddrPort(string(addr)); err != nil {
		return hello{}, fmt.Errorf("%w: hello address: %w", ErrHandshake, err)
	}
	switch {
	case h.kind < helloInitiate || h.kind > helloRefuse:
		return hello{}, fmt.Errorf("%w: hello kind %d", ErrHandshake, h.kind)
	case h.flags&^helloFlags != 0:
		return hello{}, fmt.Errorf("%w: hello flags %#02x", ErrHandshake, h.flags)
	case (h.kind == helloRefuse) != (h.reason != 0):
		return hello{}, fmt.Errorf("%w: hello kind %d with reason %d", ErrHandshake, h.kind, h.reason)
	}
	return h, nil
}

// readHello reads one hello from r: a peer that sends garbage fails after
// helloPrefixLen bytes.
func readHello(r io.Reader) (hello, error) {
	buf := make([]byte, helloPrefixLen, helloPrefixLen+maxHelloBody+helloCRCLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return hello{}, fmt.Errorf("%w: reading hello: %w", ErrHandshake, err)
	}
	n, err := checkHelloPrefix(buf)
	if err != nil {
		return hello{}, err
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf[helloPrefixLen:]); err != nil {
		return hello{}, fmt.Errorf("%w: reading hello: %w", ErrHandshake, err)
	}
	return decodeHello(buf)
}

// byteReader reads big-endian fields; past the end it returns zeros and
// sets short.
type byteReader struct {
	b     []byte
	short bool
}

func (r *byteReader) next(n int) []byte {
	if n > len(r.b) {
		r.short, r.b = true, nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *byteReader) byte() byte {
	if v := r.next(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *byteReader) uint16() uint16 {
	if v := r.next(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}
