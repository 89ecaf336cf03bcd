package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Murmur3 partitioner.
//
// Drivers compute the token of a partition key themselves to route each
// request straight to a replica, so our token must equal Cassandra's bit for
// bit, including the quirks of Cassandra's port of MurmurHash3:
//
//   - src/java/org/apache/cassandra/utils/MurmurHash.java, hash3_x64_128:
//     the 16-byte blocks are read as unsigned little-endian longs (getBlock
//     masks each byte with 0xff), but the tail bytes are widened with
//     ((long) key.get(i)) << n, i.e. as *signed* Java bytes. A tail byte
//     >= 0x80 therefore sign-extends and sets all the higher bits of k1/k2,
//     which the reference C implementation does not do.
//   - src/java/org/apache/cassandra/dht/Murmur3Partitioner.java, getToken:
//     the token is hash[0] (h1), except that an empty key is the minimum
//     token Long.MIN_VALUE, and a hash equal to Long.MIN_VALUE is moved to
//     Long.MAX_VALUE (normalize) so that no real key has the minimum token,
//     which Cassandra reserves as the start of the ring.

const (
	murmurC1 = 0x87c37b91114253d5
	murmurC2 = 0x4cf5ad432745937f
)

// MinToken is the minimum Murmur3 token (Long.MIN_VALUE). Cassandra gives it
// to the empty key only and uses it as the ring's start: the token range
// (MinToken, t] selects every key whose token is <= t.
const MinToken int64 = math.MinInt64

// Token returns Cassandra's Murmur3Partitioner token of the serialized
// partition key (for a composite partition key, the bytes from
// CompositeKey). It equals Murmur3Partitioner.getToken: h1 of
// MurmurHash.hash3_x64_128(key, 0, len, seed 0) with Cassandra's signed tail
// bytes, Long.MIN_VALUE mapped to Long.MAX_VALUE, and MinToken for the empty
// key.
func Token(partitionKey []byte) int64 {
	if len(partitionKey) == 0 {
		return MinToken
	}
	return normalizeToken(murmur3H1(partitionKey))
}

// normalizeToken is Murmur3Partitioner.normalize: MinToken is reserved for
// the empty key, so a hash equal to it becomes math.MaxInt64.
func normalizeToken(h int64) int64 {
	if h == math.MinInt64 {
		return math.MaxInt64
	}
	return h
}

// murmur3H1 is h1 of Cassandra's MurmurHash.hash3_x64_128 with seed 0.
func murmur3H1(key []byte) int64 {
	var h1, h2 uint64
	n := len(key)
	nblocks := n / 16
	for i := 0; i < nblocks; i++ {
		k1 := binary.LittleEndian.Uint64(key[i*16:])
		k2 := binary.LittleEndian.Uint64(key[i*16+8:])

		k1 *= murmurC1
		k1 = rotl64(k1, 31)
		k1 *= murmurC2
		h1 ^= k1

		h1 = rotl64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729

		k2 *= murmurC2
		k2 = rotl64(k2, 33)
		k2 *= murmurC1
		h2 ^= k2

		h2 = rotl64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}

	tail := key[nblocks*16:]
	// signed widens a tail byte the way Java's (long) cast of a byte does.
	signed := func(b byte) uint64 { return uint64(int64(int8(b))) }
	var k1, k2 uint64
	switch n & 15 {
	case 15:
		k2 ^= signed(tail[14]) << 48
		fallthrough
	case 14:
		k2 ^= signed(tail[13]) << 40
		fallthrough
	case 13:
		k2 ^= signed(tail[12]) << 32
		fallthrough
	case 12:
		k2 ^= signed(tail[11]) << 24
		fallthrough
	case 11:
		k2 ^= signed(tail[10]) << 16
		fallthrough
	case 10:
		k2 ^= signed(tail[9]) << 8
		fallthrough
	case 9:
		k2 ^= signed(tail[8])
		k2 *= murmurC2
		k2 = rotl64(k2, 33)
		k2 *= murmurC1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= signed(tail[7]) << 56
		fallthrough
	case 7:
		k1 ^= signed(tail[6]) << 48
		fallthrough
	case 6:
		k1 ^= signed(tail[5]) << 40
		fallthrough
	case 5:
		k1 ^= signed(tail[4]) << 32
		fallthrough
	case 4:
		k1 ^= signed(tail[3]) << 24
		fallthrough
	case 3:
		k1 ^= signed(tail[2]) << 16
		fallthrough
	case 2:
		k1 ^= signed(tail[1]) << 8
		fallthrough
	case 1:
		k1 ^= signed(tail[0])
		k1 *= murmurC1
		k1 = rotl64(k1, 31)
		k1 *= murmurC2
		h1 ^= k1
	}

	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	return int64(h1)
}

func rotl64(v uint64, n uint) uint64 { return v<<n | v>>(64-n) }

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// MaxKeyComponentLength is the longest partition key (or partition key
// component) Cassandra accepts: keys are written with an unsigned 16-bit
// length, and a longer one is refused with "Key length of N is longer than
// maximum of 65535".
const MaxKeyComponentLength = 0xFFFF

// CompositeKey returns the serialized partition key of a table whose
// partition key has the given components (each already serialized), as
// Cassandra builds it and as drivers build it to compute the routing token:
// a single component is the component's bytes themselves; several components
// are CompositeType-encoded, each as [2-byte big-endian length][bytes][0x00
// end-of-component] (db/marshal/CompositeType.build).
//
// The result is a fresh slice. A component longer than MaxKeyComponentLength
// cannot be encoded and makes CompositeKey panic; code handling client input
// uses AppendCompositeKey, which returns an error instead.
func CompositeKey(components ...[]byte) []byte {
	k, err := AppendCompositeKey(nil, components...)
	if err != nil {
		panic(err)
	}
	return k
}

// AppendCompositeKey appends the serialized partition key of the given
// components to dst (see CompositeKey). It fails, as Cassandra does, when a
// component (or a single-component key) is longer than MaxKeyComponentLength.
func AppendCompositeKey(dst []byte, components ...[]byte) ([]byte, error) {
	if len(components) == 1 {
		if len(components[0]) > MaxKeyComponentLength {
			return dst, fmt.Errorf("Key length of %d is longer than maximum of %d", len(components[0]), MaxKeyComponentLength)
		}
		return append(dst, components[0]...), nil
	}
	for _, c := range components {
		if len(c) > MaxKeyComponentLength {
			return dst, fmt.Errorf("Key length of %d is longer than maximum of %d", len(c), MaxKeyComponentLength)
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(c)))
		dst = append(dst, c...)
		dst = append(dst, 0)
	}
	return dst, nil
}
