package frontend

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/crc"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/protocol"
)

// bigQuery is a QUERY whose body is exactly body bytes long.
func bigQuery(t *testing.T, v primitive.ProtocolVersion, body int) *message.Query {
	t.Helper()
	q := func(n int) *message.Query {
		return &message.Query{Query: "void", Options: &message.QueryOptions{
			Consistency:      primitive.ConsistencyLevelOne,
			PositionalValues: []*primitive.Value{primitive.NewValue(make([]byte, n))},
		}}
	}
	empty, err := protocol.AppendRequest(nil, v, 0, q(0))
	if err != nil {
		t.Fatal(err)
	}
	return q(body - (len(empty) - protocol.HeaderLen))
}

// A request over MaxFrameSize is answered INVALID on its stream, with
// Cassandra's message, once its body has arrived and been skipped; the
// connection stays open and serves the next request. v4 has the frame
// decoder's message, v5 the message handler's, whether the envelope fits
// one segment or spans several.
func TestTooBigRequest(t *testing.T) {
	const maxFrame = 64 << 10
	s := startServer(t, newFakeHandler(), func(o *Options) { o.MaxFrameSize = maxFrame })
	for _, tc := range []struct {
		v    primitive.ProtocolVersion
		want func(size int) string
	}{
		{primitive.ProtocolVersion4, func(size int) string {
			return fmt.Sprintf("Request is too big: length %d exceeds maximum allowed length %d.", size, maxFrame)
		}},
		{primitive.ProtocolVersion5, func(size int) string {
			return fmt.Sprintf("CQL Message of size %d bytes exceeds allowed maximum of %d bytes", size, maxFrame)
		}},
	} {
		for _, body := range []int{maxFrame + 1, 5 * maxFrame} {
			t.Run(fmt.Sprintf("%v/%d", tc.v, body), func(t *testing.T) {
				c := dialClient(t, s.Addr())
				c.startup(tc.v, nil)
				wire := c.frame(7, bigQuery(t, tc.v, body))
				for off := 0; off < len(wire); off += 5000 {
					c.write(wire[off:min(off+5000, len(wire))])
				}
				h, msg := c.mustRecv()
				want := tc.want(protocol.HeaderLen + body)
				if inv, ok := msg.(*message.Invalid); !ok || h.Stream != 7 || inv.ErrorMessage != want {
					t.Fatalf("got %T %v on stream %d; want INVALID %q on stream 7", msg, msg, h.Stream, want)
				}
				c.query(8, "void")
				expect[*message.VoidResult](c, 8)
				// At the limit is not too big.
				c.send(9, bigQuery(t, tc.v, maxFrame))
				expect[*message.VoidResult](c, 9)
			})
		}
	}
	if n := counter(t, s.m.Closed, reasonProtocol); n != 0 {
		t.Fatalf("%v connections closed for a protocol error", n)
	}
}

// A header claiming a 2 GiB body, and then silence: nothing of the body is
// kept or counted against the request data budgets, and the frame
// deadline closes the connection. v5 too, whose envelope is skipped
// segment by segment.
func TestTooBigClaimThenSilence(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		t.Run(v.String(), func(t *testing.T) {
			clock := newFakeClock()
			s := startServer(t, newFakeHandler(), func(o *Options) { o.FrameTimeout = 5 * time.Second; o.Now = clock.Now })
			c := dialClient(t, s.Addr())
			c.startup(v, nil)
			head := rawFrame(byte(v), 0, 3, primitive.OpCodeQuery, nil)
			binary.BigEndian.PutUint32(head[5:], 1<<31-1)
			var chunks [][]byte
			if v == primitive.ProtocolVersion5 {
				// Segments of an envelope that never ends: its header,
				// then 4 MiB of its body.
				first := append(head, make([]byte, protocol.MaxSegmentPayload-len(head))...)
				for i := range 33 {
					payload := first
					if i > 0 {
						payload = make([]byte, protocol.MaxSegmentPayload)
					}
					chunks = append(chunks, segmentPart(payload))
				}
			} else {
				chunks = append(chunks, head)
				for range 64 { // 4 MiB of the body
					chunks = append(chunks, make([]byte, 64<<10))
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for _, b := range chunks {
				c.write(b)
			}
			eventually(t, "the 4 MiB sent received", func() bool { return testutil.ToFloat64(s.m.BytesIn) >= 4<<20 })
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Fatalf("the node allocated %d MiB while skipping 4 MiB of a body", grew>>20)
			}
			if used := s.data.used.Load(); used > 1<<20 {
				t.Fatalf("%d bytes of request data counted for a body being skipped", used)
			}
			eventually(t, "the frame begun", func() bool { return s.begunFrames() == 1 })
			clock.advance(6 * time.Second)
			s.expectClosedFor(t, c, reasonFrame, 1)
		})
	}
}

// segmentPart frames payload as an uncompressed v5 segment that is not
// self-contained: a part of an envelope spanning several.
func segmentPart(payload []byte) []byte {
	h := uint64(len(payload))
	k := crc.ChecksumKoopman(h, 3)
	b := []byte{byte(h), byte(h >> 8), byte(h >> 16), byte(k), byte(k >> 8), byte(k >> 16)}
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint32(b, crc.ChecksumIEEE(payload))
}

// An answer over MaxFrameSize, whatever made it (a worker or an Inliner),
// is replaced by INVALID "Response is too big" on its stream, and the
// connection goes on; an answer at the limit's side passes.
func TestTooBigAnswer(t *testing.T) {
	const maxFrame = 64 << 10
	s := startServer(t, &fakeInliner{fakeHandler: newFakeHandler()}, func(o *Options) { o.MaxFrameSize = maxFrame })
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		t.Run(v.String(), func(t *testing.T) {
			c := dialClient(t, s.Addr())
			c.startup(v, nil)
			want := protocol.ResponseTooBig(maxFrame)
			for i, q := range []string{"rows 70000", "inline-rows 70000"} {
				stream := int16(10 + i)
				c.query(stream, q)
				if inv := expect[*message.Invalid](c, stream); inv.ErrorMessage != want {
					t.Fatalf("%s: %q, want %q", q, inv.ErrorMessage, want)
				}
			}
			c.query(20, "rows 60000")
			if rows := expect[*message.RowsResult](c, 20); len(rows.Data[0][0]) != 60000 {
				t.Fatalf("rows 60000: %d bytes", len(rows.Data[0][0]))
			}
		})
	}
}
