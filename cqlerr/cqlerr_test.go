package cqlerr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A message the protocol's 16-bit string length cannot carry is cut on a
// character boundary; a short one is kept whole.
func TestTruncate(t *testing.T) {
	if got := Truncate("short"); got != "short" {
		t.Fatalf("Truncate(short) = %q", got)
	}
	long := strings.Repeat("é", MaxMessage) // two bytes each
	got := Invalidf("value %s", long).Error()
	if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "(truncated)") {
		t.Fatalf("a %d-byte message became %d bytes (valid UTF-8 %v)", len(long), len(got), utf8.ValidString(got))
	}
}
