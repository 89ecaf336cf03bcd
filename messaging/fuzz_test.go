package messaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cqld/cqld/protocol"
)

var rewriteFuzzSeeds = flag.Bool("messaging.rewrite-fuzz-seeds", false,
	"rewrite testdata/fuzz/{FuzzDecodeMessage,FuzzDecodeHello,FuzzDecodeStream} seed files")

// testEnvelope encodes a message with its timeout field set to timeout.
func testEnvelope(id uint64, verb Verb, flags byte, timeout time.Duration, payload []byte) []byte {
	env := appendMessage(nil, id, verb, flags, payload)
	binary.BigEndian.PutUint64(env[offTimeout:], uint64(timeout))
	return env
}

type seed struct {
	name string
	data []byte
	lz4  bool
}

func messageSeeds() []seed {
	return []seed{
		{name: "request", data: testEnvelope(1, VerbRead, 0, time.Second, []byte("partition key"))},
		{name: "one-way", data: testEnvelope(2, VerbHint, flagOneWay, time.Minute, bytes.Repeat([]byte{7}, 100))},
		{name: "response", data: testEnvelope(3, VerbMutation, flagResponse, time.Millisecond, nil)},
		{name: "failure", data: testEnvelope(4, VerbRead, flagResponse|flagFailure, 1, appendFailure(nil, 42, "too many tombstones"))},
		{name: "unknown-verb", data: testEnvelope(5, 999, 0, maxWireTimeout, []byte{0})},
		{name: "short", data: testEnvelope(6, VerbEcho, 0, 0, nil)[:messageHeaderLen-1]},
		{name: "traced", data: testEnvelope(7, VerbRead, flagTraced, time.Second, append(bytes.Repeat([]byte{0x11}, 16), "key"...))},
		{name: "traced-short", data: testEnvelope(8, VerbRead, flagTraced, time.Second, []byte{1, 2})},
	}
}

func helloSeeds() []seed {
	addr := netip.MustParseAddrPort("127.0.0.2:7000")
	id := [hostIDLen]byte{0x12, 0x34, 15: 0xff}
	hellos := map[string]hello{
		"initiate":       {version: wireVersion, kind: helloInitiate, cluster: "Test Cluster", hostID: id, addr: addr},
		"initiate-large": {version: wireVersion, kind: helloInitiate, flags: helloLZ4 | helloLarge, cluster: "c", addr: addr},
		"accept":         {version: wireVersion, kind: helloAccept, cluster: "Test Cluster", hostID: id, addr: addr},
		"refuse":         {version: wireVersion, kind: helloRefuse, reason: refuseCluster, cluster: "other", addr: addr, detail: "cluster name mismatch"},
		"ipv6":           {version: wireVersion, kind: helloInitiate, cluster: "x", addr: netip.MustParseAddrPort("[::1]:7001")},
	}
	var seeds []seed
	for name, h := range hellos {
		seeds = append(seeds, seed{name: name, data: appendHello(nil, &h)})
	}
	return seeds
}

func streamSeeds() []seed {
	var seeds []seed
	for _, lz4 := range []bool{false, true} {
		add := func(name string, envs ...[]byte) {
			b, err := protocol.AppendSegments(nil, lz4, envs...)
			if err != nil {
				panic(err)
			}
			seeds = append(seeds, seed{name: fmt.Sprintf("%s-lz4=%v", name, lz4), data: b, lz4: lz4})
		}
		var envs [][]byte
		for _, s := range messageSeeds()[:5] {
			envs = append(envs, s.data)
		}
		add("messages", envs...)
		add("multi-segment", testEnvelope(9, VerbStream, flagOneWay, time.Second, bytes.Repeat([]byte("stream "), 20000)))
		add("bad-message", testEnvelope(10, VerbEcho, 0x80, time.Second, nil))
	}
	return seeds
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range messageSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkMessage(t, data)
		// data as a payload round-trips.
		env := testEnvelope(1, VerbMutation, 0, time.Second, data)
		if m, err := decodeMessage(env); err != nil || !bytes.Equal(m.payload, data) || m.timeout != time.Second {
			t.Fatalf("payload round trip: %v", err)
		}
	})
}

// checkMessage decodes env and, if it decodes, checks it re-encodes to the
// same bytes.
func checkMessage(t *testing.T, env []byte) {
	t.Helper()
	m, err := decodeMessage(env)
	if err != nil {
		if !errors.Is(err, ErrBadMessage) {
			t.Fatalf("untyped error %v", err)
		}
		return
	}
	if m.timeout < 0 || m.timeout > maxWireTimeout {
		t.Fatalf("timeout %v", m.timeout)
	}
	payload := m.payload
	if m.flags&flagTraced != 0 {
		payload = append(m.trace[:len(m.trace):len(m.trace)], payload...)
	}
	if back := testEnvelope(m.id, m.verb, m.flags, m.timeout, payload); !bytes.Equal(back, env) {
		t.Fatalf("decoded %+v re-encodes differently", m)
	}
	if m.flags&flagFailure != 0 {
		if code, text, err := decodeFailure(m.payload); err == nil {
			if back := appendFailure(nil, code, text); !bytes.Equal(back, m.payload) {
				t.Fatal("failure payload re-encodes differently")
			}
		}
	}
}

