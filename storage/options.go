package storage

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Pebble's defaults suit a test: a 4 MiB memtable, compactions out of L0
// from four files, one compaction at a time. A database node ingesting
// large rows needs bigger memtables (fewer, larger flushes, so fewer L0
// files to compact), L0 compacted in large batches and writes stopped late
// (a stall costs every client; a few more L0 files cost reads a little),
// and a second compaction when debt builds.
// docs/benchmarks/pebble-options.md has each choice measured; CockroachDB's
// settings were the starting point.
const (
	// DefaultMemTableSize is one memtable's size. Pebble flushes a full
	// memtable while writes go on into the next one.
	DefaultMemTableSize = 64 << 20
	// memTables is how many memtables (the mutable one and those queued
	// for flush) pebble keeps before it stalls writes.
	memTables = 4
	// l0CompactionThreshold is the L0 read amplification at which a
	// compaction out of L0 starts; l0StopWrites the one at which writes
	// stop until compactions catch up. With keys spread over the whole
	// ring every L0 file overlaps all of the level below, so a compaction
	// out of L0 rewrites that level whatever it brings: bringing more at
	// once rewrites it less often, for a few more files a read consults.
	l0CompactionThreshold = 8
	l0StopWrites          = 40
	// lBaseMaxBytes is the target size of the level L0 compacts into.
	lBaseMaxBytes = 256 << 20
	// compactionsMin and compactionsMax bound the concurrent compactions:
	// pebble runs more than the minimum when L0 or the compaction debt
	// grows.
	compactionsMin, compactionsMax = 1, 2
	// bytesPerSync is how much an sstable writer writes between syncs of
	// what it wrote, so a flush or compaction never makes one large
	// writeback burst that the commit log's fdatasync queues behind.
	bytesPerSync = 1 << 20
	// blockSize is a table's data block size before compression: each
	// block costs a checksum, an index entry and a compression call, which
	// on pebble's 4 KiB blocks weighed on every flush and compaction.
	// CockroachDB uses 32 KiB; Cassandra's chunk_length_in_kb is 16.
	blockSize = 32 << 10
)

// lsmOptions are pebble's options for the engine, beyond the file system,
// cache, logger and event listener that OpenEngine sets.
func lsmOptions(o EngineOptions) *pebble.Options {
	po := &pebble.Options{
		Comparer:   Comparer,
		Merger:     CellMerger,
		DisableWAL: true,

		MemTableSize:                uint64(DefaultMemTableSize),
		MemTableStopWritesThreshold: memTables,
		L0CompactionThreshold:       l0CompactionThreshold,
		L0StopWritesThreshold:       l0StopWrites,
		LBaseMaxBytes:               lBaseMaxBytes,
		CompactionConcurrencyRange:  func() (int, int) { return compactionsMin, compactionsMax },
		BytesPerSync:                bytesPerSync,
	}
	if o.MemTableSize > 0 {
		po.MemTableSize = uint64(o.MemTableSize)
	}
	for i := range po.Levels {
		// Bloom filters of partition prefixes (Comparer.Split) at every
		// level: a partition read consults only the files that may hold
		// it.
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
		po.Levels[i].BlockSize = blockSize
	}
	return po
}

// MaxCompactions is how many compactions the LSM runs at once, at most.
const MaxCompactions = compactionsMax
