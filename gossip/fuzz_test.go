package gossip

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewriteFuzzSeeds = flag.Bool("gossip.rewrite-fuzz-seeds", false,
	"rewrite testdata/fuzz/{FuzzDecodeNodeMeta,FuzzDecodeEnvelope} seed files")

func nodeMetaSeeds() map[string][]byte {
	seeds := map[string][]byte{"empty": nil, "flags-only": {flagLeaving}}
	for name, m := range map[string]Meta{"zero": {}, "full": testMeta(7), "long": {Status: strings.Repeat("s", 255)}} {
		enc, err := AppendMeta(nil, m)
		if err != nil {
			panic(err)
		}
		seeds[name] = appendNodeMeta(nil, 0, enc)
		seeds[name+"-leaving"] = appendNodeMeta(nil, flagLeaving, enc)
		later := appendNodeMeta(nil, 0, append(enc, 1, 2, 3))
		later[1] = 2
		seeds[name+"-v2"] = later
	}
	return seeds
}

func envelopeSeeds() map[string][]byte {
	return map[string][]byte{
		"ping":         {kindPacket, 0, 0x85},
		"compound":     {kindPacket, 7, 0, 2, 0, 1, 0, 1, 4, 5},
		"stream":       {kindStream, 6, 0x83},
		"labelled":     {kindPacket, 244, 3, 'a', 'b', 'c', 0},
		"unknown-kind": {3, 0},
		"unknown-type": {kindPacket, 200},
		"short":        {kindPacket},
	}
}

// addSeeds adds seeds to f's corpus and, when -gossip.rewrite-fuzz-seeds
// is set, writes them as corpus files under testdata/fuzz/name.
func addSeeds(f *testing.F, name string, seeds map[string][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	if *rewriteFuzzSeeds {
		writeSeeds(f, name, seeds)
	}
}

func writeSeeds(t testing.TB, name string, seeds map[string][]byte) {
	dir := filepath.Join("testdata", "fuzz", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for seed, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, seed), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzDecodeNodeMeta: node metadata from peers never panics, and what
// decodes encodes back to bytes that decode the same.
func FuzzDecodeNodeMeta(f *testing.F) {
	addSeeds(f, "FuzzDecodeNodeMeta", nodeMetaSeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		flags, m, err := decodeNodeMeta(b)
		if !bytes.Equal(b, orig) {
			t.Fatal("decodeNodeMeta changed its input")
		}
		if err != nil {
			return
		}
		enc, err := AppendMeta(nil, m)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", m, err)
		}
		flags2, m2, err := decodeNodeMeta(appendNodeMeta(nil, flags, enc))
		if err != nil || flags2 != flags || m2 != m {
			t.Fatalf("re-encoded %+v decodes as %+v, %v", m, m2, err)
		}
	})
}

// FuzzDecodeEnvelope: VerbGossip payloads from peers never panic, and a
// body that decodes is a non-empty, bounded slice of the payload.
func FuzzDecodeEnvelope(f *testing.F) {
	addSeeds(f, "FuzzDecodeEnvelope", envelopeSeeds())
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 64
		kind, body, err := decodeEnvelope(b, limit)
		if err != nil {
			return
		}
		if kind != kindPacket && kind != kindStream || len(body) == 0 || len(body) > limit || !bytes.Equal(body, b[1:]) {
			t.Fatalf("decoded kind %d, body %x from %x", kind, body, b)
		}
	})
}
