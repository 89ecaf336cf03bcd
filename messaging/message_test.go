package messaging

import (
	"errors"
	"testing"
	"time"
)

func TestDecodeMessageRejects(t *testing.T) {
	good := testEnvelope(7, VerbRead, 0, time.Second, []byte("payload"))
	if m, err := decodeMessage(good); err != nil || m.id != 7 || m.verb != VerbRead || m.timeout != time.Second || string(m.payload) != "payload" {
		t.Fatalf("good message: %+v, %v", m, err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, env := range map[string][]byte{
		"short":                 good[:messageHeaderLen-1],
		"version":               edit(func(b []byte) []byte { b[offVersion] = 2; return b }),
		"unknown flag":          edit(func(b []byte) []byte { b[offFlags] = 0x08; return b }),
		"failure, not response": edit(func(b []byte) []byte { b[offFlags] = flagFailure; return b }),
		"one-way response":      edit(func(b []byte) []byte { b[offFlags] = flagOneWay | flagResponse; return b }),
		"reserved byte":         edit(func(b []byte) []byte { b[offReserve] = 1; return b }),
		"length field":          edit(func(b []byte) []byte { return b[:len(b)-1] }),
		"timeout over 24h":      testEnvelope(1, VerbRead, 0, maxWireTimeout+1, nil),
	} {
		if _, err := decodeMessage(env); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: %v, want ErrBadMessage", name, err)
		}
	}
}

func TestHelloRejects(t *testing.T) {
	for _, s := range helloSeeds() {
		if _, err := decodeHello(s.data); err != nil {
			t.Fatalf("seed %s: %v", s.name, err)
		}
	}
	good := helloSeeds()[0].data
	for name, b := range map[string][]byte{
		"magic":     append([]byte("HTTP"), good[4:]...),
		"truncated": good[:len(good)-1],
		"crc":       append(append([]byte(nil), good[:len(good)-1]...), good[len(good)-1]^1),
	} {
		if _, err := decodeHello(b); !errors.Is(err, ErrHandshake) {
			t.Errorf("%s: %v, want ErrHandshake", name, err)
		}
	}
}

func TestVerbNames(t *testing.T) {
	seen := map[string]bool{}
	for v := Verb(1); int(v) < len(verbNames); v++ {
		name := v.String()
		if verbNames[v] == "" || seen[name] {
			t.Fatalf("verb %d has no name or a duplicate one (%q)", v, name)
		}
		seen[name] = true
	}
	if got := Verb(60000).String(); got != "VERB_60000" {
		t.Fatalf("unknown verb prints %q", got)
	}
}
