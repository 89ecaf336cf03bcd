package replica

import (
	"encoding/binary"

	"github.com/cqld/cqld/ring"
)

// Ballot is a Paxos ballot as Cassandra makes one: a version 1 (time)
// UUID whose timestamp is a whole number of microseconds and whose last
// eight bytes (clock sequence and node) name the proposer. The zero
// Ballot is none.
//
// Ballots order by their microseconds, then by their last eight bytes.
// The protocol's promises compare microseconds alone (After), as
// Cassandra's do: a replica promises a ballot only if its microseconds
// are greater than those of every ballot it holds, so no two ballots with
// the same microseconds can both gather a quorum, and the ballots of a
// partition's commits strictly increase in microseconds, which the cells
// they write carry as their timestamp.
type Ballot [16]byte

// gregorianOffset is the number of 100 ns intervals between the UUID
// epoch (1582-10-15) and the Unix epoch.
const gregorianOffset = 0x01b21dd213814000

// NewBallot returns the ballot of micros (microseconds since the Unix
// epoch) proposed by node, whose two top bits are set to the UUID
// variant's.
func NewBallot(micros int64, node [8]byte) Ballot {
	var b Ballot
	ts := uint64(micros)*10 + gregorianOffset
	binary.BigEndian.PutUint32(b[0:], uint32(ts))
	binary.BigEndian.PutUint16(b[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(b[6:], uint16(ts>>48)&0x0fff|0x1000)
	copy(b[8:], node[:])
	b[8] = b[8]&0x3f | 0x80
	return b
}

// IsZero reports whether b is no ballot.
func (b Ballot) IsZero() bool { return b == Ballot{} }

// Micros is b's time in microseconds since the Unix epoch; 0 for none.
func (b Ballot) Micros() int64 {
	if b.IsZero() {
		return 0
	}
	ts := uint64(binary.BigEndian.Uint16(b[6:])&0x0fff)<<48 | uint64(binary.BigEndian.Uint16(b[4:]))<<32 | uint64(binary.BigEndian.Uint32(b[0:]))
	return (int64(ts) - gregorianOffset) / 10
}

// After reports whether b's microseconds are greater than o's: whether a
// replica holding o may promise b. Every ballot is after none.
func (b Ballot) After(o Ballot) bool {
	if b.IsZero() {
		return false
	}
	return o.IsZero() || b.Micros() > o.Micros()
}

// Compare orders ballots by microseconds, then by their last eight bytes;
// none is before every ballot.
func (b Ballot) Compare(o Ballot) int {
	switch bm, om := b.Micros(), o.Micros(); {
	case b.IsZero() && o.IsZero():
		return 0
	case b.IsZero():
		return -1
	case o.IsZero():
		return 1
	case bm < om:
		return -1
	case bm > om:
		return 1
	}
	for i := 8; i < 16; i++ {
		if b[i] != o[i] {
			if b[i] < o[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Max is the later of b and o.
func (b Ballot) Max(o Ballot) Ballot {
	if o.Compare(b) > 0 {
		return o
	}
	return b
}

// String is b in the UUID text form, which ring.HostID writes.
func (b Ballot) String() string { return ring.HostID(b).String() }
