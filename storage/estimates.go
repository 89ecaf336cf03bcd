package storage

import (
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// estimateSample is how many partitions EstimateRange counts before it
// extrapolates from the bytes on disk.
const estimateSample = 256

// EstimateRange estimates how many partitions t has with tokens in
// (start, end] (start < end: a range that wraps is two calls) and their
// mean size in bytes, as system.size_estimates shows them: the
// partitions are counted, up to a sample, and beyond it extrapolated
// from the bytes on disk in the range, as Cassandra's estimates come from
// its sstables' metadata. The mean size is of the bytes on disk, so
// partitions only in memtables are counted, with no size, until flushed.
// It is safe for concurrent use.
func (e *Engine) EstimateRange(t *Table, start, end int64) (partitions, meanSize int64, err error) {
	table := tablePrefix(t.Def.ID)
	lower, upper := table, prefixEnd(table)
	if start != math.MaxInt64 {
		lower = appendToken(append([]byte(nil), table...), start+1)
	}
	if end != math.MaxInt64 {
		upper = appendToken(append([]byte(nil), table...), end+1)
	}
	if start >= end {
		return 0, 0, nil
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return 0, 0, err
	}
	var n int64
	var last []byte
	valid := it.First()
	for ; valid && n < estimateSample; n++ {
		key := it.Key()
		if len(key) < len(table)+8 {
			it.Close()
			return 0, 0, errBadKey
		}
		_, rest, err := DecodeKey(key[len(table)+8:], datatype.Blob, false)
		if err != nil {
			it.Close()
			return 0, 0, errBadKey
		}
		last = prefixEnd(key[:len(key)-len(rest)])
		valid = it.SeekGE(last)
	}
	more := valid
	if err := it.Close(); err != nil {
		return 0, 0, err
	}
	if n == 0 {
		return 0, 0, nil
	}
	onDisk, err := e.db.EstimateDiskUsage(lower, upper)
	if err != nil {
		return 0, 0, err
	}
	if !more {
		return n, int64(onDisk) / n, nil
	}
	sampled, err := e.db.EstimateDiskUsage(lower, last)
	if err != nil {
		return 0, 0, err
	}
	if sampled == 0 {
		return n, int64(onDisk) / n, nil
	}
	return int64(float64(n) * float64(onDisk) / float64(sampled)), int64(sampled) / n, nil
}
