//go:build !race

package statements

const raceEnabled = false
