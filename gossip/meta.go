package gossip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/hashicorp/memberlist"
)

// Meta is what a node tells the others about itself through gossip: what
// changes often and needs no agreement. Topology (tokens, membership,
// status in the ring) comes from the metadata log, not from here.
type Meta struct {
	// RPCAddr is broadcast_rpc_address, where clients connect, and
	// NativePort native_transport_port.
	RPCAddr    netip.Addr
	NativePort uint16
	DataCenter string
	Rack       string
	// ReleaseVersion is the version the node reports in system.peers.
	ReleaseVersion string
	// SchemaVersion is the UUID of the schema the node has applied.
	SchemaVersion [16]byte
	// Load is the bytes of data the node holds.
	Load uint64
	// Status is a short word for operators ("NORMAL", "JOINING", …).
	Status string
}

// metaVersion is the encoding version AppendMeta writes. The layout is
// frozen: a later version only appends fields after version 1's, so a
// node reads the version-1 prefix of a newer peer's metadata and ignores
// the rest.
const metaVersion = 1

// MaxMetaSize bounds an encoded Meta: memberlist's node metadata limit,
// less the byte of gossip's own flags before it (see nodeMeta).
const MaxMetaSize = memberlist.MetaMaxSize - 1

// flagLeaving in a node's metadata flags says it is leaving the cluster:
// memberlist reports a node that left and a node that died alike, so a
// leaving node first spreads this, and its peers take its death next as
// its leave.
const flagLeaving byte = 1

// appendNodeMeta appends memberlist's node metadata: gossip's flags byte,
// then the encoded Meta.
func appendNodeMeta(dst []byte, flags byte, meta []byte) []byte {
	return append(append(dst, flags), meta...)
}

// decodeNodeMeta reads what appendNodeMeta wrote. It never keeps b.
func decodeNodeMeta(b []byte) (flags byte, m Meta, err error) {
	if len(b) == 0 {
		return 0, m, errors.New("gossip: node metadata is empty")
	}
	m, err = DecodeMeta(b[1:])
	return b[0], m, err
}

var errMetaTooLarge = errors.New("gossip: node metadata too large")

// AppendMeta appends m's encoding to dst: all integers big-endian,
//
//	[1 version] [1 n][n bytes rpc address: 0, 4 or 16] [2 native port]
//	[1 n][n data center] [1 n][n rack] [1 n][n release version]
//	[16 schema version] [8 load] [1 n][n status]
//
// It fails when a string is over 255 bytes or the whole over MaxMetaSize.
func AppendMeta(dst []byte, m Meta) ([]byte, error) {
	start := len(dst)
	dst = append(dst, metaVersion)
	var addr []byte
	if m.RPCAddr.IsValid() {
		addr = m.RPCAddr.WithZone("").AsSlice()
	}
	dst = append(dst, byte(len(addr)))
	dst = append(dst, addr...)
	dst = binary.BigEndian.AppendUint16(dst, m.NativePort)
	var err error
	for _, f := range [...]struct{ name, s string }{{"data center", m.DataCenter}, {"rack", m.Rack}, {"release version", m.ReleaseVersion}} {
		if dst, err = appendString(dst, f.name, f.s); err != nil {
			return dst[:start], err
		}
	}
	dst = append(dst, m.SchemaVersion[:]...)
	dst = binary.BigEndian.AppendUint64(dst, m.Load)
	if dst, err = appendString(dst, "status", m.Status); err != nil {
		return dst[:start], err
	}
	if n := len(dst) - start; n > MaxMetaSize {
		return dst[:start], fmt.Errorf("%w: %d bytes, over %d", errMetaTooLarge, n, MaxMetaSize)
	}
	return dst, nil
}

func appendString(dst []byte, name, s string) ([]byte, error) {
	if len(s) > 255 {
		return dst, fmt.Errorf("%w: %s of %d bytes, over 255", errMetaTooLarge, name, len(s))
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...), nil
}

// DecodeMeta reads a Meta that AppendMeta wrote, of this version or a
// later one. It never keeps b.
func DecodeMeta(b []byte) (Meta, error) {
	var m Meta
	if len(b) > MaxMetaSize {
		return m, fmt.Errorf("gossip: node metadata of %d bytes, over %d", len(b), MaxMetaSize)
	}
	r := metaReader{b: b}
	version := r.byte()
	if r.err == nil && version < 1 {
		return m, fmt.Errorf("gossip: node metadata version %d", version)
	}
	switch addr := r.bytes(int(r.byte())); len(addr) {
	case 0:
	case 4, 16:
		m.RPCAddr, _ = netip.AddrFromSlice(addr)
	default:
		r.fail(fmt.Errorf("gossip: node metadata rpc address of %d bytes", len(addr)))
	}
	m.NativePort = binary.BigEndian.Uint16(r.bytes(2))
	m.DataCenter = string(r.bytes(int(r.byte())))
	m.Rack = string(r.bytes(int(r.byte())))
	m.ReleaseVersion = string(r.bytes(int(r.byte())))
	copy(m.SchemaVersion[:], r.bytes(16))
	m.Load = binary.BigEndian.Uint64(r.bytes(8))
	m.Status = string(r.bytes(int(r.byte())))
	if r.err != nil {
		return Meta{}, r.err
	}
	if version == metaVersion && len(r.b) > 0 {
		return Meta{}, fmt.Errorf("gossip: node metadata has %d bytes past its end", len(r.b))
	}
	return m, nil
}

// metaReader reads fields off b; after the first short read every field
// reads as zero bytes and err says what was short.
type metaReader struct {
	b   []byte
	err error
}

var zeros [16]byte

func (r *metaReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *metaReader) byte() byte {
	if b := r.bytes(1); len(b) == 1 {
		return b[0]
	}
	return 0
}

// bytes returns the next n bytes, or n zero bytes (n ≤ 16) once short.
func (r *metaReader) bytes(n int) []byte {
	if r.err == nil && n > len(r.b) {
		r.fail(fmt.Errorf("gossip: node metadata truncated: %d bytes wanted, %d left", n, len(r.b)))
	}
	if r.err != nil {
		return zeros[:min(n, len(zeros))]
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
