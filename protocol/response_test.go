package protocol

import (
	"bytes"
	"encoding/binary"
	"net"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// sampleResponses are one response of each kind a server sends, with
// every field the decoders walk.
func sampleResponses(v primitive.ProtocolVersion) []message.Message {
	udt := &datatype.UserDefined{Keyspace: "ks", Name: "addr", FieldNames: []string{"street", "zip"},
		FieldTypes: []datatype.DataType{datatype.Varchar, datatype.NewList(datatype.Int)}}
	cols := []*message.ColumnMetadata{
		{Keyspace: "ks", Table: "t", Name: "k", Type: datatype.Int},
		{Keyspace: "ks", Table: "t", Name: "m", Type: datatype.NewMap(datatype.Varchar, datatype.NewTuple(datatype.Uuid, udt))},
		{Keyspace: "ks", Table: "t", Name: "s", Type: datatype.NewSet(datatype.NewCustom("org.apache.cassandra.db.marshal.DurationType"))},
	}
	prepared := &message.PreparedResult{PreparedQueryId: []byte("0123456789abcdef"), ResultMetadataId: resultIDFor(v),
		VariablesMetadata: &message.VariablesMetadata{PkIndices: []uint16{0}, Columns: cols[:1]},
		ResultMetadata:    &message.RowsMetadata{ColumnCount: 3, Columns: cols}}
	if v < primitive.ProtocolVersion4 {
		prepared.VariablesMetadata.PkIndices = nil
	}
	failure := func(m message.Message) message.Message {
		switch m := m.(type) {
		case *message.ReadFailure:
			if v >= primitive.ProtocolVersion5 {
				m.FailureReasons, m.NumFailures = []*primitive.FailureReason{{Endpoint: net.IPv4(10, 0, 0, 1), Code: primitive.FailureCodeUnknown}}, 0
			}
		case *message.WriteFailure:
			if v >= primitive.ProtocolVersion5 {
				m.FailureReasons, m.NumFailures = []*primitive.FailureReason{{Endpoint: net.ParseIP("::1"), Code: primitive.FailureCodeTooManyTombstonesRead}}, 0
			}
		}
		return m
	}
	// Functions and aggregates arrived in v4's schema changes.
	function := func(m *message.SchemaChangeEvent) message.Message {
		if v < primitive.ProtocolVersion4 {
			m.Target, m.Arguments = primitive.SchemaChangeTargetTable, nil
		}
		return m
	}
	casUnknown := func() []message.Message {
		if v < primitive.ProtocolVersion5 {
			return nil // it becomes a WRITE_TIMEOUT: TestCasWriteUnknownBeforeV5
		}
		return []message.Message{&CasWriteUnknown{ErrorMessage: "cu", Consistency: primitive.ConsistencyLevelSerial, Received: 1, BlockFor: 2}}
	}
	return append(casUnknown(),
		&message.Ready{},
		&message.Authenticate{Authenticator: "org.apache.cassandra.auth.PasswordAuthenticator"},
		&message.Supported{Options: map[string][]string{"COMPRESSION": {"lz4", "snappy"}, "CQL_VERSION": {"3.4.5"}}},
		&message.AuthChallenge{Token: []byte{1, 2}},
		&message.AuthSuccess{Token: []byte{}},
		&message.VoidResult{},
		&message.SetKeyspaceResult{Keyspace: "ks"},
		&message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeCreated, Target: primitive.SchemaChangeTargetTable, Keyspace: "ks", Object: "t"},
		&message.SchemaChangeResult{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetType, Keyspace: "ks", Object: "f"},
		prepared,
		&message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 3, Columns: cols, PagingState: []byte{7}},
			Data: message.RowSet{{[]byte{0, 0, 0, 1}, nil, []byte{}}, {[]byte{0, 0, 0, 2}, []byte("m"), []byte("s")}}},
		&message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 1}, Data: message.RowSet{{[]byte("x")}}},
		&message.SchemaChangeEvent{ChangeType: primitive.SchemaChangeTypeUpdated, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: "ks"},
		function(&message.SchemaChangeEvent{ChangeType: primitive.SchemaChangeTypeDropped, Target: primitive.SchemaChangeTargetFunction, Keyspace: "ks", Object: "f", Arguments: []string{"int", "text"}}),
		&message.StatusChangeEvent{ChangeType: primitive.StatusChangeTypeUp, Address: &primitive.Inet{Addr: net.IPv4(127, 0, 0, 1), Port: 9042}},
		&message.TopologyChangeEvent{ChangeType: primitive.TopologyChangeTypeNewNode, Address: &primitive.Inet{Addr: net.ParseIP("::1"), Port: 9042}},
		&message.ServerError{ErrorMessage: "boom"},
		&message.Unavailable{ErrorMessage: "u", Consistency: primitive.ConsistencyLevelQuorum, Required: 2, Alive: 1},
		&message.ReadTimeout{ErrorMessage: "r", Consistency: primitive.ConsistencyLevelOne, Received: 0, BlockFor: 1, DataPresent: true},
		&message.WriteTimeout{ErrorMessage: "w", Consistency: primitive.ConsistencyLevelOne, BlockFor: 1, WriteType: primitive.WriteTypeSimple},
		failure(&message.ReadFailure{ErrorMessage: "rf", Consistency: primitive.ConsistencyLevelAll, Received: 1, BlockFor: 2, NumFailures: 1}),
		failure(&message.WriteFailure{ErrorMessage: "wf", Consistency: primitive.ConsistencyLevelAll, Received: 1, BlockFor: 2, NumFailures: 1, WriteType: primitive.WriteTypeBatch}),
		&message.FunctionFailure{ErrorMessage: "ff", Keyspace: "system", Function: "fromjson", Arguments: []string{"text"}},
		&message.AlreadyExists{ErrorMessage: "ae", Keyspace: "ks", Table: "t"},
		&message.Unprepared{ErrorMessage: "up", Id: []byte{1, 2, 3}},
		&PreparedBatch{Results: []message.Message{prepared, &message.Invalid{ErrorMessage: "bad"}}},
	)
}

