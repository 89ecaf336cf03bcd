package gossip

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestMetaRoundTrip(t *testing.T) {
	for name, m := range map[string]Meta{
		"zero":  {},
		"full":  testMeta(3),
		"ipv6":  {RPCAddr: netip.MustParseAddr("2001:db8::1"), NativePort: 19042, Status: "JOINING"},
		"long":  {DataCenter: strings.Repeat("d", 120), Rack: strings.Repeat("r", 120), ReleaseVersion: strings.Repeat("v", 120), Status: strings.Repeat("s", 100)},
		"max":   {Load: ^uint64(0), NativePort: 65535, SchemaVersion: [16]byte{0: 0xff, 15: 0xff}},
		"zoned": {RPCAddr: netip.MustParseAddr("fe80::1%eth0")},
	} {
		enc, err := AppendMeta([]byte("prefix"), m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.HasPrefix(enc, []byte("prefix")) || len(enc)-6 > MaxMetaSize {
			t.Fatalf("%s: %d bytes, prefix kept %v", name, len(enc), bytes.HasPrefix(enc, []byte("prefix")))
		}
		got, err := DecodeMeta(enc[6:])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m.RPCAddr = m.RPCAddr.WithZone("")
		if got != m {
			t.Errorf("%s: decoded %+v, want %+v", name, got, m)
		}
		for n := 0; n < len(enc)-6; n++ {
			if _, err := DecodeMeta(enc[6 : 6+n]); err == nil {
				t.Errorf("%s: a %d-byte prefix decodes", name, n)
			}
		}
	}
}

func TestMetaTooLarge(t *testing.T) {
	for name, m := range map[string]Meta{
		"string": {DataCenter: strings.Repeat("d", 256)},
		"total":  {DataCenter: strings.Repeat("d", 200), Rack: strings.Repeat("r", 200), Status: strings.Repeat("s", 100)},
	} {
		enc, err := AppendMeta([]byte("x"), m)
		if !errors.Is(err, errMetaTooLarge) {
			t.Errorf("%s: err %v, want errMetaTooLarge", name, err)
		}
		if string(enc) != "x" {
			t.Errorf("%s: dst changed to %q", name, enc)
		}
	}
}

func TestMetaVersions(t *testing.T) {
	enc, err := AppendMeta(nil, testMeta(1))
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 ends where its fields end.
	if _, err := DecodeMeta(append(enc, 0)); err == nil {
		t.Error("version 1 with a trailing byte decodes")
	}
	// A later version appends fields, which this reader skips.
	later := append(bytes.Clone(enc), "new field"...)
	later[0] = 2
	if got, err := DecodeMeta(later); err != nil || got != testMeta(1) {
		t.Errorf("version 2: %+v, %v; want %+v", got, err, testMeta(1))
	}
	zero := bytes.Clone(enc)
	zero[0] = 0
	if _, err := DecodeMeta(zero); err == nil {
		t.Error("version 0 decodes")
	}
	bad := bytes.Clone(enc)
	bad[1] = 5 // an rpc address of 5 bytes
	if _, err := DecodeMeta(bad); err == nil {
		t.Error("a 5-byte rpc address decodes")
	}
}

func TestNodeMeta(t *testing.T) {
	enc, _ := AppendMeta(nil, testMeta(2))
	flags, m, err := decodeNodeMeta(appendNodeMeta(nil, flagLeaving, enc))
	if err != nil || flags != flagLeaving || m != testMeta(2) {
		t.Errorf("got %d, %+v, %v", flags, m, err)
	}
	if _, _, err := decodeNodeMeta(nil); err == nil {
		t.Error("empty node metadata decodes")
	}
	if len(appendNodeMeta(nil, 0, make([]byte, MaxMetaSize))) != 512 {
		t.Error("the largest node metadata is not memberlist's limit")
	}
}
