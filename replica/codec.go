package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/storage"
)

// Internode encodings of the remote replica's verbs, version 1. Frozen
// once peers of different builds talk; a change is a new version byte.
// Every message starts with its version byte.
//
//	read command (VerbRead request):
//	  version, flags (1 byte: 0x01 digest), table id (16), key (bytes),
//	  slice
//	range command (VerbRangeRead request):
//	  version, table id (16), start, end (8 bytes each, big-endian
//	  signed), flags (1 byte: 0x01 has a resume partition, 0x02 an index
//	  query), after (bytes, with 0x01), index name and value (bytes each,
//	  with 0x02), slice, max partitions (uvarint), max bytes (uvarint)
//	partition (VerbRead answer):
//	  version, partition
//	digest (VerbRead answer to a digest command):
//	  version, digest (storage.DigestSize bytes)
//	partitions (VerbRangeRead answer):
//	  version, more (1 byte, 0 or 1), count (uvarint), count partitions
//	mutation (VerbMutation request; its answer with counters):
//	  version, count (uvarint), count updates (mutation.Append's encoding)
//	truncate (VerbTruncate request):
//	  version, table id (16)
//
//	partition := key (bytes), kv count (uvarint), kv count times key
//	             (bytes) and cell (bytes)
//	slice     := start bound, end bound
//	bound     := 0 (open) | 1, prefix (values), inclusive (1 byte, 0 or 1)
//	bytes     := uvarint length, that many bytes
//	values    := uvarint count, count times bytes
//
// Decoders check every length against what is left and cap every count,
// so no claim in a message makes them allocate more than the message's own
// size; a decoded partition is checked against its table
// (storage.Table.CheckPartition) before anything trusts its keys.
const codecV1 = 1

// Caps of decoded counts, above what any cqld peer sends.
const (
	maxPageCount = 1 << 20
)

// ErrBadMessage reports an internode payload the replica codecs cannot
// read.
var ErrBadMessage = errors.New("replica: malformed internode message")

// ReadCommand is a single-partition read sent to a replica.
type ReadCommand struct {
	Table  [16]byte
	Key    []byte
	Slice  storage.Slice
	Digest bool // answer storage.PartitionDigest of the partition
}

// AppendReadCommand appends c's encoding to dst.
func AppendReadCommand(dst []byte, c *ReadCommand) []byte {
	var flags byte
	if c.Digest {
		flags |= 0x01
	}
	dst = append(dst, codecV1, flags)
	dst = append(dst, c.Table[:]...)
	dst = wire.AppendBytes(dst, c.Key)
	return wire.AppendSlice(dst, c.Slice)
}

// DecodeReadCommand decodes a read command; its slices alias b.
func DecodeReadCommand(b []byte) (*ReadCommand, error) {
	r := newReader(b)
	r.version()
	flags := r.Byte()
	if flags&^0x01 != 0 {
		r.Fail("unknown read flags %#x", flags)
	}
	c := &ReadCommand{Digest: flags&0x01 != 0}
	copy(c.Table[:], r.Next(16))
	c.Key = r.Bytes()
	c.Slice = r.Slice()
	return c, r.End()
}

// rangeRequest is a RangeCommand with its table, as VerbRangeRead carries
// it.
type rangeRequest struct {
	Table [16]byte
	RangeCommand
}

// appendRangeRequest appends c's encoding to dst.
func appendRangeRequest(dst []byte, c *rangeRequest) []byte {
	dst = append(dst, codecV1)
	dst = append(dst, c.Table[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Range.Start))
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Range.End))
	var flags byte
	if c.After != nil {
		flags |= 0x01
	}
	if c.Index != nil {
		flags |= 0x02
	}
	dst = append(dst, flags)
	if c.After != nil {
		dst = wire.AppendBytes(dst, c.After)
	}
	if c.Index != nil {
		dst = wire.AppendBytes(dst, []byte(c.Index.Name))
		dst = wire.AppendBytes(dst, c.Index.Value)
	}
	dst = wire.AppendSlice(dst, c.Slice)
	dst = binary.AppendUvarint(dst, uint64(max(c.MaxPartitions, 0)))
	return binary.AppendUvarint(dst, uint64(max(c.MaxBytes, 0)))
}

