package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// Key layout. Every cell, marker and tombstone of a table is one pebble key,
// ordered so that a partition, a row and a clustering slice are contiguous:
//
//	partition := table id (16) | token (8, big-endian, sign bit flipped) | pk (escaped, terminated)
//
//	partition | 0x00                                   partition deletion (a tombstone cell)
//	partition | 0x01 | start bound | end bound         range tombstone (a tombstone cell)
//	partition | 0x02 | column | path                   static cell
//	partition | 0x03 | clustering | 0x00               row deletion (a tombstone cell)
//	partition | 0x03 | clustering | 0x01               row marker: the row's liveness (INSERT)
//	partition | 0x03 | clustering | 0x02 | column | path   regular cell
//
//	clustering := AppendKey(c1) | ... | AppendKey(cn), each in its column's order
//	column     := AppendKey(text, name)
//	path       := 0x00                                 simple cell
//	            | 0x01                                 collection deletion (complex deletion)
//	            | 0x02 | AppendKey(element key type, path)   collection element, or
//	                                                   user type field (path: its position, smallint)
//	bound      := count (1) | clustering prefix | inclusive (1)
//
// Values are encoded Cells (cell.go), written with pebble Merge so that
// writes are blind and reads and compactions reconcile last-write-wins.
// The region bytes put the partition deletion and range tombstones first,
// so a reader knows every deletion before it meets the rows.
//
// NB: these constants are on disk; never renumber them.
const (
	regionPartitionDeletion byte = 0x00
	regionRangeTombstone    byte = 0x01
	regionStatic            byte = 0x02
	regionRow               byte = 0x03

	rowDeletion byte = 0x00
	rowMarker   byte = 0x01
	rowCell     byte = 0x02

	pathSimple   byte = 0x00
	pathDeletion byte = 0x01
	pathElement  byte = 0x02
)

var errBadKey = errors.New("storage: malformed key")

// tablePrefix returns the key prefix of all of a table's data.
func tablePrefix(id [16]byte) []byte { return append([]byte(nil), id[:]...) }

// appendToken appends a token so that bytewise order is signed order.
func appendToken(dst []byte, token int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(token)^(1<<63))
}

func readToken(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// partitionPrefix appends the key prefix of one partition. pk is the
// serialized partition key (CompositeKey for several columns).
func (t *Table) partitionPrefix(dst []byte, pk []byte) ([]byte, error) {
	dst = append(dst, t.Def.ID[:]...)
	dst = appendToken(dst, Token(pk))
	return AppendKey(dst, datatype.Blob, pk, false)
}

// partitionKeyOf is a copy of the partition key in a partition's key
// prefix (partitionPrefix), nil if it does not decode.
func partitionKeyOf(prefix []byte) []byte {
	const head = len([16]byte{}) + 8 // table id, token
	if len(prefix) < head {
		return nil
	}
	pk, _, err := DecodeKey(prefix[head:], datatype.Blob, false)
	if err != nil {
		return nil
	}
	return append([]byte(nil), pk...)
}

// appendClustering appends a full or prefix clustering.
func (t *Table) appendClustering(dst []byte, ck [][]byte) ([]byte, error) {
	if len(ck) > len(t.ClusteringTypes) {
		return nil, fmt.Errorf("storage: %d clustering values for %d columns", len(ck), len(t.ClusteringTypes))
	}
	var err error
	for i, v := range ck {
		if dst, err = AppendKey(dst, t.ClusteringTypes[i], v, t.ClusteringDesc[i]); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// decodeClustering reads a full clustering from the front of b.
func (t *Table) decodeClustering(b []byte) ([][]byte, []byte, error) {
	ck := make([][]byte, len(t.ClusteringTypes))
	for i, typ := range t.ClusteringTypes {
		v, rest, err := DecodeKey(b, typ, t.ClusteringDesc[i])
		if err != nil {
			return nil, nil, err
		}
		ck[i], b = v, rest
	}
	return ck, b, nil
}

// appendRowKey appends to a partition prefix the key of row ck's entry
// of kind (rowDeletion, rowMarker or rowCell).
func (t *Table) appendRowKey(k []byte, ck [][]byte, kind byte) ([]byte, error) {
	if len(ck) != len(t.ClusteringTypes) {
		return nil, fmt.Errorf("storage: %d clustering values for %d columns", len(ck), len(t.ClusteringTypes))
	}
	k = append(k, regionRow)
	k, err := t.appendClustering(k, ck)
	if err != nil {
		return nil, err
	}
	return append(k, kind), nil
}

// appendCellKey appends to a partition prefix the key of tg's cell up to
// and including its path kind (and the path of an element).
func (t *Table) appendCellKey(k []byte, tg CellTarget, kind byte) ([]byte, error) {
	var err error
	if tg.Static {
		k = append(k, regionStatic)
	} else if k, err = t.appendRowKey(k, tg.Clustering, rowCell); err != nil {
		return nil, err
	}
	k = appendColumn(k, tg.Column)
	k = append(k, kind)
	switch {
	case kind != pathElement:
	case tg.PathType == nil:
		k = append(k, tg.Path...) // already in key encoding
	default:
		if k, err = AppendKey(k, tg.PathType, tg.Path, false); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// appendColumn appends a column name as AppendKey encodes text.
func appendColumn(dst []byte, name string) []byte {
	if strings.IndexByte(name, 0) >= 0 {
		return appendEscaped(dst, []byte(name))
	}
	dst = append(dst, name...) // no byte to escape, nothing to allocate
	return append(dst, keyEscape, keyStringTerm)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // no upper bound
}

// Comparer orders keys bytewise, as pebble's default comparer does, and
// splits off each key's partition prefix (table id | token | pk), so that
// sstables carry bloom filters of partitions and a partition read skips
// every file that does not hold its partition. Keys outside the layout
// (the engine's own, such as flushedKey) are their own prefix.
//
// NB: its name is on disk; a database made with it opens only with it.
var Comparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = partitionSplit
	c.Name = "cqld.partition.v1"
	return &c
}()

// partitionSplit returns the length of key's partition prefix: 16 bytes of
// table id, 8 of token, then the escaped partition key up to and including
// its 00 01 terminator.
func partitionSplit(key []byte) int {
	const fixed = 16 + 8
	if len(key) < fixed+2 {
		return len(key)
	}
	for i := fixed; i+1 < len(key); i++ {
		if key[i] != keyEscape {
			continue
		}
		if key[i+1] == keyStringTerm {
			return i + 2
		}
		i++ // 00 FF: an escaped 00
	}
	return len(key)
}
