package pebblefatal

import "strings"

// manifestWrites prefix the messages about writing the MANIFEST.
var manifestWrites = []string{
	"MANIFEST create failed",
	"MANIFEST next record write failed",
	"MANIFEST write failed",
	"MANIFEST flush failed",
	"MANIFEST sync failed",
	"MANIFEST set current failed",
}

// IsManifestWrite reports whether msg is about a MANIFEST write or sync
// that failed.
func IsManifestWrite(msg string) bool {
	for _, p := range manifestWrites {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// IsCommitWrite reports whether msg is about a batch commit that failed
// (its WAL write or sync), after which pebble's commit pipeline cannot go
// on.
func IsCommitWrite(msg string) bool {
	return strings.HasPrefix(msg, "pebble: fatal commit error")
}
