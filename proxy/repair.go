package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Read repair turns the keys a stale replica lacks back into writes. The
// key layout is storage's (storage/keys.go); until storage or mutation
// offer the inverse of a read, this decodes it with storage's exported
// key decoder. Collection elements need their path's type, which the
// table does not carry: it is taken from the column's CQL type for
// collections of native types and user types, and an element of any
// other type is left unrepaired (errNoPathType).

// errNoPathType is an element whose path type repair cannot tell.
var errNoPathType = errors.New("proxy: read repair cannot type a collection element's path")

// samePartition reports whether two answers hold the same keys and cells.
func samePartition(a, b *storage.Partition) bool {
	if len(a.KVs) != len(b.KVs) {
		return false
	}
	for i := range a.KVs {
		if !bytes.Equal(a.KVs[i].Key, b.KVs[i].Key) || !bytes.Equal(a.KVs[i].Value, b.KVs[i].Value) {
			return false
		}
	}
	return true
}

// repairUpdate is the Update that brings have, a replica's answer, up to
// want, the reconciled one: every cell of want that have lacks or holds
// in an older version. Cells it cannot type are counted in skipped.
func repairUpdate(t *storage.Table, want, have *storage.Partition) (u *mutation.Update, skipped int, err error) {
	u = &mutation.Update{Table: t, Key: want.Key}
	j := 0
	for _, kv := range want.KVs {
		for j < len(have.KVs) && bytes.Compare(have.KVs[j].Key, kv.Key) < 0 {
			j++
		}
		if j < len(have.KVs) && bytes.Equal(have.KVs[j].Key, kv.Key) && bytes.Equal(have.KVs[j].Value, kv.Value) {
			continue
		}
		op, err := decodeOp(t, kv)
		if errors.Is(err, errNoPathType) {
			skipped++
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		u.Ops = append(u.Ops, op)
	}
	return u, skipped, nil
}

// Regions and kinds of storage's key layout (storage/keys.go; frozen,
// since they are on disk).
const (
	regionPartitionDeletion = 0x00
	regionRangeTombstone    = 0x01
	regionStatic            = 0x02
	regionRow               = 0x03

	rowDeletion = 0x00
	rowMarker   = 0x01
	rowCell     = 0x02

	pathSimple   = 0x00
	pathDeletion = 0x01
	pathElement  = 0x02

	boundOpen = 0xff
)

// decodeOp is the operation that writes kv, a key of a partition of t and
// its cell.
func decodeOp(t *storage.Table, kv storage.PartitionKV) (mutation.Op, error) {
	var op mutation.Op
	c, err := storage.DecodeCell(kv.Value)
	if err != nil {
		return op, fmt.Errorf("proxy: read repair: %w", err)
	}
	op.Cell = c
	bad := func(what string) (mutation.Op, error) {
		return op, fmt.Errorf("proxy: read repair of %s.%s: malformed key (%s)", t.Def.Keyspace, t.Def.Name, what)
	}
	const fixed = 16 + 8 // table id, token
	if len(kv.Key) < fixed {
		return bad("short")
	}
	_, rest, err := storage.DecodeKey(kv.Key[fixed:], datatype.Blob, false)
	if err != nil || len(rest) == 0 {
		return bad("partition key")
	}
	region, rest := rest[0], rest[1:]
	switch region {
	case regionPartitionDeletion:
		op.Kind = mutation.KindPartitionDeletion
		return op, nil
	case regionRangeTombstone:
		op.Kind = mutation.KindRangeDeletion
		if op.Range.Start, rest, err = decodeBound(t, rest); err != nil {
			return bad("range start")
		}
		if op.Range.End, _, err = decodeBound(t, rest); err != nil {
			return bad("range end")
		}
		return op, nil
	case regionStatic:
		op.Target.Static = true
	case regionRow:
		op.Target.Clustering = make([][]byte, len(t.ClusteringTypes))
		for i, typ := range t.ClusteringTypes {
			if op.Target.Clustering[i], rest, err = storage.DecodeKey(rest, typ, t.ClusteringDesc[i]); err != nil {
				return bad("clustering")
			}
		}
		if len(rest) == 0 {
			return bad("row kind")
		}
		kind := rest[0]
		rest = rest[1:]
		switch kind {
		case rowDeletion:
			op.Kind = mutation.KindRowDeletion
			return op, nil
		case rowMarker:
			op.Kind = mutation.KindRowMarker
			return op, nil
		case rowCell:
		default:
			return bad("row kind")
		}
	default:
		return bad("region")
	}
	name, rest, err := storage.DecodeKey(rest, datatype.Varchar, false)
	if err != nil || len(rest) == 0 {
		return bad("column")
	}
	op.Target.Column = string(name)
	switch rest[0] {
	case pathSimple:
		op.Kind = mutation.KindCell
	case pathDeletion:
		op.Kind = mutation.KindCollectionDeletion
	case pathElement:
		op.Kind = mutation.KindCell
		typ, ok := pathType(t, op.Target.Column)
		if !ok {
			return op, fmt.Errorf("%w: %s.%s.%s", errNoPathType, t.Def.Keyspace, t.Def.Name, op.Target.Column)
		}
		if op.Target.Path, _, err = storage.DecodeKey(rest[1:], typ, false); err != nil {
			return bad("path")
		}
		op.Target.PathType = typ
	default:
		return bad("path kind")
	}
	return op, nil
}

func decodeBound(t *storage.Table, b []byte) (*storage.Bound, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errors.New("short")
	}
	if b[0] == boundOpen {
		return nil, b[1:], nil
	}
	n := int(b[0])
	if n > len(t.ClusteringTypes) {
		return nil, nil, errors.New("prefix too long")
	}
	b = b[1:]
	bd := &storage.Bound{Prefix: make([][]byte, n)}
	var err error
	for i := range n {
		if bd.Prefix[i], b, err = storage.DecodeKey(b, t.ClusteringTypes[i], t.ClusteringDesc[i]); err != nil {
			return nil, nil, err
		}
	}
	if len(b) == 0 {
		return nil, nil, errors.New("short")
	}
	bd.Inclusive = b[0] == 1
	return bd, b[1:], nil
}

