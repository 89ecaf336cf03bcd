package commitlog

import (
	"cmp"
	"fmt"
)

// Position names a place in the log: the segment and the byte offset of a
// record in it. Segments are numbered upwards forever, so positions order
// records in the order they were appended; Positions are comparable with ==
// and ordered by Compare.
type Position struct {
	Segment uint64
	Offset  int64
}

// Compare returns -1, 0 or +1 as p is before, at or after q.
func (p Position) Compare(q Position) int {
	if c := cmp.Compare(p.Segment, q.Segment); c != 0 {
		return c
	}
	return cmp.Compare(p.Offset, q.Offset)
}

// Less reports whether p is before q.
func (p Position) Less(q Position) bool { return p.Compare(q) < 0 }

func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Segment, p.Offset) }