// TestCasWriteUnknownBeforeV5: a client of protocol v3 or v4 gets
// CAS_WRITE_UNKNOWN as a WRITE_TIMEOUT of write type CAS with the same
// fields, as Cassandra's ErrorMessage sends it; a v5 client gets code
// 0x1700 (TestDecodeResponseRoundTrip).
func TestCasWriteUnknownBeforeV5(t *testing.T) {
	m := &CasWriteUnknown{ErrorMessage: "CAS operation result is unknown - proposal accepted by 1 but not a quorum.",
		Consistency: primitive.ConsistencyLevelLocalSerial, Received: 1, BlockFor: 2}
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion3, primitive.ProtocolVersion4} {
		raw := encodeResponse(t, v, m, false)
		h, _ := ParseHeader(raw)
		if h.BodyLen != len(raw)-HeaderLen {
			t.Fatalf("v%d: header says %d body bytes, frame has %d", v, h.BodyLen, len(raw)-HeaderLen)
		}
		got, err := DecodeResponse(h, raw[HeaderLen:])
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		want := &message.WriteTimeout{ErrorMessage: m.ErrorMessage, Consistency: m.Consistency, Received: 1, BlockFor: 2, WriteType: primitive.WriteTypeCas}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d: got %v, want %v", v, got, want)
		}
	}
	raw := encodeResponse(t, primitive.ProtocolVersion5, m, false)
	if code := binary.BigEndian.Uint32(raw[HeaderLen:]); code != uint32(ErrorCodeCasWriteUnknown) {
		t.Errorf("v5: code 0x%04x", code)
	}
}

