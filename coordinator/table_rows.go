package coordinator

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// assembleCollection serializes a non-frozen collection from its element
// cells (in element order), or a non-frozen user type from its field cells.
func (t *tableInfo) assembleCollection(col *colInfo, cells []storage.ColumnCell) []byte {
	if ut := col.multiCellUDT(); ut != nil {
		return assembleUDT(ut, cells)
	}
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(cells)))
	var kt datatype.DataType
	switch ct := col.typ.(type) {
	case *datatype.Set:
		kt = ct.ElementType
	case *datatype.Map:
		kt = ct.KeyType
	}
	for _, cc := range cells {
		switch col.typ.Code() {
		case primitive.DataTypeCodeList:
			buf = types.AppendBytes(buf, cc.Cell.Value)
		case primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
			k, _, err := storage.DecodeKey(cc.Path, kt, false)
			if err != nil {
				continue
			}
			buf = types.AppendBytes(buf, k)
			if col.typ.Code() == primitive.DataTypeCodeMap {
				buf = types.AppendBytes(buf, cc.Cell.Value)
			}
		}
	}
	return buf
}

// compareClustering compares two clusterings in clustering order.
func (t *tableInfo) compareClustering(a, b [][]byte) int {
	ea, _ := t.encodeClustering(a)
	eb, _ := t.encodeClustering(b)
	return bytes.Compare(ea, eb)
}

func (t *tableInfo) encodeClustering(ck [][]byte) ([]byte, error) {
	var out []byte
	var err error
	for i, v := range ck {
		if out, err = storage.AppendKey(out, t.st.ClusteringTypes[i], v, t.st.ClusteringDesc[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// splitPartitionKey splits a serialized partition key into its components.
func (t *tableInfo) splitPartitionKey(pk []byte) ([][]byte, error) {
	if len(t.pk) == 1 {
		return [][]byte{pk}, nil
	}
	out := make([][]byte, 0, len(t.pk))
	for len(pk) > 0 {
		if len(pk) < 2 {
			return nil, fmt.Errorf("coordinator: malformed composite key")
		}
		n := int(binary.BigEndian.Uint16(pk))
		if 2+n+1 > len(pk) {
			return nil, fmt.Errorf("coordinator: malformed composite key")
		}
		out = append(out, pk[2:2+n])
		pk = pk[3+n:]
	}
	return out, nil
}

// clusteringRange is a storage.Slice with its bounds encoded in clustering
// order, for testing rows one by one.
type clusteringRange struct {
	start, end       []byte // nil: open
	startIncl, endIn bool
}

func (t *tableInfo) clusteringRanges(slices []storage.Slice) ([]clusteringRange, error) {
	out := make([]clusteringRange, 0, len(slices))
	for _, s := range slices {
		var cr clusteringRange
		var err error
		if s.Start != nil {
			if cr.start, err = t.encodeClustering(s.Start.Prefix); err != nil {
				return nil, err
			}
			cr.startIncl = s.Start.Inclusive
		}
		if s.End != nil {
			if cr.end, err = t.encodeClustering(s.End.Prefix); err != nil {
				return nil, err
			}
			cr.endIn = s.End.Inclusive
		}
		out = append(out, cr)
	}
	return out, nil
}

// inRanges reports whether a row's clustering lies in one of the ranges
// (a bound covers every row that has its prefix when inclusive).
func (t *tableInfo) inRanges(ck [][]byte, ranges []clusteringRange) bool {
	enc, err := t.encodeClustering(ck)
	if err != nil {
		return false
	}
	for _, r := range ranges {
		if r.start != nil {
			if bytes.HasPrefix(enc, r.start) {
				if !r.startIncl {
					continue
				}
			} else if bytes.Compare(enc, r.start) < 0 {
				continue
			}
		}
		if r.end != nil {
			if bytes.HasPrefix(enc, r.end) {
				if !r.endIn {
					continue
				}
			} else if bytes.Compare(enc, r.end) > 0 {
				continue
			}
		}
		return true
	}
	return false
}

// assembleUDT serializes a non-frozen user type from its field cells,
// which a read returns in path order, that is in field order. It allocates
// the value only.
func assembleUDT(ut *datatype.UserDefined, cells []storage.ColumnCell) []byte {
	n := len(ut.FieldTypes)
	size := 4 * n
	for _, cc := range cells {
		size += len(cc.Cell.Value)
	}
	out := make([]byte, 0, size)
	next := 0 // the next field to write
	for _, cc := range cells {
		i, ok := udtFieldIndex(cc.Path)
		if !ok || i < next || i >= n {
			continue
		}
		for ; next < i; next++ {
			out = types.AppendBytes(out, nil)
		}
		out = types.AppendBytes(out, cc.Cell.Value)
		next++
	}
	for ; next < n; next++ {
		out = types.AppendBytes(out, nil)
	}
	return out
}

// udtFieldIndex decodes the stored path of a user type field cell: the
// smallint key encoding of udtFieldPath (storage.AppendKey: the sign bit
// flipped, then big-endian), read without allocating.
func udtFieldIndex(path []byte) (int, bool) {
	if len(path) != 2 {
		return 0, false
	}
	return int(int16(uint16(path[0]^0x80)<<8 | uint16(path[1]))), true
}
