//go:build race

package replica

// raceEnabled is set under the race detector, which makes the storage
// engine some twenty times slower: the randomized tests run fewer seeds
// under it, and all of them without it.
const raceEnabled = true
