package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

var extCodec = frame.NewRawCodec(PrepareBatchCodec, PreparedBatchCodec)

// batchBody is a PREPARE_BATCH body laid out by hand, as the spec draws it.
func batchBody(count int32, stmts ...BatchStatement) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(count))
	for _, s := range stmts {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s.Query)))
		b = append(b, s.Query...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(s.Keyspace)))
		b = append(b, s.Keyspace...)
	}
	return b
}

func batchHeader(v primitive.ProtocolVersion, body []byte) Header {
	return Header{Version: v, Stream: 7, OpCode: OpCodePrepareBatch, BodyLen: len(body)}
}

// TestPrepareBatchRequestRoundTrip: what the codec encodes is the spec's
// layout byte for byte, and DecodeRequest reads it back, on v4 and v5.
func TestPrepareBatchRequestRoundTrip(t *testing.T) {
	m := &PrepareBatch{Statements: []BatchStatement{
		{Query: "SELECT * FROM t WHERE k = ?", Keyspace: "ks"},
		{Query: "INSERT INTO ks2.t (k) VALUES (?)"},
		{Query: ""},
	}}
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		var buf bytes.Buffer
		if err := extCodec.EncodeFrame(frame.NewFrame(v, 7, m), &buf); err != nil {
			t.Fatal(err)
		}
		raw := buf.Bytes()
		if want := batchBody(3, m.Statements...); !bytes.Equal(raw[HeaderLen:], want) {
			t.Fatalf("v%d body\n got %x\nwant %x", v, raw[HeaderLen:], want)
		}
		h, _ := ParseHeader(raw)
		if h.OpCode != OpCodePrepareBatch || h.Version != v || h.Flags != 0 {
			t.Fatalf("header %+v", h)
		}
		req, err := DecodeRequest(h, raw[HeaderLen:], nil, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(req.Message, m) {
			t.Errorf("v%d decoded %+v", v, req.Message)
		}
	}
}

// TestPreparedBatchResponseRoundTrip: a response mixing PREPARED results
// and errors with their specific fields decodes to what was encoded, and
// each entry's body is exactly the RESULT or ERROR body the library writes.
func TestPreparedBatchResponseRoundTrip(t *testing.T) {
	prep := func(id string) *message.PreparedResult {
		return &message.PreparedResult{
			PreparedQueryId: []byte(id),
			VariablesMetadata: &message.VariablesMetadata{PkIndices: []uint16{0}, Columns: []*message.ColumnMetadata{
				{Keyspace: "ks", Table: "t", Name: "k", Index: 0, Type: datatype.Int}}},
			ResultMetadata: &message.RowsMetadata{ColumnCount: 1, Columns: []*message.ColumnMetadata{
				{Keyspace: "ks", Table: "t", Name: "v", Index: 0, Type: datatype.Varchar}}},
		}
	}
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		p1 := prep("0123456789abcdef")
		if v >= primitive.ProtocolVersion5 {
			p1.ResultMetadataId = []byte("meta")
		}
		m := &PreparedBatch{Results: []message.Message{
			p1,
			&message.SyntaxError{ErrorMessage: "line 1:0 no viable alternative at input 'SELEC'"},
			&message.Invalid{ErrorMessage: "unconfigured table nope"},
			&message.AlreadyExists{ErrorMessage: "exists", Keyspace: "ks", Table: "t"},
			&message.Unprepared{ErrorMessage: "gone", Id: []byte("id")},
		}}
		out, err := AppendResponse(nil, v, 9, &Response{Message: m}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(out)
		if h.OpCode != OpCodePreparedBatch || out[0] != byte(v)|0x80 || h.BodyLen != len(out)-HeaderLen {
			t.Fatalf("header %+v", h)
		}
		got, err := extCodec.ConvertFromRawFrame(&frame.RawFrame{
			Header: &frame.Header{IsResponse: true, Version: v, StreamId: 9, OpCode: h.OpCode, BodyLength: int32(h.BodyLen)},
			Body:   out[HeaderLen:],
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Body.Message, m) {
			t.Errorf("v%d: decoded %+v", v, got.Body.Message)
		}
		// The first entry is opcode RESULT, then the PREPARED body alone.
		body := out[HeaderLen:]
		var alone bytes.Buffer
		if err := resultCodecs[primitive.OpCodeResult].Encode(p1, &alone, v); err != nil {
			t.Fatal(err)
		}
		if body[4] != byte(primitive.OpCodeResult) || int(binary.BigEndian.Uint32(body[5:])) != alone.Len() ||
			!bytes.Equal(body[9:9+alone.Len()], alone.Bytes()) {
			t.Errorf("v%d: first entry is not the PREPARED body", v)
		}
	}
}

// TestPrepareBatchBadBodies: every malformed body gets an error saying
// what is wrong, from the check that runs before the codec allocates.
func TestPrepareBatchBadBodies(t *testing.T) {
	const maxBody = 1 << 16
	huge := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1), 300<<20)
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"empty body", nil, "not enough bytes"},
		{"zero statements", batchBody(0), "at least one statement"},
		{"65536 statements", batchBody(65536, BatchStatement{Query: "x"}), "more than 65535 statements: 65536"},
		{"negative count", batchBody(-1), "more than 65535 statements"},
		{"count past the body", batchBody(1000, BatchStatement{Query: "SELECT 1"}), "declares 1000 statements but its body has room for at most 2"},
		{"query past the body", batchBody(1, BatchStatement{Query: "SELECT"})[:12], "statement 1 of 1: the body ends 4 bytes into its query of 6 bytes"},
		{"keyspace past the body", append(batchBody(2, BatchStatement{Query: "a"}), 0, 0, 0, 0, 0, 9, 'k'), "not enough bytes to read a [string]"},
		{"query longer than a frame", append(huge, make([]byte, 8)...), "statement 1 of 1: a query of 314572800 bytes is longer than the frame limit of 65536 bytes"},
		{"count without statements", batchBody(1), "declares 1 statements but its body has room for at most 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest(batchHeader(4, tc.body), tc.body, nil, maxBody)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	neg := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1), 0xfffffffe)
	neg = append(neg, 0, 0)
	if _, err := DecodeRequest(batchHeader(4, neg), neg, nil, maxBody); err == nil || !strings.Contains(err.Error(), "negative query length -2") {
		t.Errorf("negative length: %v", err)
	}
}

