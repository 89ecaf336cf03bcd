package describe

import (
	"math/bits"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// What Cassandra's Java prints its way: the iteration order of the
// java.util.HashMaps some of DESCRIBE's maps are, and endpoints. Doubles
// are types.JavaFloatString's.

// javaStringHash is String.hashCode: over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaBytesHash is ByteBuffer.hashCode over b: its bytes signed, from the
// last.
func javaBytesHash(b []byte) int32 {
	h := int32(1)
	for i := len(b) - 1; i >= 0; i-- {
		h = 31*h + int32(int8(b[i]))
	}
	return h
}

// javaHashOrder returns the indexes 0..len(hashes)-1 in the order a
// java.util.HashMap of capacity capacity (a power of two) holding keys of
// those hashes, put in index order, iterates them: by bucket, then in the
// order they were put (resizes keep it).
func javaHashOrder(hashes []int32, capacity int) []int {
	idx := make([]int, len(hashes))
	bucket := make([]int, len(hashes))
	for i, h := range hashes {
		idx[i] = i
		u := uint32(h)
		bucket[i] = int((u ^ u>>16) & uint32(capacity-1))
	}
	sort.SliceStable(idx, func(a, b int) bool { return bucket[idx[a]] < bucket[idx[b]] })
	return idx
}

// javaGrownCapacity is the capacity of a HashMap made with the default
// capacity (16) after n puts: doubled whenever its size passed three
// quarters of it.
func javaGrownCapacity(n int) int {
	c := 16
	for n > c*3/4 {
		c *= 2
	}
	return c
}

// javaCopyCapacity is the capacity of new HashMap(m) for a map m of n
// entries: tableSizeFor((int) (n / 0.75f + 1.0f)).
func javaCopyCapacity(n int) int {
	t := int(float32(n)/0.75 + 1.0)
	if t <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(t-1))
}

// javaEndpoint is InetAddressAndPort.toString for an address without a
// host name: "/127.0.0.1:7000", "/[0:0:0:0:0:0:0:1]:7000".
func javaEndpoint(a netip.AddrPort) string {
	ip := a.Addr().Unmap()
	port := strconv.Itoa(int(a.Port()))
	if ip.Is4() {
		return "/" + ip.String() + ":" + port
	}
	// Inet6Address.getHostAddress: eight groups in lower-case hex,
	// none left out.
	b := ip.As16()
	var groups [8]string
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(b[2*i])<<8|uint64(b[2*i+1]), 16)
	}
	host := strings.Join(groups[:], ":")
	if z := ip.Zone(); z != "" {
		host += "%" + z
	}
	return "/[" + host + "]:" + port
}
