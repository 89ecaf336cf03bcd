// Package israce says whether the binary runs under the race detector,
// which makes sync.Pool drop items at random (skewing allocation counts)
// and the storage engine some twenty times slower: tests that count
// allocations, or run many randomized seeds, look at Enabled.
package israce
