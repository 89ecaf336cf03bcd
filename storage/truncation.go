package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// truncationsKey holds when each table was last truncated on this node,
// as Cassandra's system.local truncated_at does: a hint written before a
// truncation must not bring the truncated rows back. It is shorter than a
// table id, so no table's key range contains it; Truncate rewrites it in
// the batch that truncates, through the commit log.
//
// Value: repeated [16-byte table id][8-byte big-endian unix microseconds].
var truncationsKey = []byte("cqld.truncated")

const truncationSize = 16 + 8

// readTruncations reads the truncation records the LSM holds (the commit
// log's replay may bring later ones: Truncate's batches rewrite the key).
func readTruncations(db *pebble.DB) (map[[16]byte]int64, error) {
	v, closer, err := db.Get(truncationsKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return map[[16]byte]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: read the truncation records: %w", err)
	}
	defer closer.Close()
	return decodeTruncations(v)
}

func decodeTruncations(v []byte) (map[[16]byte]int64, error) {
	if len(v)%truncationSize != 0 {
		return nil, fmt.Errorf("storage: the truncation records are %d bytes, not a multiple of %d", len(v), truncationSize)
	}
	out := make(map[[16]byte]int64, len(v)/truncationSize)
	for ; len(v) > 0; v = v[truncationSize:] {
		var id [16]byte
		copy(id[:], v)
		out[id] = int64(binary.BigEndian.Uint64(v[16:]))
	}
	return out, nil
}

func appendTruncations(dst []byte, at map[[16]byte]int64) []byte {
	for id, us := range at {
		dst = append(dst, id[:]...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(us))
	}
	return dst
}

// TruncatedAt reports when the table with id was last truncated on this
// node (its rows removed by Truncate), if it ever was. Safe for
// concurrent use.
func (e *Engine) TruncatedAt(id [16]byte) (time.Time, bool) {
	e.truncMu.Lock()
	defer e.truncMu.Unlock()
	us, ok := e.truncated[id]
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMicro(us), true
}
