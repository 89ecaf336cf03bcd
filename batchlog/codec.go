package batchlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

const codecV1 = 1

// maxUpdates caps the Updates a batch claims, so that no count makes a
// decoder allocate more than the batch's own size.
const maxUpdates = 1 << 20

// ErrBadBatch reports bytes the batchlog codecs cannot read.
var ErrBadBatch = errors.New("batchlog: malformed batch")

// Encode is m's batch encoding. It does not keep m.
func Encode(m *mutation.Mutation) ([]byte, error) {
	var buf []byte
	ends := make([]int, len(m.Updates))
	for i, up := range m.Updates {
		var err error
		if buf, err = mutation.Append(buf, up); err != nil {
			return nil, fmt.Errorf("batchlog: encoding a batch: %w", err)
		}
		ends[i] = len(buf)
	}
	return EncodeEach(len(ends), func(i int) []byte {
		if i == 0 {
			return buf[:ends[0]]
		}
		return buf[ends[i-1]:ends[i]]
	}), nil
}

// EncodeEach is the batch encoding of n Updates already encoded by
// mutation.Append, update(i) the bytes of the i-th: a coordinator that
// sends its replicas that encoding logs the batch without encoding it
// again. It does not keep the bytes.
func EncodeEach(n int, update func(i int) []byte) []byte {
	dst := binary.AppendUvarint([]byte{codecV1}, uint64(n))
	for i := range n {
		dst = wire.AppendBytes(dst, update(i))
	}
	return dst
}

// Decode reads a batch into a mutation, its Updates referencing b.
// tables resolves table ids; the Updates of a table it does not know (one
// dropped since the batch was written) are left out, and counted in
// skipped.
func Decode(b []byte, tables func(id [16]byte) (*storage.Table, bool)) (m *mutation.Mutation, skipped int, err error) {
	r := wire.Reader{B: b, Base: ErrBadBatch}
	if v := r.Byte(); r.Err() == nil && v != codecV1 {
		return nil, 0, fmt.Errorf("%w: version %d", ErrBadBatch, v)
	}
	// An Update takes at least 19 bytes and its length one.
	n := r.Uvarint(min(maxUpdates, len(r.B)/20))
	if r.Err() != nil {
		return nil, 0, r.Err()
	}
	m = &mutation.Mutation{}
	for range n {
		ub := r.Bytes()
		if r.Err() != nil {
			return nil, 0, r.Err()
		}
		u, rest, err := mutation.Decode(ub, tables)
		switch {
		case errors.Is(err, mutation.ErrUnknownTable):
			skipped++
			continue
		case err != nil:
			return nil, 0, fmt.Errorf("%w: %w", ErrBadBatch, err)
		case len(rest) != 0:
			return nil, 0, fmt.Errorf("%w: %d bytes after an update", ErrBadBatch, len(rest))
		}
		m.Updates = append(m.Updates, u)
	}
	if err := r.End(); err != nil {
		return nil, 0, err
	}
	return m, skipped, nil
}

// appendStore is a store request's encoding.
func appendStore(dst []byte, id ID, batch []byte) []byte {
	dst = append(dst, codecV1)
	dst = append(dst, id[:]...)
	return wire.AppendBytes(dst, batch)
}

// decodeStore reads a store request; batch references b.
func decodeStore(b []byte) (id ID, batch []byte, err error) {
	r := wire.Reader{B: b, Base: ErrBadBatch}
	if v := r.Byte(); r.Err() == nil && v != codecV1 {
		return id, nil, fmt.Errorf("%w: version %d", ErrBadBatch, v)
	}
	copy(id[:], r.Next(len(id)))
	batch = r.Bytes()
	if err := r.End(); err != nil {
		return id, nil, err
	}
	return id, batch, nil
}

// appendRemove is a remove request's encoding.
func appendRemove(dst []byte, id ID) []byte {
	return append(append(dst, codecV1), id[:]...)
}

// decodeRemove reads a remove request.
func decodeRemove(b []byte) (id ID, err error) {
	r := wire.Reader{B: b, Base: ErrBadBatch}
	if v := r.Byte(); r.Err() == nil && v != codecV1 {
		return id, fmt.Errorf("%w: version %d", ErrBadBatch, v)
	}
	copy(id[:], r.Next(len(id)))
	return id, r.End()
}