// pathType is the type of column's element paths: a list's timeuuid, a
// set's element or a map's key when it is a native type, a user type's
// field position (smallint).
func pathType(t *storage.Table, column string) (datatype.DataType, bool) {
	var typ string
	for _, c := range t.Def.Columns {
		if c.Name == column {
			typ = strings.ReplaceAll(strings.TrimSpace(c.Type), " ", "")
		}
	}
	switch {
	case typ == "":
		return nil, false
	case strings.HasPrefix(typ, "list<"):
		return datatype.Timeuuid, true
	case strings.HasPrefix(typ, "set<"):
		return nativeType(strings.TrimSuffix(strings.TrimPrefix(typ, "set<"), ">"))
	case strings.HasPrefix(typ, "map<"):
		inner := strings.TrimPrefix(typ, "map<")
		k, _, ok := strings.Cut(inner, ",")
		if !ok {
			return nil, false
		}
		return nativeType(k)
	case strings.HasPrefix(typ, "frozen<") || strings.HasPrefix(typ, "tuple<"):
		return nil, false
	}
	if _, native := nativeType(typ); native {
		return nil, false // a simple cell has no path
	}
	return datatype.Smallint, true // a user type's field
}

var nativeTypes = func() map[string]datatype.DataType {
	m := map[string]datatype.DataType{"text": datatype.Varchar}
	for _, dt := range []datatype.DataType{datatype.Ascii, datatype.Bigint, datatype.Blob, datatype.Boolean,
		datatype.Counter, datatype.Decimal, datatype.Double, datatype.Float, datatype.Int, datatype.Timestamp,
		datatype.Uuid, datatype.Varchar, datatype.Varint, datatype.Timeuuid, datatype.Inet, datatype.Date,
		datatype.Time, datatype.Smallint, datatype.Tinyint, datatype.Duration} {
		m[dt.AsCql()] = dt
	}
	return m
}()

func nativeType(name string) (datatype.DataType, bool) {
	dt, ok := nativeTypes[strings.ToLower(name)]
	return dt, ok
}
