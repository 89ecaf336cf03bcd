//go:build race

package storage

// raceEnabled is set under the race detector, which makes sync.Pool drop
// items at random and so skews allocation counts.
const raceEnabled = true
