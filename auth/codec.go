package auth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
)

// ErrCorrupt is bytes that are not an encoded change or snapshot.
var ErrCorrupt = errors.New("auth: corrupt encoding")

// Limits of the codec. Every length read is checked against them and
// against the bytes left, so a decoder allocates no more than its input
// (times a small constant) whatever the input says.
const (
	// MaxName bounds a role, keyspace or table name and an option's key
	// or value.
	MaxName = 1 << 16
	// maxHash bounds a salted hash (bcrypt's are 60 bytes).
	maxHash = 256
	// maxOptions bounds a role's OPTIONS map.
	maxOptions = 256
)

// The encoding of a change (all integers big-endian or uvarint):
//
//	op         1 byte
//	flags      1 byte: bits 0-3 Attrs, 4 Login, 5 Superuser, 6 IfExists
//	role       uvarint length, bytes
//	grantee    uvarint length, bytes
//	resource   uvarint length, bytes (Resource.Name; empty for none)
//	perms      2 bytes
//	hash       uvarint length, bytes
//	options    uvarint count, then count × (key, value), each a uvarint
//	           length and bytes, keys sorted
const (
	flagLogin     = 1 << 4
	flagSuperuser = 1 << 5
	flagIfExists  = 1 << 6
	flagsKnown    = byte(allAttrs) | flagLogin | flagSuperuser | flagIfExists
)

// AppendChange appends the encoding of c to dst. The encoding is
// deterministic: equal changes encode to equal bytes.
func AppendChange(dst []byte, c Change) []byte {
	flags := byte(c.Set & allAttrs)
	if c.Login {
		flags |= flagLogin
	}
	if c.Superuser {
		flags |= flagSuperuser
	}
	if c.IfExists {
		flags |= flagIfExists
	}
	dst = append(dst, byte(c.Op), flags)
	dst = appendBytes(dst, []byte(c.Role))
	dst = appendBytes(dst, []byte(c.Grantee))
	dst = appendBytes(dst, []byte(c.Resource.Name()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(c.Permissions))
	dst = appendBytes(dst, c.SaltedHash)
	dst = binary.AppendUvarint(dst, uint64(len(c.Options)))
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		dst = appendBytes(dst, []byte(k))
		dst = appendBytes(dst, []byte(c.Options[k]))
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// decoder reads an encoding; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("short input")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint(max uint64, what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad %s length", what)
		return 0
	}
	d.b = d.b[n:]
	if v > max {
		d.fail("%s length %d over %d", what, v, max)
		return 0
	}
	return v
}

