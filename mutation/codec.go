package mutation

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/storage"
)

// An Update's encoding, version 1: what a replica receives from another
// node and what a hint keeps on disk. Frozen once written anywhere durable;
// a change is a new version byte.
//
//	version      1 byte, updateFormatV1
//	table id     16 bytes
//	key          bytes
//	op count     uvarint
//	ops          op count times:
//	  kind       1 byte (Kind)
//	  KindCell, KindCollectionDeletion, KindCounterAdd:
//	    flags    1 byte: 0x01 static, 0x02 has a path, 0x04 the path is
//	             in storage's key encoding (with 0x02; read repair)
//	    clustering  values (absent when static)
//	    column   bytes
//	    path type   the native protocol v5 [option] of the path's type (with
//	                a path not in key encoding)
//	    path     bytes (with a path)
//	  KindRowMarker, KindRowDeletion:
//	    clustering  values
//	  KindRangeDeletion:
//	    start, end  bound each
//	  every kind:
//	    cell     bytes: storage's cell encoding
//
// bytes is a uvarint length then that many bytes; values is a uvarint
// count then that many bytes; a bound is one byte 0 (open) or 1 (closed),
// then for a closed bound its prefix (values) and one byte, 1 when
// inclusive.
const updateFormatV1 = 1

// Limits of a decoded Update, well above what the coordinator builds, so
// that no length an attacker claims makes the decoder allocate.
const (
	maxOps = 1 << 20
	// maxTypeLen bounds a path type's encoding, and so the depth the
	// protocol's type decoder recurses to.
	maxTypeLen = 4096
)

// ErrBadUpdate reports an encoded Update that Decode cannot read.
var ErrBadUpdate = errors.New("mutation: malformed update")

// ErrUnknownTable reports an Update for a table the replica does not know.
var ErrUnknownTable = errors.New("mutation: unknown table")

// Append appends u's encoding to dst.
func Append(dst []byte, u *Update) ([]byte, error) {
	dst = append(dst, updateFormatV1)
	dst = append(dst, u.Table.Def.ID[:]...)
	dst = wire.AppendBytes(dst, u.Key)
	dst = binary.AppendUvarint(dst, uint64(len(u.Ops)))
	var err error
	for i := range u.Ops {
		op := &u.Ops[i]
		dst = append(dst, byte(op.Kind))
		switch op.Kind {
		case KindCell, KindCollectionDeletion, KindCounterAdd:
			tg := &op.Target
			var flags byte
			if tg.Static {
				flags |= 0x01
			}
			if tg.Path != nil {
				flags |= 0x02
				if tg.PathType == nil {
					flags |= 0x04
				}
			}
			dst = append(dst, flags)
			if !tg.Static {
				dst = wire.AppendValues(dst, tg.Clustering)
			}
			dst = wire.AppendBytes(dst, []byte(tg.Column))
			if tg.Path != nil {
				if tg.PathType != nil {
					if dst, err = appendType(dst, tg.PathType); err != nil {
						return nil, err
					}
				}
				dst = wire.AppendBytes(dst, tg.Path)
			}
		case KindRowMarker, KindRowDeletion:
			dst = wire.AppendValues(dst, op.Target.Clustering)
		case KindRangeDeletion:
			dst = wire.AppendBound(dst, op.Range.Start)
			dst = wire.AppendBound(dst, op.Range.End)
		case KindPartitionDeletion:
		default:
			return nil, fmt.Errorf("mutation: encoding op of unknown kind %d", op.Kind)
		}
		dst = wire.AppendBytes(dst, op.Cell.Append(nil))
	}
	return dst, nil
}

func appendType(dst []byte, t datatype.DataType) ([]byte, error) {
	var buf bytes.Buffer
	if err := datatype.WriteDataType(t, &buf, primitive.ProtocolVersion5); err != nil {
		return nil, fmt.Errorf("mutation: encoding path type: %w", err)
	}
	return wire.AppendBytes(dst, buf.Bytes()), nil
}

// Decode reads one Update from the front of b and returns the bytes after
// it. table resolves the table id; the Update's byte slices point into b.
// It never panics on bad input: every length is checked against what is
// left of b.
func Decode(b []byte, table func(id [16]byte) (*storage.Table, bool)) (*Update, []byte, error) {
	r := reader{wire.Reader{B: b, Base: ErrBadUpdate}}
	if v := r.Byte(); r.Err() == nil && v != updateFormatV1 {
		return nil, nil, fmt.Errorf("%w: unknown format version %d", ErrBadUpdate, v)
	}
	var id [16]byte
	copy(id[:], r.Next(16))
	key := r.Bytes()
	n := r.Uvarint(maxOps)
	if r.Err() != nil {
		return nil, nil, r.Err()
	}
	t, ok := table(id)
	if !ok {
		return nil, nil, fmt.Errorf("%w %x", ErrUnknownTable, id)
	}
	u := &Update{Table: t, Key: key}
	for i := 0; i < n && r.Err() == nil; i++ {
		op := Op{Kind: Kind(r.Byte())}
		switch op.Kind {
		case KindCell, KindCollectionDeletion, KindCounterAdd:
			flags := r.Byte()
			if flags&^0x07 != 0 || flags&0x06 == 0x04 {
				r.Fail("unknown op flags %#x", flags)
			}
			op.Target.Static = flags&0x01 != 0
			if !op.Target.Static {
				op.Target.Clustering = r.Values()
			}
			op.Target.Column = string(r.Bytes())
			if flags&0x02 != 0 {
				if flags&0x04 == 0 {
					op.Target.PathType = r.dataType()
				}
				op.Target.Path = r.Bytes()
				if op.Target.Path == nil {
					op.Target.Path = []byte{}
				}
			}
		case KindRowMarker, KindRowDeletion:
			op.Target.Clustering = r.Values()
		case KindRangeDeletion:
			op.Range.Start = r.Bound()
			op.Range.End = r.Bound()
		case KindPartitionDeletion:
		default:
			r.Fail("unknown op kind %d", op.Kind)
		}
		cell := r.Bytes()
		if r.Err() != nil {
			break
		}
		c, err := storage.DecodeCell(cell)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: op %d: %w", ErrBadUpdate, i, err)
		}
		op.Cell = c
		u.Ops = append(u.Ops, op)
	}
	if r.Err() != nil {
		return nil, nil, r.Err()
	}
	return u, r.B, nil
}

// reader is a wire.Reader with the path types of Updates.
type reader struct{ wire.Reader }

func (r *reader) dataType() datatype.DataType {
	raw := r.Bytes()
	if r.Err() != nil {
		return nil
	}
	if len(raw) > maxTypeLen {
		r.Fail("path type of %d bytes", len(raw))
		return nil
	}
	rd := bytes.NewReader(raw)
	t, err := datatype.ReadDataType(rd, primitive.ProtocolVersion5)
	if err != nil || rd.Len() != 0 {
		r.Fail("bad path type")
		return nil
	}
	return t
}
