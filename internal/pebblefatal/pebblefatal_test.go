package pebblefatal

import "testing"

func TestIsManifestWrite(t *testing.T) {
	for msg, want := range map[string]bool{
		"MANIFEST write failed: write 000003: no space left on device": true,
		"MANIFEST sync failed: input/output error":                     true,
		"pebble: fatal commit error: no space left on device":          false,
		"mergingIter: lower bound violation":                           false,
	} {
		if got := IsManifestWrite(msg); got != want {
			t.Errorf("IsManifestWrite(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestIsCommitWrite(t *testing.T) {
	if !IsCommitWrite("pebble: fatal commit error: write 000002.log: no space left on device") {
		t.Error("a failed commit not recognised")
	}
	if IsCommitWrite("MANIFEST write failed: no space left on device") {
		t.Error("a MANIFEST write taken for a commit")
	}
}
