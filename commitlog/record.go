package commitlog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// These constants are the on-disk format (drawn in doc.go). They are frozen:
// changing one makes existing commit logs unreadable.
const (
	segmentMagic      = "CQLDCLOG"
	segmentVersion    = 1
	segmentHeaderSize = 24

	recordHeaderSize = 24
	recordAlign      = 8

	// kindData records carry a payload handed to Append. kindEnd records close
	// a segment: everything before them is durable and nothing after them is
	// part of the segment. Zero is never a valid kind, so zeroed bytes never
	// decode as a record.
	kindData = 1
	kindEnd  = 2

	// maxSegmentSize keeps every offset within the 32-bit synced field.
	maxSegmentSize = 1 << 31
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Reasons a record does not decode. They stay inside the package: replay
// turns them into a torn tail or a *CorruptionError.
var (
	errRecordShort    = errors.New("record runs past the end of the segment")
	errRecordZeroed   = errors.New("zeroed bytes")
	errRecordKind     = errors.New("unknown record kind")
	errRecordReserved = errors.New("reserved header bytes are not zero")
	errRecordSegment  = errors.New("record belongs to another segment")
	errRecordLength   = errors.New("end record with a payload")
	errRecordSynced   = errors.New("synced offset past the record")
	errRecordChecksum = errors.New("checksum mismatch")
)

// recordHeader is a decoded record header whose checksum is not yet checked.
type recordHeader struct {
	crc     uint32
	length  uint32
	synced  uint32
	kind    byte
	segment uint64
}

// size is the record's size on disk, padding included.
func (h recordHeader) size() int64 { return alignUp(recordHeaderSize + int64(h.length)) }

func alignUp(n int64) int64 { return (n + recordAlign - 1) &^ (recordAlign - 1) }

// recordSize is the size on disk of a record with an n-byte payload.
func recordSize(n int) int64 { return alignUp(recordHeaderSize + int64(n)) }

// putRecordHeader writes the header of a record into b[:recordHeaderSize].
// payloadCRC is crc32.Checksum(payload, castagnoli): the checksum covers the
// payload first and then header bytes 4..24, so the expensive part can be
// computed before the record's segment and synced offset are known.
func putRecordHeader(b []byte, kind byte, segment uint64, synced int64, length int, payloadCRC uint32) {
	_ = b[recordHeaderSize-1]
	binary.LittleEndian.PutUint32(b[4:8], uint32(length))
	binary.LittleEndian.PutUint32(b[8:12], uint32(synced))
	b[12] = kind
	b[13], b[14], b[15] = 0, 0, 0
	binary.LittleEndian.PutUint64(b[16:24], segment)
	binary.LittleEndian.PutUint32(b[0:4], crc32.Update(payloadCRC, castagnoli, b[4:recordHeaderSize]))
}

// endRecord returns the record that closes segment at offset off.
func endRecord(segment uint64, off int64) []byte {
	b := make([]byte, recordHeaderSize)
	putRecordHeader(b, kindEnd, segment, off, 0, 0)
	return b
}

// parseRecordHeader checks everything about the header at the start of b
// that can be checked without the payload. off is the header's offset in
// segment.
func parseRecordHeader(b []byte, segment uint64, off int64) (recordHeader, error) {
	if len(b) < recordHeaderSize {
		return recordHeader{}, errRecordShort
	}
	h := recordHeader{
		crc:     binary.LittleEndian.Uint32(b[0:4]),
		length:  binary.LittleEndian.Uint32(b[4:8]),
		synced:  binary.LittleEndian.Uint32(b[8:12]),
		kind:    b[12],
		segment: binary.LittleEndian.Uint64(b[16:24]),
	}
	switch {
	case h.kind == 0 && h.crc == 0 && h.length == 0 && h.synced == 0 && h.segment == 0:
		return h, errRecordZeroed
	case h.kind != kindData && h.kind != kindEnd:
		return h, errRecordKind
	case b[13] != 0 || b[14] != 0 || b[15] != 0:
		return h, errRecordReserved
	case h.segment != segment:
		return h, errRecordSegment
	case h.kind == kindEnd && h.length != 0:
		return h, errRecordLength
	case int64(h.synced) > off:
		return h, errRecordSynced
	case h.kind == kindEnd && int64(h.synced) != off:
		return h, errRecordSynced
	}
	return h, nil
}

// checkRecord verifies the checksum of the record whose header is h; b holds
// the whole record from its first byte.
func checkRecord(h recordHeader, b []byte) ([]byte, error) {
	if int64(len(b)) < h.size() {
		return nil, errRecordShort
	}
	payload := b[recordHeaderSize : recordHeaderSize+int(h.length)]
	crc := crc32.Update(crc32.Checksum(payload, castagnoli), castagnoli, b[4:recordHeaderSize])
	if crc != h.crc {
		return nil, errRecordChecksum
	}
	return payload, nil
}

// decodeRecord decodes the record at the start of b, where b runs from the
// record's offset off to the end of segment's bytes. It never panics, and
// the payload aliases b.
func decodeRecord(b []byte, segment uint64, off int64) (recordHeader, []byte, error) {
	h, err := parseRecordHeader(b, segment, off)
	if err != nil {
		return h, nil, err
	}
	payload, err := checkRecord(h, b)
	return h, payload, err
}

// segmentHeader returns the header that starts segment id's file.
func segmentHeader(id uint64) []byte {
	b := make([]byte, segmentHeaderSize)
	copy(b, segmentMagic)
	binary.LittleEndian.PutUint64(b[8:16], id)
	binary.LittleEndian.PutUint32(b[16:20], segmentVersion)
	binary.LittleEndian.PutUint32(b[20:24], crc32.Checksum(b[:20], castagnoli))
	return b
}

var (
	errHeaderShort   = errors.New("segment header is incomplete")
	errHeaderMagic   = errors.New("not a commit log segment header")
	errHeaderCRC     = errors.New("segment header checksum mismatch")
	errHeaderVersion = errors.New("unsupported commit log format version")
)

// parseSegmentHeader returns the segment id and format version recorded in
// the header at the start of b.
func parseSegmentHeader(b []byte) (id uint64, version uint32, err error) {
	if len(b) < segmentHeaderSize {
		return 0, 0, errHeaderShort
	}
	if string(b[:8]) != segmentMagic {
		return 0, 0, errHeaderMagic
	}
	if crc32.Checksum(b[:20], castagnoli) != binary.LittleEndian.Uint32(b[20:24]) {
		return 0, 0, errHeaderCRC
	}
	id = binary.LittleEndian.Uint64(b[8:16])
	version = binary.LittleEndian.Uint32(b[16:20])
	if version != segmentVersion {
		return id, version, errHeaderVersion
	}
	return id, version, nil
}