func encodeResponse(t testing.TB, v primitive.ProtocolVersion, m message.Message, warnings bool) []byte {
	t.Helper()
	f := frame.NewFrame(v, 3, m)
	if warnings {
		f.SetTracingId(&primitive.UUID{1, 2, 3})
		if v >= primitive.ProtocolVersion4 {
			f.SetWarnings([]string{"Aggregation query used without partition key"})
			f.SetCustomPayload(map[string][]byte{"k": {1}})
		}
	}
	var buf bytes.Buffer
	if err := codec.EncodeFrame(f, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeResponseRoundTrip: every kind of response decodes back to what
// was encoded, with and without warnings, tracing and a custom payload: the
// bounds refuse nothing a server sends.
func TestDecodeResponseRoundTrip(t *testing.T) {
	for v := MinVersion; v <= MaxVersion; v++ {
		for _, m := range sampleResponses(v) {
			for _, extra := range []bool{false, true} {
				raw := encodeResponse(t, v, m, extra)
				h, _ := ParseHeader(raw)
				got, err := DecodeResponse(h, raw[HeaderLen:])
				if err != nil {
					t.Fatalf("v%d %T (extras %v): %v", v, m, extra, err)
				}
				if !reflect.DeepEqual(got, m) {
					t.Errorf("v%d %T (extras %v):\n got %v\nwant %v", v, m, extra, got, m)
				}
			}
		}
	}
}

// hostileResponses are small bodies whose counts or lengths claim far more
// than they hold: each made the codec allocate from the claim.
var hostileResponses = []struct {
	name string
	op   primitive.OpCode
	body []byte
}{
	// ROWS, NO_METADATA, no columns, 2^31-1 rows: the 16 bytes that asked for 51 GB.
	{"rows of no columns", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}},
	{"rows of many columns", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 4, 0x00, 0xff, 0xff, 0xff, 0, 0, 0x0f, 0xff}},
	{"negative rows", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}},
	{"negative columns", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}},
	{"column specs", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}},
	{"cell", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}},
	{"paging state", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}},
	{"pk indexes", primitive.OpCodeResult, []byte{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}},
	{"udt fields", primitive.OpCodeResult, []byte{0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 'k', 0, 0x30, 0, 0, 0, 0, 0xff, 0xff}},
	{"auth token", primitive.OpCodeAuthSuccess, []byte{0x7f, 0xff, 0xff, 0xff}},
	{"reason map", primitive.OpCodeError, []byte{0, 0, 0x13, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}},
	{"cas write unknown", primitive.OpCodeError, []byte{0, 0, 0x17, 0, 0, 1, 'x', 0, 9, 0, 0, 0, 1}},
	{"supported", primitive.OpCodeSupported, []byte{0xff, 0xff, 0, 0}},
}

// TestDecodeResponseBounds: each hostile body is refused, having allocated
// no more than a few KiB.
func TestDecodeResponseBounds(t *testing.T) {
	for _, tc := range hostileResponses {
		h := Header{Version: 5, Stream: 1, OpCode: tc.op, BodyLen: len(tc.body)}
		var err error
		grew := allocated(func() { _, err = DecodeResponse(h, tc.body) })
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
		if grew > 64<<10 {
			t.Errorf("%s: decoding allocated %d bytes", tc.name, grew)
		}
	}
}

// TestDecodeResponseTypeDepth: a column type nested past maxTypeDepth is
// refused before the codec's recursion reads it.
func TestDecodeResponseTypeDepth(t *testing.T) {
	body := []byte{0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 'k'}
	nested := func(depth int) []byte {
		b := append([]byte{}, body...)
		for i := 0; i < depth; i++ {
			b = append(b, 0, 0x20) // list<
		}
		return binary.BigEndian.AppendUint32(append(b, 0, 0x09), 0) // int>..., no rows
	}
	h := Header{Version: 4, OpCode: primitive.OpCodeResult}
	if _, err := DecodeResponse(h, nested(maxTypeDepth)); err != nil {
		t.Fatalf("depth %d: %v", maxTypeDepth, err)
	}
	if _, err := DecodeResponse(h, nested(maxTypeDepth+1)); err == nil || !strings.Contains(err.Error(), "nests more than") {
		t.Fatalf("depth %d: %v", maxTypeDepth+1, err)
	}
	if _, err := DecodeResponse(h, nested(1<<20)); err == nil {
		t.Fatal("a million nested lists accepted")
	}
}

// FuzzDecodeResponse feeds arbitrary bodies to the client's decoder under
// every response opcode and flag: it returns an error or a message, never
// panics, and never allocates much more than the body's size.
func FuzzDecodeResponse(f *testing.F) {
	for v := MinVersion; v <= MaxVersion; v++ {
		for i, m := range sampleResponses(v) {
			raw := encodeResponse(f, v, m, i%3 == 0)
			f.Add(byte(v), byte(raw[1]), byte(raw[4]), raw[HeaderLen:])
		}
	}
	for _, tc := range hostileResponses {
		f.Add(byte(5), byte(0), byte(tc.op), tc.body)
	}
	f.Fuzz(func(t *testing.T, v, flags, op byte, body []byte) {
		h := Header{Version: primitive.ProtocolVersion(v%3 + 3), Flags: primitive.HeaderFlag(flags), OpCode: primitive.OpCode(op), BodyLen: len(body)}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		msg, err := DecodeResponse(h, body)
		runtime.ReadMemStats(&after)
		if err == nil && msg == nil {
			t.Fatal("no error and no message")
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64*uint64(len(body))+1<<20 {
			t.Fatalf("a %d-byte body allocated %d bytes", len(body), grew)
		}
	})
}
