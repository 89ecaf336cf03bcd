package protocol

import (
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// checkBody walks a request body and verifies that every length it declares
// fits in the bytes that are there, before the message codec reads it.
//
// NB: the codec allocates each [bytes], [value] and [long string] at its
// declared length before reading it, so a 20-byte body claiming a 2 GiB
// string would make it allocate 2 GiB. checkBody is what bounds every
// allocation by the frame size.
func checkBody(op primitive.OpCode, v primitive.ProtocolVersion, flags primitive.HeaderFlag, body []byte, maxBody int) error {
	c := cursor{b: body}
	if flags.Contains(primitive.HeaderFlagCustomPayload) {
		c.bytesMap()
	}
	switch op {
	case primitive.OpCodeStartup:
		c.stringMap()
	case primitive.OpCodeRegister:
		c.stringList()
	case primitive.OpCodeAuthResponse:
		c.bytes()
	case primitive.OpCodeQuery:
		c.longString()
		c.queryParams(v)
	case primitive.OpCodePrepare:
		c.longString()
		if v >= primitive.ProtocolVersion5 && c.ok() {
			if c.int()&0x01 != 0 {
				c.string()
			}
		}
	case primitive.OpCodeExecute:
		c.shortBytes()
		if v >= primitive.ProtocolVersion5 {
			c.shortBytes()
		}
		c.queryParams(v)
	case primitive.OpCodeBatch:
		c.batch(v)
	case OpCodePrepareBatch:
		c.prepareBatch(maxBody)
	}
	return c.err
}

// cursor reads a body, remembering the first error; reads after an error
// do nothing.
type cursor struct {
	b   []byte
	pos int
	err error
}

func (c *cursor) ok() bool { return c.err == nil }

func (c *cursor) need(n int, what string) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || c.pos+n > len(c.b) {
		c.err = fmt.Errorf("not enough bytes to read %s: need %d at offset %d of a %d-byte body", what, n, c.pos, len(c.b))
		return false
	}
	return true
}

// count checks a count of items that take at least min bytes each against
// the bytes left, and returns it (0 after an error).
func (c *cursor) count(n int64, min int64, what string) int {
	if c.err != nil {
		return 0
	}
	left := int64(len(c.b) - c.pos)
	switch {
	case n < 0:
		c.err = fmt.Errorf("negative %s count %d at offset %d", what, n, c.pos)
	case n*min > left:
		c.err = fmt.Errorf("%d %s need at least %d bytes, %d are left at offset %d", n, what, n*min, left, c.pos)
	default:
		return int(n)
	}
	return 0
}

func (c *cursor) stringMultimap() {
	for n := c.count(int64(c.short()), 4, "[string multimap] entries"); n > 0 && c.ok(); n-- {
		c.string()
		c.stringList()
	}
}

func (c *cursor) skip(n int, what string) {
	if c.need(n, what) {
		c.pos += n
	}
}

func (c *cursor) byte() byte {
	if !c.need(1, "a byte") {
		return 0
	}
	c.pos++
	return c.b[c.pos-1]
}

func (c *cursor) short() int {
	if !c.need(2, "a short") {
		return 0
	}
	c.pos += 2
	return int(binary.BigEndian.Uint16(c.b[c.pos-2:]))
}

func (c *cursor) int() int32 {
	if !c.need(4, "an int") {
		return 0
	}
	c.pos += 4
	return int32(binary.BigEndian.Uint32(c.b[c.pos-4:]))
}

func (c *cursor) string()     { c.skip(c.short(), "a [string]") }
func (c *cursor) shortBytes() { c.skip(c.short(), "a [short bytes]") }

func (c *cursor) longString() {
	n := c.int()
	if n > 0 {
		c.skip(int(n), "a [long string]")
	}
}

// bytes reads [bytes]; a negative length is null.
func (c *cursor) bytes() {
	if n := c.int(); n > 0 {
		c.skip(int(n), "a [bytes]")
	}
}

// value reads [value]: -1 null, -2 unset, other negatives invalid.
func (c *cursor) value() {
	n := c.int()
	switch {
	case n >= 0:
		c.skip(int(n), "a [value]")
	case n < -2 && c.err == nil:
		c.err = fmt.Errorf("invalid [value] length %d at offset %d", n, c.pos-4)
	}
}

// stringMap, stringList and bytesMap check their counts against the bytes
// left, since the codec sizes its map or slice from the count.
func (c *cursor) stringMap() {
	for n := c.count(int64(c.short()), 2+2, "[string map] entries"); n > 0 && c.ok(); n-- {
		c.string()
		c.string()
	}
}

func (c *cursor) stringList() {
	for n := c.count(int64(c.short()), 2, "[string list] entries"); n > 0 && c.ok(); n-- {
		c.string()
	}
}

func (c *cursor) bytesMap() {
	for n := c.count(int64(c.short()), 2+4, "[bytes map] entries"); n > 0 && c.ok(); n-- {
		c.string()
		c.bytes()
	}
}

func (c *cursor) flags(v primitive.ProtocolVersion) int32 {
	if v >= primitive.ProtocolVersion5 {
		return c.int()
	}
	return int32(c.byte())
}

// queryParams reads QUERY and EXECUTE parameters (spec §4.1.4).
func (c *cursor) queryParams(v primitive.ProtocolVersion) {
	c.short() // consistency
	f := c.flags(v)
	if f&0x01 != 0 {
		for n := c.short(); n > 0 && c.ok(); n-- {
			if f&0x40 != 0 {
				c.string()
			}
			c.value()
		}
	}
	if f&0x04 != 0 {
		c.int()
	}
	if f&0x08 != 0 {
		c.bytes()
	}
	c.queryTail(v, f)
}

// batch reads a BATCH body (spec §4.1.7).
func (c *cursor) batch(v primitive.ProtocolVersion) {
	c.byte() // type
	for n := c.short(); n > 0 && c.ok(); n-- {
		switch kind := c.byte(); kind {
		case 0:
			c.longString()
		case 1:
			c.shortBytes()
		default:
			if c.err == nil {
				c.err = fmt.Errorf("invalid BATCH statement kind %d", kind)
			}
		}
		for m := c.short(); m > 0 && c.ok(); m-- {
			c.value()
		}
	}
	c.short() // consistency
	f := c.flags(v)
	c.queryTail(v, f)
}

// queryTail reads what QUERY, EXECUTE and BATCH end with alike: serial
// consistency, default timestamp, and v5's keyspace and now_in_seconds.
func (c *cursor) queryTail(v primitive.ProtocolVersion, f int32) {
	if f&0x10 != 0 {
		c.short()
	}
	if f&0x20 != 0 {
		c.skip(8, "a [long] timestamp")
	}
	if v >= primitive.ProtocolVersion5 {
		if f&0x80 != 0 {
			c.string()
		}
		if f&0x100 != 0 {
			c.int()
		}
	}
}
