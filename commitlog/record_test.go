package commitlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func encodeRecord(kind byte, seg uint64, synced int64, payload []byte) []byte {
	b := make([]byte, recordSize(len(payload)))
	copy(b[recordHeaderSize:], payload)
	putRecordHeader(b, kind, seg, synced, len(payload), crc32c(payload))
	return b
}

func TestRecordRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		size    int64
	}{
		{"empty", nil, 24},
		{"one byte", []byte{7}, 32},
		{"fills padding", bytes.Repeat([]byte{1}, 8), 32},
		{"needs padding", bytes.Repeat([]byte{2}, 9), 40},
		{"zeros", make([]byte, 100), 128},
		{"large", bytes.Repeat([]byte("cqld"), 4096), 24 + 16384},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const seg, off, synced = 42, 4096, 1000
			b := encodeRecord(kindData, seg, synced, tc.payload)
			if int64(len(b)) != tc.size || len(b)%recordAlign != 0 {
				t.Fatalf("encoded size %d, want %d (aligned)", len(b), tc.size)
			}
			h, payload, err := decodeRecord(b, seg, off)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !bytes.Equal(payload, tc.payload) || h.kind != kindData || h.segment != seg ||
				h.synced != synced || h.size() != tc.size {
				t.Fatalf("decoded %+v payload %q", h, payload)
			}
			// Bytes after the record do not matter.
			if _, payload, err := decodeRecord(append(b, 0xff, 0xfe), seg, off); err != nil || !bytes.Equal(payload, tc.payload) {
				t.Fatalf("decode with trailing bytes: %v", err)
			}
		})
	}
}

func TestEndRecord(t *testing.T) {
	b := endRecord(9, 512)
	h, payload, err := decodeRecord(b, 9, 512)
	if err != nil || h.kind != kindEnd || len(payload) != 0 || h.synced != 512 {
		t.Fatalf("end record decodes as %+v, %v", h, err)
	}
	if _, _, err := decodeRecord(b, 9, 520); !errors.Is(err, errRecordSynced) {
		t.Fatalf("end record read at another offset: %v", err)
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	const seg, off = 5, 800
	valid := func() []byte { return encodeRecord(kindData, seg, 600, []byte("hello, commit log")) }
	for _, tc := range []struct {
		name   string
		mangle func([]byte) []byte
		want   error
	}{
		{"empty", func(b []byte) []byte { return nil }, errRecordShort},
		{"half a header", func(b []byte) []byte { return b[:12] }, errRecordShort},
		{"payload cut", func(b []byte) []byte { return b[:30] }, errRecordShort},
		{"padding cut", func(b []byte) []byte { return b[:len(b)-1] }, errRecordShort},
		{"zeroed", func(b []byte) []byte { return make([]byte, len(b)) }, errRecordZeroed},
		{"kind zero", func(b []byte) []byte { b[12] = 0; return b }, errRecordKind},
		{"unknown kind", func(b []byte) []byte { b[12] = 3; return b }, errRecordKind},
		{"reserved set", func(b []byte) []byte { b[14] = 1; return b }, errRecordReserved},
		{"other segment", func(b []byte) []byte { binary.LittleEndian.PutUint64(b[16:], seg-1); return b }, errRecordSegment},
		{"synced past record", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], off+8); return b }, errRecordSynced},
		{"payload bit flip", func(b []byte) []byte { b[30] ^= 0x10; return b }, errRecordChecksum},
		{"crc bit flip", func(b []byte) []byte { b[0] ^= 1; return b }, errRecordChecksum},
		{"length changed", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 3); return b }, errRecordChecksum},
		{"length huge", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 1<<31); return b }, errRecordShort},
		{"end with payload", func(b []byte) []byte { return encodeRecord(kindEnd, seg, off, []byte("x")) }, errRecordLength},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeRecord(tc.mangle(valid()), seg, off)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSegmentHeader(t *testing.T) {
	b := segmentHeader(1234)
	if len(b) != segmentHeaderSize || !strings.HasPrefix(string(b), segmentMagic) {
		t.Fatalf("header %x", b)
	}
	if id, v, err := parseSegmentHeader(b); err != nil || id != 1234 || v != segmentVersion {
		t.Fatalf("parse: %d %d %v", id, v, err)
	}
	for _, tc := range []struct {
		name   string
		mangle func([]byte)
		want   error
	}{
		{"magic", func(b []byte) { b[0] = 'X' }, errHeaderMagic},
		{"id flip", func(b []byte) { b[9] ^= 1 }, errHeaderCRC},
		{"version", func(b []byte) {
			binary.LittleEndian.PutUint32(b[16:], 2)
			binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
		}, errHeaderVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := segmentHeader(1234)
			tc.mangle(b)
			if _, _, err := parseSegmentHeader(b); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, _, err := parseSegmentHeader(b[:10]); !errors.Is(err, errHeaderShort) {
		t.Fatalf("short header: %v", err)
	}
}

func TestFileNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id       uint64
		recycled bool
		ok       bool
	}{
		{segmentName(1), 1, false, true},
		{segmentName(18446744073709551615), 18446744073709551615, false, true},
		{recycledName(77), 77, true, true},
		{"CommitLog-12.log", 12, false, true},
		{"CommitLog-0.log", 0, false, false},
		{"CommitLog-x.log", 0, false, false},
		{"CommitLog-12.log.tmp", 0, false, false},
		{"LOCK", 0, false, false},
		{"CommitLog-99999999999999999999999.log", 0, false, false},
	} {
		id, rec, ok := parseFileName(tc.name)
		if id != tc.id || rec != tc.recycled || ok != tc.ok {
			t.Errorf("parseFileName(%q) = %d, %v, %v", tc.name, id, rec, ok)
		}
	}
	if segmentName(2) <= segmentName(1) || segmentName(10) <= segmentName(9) {
		t.Error("segment names do not sort like ids")
	}
}

func TestPositionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b Position
		want int
	}{
		{Position{1, 0}, Position{1, 0}, 0},
		{Position{1, 10}, Position{1, 20}, -1},
		{Position{2, 0}, Position{1, 1 << 30}, 1},
		{Position{0, 0}, Position{1, 0}, -1},
	} {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := tc.a.Less(tc.b); got != (tc.want < 0) {
			t.Errorf("%v.Less(%v) = %v", tc.a, tc.b, got)
		}
	}
	if s := (Position{3, 96}).String(); s != "3:96" {
		t.Errorf("String = %q", s)
	}
}