func FuzzDecodeHello(f *testing.F) {
	for _, s := range helloSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := decodeHello(data)
		r, rerr := readHello(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrHandshake) {
				t.Fatalf("untyped error %v", err)
			}
			if rerr == nil && len(data) == helloPrefixLen+int(binary.BigEndian.Uint16(data[8:]))+helloCRCLen {
				t.Fatalf("readHello accepts what decodeHello refuses: %v", err)
			}
			return
		}
		if rerr != nil || r != h {
			t.Fatalf("readHello: %+v, %v; decodeHello: %+v", r, rerr, h)
		}
		back, err := decodeHello(appendHello(nil, &h))
		if err != nil || back != h {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, h)
		}
	})
}

func FuzzDecodeStream(f *testing.F) {
	for _, s := range streamSeeds() {
		f.Add(s.data, s.lz4)
	}
	f.Fuzz(func(t *testing.T, data []byte, lz4 bool) {
		checkStream(t, data, lz4)
		// Random bytes rarely pass the CRCs: also frame data cut into
		// envelopes with valid segments, to reach the message decoder.
		framed, err := protocol.AppendSegments(nil, lz4, fuzzEnvelopes(data)...)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := checkStream(t, framed, lz4); err == nil && n != len(framed) {
			t.Fatalf("consumed %d of %d bytes of whole segments", n, len(framed))
		}
	})
}

// fuzzEnvelopes cuts data into envelopes: a length byte, then up to that
// many bytes whose first five make the envelope's header (the length field
// is always right).
func fuzzEnvelopes(data []byte) [][]byte {
	var envs [][]byte
	for len(data) > 0 {
		n := min(int(data[0]), len(data)-1)
		item := data[1 : 1+n]
		data = data[1+n:]
		env := make([]byte, envelopeHeaderLen, envelopeHeaderLen+len(item))
		copy(env[:offLength], item)
		if len(item) > offLength {
			env = append(env, item[offLength:]...)
		}
		binary.BigEndian.PutUint32(env[offLength:], uint32(len(env)-envelopeHeaderLen))
		envs = append(envs, env)
	}
	return envs
}

const fuzzMaxMessage = 1 << 20

// checkStream decodes data whole and as readLoop would in two reads, checks
// both agree and every message decoded is well formed.
func checkStream(t *testing.T, data []byte, lz4 bool) (int, error) {
	t.Helper()
	n, msgs, err := newStreamDecoder(lz4, fuzzMaxMessage).decode(data)
	if n < 0 || n > len(data) {
		t.Fatalf("consumed %d of %d", n, len(data))
	}
	if err != nil && !errors.Is(err, ErrBadMessage) {
		t.Fatalf("untyped error %v", err)
	}
	var whole [][]byte
	for _, m := range msgs {
		env := testEnvelope(m.id, m.verb, m.flags, m.timeout, m.payload)
		checkMessage(t, env)
		whole = append(whole, env)
	}

	d := newStreamDecoder(lz4, fuzzMaxMessage)
	half := len(data) / 2
	n1, msgs1, err1 := d.decode(data[:half])
	var split [][]byte
	for _, m := range msgs1 {
		split = append(split, testEnvelope(m.id, m.verb, m.flags, m.timeout, m.payload))
	}
	if err1 == nil {
		var n2 int
		var msgs2 []message
		n2, msgs2, err1 = d.decode(data[n1:])
		n1 += n2
		for _, m := range msgs2 {
			split = append(split, testEnvelope(m.id, m.verb, m.flags, m.timeout, m.payload))
		}
	}
	if (err == nil) != (err1 == nil) || n1 != n || len(split) != len(whole) {
		t.Fatalf("whole: %d bytes, %d messages, %v; in two reads: %d, %d, %v", n, len(whole), err, n1, len(split), err1)
	}
	for i := range whole {
		if !bytes.Equal(whole[i], split[i]) {
			t.Fatalf("message %d differs when read in two pieces", i)
		}
	}
	return n, err
}

// TestFuzzSeedCorpus checks the checked-in seed files still match what the
// seed generators make (and rewrites them with -messaging.rewrite-fuzz-seeds).
func TestFuzzSeedCorpus(t *testing.T) {
	files := map[string]string{}
	for _, s := range messageSeeds() {
		files[filepath.Join("FuzzDecodeMessage", s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
	}
	for _, s := range helloSeeds() {
		files[filepath.Join("FuzzDecodeHello", s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
	}
	for _, s := range streamSeeds() {
		files[filepath.Join("FuzzDecodeStream", s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbool(%v)\n", s.data, s.lz4)
	}
	for name, want := range files {
		path := filepath.Join("testdata", "fuzz", name)
		if *rewriteFuzzSeeds {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -messaging.rewrite-fuzz-seeds)", err)
		}
		if string(got) != want {
			t.Fatalf("%s is stale (run with -messaging.rewrite-fuzz-seeds)", path)
		}
	}
}
