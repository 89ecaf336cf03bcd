package describe

import (
	"encoding/hex"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
)

// page runs DESCRIBE SCHEMA over s with a page size of 3 from state.
func page(t *testing.T, s Schema, v primitive.ProtocolVersion, release string, state []byte) (*Result, error) {
	t.Helper()
	st, _, err := statements.Parse("DESCRIBE SCHEMA")
	if err != nil {
		t.Fatal(err)
	}
	return Describe(&Request{Statement: st.(*statements.Describe), Schema: s, ReleaseVersion: release, PageSize: 3, PagingState: state, Version: v})
}

func TestDescribePaging(t *testing.T) {
	s := testSchema()
	s.Version = [16]byte{1, 2, 3}
	all := describe(t, "", "DESCRIBE SCHEMA", s)
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion3, primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		var got []string
		var state []byte
		for pages := 0; ; pages++ {
			if pages > len(all) {
				t.Fatalf("v%d: no last page", v)
			}
			res, err := page(t, s, v, "4.0.11", state)
			if err != nil {
				t.Fatalf("v%d page %d: %v", v, pages, err)
			}
			for _, r := range res.Rows {
				got = append(got, string(r[2]))
			}
			// Cassandra gives a paging state whenever a page is full, so
			// an answer of a multiple of the page size ends with an empty
			// page.
			if (len(res.Rows) == 3) != (res.PagingState != nil) {
				t.Fatalf("v%d: a page of %d rows with paging state %x", v, len(res.Rows), res.PagingState)
			}
			if res.PagingState == nil {
				break
			}
			state = res.PagingState
		}
		if len(got) != len(all) {
			t.Fatalf("v%d: %d rows paged, %d at once", v, len(got), len(all))
		}
		for i := range all {
			if got[i] != all[i][2] {
				t.Errorf("v%d: row %d %s, want %s", v, i, got[i], all[i][2])
			}
		}
	}

	first, err := page(t, s, primitive.ProtocolVersion4, "4.0.11", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The partition key holds version 1, "4.0.11", the schema version and
	// the next offset, 3; then no row mark and two Integer.MAX_VALUE.
	if got, want := hex.EncodeToString(first.PagingState), "220001"+"0006"+hex.EncodeToString([]byte("4.0.11"))+hex.EncodeToString(s.Version[:])+"0000000000000003"+"00"+"f07fffffff"+"f07fffffff"; got != want {
		t.Errorf("paging state %s, want %s", got, want)
	}
	changed := s
	changed.Version[0]++
	for _, tc := range []struct {
		s       Schema
		release string
		state   []byte
		code    primitive.ErrorCode
		msg     string
	}{
		{changed, "4.0.11", first.PagingState, primitive.ErrorCodeInvalid, "The schema has changed since the previous page of the DESCRIBE statement result. Please retry the DESCRIBE statement."},
		{s, "4.0.12", first.PagingState, primitive.ErrorCodeInvalid, "The server version of the paging state 4.0.11 is different from the one of the server 4.0.12"},
		{s, "4.0.11", []byte{1, 2, 3}, primitive.ErrorCodeProtocolError, "Invalid value for the paging state"},
		{s, "4.0.11", encodeBadVersion(), primitive.ErrorCodeInvalid, "Incompatible paging state"},
	} {
		_, err := page(t, tc.s, primitive.ProtocolVersion4, tc.release, tc.state)
		ce, ok := err.(*cqlerr.Error)
		if !ok || ce.Code != tc.code || ce.Msg != tc.msg {
			t.Errorf("%x: %v, want %s", tc.state, err, tc.msg)
		}
	}
}

func encodeBadVersion() []byte {
	b := encodePagingState(3, primitive.ProtocolVersion4, "4.0.11", [16]byte{})
	b[2] = 9
	return b
}

func TestUnsignedVInt(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 255, 1 << 14, 1<<31 - 1, 1 << 40, 1<<63 + 5, ^uint64(0)} {
		b := appendUnsignedVInt(nil, v)
		got, rest, ok := readUnsignedVInt(b)
		if !ok || got != v || len(rest) != 0 {
			t.Errorf("%d: %x read back %d %v %x", v, b, got, ok, rest)
		}
	}
	if got := hex.EncodeToString(appendUnsignedVInt(nil, 1<<31-1)); got != "f07fffffff" {
		t.Errorf("Integer.MAX_VALUE as a vint: %s", got)
	}
}

// FuzzDescribePagingState feeds decodePagingState what a client may send:
// it must not panic, and a state it accepts resumes at no negative
// offset.
func FuzzDescribePagingState(f *testing.F) {
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion3, primitive.ProtocolVersion4} {
		f.Add(encodePagingState(7, v, "4.0.11", [16]byte{}), uint8(v))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint8(4))
	f.Fuzz(func(t *testing.T, b []byte, v uint8) {
		off, err := decodePagingState(b, primitive.ProtocolVersion(v), "4.0.11", [16]byte{})
		if err == nil && off < 0 {
			t.Fatalf("offset %d", off)
		}
	})
}
