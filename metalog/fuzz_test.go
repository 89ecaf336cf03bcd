package metalog

import (
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// FuzzDecodeMessage: bytes from a peer never panic, and what decodes
// encodes back to the same message.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range testMessages() {
		b, err := encodeMessage(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			return
		}
		again, err := encodeMessage(m)
		if err != nil {
			t.Fatalf("%T decoded but does not encode: %v", m, err)
		}
		m2, err := decodeMessage(again)
		if err != nil {
			t.Fatalf("%T re-encoded does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("%T: %+v became %+v", m, m, m2)
		}
	})
}

// FuzzDecodeStoredLog: a log entry read from disk never panics.
func FuzzDecodeStoredLog(f *testing.F) {
	for _, l := range []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogCommand, Data: seal(proposalID{1}, []byte("x"))},
		{Index: 2, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(testConfiguration())},
	} {
		e := &encoder{b: []byte{codecVersion}}
		if err := appendLog(e, l, false); err != nil {
			f.Fatal(err)
		}
		f.Add(e.b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		_ = decodeStoredLog(b, &l)
	})
}
