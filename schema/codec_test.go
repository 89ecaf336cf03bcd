package schema

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func sampleChanges() []Change {
	return []Change{
		{},
		{Keyspace: "ks", Statement: "CREATE TABLE t (k int PRIMARY KEY, v text)", Time: 1_700_000_000_000_000,
			TableID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, DataCenters: []string{"dc1", "dc2"}},
		{Statement: "ALTER TABLE ks.t DROP v", Time: -1, DataCenters: []string{"datacenter1"}},
	}
}

// Every change decodes to itself, and its encoding is all Decode accepts:
// each shorter prefix and each longer one is refused as corrupt.
func TestCodecRoundTrip(t *testing.T) {
	for _, ch := range sampleChanges() {
		b, err := ch.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%+v: %v", ch, err)
		}
		if !reflect.DeepEqual(got, ch) {
			t.Fatalf("decoded %+v, want %+v", got, ch)
		}
		for n := range len(b) {
			if _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d of %d bytes: err %v, want ErrCorrupt", n, len(b), err)
			}
		}
		if _, err := Decode(append(b, 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a trailing byte: err %v, want ErrCorrupt", err)
		}
	}
}

func TestCodecLimits(t *testing.T) {
	long := Change{Statement: strings.Repeat("x", MaxStatement+1)}
	if _, err := long.Append(nil); err == nil {
		t.Fatal("a statement over MaxStatement encoded")
	}
	many := Change{DataCenters: make([]string, MaxDataCenters+1)}
	if _, err := many.Append(nil); err == nil {
		t.Fatal("more than MaxDataCenters data centers encoded")
	}
	// A length claiming more than MaxStatement is refused before reading.
	b := []byte{codecVersion, 0, 0, 0xff, 0xff, 0xff, 0xff}
	if _, err := Decode(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("huge statement length: err %v", err)
	}
	if _, err := Decode([]byte{2}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown version: err %v", err)
	}
}

// FuzzDecode feeds Decode arbitrary bytes: it must never panic, and what
// it accepts must encode back to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, ch := range sampleChanges() {
		b, err := ch.Append(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ch, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := ch.Append(nil)
		if err != nil {
			t.Fatalf("a decoded change does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoded %x, decoded from %x", again, b)
		}
	})
}
