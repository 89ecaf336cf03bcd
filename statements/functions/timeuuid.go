package functions

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// GregorianOffset is 1582-10-15 in 100ns units before the Unix epoch.
const GregorianOffset = 0x01B21DD213814000

// NewTimeUUID makes a version 1 UUID for t with a random clock sequence and
// node, which keeps concurrent calls distinct.
func NewTimeUUID(t time.Time) []byte {
	u := make([]byte, 16)
	ts := uint64(t.UnixNano()/100) + GregorianOffset
	binary.BigEndian.PutUint32(u[0:], uint32(ts))
	binary.BigEndian.PutUint16(u[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ts>>48)&0x0fff|0x1000)
	_, _ = rand.Read(u[8:])
	u[8] = u[8]&0x3f | 0x80
	return u
}

// BoundTimeUUID is the smallest (or largest) timeuuid of millisecond ms, as
// minTimeuuid and maxTimeuuid compute them.
func BoundTimeUUID(ms int64, max bool) []byte {
	u := make([]byte, 16)
	ts := uint64(ms*10000) + GregorianOffset
	if max {
		ts += 9999
	}
	binary.BigEndian.PutUint32(u[0:], uint32(ts))
	binary.BigEndian.PutUint16(u[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ts>>48)&0x0fff|0x1000)
	if max {
		copy(u[8:], []byte{0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f})
	} else {
		copy(u[8:], []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80})
	}
	return u
}

// TimeUUIDMillis returns the Unix milliseconds of a version 1 UUID.
func TimeUUIDMillis(u []byte) (int64, bool) {
	if len(u) != 16 || u[6]>>4 != 1 {
		return 0, false
	}
	ts := uint64(binary.BigEndian.Uint32(u[0:])) | uint64(binary.BigEndian.Uint16(u[4:]))<<32 | uint64(binary.BigEndian.Uint16(u[6:])&0x0fff)<<48
	return (int64(ts) - GregorianOffset) / 10000, true
}

// NewRandomUUID makes a version 4 (random) UUID.
func NewRandomUUID() []byte {
	u := make([]byte, 16)
	_, _ = rand.Read(u)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}
