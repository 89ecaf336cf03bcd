package pebblefatal

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

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

// Logger is a pebble.Logger writing to slog. A fatal message that
// Handles takes goes to Failed instead of ending the process; every other
// one ends it, as pebble asks. Failed runs with pebble's locks held: it
// must only record and signal.
type Logger struct {
	Log     *slog.Logger
	Handles func(msg string) bool // nil: none
	Failed  func(msg string)
}

var _ pebble.Logger = Logger{}

func (l Logger) Infof(format string, args ...any) {
	l.Log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (l Logger) Errorf(format string, args ...any) {
	l.Log.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (l Logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l.Handles != nil && l.Handles(msg) {
		l.Failed(msg)
		return
	}
	l.Log.Error("pebble: fatal: " + msg)
	panic(msg)
}