// decodeRangeRequest decodes a range command; its slices alias b.
func decodeRangeRequest(b []byte) (*rangeRequest, error) {
	r := newReader(b)
	r.version()
	c := &rangeRequest{}
	copy(c.Table[:], r.Next(16))
	c.Range.Start = int64(r.Uint64())
	c.Range.End = int64(r.Uint64())
	flags := r.Byte()
	if flags&^0x03 != 0 {
		r.Fail("unknown range flags %#x", flags)
	}
	if flags&0x01 != 0 {
		if c.After = r.Bytes(); c.After == nil {
			r.Fail("empty resume partition")
		}
	}
	if flags&0x02 != 0 {
		c.Index = &storage.IndexQuery{Name: string(r.Bytes()), Value: r.Bytes()}
		if c.Index.Value == nil {
			r.Fail("index query for an empty value")
		}
	}
	c.Slice = r.Slice()
	c.MaxPartitions = r.Uvarint(math.MaxInt32)
	c.MaxBytes = r.Uvarint(math.MaxInt32)
	return c, r.End()
}

// AppendPartition appends p's encoding to dst.
func AppendPartition(dst []byte, p *storage.Partition) []byte {
	return appendPartition(append(dst, codecV1), p)
}

func appendPartition(dst []byte, p *storage.Partition) []byte {
	dst = wire.AppendBytes(dst, p.Key)
	dst = binary.AppendUvarint(dst, uint64(len(p.KVs)))
	for _, kv := range p.KVs {
		dst = wire.AppendBytes(dst, kv.Key)
		dst = wire.AppendBytes(dst, kv.Value)
	}
	return dst
}

// DecodePartition decodes a partition of t and checks it is one
// (storage.Table.CheckPartition); its slices alias b.
func DecodePartition(b []byte, t *storage.Table) (*storage.Partition, error) {
	r := newReader(b)
	r.version()
	p := r.partition(t)
	if err := r.End(); err != nil {
		return nil, err
	}
	return p, nil
}

// AppendPartitions appends the encoding of a page of partitions to dst.
func AppendPartitions(dst []byte, ps []*storage.Partition, more bool) []byte {
	dst = slices.Grow(dst, 2+binary.MaxVarintLen64+encodedSize(ps))
	dst = append(dst, codecV1)
	dst = wire.AppendBool(dst, more)
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	for _, p := range ps {
		dst = appendPartition(dst, p)
	}
	return dst
}

// encodedSize is at least what appendPartition writes for ps: a page is
// encoded into one buffer sized once, not grown a few bytes at a time.
func encodedSize(ps []*storage.Partition) int {
	n := 0
	for _, p := range ps {
		n += 2*binary.MaxVarintLen64 + len(p.Key)
		for _, kv := range p.KVs {
			n += 2*binary.MaxVarintLen64 + len(kv.Key) + len(kv.Value)
		}
	}
	return n
}

// DecodePartitions decodes a page of partitions of t, each checked as
// DecodePartition checks one; their slices alias b.
func DecodePartitions(b []byte, t *storage.Table) ([]*storage.Partition, bool, error) {
	r := newReader(b)
	r.version()
	more := r.Bool()
	// A partition takes at least two bytes.
	n := r.Uvarint(min(maxPageCount, len(r.B)/2))
	var ps []*storage.Partition
	for i := 0; i < n && r.Err() == nil; i++ {
		ps = append(ps, r.partition(t))
	}
	if err := r.End(); err != nil {
		return nil, false, err
	}
	return ps, more, nil
}

// appendDigest appends a digest answer to dst.
func appendDigest(dst []byte, d storage.Digest) []byte {
	return append(append(dst, codecV1), d[:]...)
}

func decodeDigest(b []byte) (storage.Digest, error) {
	r := newReader(b)
	r.version()
	var d storage.Digest
	copy(d[:], r.Next(storage.DigestSize))
	return d, r.End()
}

// reader is a wire.Reader with the replica's messages' parts.
type reader struct{ wire.Reader }

func newReader(b []byte) *reader { return &reader{wire.Reader{B: b, Base: ErrBadMessage}} }

func (r *reader) version() {
	if v := r.Byte(); r.Err() == nil && v != codecV1 {
		r.Fail("unknown version %d", v)
	}
}

// partition reads a partition of t and checks its keys.
func (r *reader) partition(t *storage.Table) *storage.Partition {
	p := &storage.Partition{Key: r.Bytes()}
	if r.Err() == nil && p.Key == nil {
		r.Fail("partition with an empty key")
	}
	// A key and a cell take at least two bytes.
	n := r.Uvarint(min(maxPageCount, len(r.B)/2))
	if r.Err() != nil {
		return nil
	}
	p.KVs = make([]storage.PartitionKV, 0, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		p.KVs = append(p.KVs, storage.PartitionKV{Key: r.Bytes(), Value: r.Bytes()})
	}
	if r.Err() != nil {
		return nil
	}
	if err := t.CheckPartition(p); err != nil {
		r.SetErr(fmt.Errorf("%w: %w", ErrBadMessage, err))
		return nil
	}
	return p
}
