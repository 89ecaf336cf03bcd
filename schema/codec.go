package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A Change's encoding, version 1, all integers big-endian:
//
//	version     1 byte, 1
//	keyspace    uint16 length, bytes
//	statement   uint32 length (at most MaxStatement), bytes
//	time        int64, µs
//	table id    16 bytes
//	centers     uint16 count (at most MaxDataCenters), each uint16 length, bytes
//
// Lengths are checked against what is left before anything is read, so a
// short or corrupt entry is an error, never a panic or a large allocation.
// An encoding is canonical: Decode accepts exactly what Append makes.
const codecVersion = 1

// Limits on what a Change carries.
const (
	// MaxStatement is the longest statement text a change carries.
	MaxStatement = 1 << 20
	// MaxDataCenters is the most data centers a change names.
	MaxDataCenters = 1024
)

// ErrCorrupt is returned, wrapped, for bytes that are not a Change.
var ErrCorrupt = errors.New("schema: corrupt change")

// Append appends ch's encoding to b. It fails for a change over the
// limits (a statement over MaxStatement, a name over 64 KiB, more than
// MaxDataCenters centers), which Decode would refuse.
func (ch *Change) Append(b []byte) ([]byte, error) {
	switch {
	case len(ch.Statement) > MaxStatement:
		return nil, fmt.Errorf("schema: change statement of %d bytes is over the %d-byte limit", len(ch.Statement), MaxStatement)
	case len(ch.DataCenters) > MaxDataCenters:
		return nil, fmt.Errorf("schema: change names %d data centers, over the limit of %d", len(ch.DataCenters), MaxDataCenters)
	case len(ch.Keyspace) > 0xffff:
		return nil, fmt.Errorf("schema: change keyspace of %d bytes is too long", len(ch.Keyspace))
	}
	b = append(b, codecVersion)
	b = appendShort(b, ch.Keyspace)
	b = binary.BigEndian.AppendUint32(b, uint32(len(ch.Statement)))
	b = append(b, ch.Statement...)
	b = binary.BigEndian.AppendUint64(b, uint64(ch.Time))
	b = append(b, ch.TableID[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(ch.DataCenters)))
	for _, dc := range ch.DataCenters {
		if len(dc) > 0xffff {
			return nil, fmt.Errorf("schema: change data center name of %d bytes is too long", len(dc))
		}
		b = appendShort(b, dc)
	}
	return b, nil
}

func appendShort(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Decode decodes a change that Append encoded: the whole of b, which it
// does not keep.
func Decode(b []byte) (Change, error) {
	d := decoder{b: b}
	var ch Change
	if v := d.byte(); d.err == nil && v != codecVersion {
		return Change{}, fmt.Errorf("%w: unknown version %d", ErrCorrupt, v)
	}
	ch.Keyspace = d.short()
	ch.Statement = d.bytes(int(d.uint32()), MaxStatement, "statement")
	ch.Time = int64(d.uint64())
	copy(ch.TableID[:], d.take(16))
	n := int(d.uint16())
	if d.err == nil && n > MaxDataCenters {
		d.fail("%d data centers, over the limit of %d", n, MaxDataCenters)
	}
	for i := 0; i < n && d.err == nil; i++ {
		ch.DataCenters = append(ch.DataCenters, d.short())
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the change", len(d.b))
	}
	if d.err != nil {
		return Change{}, d.err
	}
	return ch, nil
}

// decoder reads b from the front; after the first error every read
// returns zero values and err keeps that error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("%d bytes needed, %d left", n, len(d.b))
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) byte() byte {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) uint16() uint16 {
	if p := d.take(2); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) uint32() uint32 {
	if p := d.take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) uint64() uint64 {
	if p := d.take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) short() string { return d.bytes(int(d.uint16()), 0xffff, "name") }

// bytes reads n bytes as a string, n at most max.
func (d *decoder) bytes(n, max int, what string) string {
	if d.err == nil && n > max {
		d.fail("%s of %d bytes, over the limit of %d", what, n, max)
	}
	return string(d.take(n))
}
