package test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// TestHardeningPrepareMarkerLimit prepares statements with 65,535 and
// 65,536 bind markers: a request can bind at most 65,535 values, so the
// second is refused with Cassandra's message.
func TestHardeningPrepareMarkerLimit(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "hardening_markers")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v int)`)
	w := dial(t, node.Addr())
	w.handshake()

	in := func(n int) string {
		return "SELECT v FROM hardening_markers.t WHERE k IN (" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
	}
	resp := w.roundTrip(primitive.ProtocolVersion4, 2, &message.Prepare{Query: in(65535)})
	if p, ok := resp.(*message.PreparedResult); !ok || len(p.VariablesMetadata.Columns) != 65535 {
		t.Fatalf("65,535 markers: got %v", resp)
	}
	resp = w.roundTrip(primitive.ProtocolVersion4, 3, &message.Prepare{Query: in(65536)})
	const want = "Too many markers(?). 65536 markers exceed the allowed maximum of 65535"
	if e, ok := resp.(*message.Invalid); !ok || e.ErrorMessage != want {
		t.Fatalf("65,536 markers: got %v; want INVALID %q", resp, want)
	}
	alive(t, node.Addr())
}

// TestHardeningMalformedDuration binds duration values whose bytes do not
// decode, or decode to what Cassandra refuses: each is refused with
// INVALID and nothing is stored, while a well-formed value is.
func TestHardeningMalformedDuration(t *testing.T) {
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "hardening_duration")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, d duration, l list<duration>)`)
	w := dial(t, node.Addr())
	w.handshake()
	prepare := func(stream int16, q string) []byte {
		resp := w.roundTrip(primitive.ProtocolVersion4, stream, &message.Prepare{Query: q})
		p, ok := resp.(*message.PreparedResult)
		if !ok {
			t.Fatalf("PREPARE %s: %v", q, resp)
		}
		return p.PreparedQueryId
	}
	insert := prepare(2, `INSERT INTO hardening_duration.t (k, d) VALUES (?, ?)`)
	insertList := prepare(3, `INSERT INTO hardening_duration.t (k, l) VALUES (?, ?)`)
	execute := func(stream int16, id []byte, k byte, value string) message.Message {
		v, err := hex.DecodeString(value)
		if err != nil {
			t.Fatal(err)
		}
		return w.roundTrip(primitive.ProtocolVersion4, stream, &message.Execute{QueryId: id, Options: &message.QueryOptions{
			Consistency:      primitive.ConsistencyLevelOne,
			PositionalValues: []*primitive.Value{primitive.NewValue([]byte{0, 0, 0, k}), primitive.NewValue(v)},
		}})
	}

	for i, tc := range []struct{ value, err string }{
		{"ffffff", "Invalid duration value: its months, days and nanoseconds need more than its 3 bytes"},
		{"ffffffffffffffffff", "Invalid duration value: its months, days and nanoseconds need more than its 9 bytes"},
		{"01", "Expected at least 3 bytes for a duration (1)"},
		{"", "Expected at least 3 bytes for a duration (0)"},
		{"040300", "The duration months, days and nanoseconds must be all of the same sign (2, -2, 0)"},
		{"f1000000010000", "The duration months must be a 32 bits integer but was: -2147483649"},
	} {
		k := byte(10 + i)
		resp := execute(int16(10+i), insert, k, tc.value)
		if e, ok := resp.(*message.Invalid); !ok || e.ErrorMessage != tc.err {
			t.Errorf("duration %q: got %v; want INVALID %q", tc.value, resp, tc.err)
		}
		list := fmt.Sprintf("00000001%08x%s", len(tc.value)/2, tc.value)
		if resp := execute(int16(40+i), insertList, k, list); resp.GetOpCode() != primitive.OpCodeError {
			t.Errorf("list of duration %q: got %v; want INVALID", tc.value, resp)
		}
	}
	if resp := execute(70, insert, 1, "02040a"); resp.GetOpCode() != primitive.OpCodeResult {
		t.Fatalf("well-formed duration: got %v", resp)
	}
	var n int
	if err := s.Query(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows stored: %d, %v; want only the well-formed one", n, err)
	}
	var d gocql.Duration
	if err := s.Query(`SELECT d FROM t WHERE k = 1`).Scan(&d); err != nil || d != (gocql.Duration{Months: 1, Days: 2, Nanoseconds: 5}) {
		t.Fatalf("well-formed duration reads back as %+v, %v", d, err)
	}
}
