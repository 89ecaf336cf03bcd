package storage

import (
	"crypto/md5"
	"encoding/binary"
)

// DigestSize is the length of a partition digest.
const DigestSize = md5.Size

// Digest is a fixed-size summary of an unresolved partition: a coordinator
// reads data from one replica and digests from the others, and only when
// they differ reads them all in full (as Cassandra does, with MD5 too).
type Digest [DigestSize]byte

// PartitionDigest digests p's keys and cells, each with its length so
// that no two partitions run together to the same bytes. Two replicas
// holding the same cells give the same digest whatever their flush and
// compaction history: a key's value is the encoding of the cell that won,
// unchanged by the merge (merge.go). A replica that has purged a tombstone
// another still holds digests differently; the full read that follows
// finds them equal once resolved.
func PartitionDigest(p *Partition) Digest {
	h := md5.New()
	var n [binary.MaxVarintLen64]byte
	for _, kv := range p.KVs {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(kv.Key)))])
		h.Write(kv.Key)
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(kv.Value)))])
		h.Write(kv.Value)
	}
	var d Digest
	h.Sum(d[:0])
	return d
}

// Size is the bytes of p's keys and cells, what a page of partitions is
// bounded by.
func (p *Partition) Size() int {
	n := len(p.Key)
	for _, kv := range p.KVs {
		n += len(kv.Key) + len(kv.Value)
	}
	return n
}
