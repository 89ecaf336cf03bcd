package cqlclient

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// FuzzFrameReader: whatever bytes a server sends, on v4 or in v5
// segments, the frame reader returns frames whose bodies are as long as
// their headers say, or an error, and never panics; a header alone never
// makes it allocate the body it announces.
func FuzzFrameReader(f *testing.F) {
	void, err := protocol.AppendRequest(nil, primitive.ProtocolVersion4, 1, &message.Options{})
	if err != nil {
		f.Fatal(err)
	}
	void[0] |= 0x80 // a response
	void[4] = byte(primitive.OpCodeResult)
	void = append(void[:protocol.HeaderLen-4], 0, 0, 0, 4, 0, 0, 0, 1) // RESULT Void
	seg, err := protocol.AppendSegments(nil, false, void)
	if err == nil {
		seg, err = protocol.AppendSegments(seg, false, void)
	}
	if err != nil {
		f.Fatal(err)
	}
	f.Add(void, false)
	f.Add(append(void, void[:5]...), false)
	f.Add(seg, true)
	f.Add(seg[:len(seg)-3], true)
	f.Add([]byte("\x84\x00\x00\x01\x08\x7f\xff\xff\xff"), false) // a 2 GiB body announced
	f.Add([]byte("\x84\x00\x00\x01\x08\x00\x10\x00\x00"), false) // 1 MiB announced, none sent
	f.Fuzz(func(t *testing.T, b []byte, v5 bool) {
		fr := &frameReader{br: bufio.NewReader(bytes.NewReader(b)), v5: v5}
		for range 64 {
			h, body, err := fr.next()
			if err != nil {
				return
			}
			if len(body) != h.BodyLen {
				t.Fatalf("body of %d bytes, header says %d", len(body), h.BodyLen)
			}
		}
	})
}
