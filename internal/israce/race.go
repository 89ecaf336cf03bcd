//go:build race

package israce

// Enabled is set under the race detector.
const Enabled = true