// onlyReader hides a reader's length, as a network stream does.
type onlyReader struct{ io.Reader }

// TestPrepareBatchCodecStreaming: on a stream that cannot tell its length,
// the codec reads the same message, and a lying length only reads what
// arrived.
func TestPrepareBatchCodecStreaming(t *testing.T) {
	stmts := []BatchStatement{{Query: "SELECT 1", Keyspace: "ks"}, {Query: "SELECT 2"}}
	m, err := PrepareBatchCodec.Decode(onlyReader{bytes.NewReader(batchBody(2, stmts...))}, 4)
	if err != nil || !reflect.DeepEqual(m, &PrepareBatch{Statements: stmts}) {
		t.Fatalf("%+v %v", m, err)
	}
	lie := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1), 1<<30)
	if _, err := PrepareBatchCodec.Decode(onlyReader{bytes.NewReader(append(lie, "short"...))}, 4); err == nil ||
		!strings.Contains(err.Error(), "body too short") {
		t.Fatalf("lying length: %v", err)
	}
	if err := PrepareBatchCodec.Encode(&PrepareBatch{}, io.Discard, 4); !errors.Is(err, ErrNoStatements) {
		t.Errorf("encoding no statements: %v", err)
	}
}

// FuzzPrepareBatchDecode feeds arbitrary bodies to the server's decoding
// path and to the codec on a stream: neither panics or allocates past the
// input's size, they agree, and what decodes re-encodes to a body that
// decodes the same.
func FuzzPrepareBatchDecode(f *testing.F) {
	f.Add(batchBody(1, BatchStatement{Query: "SELECT 1"}))
	f.Add(batchBody(2, BatchStatement{Query: "SELECT * FROM t", Keyspace: "ks"}, BatchStatement{Query: "SELECT * FROM t", Keyspace: "ks"}))
	f.Add(batchBody(0))
	f.Add(batchBody(65536))
	f.Add(batchBody(3, BatchStatement{Query: "a"}))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(batchHeader(4, body), body, nil, 1<<16)
		streamed, serr := PrepareBatchCodec.Decode(onlyReader{bytes.NewReader(body)}, 4)
		if err != nil {
			return
		}
		if serr != nil || !reflect.DeepEqual(streamed, req.Message) {
			t.Fatalf("stream decode disagrees: %+v %v", streamed, serr)
		}
		var buf bytes.Buffer
		if err := PrepareBatchCodec.Encode(req.Message, &buf, 4); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRequest(batchHeader(4, buf.Bytes()), buf.Bytes(), nil, 1<<16)
		if err != nil || !reflect.DeepEqual(again.Message, req.Message) {
			t.Fatalf("re-encoded body decodes to %+v, %v", again, err)
		}
	})
}

// FuzzPreparedBatchSplit feeds arbitrary PREPARED_BATCH bodies to the
// client's splitter: it never panics, its results lie within the input,
// and each is a RESULT or an ERROR.
func FuzzPreparedBatchSplit(f *testing.F) {
	var buf bytes.Buffer
	if err := PreparedBatchCodec.Encode(&PreparedBatch{Results: []message.Message{
		&message.Invalid{ErrorMessage: "x"}, &RawResult{OpCode: primitive.OpCodeResult, Body: []byte{0, 0, 0, 4, 0, 1, 7}},
	}}, &buf, 4); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, 8, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		raws, err := SplitPreparedBatch(body)
		if err != nil {
			return
		}
		total := 4
		for _, r := range raws {
			if r.OpCode != primitive.OpCodeResult && r.OpCode != primitive.OpCodeError {
				t.Fatalf("result with opcode %v", r.OpCode)
			}
			total += 5 + len(r.Body)
		}
		if total > len(body) {
			t.Fatalf("results span %d bytes of a %d-byte body", total, len(body))
		}
	})
}
