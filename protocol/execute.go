package protocol

import (
	"encoding/binary"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// decodeExecute decodes the common EXECUTE body by hand: it is every
// prepared statement's request, and the generic codec spends a dozen
// allocations on it. The values alias body, which the request owns.
// ok is false for what it leaves to the generic codec (named values, DSE
// options) and for malformed bodies, which the codec then reports.
//
// Every length is checked against body before use, and the value count
// against the bytes left (each value takes at least 4), so no input makes
// it allocate more than the body's size warrants.
// executeBlock holds a decoded EXECUTE request in one allocation: the
// request, the message, its options and room for the first values.
type executeBlock struct {
	req  Request
	m    message.Execute
	o    message.QueryOptions
	vals [6]primitive.Value
	ptrs [6]*primitive.Value
}

func decodeExecute(v primitive.ProtocolVersion, body []byte, blk *executeBlock) (*message.Execute, bool) {
	c := cursor{b: body}
	read := func(n int) []byte {
		if !c.need(n, "") {
			return nil
		}
		c.pos += n
		return body[c.pos-n : c.pos]
	}
	shortBytes := func() []byte {
		n := c.short()
		return read(n)
	}
	m := &blk.m
	if m.QueryId = shortBytes(); len(m.QueryId) == 0 {
		return nil, false
	}
	if v >= primitive.ProtocolVersion5 {
		if m.ResultMetadataId = shortBytes(); len(m.ResultMetadataId) == 0 {
			return nil, false
		}
	}
	o := &blk.o
	o.Consistency = primitive.ConsistencyLevel(c.short())
	m.Options = o
	flags := primitive.QueryFlag(c.flags(v))
	if !c.ok() || flags.Contains(primitive.QueryFlagValueNames) ||
		flags&^(primitive.QueryFlagValues|primitive.QueryFlagSkipMetadata|primitive.QueryFlagPageSize|
			primitive.QueryFlagPagingState|primitive.QueryFlagSerialConsistency|primitive.QueryFlagDefaultTimestamp|
			primitive.QueryFlagWithKeyspace|primitive.QueryFlagNowInSeconds) != 0 {
		return nil, false
	}
	if flags.Contains(primitive.QueryFlagValues) {
		n := c.short()
		if n > (len(body)-c.pos)/4 {
			return nil, false
		}
		vals, ptrs := blk.vals[:0], blk.ptrs[:0]
		if n > len(blk.vals) {
			vals, ptrs = make([]primitive.Value, 0, n), make([]*primitive.Value, 0, n)
		}
		vals, o.PositionalValues = vals[:n], ptrs[:n]
		for i := range vals {
			l := c.int()
			switch {
			case l >= 0:
				vals[i] = primitive.Value{Type: primitive.ValueTypeRegular, Contents: read(int(l))}
				if vals[i].Contents == nil {
					vals[i].Contents = []byte{}
				}
			case l == -1:
				vals[i] = primitive.Value{Type: primitive.ValueTypeNull}
			case l == -2:
				vals[i] = primitive.Value{Type: primitive.ValueTypeUnset}
			default:
				return nil, false
			}
			o.PositionalValues[i] = &vals[i]
		}
	}
	o.SkipMetadata = flags.Contains(primitive.QueryFlagSkipMetadata)
	if flags.Contains(primitive.QueryFlagPageSize) {
		o.PageSize = c.int()
	}
	if flags.Contains(primitive.QueryFlagPagingState) {
		if n := c.int(); n >= 0 {
			o.PagingState = read(int(n))
		}
	}
	if flags.Contains(primitive.QueryFlagSerialConsistency) {
		sc := primitive.ConsistencyLevel(c.short())
		o.SerialConsistency = &sc
	}
	if flags.Contains(primitive.QueryFlagDefaultTimestamp) {
		if b := read(8); b != nil {
			ts := int64(binary.BigEndian.Uint64(b))
			o.DefaultTimestamp = &ts
		}
	}
	if v >= primitive.ProtocolVersion5 {
		if flags.Contains(primitive.QueryFlagWithKeyspace) {
			o.Keyspace = string(shortBytes())
		}
		if flags.Contains(primitive.QueryFlagNowInSeconds) {
			n := c.int()
			o.NowInSeconds = &n
		}
	}
	if !c.ok() || primitive.CheckValidConsistencyLevel(o.Consistency) != nil {
		return nil, false
	}
	if o.SerialConsistency != nil && primitive.CheckValidConsistencyLevel(*o.SerialConsistency) != nil {
		return nil, false
	}
	return m, true
}
