package batchlog

import (
	"encoding/binary"
	"encoding/hex"
	"time"
)

// ID names a batch: the coordinator's time of writing it, then random
// bytes.
type ID [16]byte

// NewID is the ID of a batch written at now; random supplies the rest.
func NewID(now time.Time, random func() uint64) ID {
	var id ID
	binary.BigEndian.PutUint64(id[:8], uint64(now.UnixMicro()))
	binary.BigEndian.PutUint64(id[8:], random())
	return id
}

// Time is when the batch was written, on its coordinator's clock.
func (id ID) Time() time.Time {
	return time.UnixMicro(int64(binary.BigEndian.Uint64(id[:8])))
}

func (id ID) String() string { return hex.EncodeToString(id[:]) }
