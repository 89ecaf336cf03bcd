package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Kind is what an Entry changes.
type Kind uint8

const (
	// KindSchema is a schema change; Schema holds its encoding.
	KindSchema Kind = iota + 1
	// KindMember adds a member or replaces its record (tokens, status).
	KindMember
	// KindRemove removes member Member.HostID.
	KindRemove
	// KindSchemaReset replaces the whole schema with Schema, a
	// SchemaApplier snapshot: the first entry of a cluster bootstrapped
	// by a node that already had a schema (one that ran alone before), so
	// that nodes joining later learn it.
	KindSchemaReset
	// KindAuth is role changes submitted together (one statement's);
	// Auth holds them as auth.AppendChanges encodes them.
	KindAuth
	// KindAuthReset replaces the whole role state with Auth, an
	// auth.EncodeSnapshot: a node's roles of before the log carried them
	// (a role file without an index), handed to the log once.
	KindAuthReset
)

// Entry is one change of the cluster's metadata, as the log carries it.
type Entry struct {
	Kind Kind
	// Proposal identifies the proposal on the node that made it, so the
	// proposer's State hands the result of applying it to the waiting
	// caller. Zero when nobody waits.
	Proposal [16]byte
	Schema   []byte
	Auth     []byte
	Member   Member
}

// Bounds of a decoded entry: more than any real one needs, so that a
// corrupt or hostile length cannot make the decoder allocate.
const (
	entryVersion   = 1
	maxEntrySize   = 4 << 20
	maxNameLen     = 255
	maxTokens      = 1536
	entryHeaderLen = 2 + 16
)

// ErrBadEntry is wrapped by every decoding error.
var ErrBadEntry = errors.New("cluster: malformed metadata entry")

// AppendEntry appends e's encoding to dst.
func AppendEntry(dst []byte, e Entry) ([]byte, error) {
	dst = append(dst, entryVersion, byte(e.Kind))
	dst = append(dst, e.Proposal[:]...)
	switch e.Kind {
	case KindSchema, KindSchemaReset:
		if len(e.Schema) > maxEntrySize-entryHeaderLen {
			return nil, fmt.Errorf("cluster: schema change of %d bytes is too large", len(e.Schema))
		}
		dst = append(dst, e.Schema...)
	case KindAuth, KindAuthReset:
		if len(e.Auth) > maxEntrySize-entryHeaderLen {
			return nil, fmt.Errorf("cluster: role change of %d bytes is too large", len(e.Auth))
		}
		dst = append(dst, e.Auth...)
	case KindMember:
		m := e.Member
		addr := m.Addr.String()
		if len(m.DataCenter) > maxNameLen || len(m.Rack) > maxNameLen || len(m.Tokens) > maxTokens || !m.Addr.IsValid() {
			return nil, fmt.Errorf("cluster: member %s cannot be encoded", m.HostID)
		}
		dst = append(dst, m.HostID[:]...)
		dst = appendShort(dst, addr)
		dst = appendShort(dst, m.DataCenter)
		dst = appendShort(dst, m.Rack)
		dst = append(dst, byte(m.Status))
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(m.Tokens)))
		for _, t := range m.Tokens {
			dst = binary.BigEndian.AppendUint64(dst, uint64(t))
		}
	case KindRemove:
		dst = append(dst, e.Member.HostID[:]...)
	default:
		return nil, fmt.Errorf("cluster: entry kind %d", e.Kind)
	}
	return dst, nil
}

func appendShort(dst []byte, s string) []byte {
	return append(append(dst, byte(len(s))), s...)
}

// DecodeEntry decodes an entry. The Entry does not share b's memory.
func DecodeEntry(b []byte) (Entry, error) {
	var e Entry
	if len(b) > maxEntrySize {
		return e, fmt.Errorf("%w: %d bytes", ErrBadEntry, len(b))
	}
	if len(b) < entryHeaderLen {
		return e, fmt.Errorf("%w: %d bytes", ErrBadEntry, len(b))
	}
	if b[0] != entryVersion {
		return e, fmt.Errorf("%w: version %d", ErrBadEntry, b[0])
	}
	e.Kind = Kind(b[1])
	copy(e.Proposal[:], b[2:18])
	r := reader{b: b[entryHeaderLen:]}
	switch e.Kind {
	case KindSchema, KindSchemaReset:
		e.Schema = append([]byte(nil), r.b...)
		r.b = nil
	case KindAuth, KindAuthReset:
		e.Auth = append([]byte(nil), r.b...)
		r.b = nil
	case KindMember:
		copy(e.Member.HostID[:], r.next(16))
		addr := r.short()
		e.Member.DataCenter = r.short()
		e.Member.Rack = r.short()
		e.Member.Status = Status(r.byte())
		n := int(binary.BigEndian.Uint16(r.next(2)))
		if n > maxTokens {
			r.fail("%d tokens", n)
		}
		if r.err == nil {
			e.Member.Tokens = make([]int64, 0, min(n, len(r.b)/8))
		}
		for i := 0; i < n && r.err == nil; i++ {
			e.Member.Tokens = append(e.Member.Tokens, int64(binary.BigEndian.Uint64(r.next(8))))
		}
		if r.err == nil {
			ap, err := netip.ParseAddrPort(addr)
			if err != nil {
				r.fail("address %q", addr)
			}
			e.Member.Addr = ap
			if e.Member.Status < StatusJoining || e.Member.Status > StatusLeaving {
				r.fail("status %d", e.Member.Status)
			}
		}
	case KindRemove:
		copy(e.Member.HostID[:], r.next(16))
	default:
		r.fail("kind %d", e.Kind)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the entry", len(r.b))
	}
	return e, r.err
}

// reader reads an entry's fields; after the first error every read
// returns zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadEntry, fmt.Sprintf(format, args...))
	}
	r.b = nil
}

func (r *reader) next(n int) []byte {
	if len(r.b) < n {
		r.fail("truncated")
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte() byte { return r.next(1)[0] }

func (r *reader) short() string {
	n := int(r.byte())
	return string(r.next(n))
}
