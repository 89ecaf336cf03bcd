package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// sampleRequests are one request of each kind, as a driver sends them.
func sampleRequests(v primitive.ProtocolVersion) []message.Message {
	serial := primitive.ConsistencyLevelLocalSerial
	ts := int64(1234567)
	return []message.Message{
		&message.Options{},
		&message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}},
		&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}},
		&message.AuthResponse{Token: []byte("\x00cassandra\x00cassandra")},
		&message.Query{Query: "SELECT * FROM system.local WHERE key = ?", Options: &message.QueryOptions{
			Consistency: primitive.ConsistencyLevelQuorum, PositionalValues: []*primitive.Value{primitive.NewValue([]byte("local")), primitive.NewNullValue()},
			PageSize: 5000, PagingState: []byte{1, 2, 3}, SerialConsistency: &serial, DefaultTimestamp: &ts,
		}},
		&message.Query{Query: "SELECT * FROM t WHERE a = :a", Options: &message.QueryOptions{
			NamedValues: map[string]*primitive.Value{"a": primitive.NewValue([]byte{0, 0, 0, 1})},
		}},
		&message.Prepare{Query: "SELECT key FROM system.local"},
		&message.Execute{QueryId: []byte("0123456789abcdef"), ResultMetadataId: resultIDFor(v), Options: &message.QueryOptions{
			Consistency: primitive.ConsistencyLevelOne, SkipMetadata: true, PositionalValues: []*primitive.Value{primitive.NewValue([]byte("x"))},
		}},
		&message.Batch{Type: primitive.BatchTypeUnlogged, Consistency: primitive.ConsistencyLevelOne, Children: []*message.BatchChild{
			{Query: "INSERT INTO t (a) VALUES (?)", Values: []*primitive.Value{primitive.NewValue([]byte{1})}},
			{Id: []byte("0123456789abcdef")},
		}},
	}
}

func resultIDFor(v primitive.ProtocolVersion) []byte {
	if v >= primitive.ProtocolVersion5 {
		return []byte("meta-id")
	}
	return nil
}