func (d *decoder) bytes(max int, what string) []byte {
	n := d.uvarint(uint64(max), what)
	if d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < n {
		d.fail("%s of %d bytes past the end", what, n)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string(what string) string { return string(d.bytes(MaxName, what)) }

func (d *decoder) change() Change {
	var c Change
	c.Op = Op(d.byte())
	flags := d.byte()
	if d.err != nil {
		return c
	}
	if c.Op == 0 || c.Op >= numOps {
		d.fail("unknown op %d", c.Op)
	}
	if flags&^flagsKnown != 0 {
		d.fail("unknown flags 0x%02x", flags)
	}
	c.Set = Attrs(flags) & allAttrs
	c.Login = flags&flagLogin != 0
	c.Superuser = flags&flagSuperuser != 0
	c.IfExists = flags&flagIfExists != 0
	c.Role = d.string("role")
	c.Grantee = d.string("grantee")
	if res := d.string("resource"); res != "" && d.err == nil {
		r, err := ParseResource(res)
		if err != nil {
			d.fail("resource %q", res)
		}
		c.Resource = r
	}
	if len(d.b) < 2 {
		d.fail("short permissions")
		return c
	}
	c.Permissions = Permissions(binary.BigEndian.Uint16(d.b))
	d.b = d.b[2:]
	if c.Permissions&^AllPermissions != 0 {
		d.fail("unknown permissions 0x%04x", uint16(c.Permissions))
	}
	if h := d.bytes(maxHash, "hash"); len(h) > 0 {
		c.SaltedHash = slices.Clone(h)
	}
	n := d.uvarint(maxOptions, "options")
	prev := ""
	for i := uint64(0); i < n && d.err == nil; i++ {
		k, v := d.string("option key"), d.string("option value")
		if i > 0 && k <= prev {
			d.fail("options not sorted")
		}
		prev = k
		if c.Options == nil {
			c.Options = map[string]string{}
		}
		c.Options[k] = v
	}
	return c
}

// DecodeChange decodes one change that fills b exactly.
func DecodeChange(b []byte) (Change, error) {
	d := decoder{b: b}
	c := d.change()
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the change", len(d.b))
	}
	return c, d.err
}

// A snapshot is a state as the changes that rebuild it (State.Changes),
// with the index of the metadata log's entry it is as of:
//
//	magic    8 bytes "cqldauth"
//	version  1 byte (2; 1 had no index)
//	crc      4 bytes, CRC-32C of what follows
//	index    uvarint (version 2 only)
//	count    uvarint
//	changes  count × (uvarint length, change)
const (
	snapshotMagic   = "cqldauth"
	snapshotVersion = 2
	snapshotHeader  = len(snapshotMagic) + 1 + 4
	// minChange is the shortest encoded change, which bounds the count a
	// snapshot of n bytes can claim.
	minChange = 1 + 2 + 3 + 2 + 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeSnapshot encodes s, as of no index.
func EncodeSnapshot(s *State) []byte { return encodeSnapshot(s, 0) }

func encodeSnapshot(s *State, index uint64) []byte {
	changes := s.Changes()
	body := binary.AppendUvarint(nil, index)
	body = binary.AppendUvarint(body, uint64(len(changes)))
	var one []byte
	for _, c := range changes {
		one = AppendChange(one[:0], c)
		body = appendBytes(body, one)
	}
	out := make([]byte, 0, snapshotHeader+len(body))
	out = append(out, snapshotMagic...)
	out = append(out, snapshotVersion)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
	return append(out, body...)
}

// DecodeSnapshot decodes a snapshot and applies its changes to an empty
// state. A change that does not apply is corruption too.
func DecodeSnapshot(b []byte) (*State, error) {
	s, _, _, err := decodeSnapshot(b)
	return s, err
}

// decodeSnapshot decodes a snapshot of either version, with its index (0
// for version 1).
func decodeSnapshot(b []byte) (_ *State, index uint64, version byte, _ error) {
	if len(b) < snapshotHeader || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, 0, 0, fmt.Errorf("%w: not a snapshot", ErrCorrupt)
	}
	version = b[len(snapshotMagic)]
	if version != 1 && version != snapshotVersion {
		return nil, 0, 0, fmt.Errorf("%w: snapshot version %d, want %d", ErrCorrupt, version, snapshotVersion)
	}
	body := b[snapshotHeader:]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(b[snapshotHeader-4:]); got != want {
		return nil, 0, 0, fmt.Errorf("%w: snapshot checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	d := decoder{b: body}
	if version >= 2 {
		index = d.uvarint(1<<63, "index")
	}
	n := d.uvarint(uint64(len(body)/minChange), "change count")
	s := Empty()
	for i := uint64(0); i < n && d.err == nil; i++ {
		c, err := DecodeChange(d.bytes(len(body), "change"))
		if d.err != nil {
			break
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("auth: snapshot change %d: %w", i, err)
		}
		if s, err = s.Apply(c); err != nil {
			return nil, 0, 0, fmt.Errorf("%w: snapshot change %d does not apply: %v", ErrCorrupt, i, err)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last change", len(d.b))
	}
	if d.err != nil {
		return nil, 0, 0, d.err
	}
	return s, index, version, nil
}

// maxChanges bounds the changes of one statement (AppendChanges): CREATE
// ROLE's two are the most a statement makes.
const maxChanges = 64

// AppendChanges appends the encoding of a list of changes, the changes one
// statement submits together: a uvarint count, then each change as a
// uvarint length and its encoding.
func AppendChanges(dst []byte, cs []Change) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(cs)))
	var one []byte
	for _, c := range cs {
		one = AppendChange(one[:0], c)
		dst = appendBytes(dst, one)
	}
	return dst
}

// DecodeChanges decodes what AppendChanges encoded, filling b exactly.
func DecodeChanges(b []byte) ([]Change, error) {
	d := decoder{b: b}
	n := d.uvarint(min(maxChanges, uint64(len(b)/minChange)), "change count")
	var out []Change
	for i := uint64(0); i < n && d.err == nil; i++ {
		one := d.bytes(len(b), "change")
		if d.err != nil {
			break
		}
		c, err := DecodeChange(one)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		out = append(out, c)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the last change", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}
