package stress

import (
	"strings"
	"testing"
)

func TestLZ4RoundTrip(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("x"), []byte(strings.Repeat("abc", 1000)), valuePool(1)[:5000]} {
		enc, err := LZ4{}.Encode(in)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := LZ4{}.Decode(enc)
		if err != nil || string(dec) != string(in) {
			t.Fatalf("round trip of %d bytes: %v", len(in), err)
		}
	}
	if _, err := (LZ4{}).Decode([]byte{0, 0}); err == nil {
		t.Error("a truncated body decoded")
	}
}

// FuzzLZ4Decode: a body from the server never panics the decoder, and what
// Encode makes decodes back.
func FuzzLZ4Decode(f *testing.F) {
	for _, s := range []string{"", "\x00\x00\x00\x05\x50hello", "\x00\x00\x00\x10\xf0", "\xff\xff\xff\xff\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = LZ4{}.Decode(b)
		enc, err := LZ4{}.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		if dec, err := (LZ4{}).Decode(enc); err != nil || string(dec) != string(b) {
			t.Fatalf("round trip of %d bytes: %v", len(b), err)
		}
	})
}