func encodeFrame(t testing.TB, v primitive.ProtocolVersion, stream int16, m message.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := frame.NewCodec().EncodeFrame(frame.NewFrame(v, stream, m), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeRequestRoundTrip(t *testing.T) {
	for v := MinVersion; v <= MaxVersion; v++ {
		for _, m := range sampleRequests(v) {
			raw := encodeFrame(t, v, 7, m)
			h, ok := ParseHeader(raw)
			if !ok {
				t.Fatal("short header")
			}
			if err := h.Check(0, 1<<20); err != nil {
				t.Fatalf("v%d %T: %v", v, m, err)
			}
			req, err := DecodeRequest(h, raw[HeaderLen:], nil, 1<<20)
			if err != nil {
				t.Fatalf("v%d %T: %v", v, m, err)
			}
			if req.Stream != 7 || req.Version != v || req.Message.GetOpCode() != m.GetOpCode() {
				t.Fatalf("v%d %T: decoded %+v", v, m, req)
			}
			if again := encodeFrame(t, v, 7, req.Message); !bytes.Equal(again, raw) && m.GetOpCode() != primitive.OpCodeQuery && m.GetOpCode() != primitive.OpCodeStartup { // maps encode in any order
				t.Errorf("v%d %T: re-encoding differs", v, m)
			}
		}
	}
}

func TestDecodeRequestCompressed(t *testing.T) {
	for _, name := range []string{CompressionLZ4, CompressionSnappy} {
		comp, err := NewCompressor(name)
		if err != nil {
			t.Fatal(err)
		}
		q := &message.Query{Query: "SELECT * FROM system_schema.columns", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}
		raw := encodeFrame(t, 4, 3, q)
		packed, err := comp.Compress(nil, raw[HeaderLen:])
		if err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(raw)
		h.Flags |= primitive.HeaderFlagCompressed
		req, err := DecodeRequest(h, packed, comp, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := req.Message.(*message.Query).Query; got != q.Query {
			t.Fatalf("%s: query %q", name, got)
		}
		if _, err := DecodeRequest(h, packed, nil, 1<<20); err == nil {
			t.Fatalf("%s: a compressed body was accepted on a connection without compression", name)
		}
	}
}

func TestHeaderCheck(t *testing.T) {
	for _, tc := range []struct {
		b       []byte
		want    primitive.ProtocolVersion
		wantErr error
	}{
		{[]byte{4, 0, 0, 1, 5, 0, 0, 0, 0}, 0, nil},
		{[]byte{3, 0, 0, 1, 5, 0, 0, 0, 0}, 0, nil},
		{[]byte{5, 0, 0, 1, 5, 0, 0, 0, 0}, 0, nil},
		{[]byte{2, 0, 0, 1, 5, 0, 0, 0, 0}, 0, ErrUnsupportedVersion},
		{[]byte{0x42, 0, 0, 1, 5, 0, 0, 0, 0}, 0, ErrUnsupportedVersion},
		{[]byte{0x84, 0, 0, 1, 5, 0, 0, 0, 0}, 0, ErrNotRequest},
		{[]byte{4, 0, 0, 1, 5, 0, 0, 0, 0}, 5, ErrUnsupportedVersion},
		{[]byte{4, 0, 0, 1, 7, 0, 0x10, 0, 1}, 0, ErrFrameTooBig},
		{[]byte{4, 0, 0, 1, 7, 0xff, 0xff, 0xff, 0xff}, 0, ErrFrameTooBig},
	} {
		h, ok := ParseHeader(tc.b)
		if !ok {
			t.Fatal("short")
		}
		if err := h.Check(tc.want, 1<<20); !errors.Is(err, tc.wantErr) && (err != nil || tc.wantErr != nil) {
			t.Errorf("% x: got %v, want %v", tc.b, err, tc.wantErr)
		}
	}
	if _, ok := ParseHeader([]byte{4, 0, 0}); ok {
		t.Error("a 3-byte header parsed")
	}
	// Over the limit, a request's header is sound (its body is skipped
	// and answered); a header that names no request is not.
	var tb *TooBigError
	h, _ := ParseHeader([]byte{4, 0, 0, 1, 7, 0, 0x10, 0, 1})
	if err := h.Check(0, 1<<20); !errors.As(err, &tb) || err.Error() != "Request is too big: length 1048586 exceeds maximum allowed length 1048576." {
		t.Errorf("QUERY over the limit: %v", err)
	}
	h, _ = ParseHeader([]byte{4, 0, 0, 1, 0x30, 0, 0x10, 0, 1})
	if err := h.Check(0, 1<<20); errors.As(err, &tb) || !errors.Is(err, ErrFrameTooBig) {
		t.Errorf("unknown opcode over the limit: %v, want a fatal ErrFrameTooBig", err)
	}
	var ve *VersionError
	h, _ = ParseHeader([]byte{0x42, 0, 0, 0, 1, 0, 0, 0, 0})
	if err := h.Check(0, 100); !errors.As(err, &ve) || ve.Error() != "Invalid or unsupported protocol version (66); supported versions are (3/v3, 4/v4, 5/v5)" {
		t.Errorf("version error: %v", err)
	}
}

// TestDecodeRequestBoundsAllocation sends bodies whose length fields claim
// far more than the body holds: each must fail without allocating the
// claimed size.
func TestDecodeRequestBoundsAllocation(t *testing.T) {
	huge := []byte{0x7f, 0xff, 0xff, 0xf0}
	cases := map[string]struct {
		op   primitive.OpCode
		body []byte
	}{
		"query string":   {primitive.OpCodeQuery, append(append([]byte{}, huge...), 'x')},
		"query value":    {primitive.OpCodeQuery, append([]byte{0, 0, 0, 1, 'x', 0, 1, 0x01, 0, 1}, huge...)},
		"paging state":   {primitive.OpCodeQuery, append([]byte{0, 0, 0, 1, 'x', 0, 1, 0x08}, huge...)},
		"auth token":     {primitive.OpCodeAuthResponse, huge},
		"prepare":        {primitive.OpCodePrepare, huge},
		"batch query":    {primitive.OpCodeBatch, append([]byte{0, 0, 1, 0}, huge...)},
		"custom payload": {primitive.OpCodeOptions, append([]byte{0, 1, 0, 1, 'k'}, huge...)},
		"execute value":  {primitive.OpCodeExecute, append([]byte{0, 1, 'i', 0, 1, 0x01, 0, 1}, huge...)},
		"execute count":  {primitive.OpCodeExecute, []byte{0, 1, 'i', 0, 1, 0x01, 0xff, 0xff}},
	}
	for name, tc := range cases {
		h := Header{Version: 4, Stream: 1, OpCode: tc.op, BodyLen: len(tc.body)}
		if name == "custom payload" {
			h.Flags = primitive.HeaderFlagCustomPayload
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := DecodeRequest(h, tc.body, nil, 1<<20)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: decoding allocated %d bytes", name, grew)
		}
	}
}

func TestAppendResponseCompressed(t *testing.T) {
	rows := &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 1}, Data: message.RowSet{{bytes.Repeat([]byte("abc"), 1000)}}}
	for _, name := range []string{CompressionLZ4, CompressionSnappy} {
		comp, _ := NewCompressor(name)
		out, err := AppendResponse(nil, 4, 9, &Response{Message: rows}, comp)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(out)
		if !h.Flags.Contains(primitive.HeaderFlagCompressed) || h.BodyLen != len(out)-HeaderLen || h.Stream != 9 {
			t.Fatalf("%s: header %+v", name, h)
		}
		body, err := comp.Decompress(nil, out[HeaderLen:], 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := AppendResponse(nil, 4, 9, &Response{Message: rows}, nil)
		if !bytes.Equal(body, plain[HeaderLen:]) {
			t.Fatalf("%s: decompressed body differs", name)
		}
	}
}

// FuzzDecodeRequest feeds arbitrary frames to the request decoder: it must
// return an error or a message, never panic.
func FuzzDecodeRequest(f *testing.F) {
	for v := MinVersion; v <= MaxVersion; v++ {
		for _, m := range sampleRequests(v) {
			f.Add(encodeFrame(f, v, 1, m), false)
		}
	}
	f.Add([]byte{4, 1, 0, 1, 7, 0, 0, 0, 3, 1, 2, 3}, true)
	snappy, _ := NewCompressor(CompressionSnappy)
	f.Fuzz(func(t *testing.T, raw []byte, compressed bool) {
		h, ok := ParseHeader(raw)
		if !ok || h.Check(0, 1<<16) != nil || len(raw) < HeaderLen+h.BodyLen {
			return
		}
		var comp Compressor
		if compressed {
			comp = snappy
		}
		req, err := DecodeRequest(h, raw[HeaderLen:HeaderLen+h.BodyLen], comp, 1<<16)
		if err == nil && req.Message == nil {
			t.Fatal("no error and no message")
		}
	})
}

// TestDecodeExecuteMatchesCodec checks the hand-written EXECUTE decoder
// against the protocol library's on every shape of EXECUTE a driver sends.
func TestDecodeExecuteMatchesCodec(t *testing.T) {
	serial := primitive.ConsistencyLevelSerial
	ts := int64(-42)
	now := int32(7)
	for v := MinVersion; v <= MaxVersion; v++ {
		for i, o := range []*message.QueryOptions{
			{Consistency: primitive.ConsistencyLevelOne},
			{Consistency: primitive.ConsistencyLevelQuorum, SkipMetadata: true, PositionalValues: []*primitive.Value{
				primitive.NewValue([]byte("a")), primitive.NewValue([]byte{}), primitive.NewNullValue()}},
			{Consistency: primitive.ConsistencyLevelLocalQuorum, PageSize: 5000, PagingState: []byte{9, 9}, SerialConsistency: &serial, DefaultTimestamp: &ts},
			{Consistency: primitive.ConsistencyLevelAll, PositionalValues: []*primitive.Value{primitive.NewUnsetValue()}, Keyspace: "ks", NowInSeconds: &now},
		} {
			if v < primitive.ProtocolVersion4 && len(o.PositionalValues) > 0 && o.PositionalValues[0].Type == primitive.ValueTypeUnset {
				continue // unset values arrived in v4
			}
			if v < primitive.ProtocolVersion5 {
				o.Keyspace, o.NowInSeconds = "", nil
			}
			m := &message.Execute{QueryId: []byte("0123456789abcdef"), ResultMetadataId: resultIDFor(v), Options: o}
			raw := encodeFrame(t, v, 1, m)
			h, _ := ParseHeader(raw)
			fast, ok := decodeExecute(v, raw[HeaderLen:], &executeBlock{})
			if !ok {
				t.Fatalf("v%d case %d: no fast path", v, i)
			}
			slow, err := codec.ConvertFromRawFrame(&frame.RawFrame{Header: &frame.Header{Version: v, OpCode: h.OpCode, BodyLength: int32(h.BodyLen)}, Body: raw[HeaderLen:]})
			if err != nil {
				t.Fatal(err)
			}
			if want := slow.Body.Message.(*message.Execute); !reflect.DeepEqual(fast, want) {
				t.Errorf("v%d case %d:\n fast %s\n slow %s", v, i, dumpExecute(fast), dumpExecute(want))
			}
		}
	}
}

func dumpExecute(m *message.Execute) string {
	out := fmt.Sprintf("%+v", *m.Options)
	for _, v := range m.Options.PositionalValues {
		out += fmt.Sprintf(" %+v", *v)
	}
	return out
}

// TestAppendFastMatchesCodec checks the hand-written VOID and ROWS encoders
// byte for byte against the protocol library's.
func TestAppendFastMatchesCodec(t *testing.T) {
	for v := MinVersion; v <= MaxVersion; v++ {
		for i, m := range []message.Message{
			&message.VoidResult{},
			&message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 2}, Data: message.RowSet{{[]byte("a"), nil}, {[]byte{}, []byte{1, 2}}}},
			&message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 1, PagingState: []byte{7, 7}}, Data: message.RowSet{}},
		} {
			fast, ok := appendFast([]byte("prefix"), v, 513, &Response{Message: m})
			if !ok {
				t.Fatalf("v%d case %d: no fast path", v, i)
			}
			slow := append([]byte("prefix"), encodeFrame(t, v, 513, m)...)
			slow[len("prefix")] |= 0x80 // encodeFrame makes the response direction itself
			if !bytes.Equal(fast, slow) {
				t.Errorf("v%d case %d:\n fast % x\n slow % x", v, i, fast, slow)
			}
		}
	}
}
