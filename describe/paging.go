package describe

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

// A DESCRIBE's paging state is Cassandra's (DescribeStatement): a
// PagingState whose partition key holds the version of this format, the
// server's release version, the schema version and the offset of the next
// row, so that a page asked of another server version or after the
// schema changed is refused. The PagingState around it is serialized as
// Cassandra serializes it for the protocol version: v4 and later with
// unsigned vints, v3 with shorts and ints.

const pagingStateVersion = 1

const schemaChangedWhilePaging = "The schema has changed since the previous page of the DESCRIBE statement result. Please retry the DESCRIBE statement."

func encodePagingState(next int64, v primitive.ProtocolVersion, release string, schema [16]byte) []byte {
	key := binary.BigEndian.AppendUint16(nil, pagingStateVersion)
	key = binary.BigEndian.AppendUint16(key, uint16(len(release)))
	key = append(key, release...)
	key = append(key, schema[:]...)
	key = binary.BigEndian.AppendUint64(key, uint64(next))
	if v < primitive.ProtocolVersion4 {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(key)))
		b = append(b, key...)
		b = binary.BigEndian.AppendUint16(b, 0) // no row mark
		b = binary.BigEndian.AppendUint32(b, math.MaxInt32)
		return binary.BigEndian.AppendUint32(b, math.MaxInt32)
	}
	b := appendUnsignedVInt(nil, uint64(len(key)))
	b = append(b, key...)
	b = appendUnsignedVInt(b, 0) // no row mark
	b = appendUnsignedVInt(b, math.MaxInt32)
	return appendUnsignedVInt(b, math.MaxInt32)
}

// decodePagingState returns the offset a paging state resumes at: 0 for
// none. b comes from a client and is checked whole.
func decodePagingState(b []byte, v primitive.ProtocolVersion, release string, schema [16]byte) (int64, error) {
	if b == nil {
		return 0, nil
	}
	key, ok := pagingKey(b, v >= primitive.ProtocolVersion4)
	if !ok {
		if key, ok = pagingKey(b, v < primitive.ProtocolVersion4); !ok {
			return 0, cqlerr.ProtocolErrorf("Invalid value for the paging state")
		}
	}
	invalid := cqlerr.Invalidf("Invalid paging state.")
	if len(key) < 2 {
		return 0, invalid
	}
	if binary.BigEndian.Uint16(key) != pagingStateVersion {
		return 0, cqlerr.Invalidf("Incompatible paging state")
	}
	key = key[2:]
	if len(key) < 2 || len(key) < 2+int(binary.BigEndian.Uint16(key)) {
		return 0, invalid
	}
	n := int(binary.BigEndian.Uint16(key))
	if got := string(key[2 : 2+n]); got != release {
		return 0, cqlerr.Invalidf("The server version of the paging state %s is different from the one of the server %s", got, release)
	}
	key = key[2+n:]
	if len(key) < 16+8 {
		return 0, invalid
	}
	if !bytes.Equal(key[:16], schema[:]) {
		return 0, cqlerr.Invalidf("%s", schemaChangedWhilePaging)
	}
	off := int64(binary.BigEndian.Uint64(key[16:]))
	if off < 0 {
		return 0, invalid
	}
	return off, nil
}

// pagingKey returns the partition key of a serialized PagingState, in the
// modern (vint) or the legacy (v3) form, if b is one whole.
func pagingKey(b []byte, modern bool) ([]byte, bool) {
	if !modern {
		key, rest, ok := shortBytes(b)
		if !ok {
			return nil, false
		}
		if _, rest, ok = shortBytes(rest); !ok || (len(rest) != 4 && len(rest) != 8) {
			return nil, false
		}
		return key, true
	}
	key, rest, ok := vintBytes(b)
	if !ok {
		return nil, false
	}
	if _, rest, ok = vintBytes(rest); !ok {
		return nil, false
	}
	for i := 0; i < 2; i++ {
		var n uint64
		if n, rest, ok = readUnsignedVInt(rest); !ok || n > math.MaxInt32 {
			return nil, false
		}
	}
	return key, len(rest) == 0
}

func shortBytes(b []byte) (v, rest []byte, ok bool) {
	if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	return b[2 : 2+n], b[2+n:], true
}

func vintBytes(b []byte) (v, rest []byte, ok bool) {
	n, rest, ok := readUnsignedVInt(b)
	if !ok || n > uint64(len(rest)) {
		return nil, nil, false
	}
	return rest[:n], rest[n:], true
}

// appendUnsignedVInt appends v as Cassandra's unsigned vint
// (VIntCoding.writeUnsignedVInt), with the protocol library's codec.
func appendUnsignedVInt(b []byte, v uint64) []byte {
	buf := bytes.NewBuffer(b)
	_, _ = primitive.WriteUnsignedVint(v, buf) // a bytes.Buffer takes every write
	return buf.Bytes()
}

// readUnsignedVInt reads an unsigned vint at the start of b.
func readUnsignedVInt(b []byte) (uint64, []byte, bool) {
	r := bytes.NewReader(b)
	v, _, err := primitive.ReadUnsignedVint(r)
	return v, b[len(b)-r.Len():], err == nil
}
