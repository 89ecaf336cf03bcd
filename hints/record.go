package hints

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"time"

	"github.com/cqld/cqld/ring"
)

// These constants are the on-disk format (drawn in doc.go). They are frozen:
// changing one makes existing hints files unreadable.
const (
	fileMagic      = "CQLDHINT"
	fileVersion    = 1
	fileHeaderSize = 48

	recordHeaderSize = 32
	recordAlign      = 8

	// kindHint records carry one hint. kindEnd closes a file: every byte
	// before it was synced, nothing after it is part of the file. Zero is
	// never a kind, so zeroed bytes never decode.
	kindHint = 1
	kindEnd  = 2

	// MaxHintSize caps the encoded mutation of one hint. It bounds what a
	// decoder allocates for a length read from disk.
	MaxHintSize = 64 << 20

	// maxFileSize keeps every offset within the 32-bit synced field.
	maxFileSize = 1 << 31
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Reasons a record or a file header does not decode. Reading turns them
// into a torn tail or a quarantined file.
var (
	errShort    = errors.New("record runs past the end of the file")
	errZeroed   = errors.New("zeroed bytes")
	errHeader   = errors.New("header checksum mismatch")
	errKind     = errors.New("unknown record kind")
	errReserved = errors.New("reserved bytes are not zero")
	errLength   = errors.New("length out of bounds")
	errSynced   = errors.New("synced offset past the record")
	errPayload  = errors.New("payload checksum mismatch")
)

// recordHeader is a decoded record header whose header checksum held.
type recordHeader struct {
	length  uint32
	synced  uint32
	kind    byte
	created int64 // unix microseconds
	crc     uint32
}

func alignUp(n int64) int64 { return (n + recordAlign - 1) &^ (recordAlign - 1) }

// recordSize is the size on disk of a record with an n-byte payload.
func recordSize(n int) int64 { return alignUp(recordHeaderSize + int64(n)) }

// size is the record's size on disk, padding included.
func (h recordHeader) size() int64 { return recordSize(int(h.length)) }

// appendRecord appends the record of one hint (or, with kindEnd and no
// payload, an end record) to b.
func appendRecord(b []byte, kind byte, synced int64, created time.Time, payload []byte) []byte {
	start := len(b)
	b = append(b, make([]byte, recordSize(len(payload)))...)
	h := b[start : start+recordHeaderSize]
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[8:12], uint32(synced))
	h[12] = kind
	if kind == kindHint {
		binary.LittleEndian.PutUint64(h[16:24], uint64(created.UnixMicro()))
	}
	binary.LittleEndian.PutUint32(h[24:28], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[0:4], crc32.Checksum(h[4:recordHeaderSize], castagnoli))
	copy(b[start+recordHeaderSize:], payload)
	return b
}

// setSynced rewrites the synced field of the record at the start of rec,
// and its header checksum.
func setSynced(rec []byte, synced int64) {
	binary.LittleEndian.PutUint32(rec[8:12], uint32(synced))
	binary.LittleEndian.PutUint32(rec[0:4], crc32.Checksum(rec[4:recordHeaderSize], castagnoli))
}

// decodeRecordHeader decodes the record header at the start of b, the record
// being at offset off of a file whose bytes from off on are remaining long.
// It checks everything the header alone can prove: its checksum, kind,
// reserved bytes, that the payload fits in the file and under MaxHintSize,
// and that the synced claim is not past the record.
func decodeRecordHeader(b []byte, off, remaining int64) (recordHeader, error) {
	if int64(len(b)) < recordHeaderSize || remaining < recordHeaderSize {
		return recordHeader{}, errShort
	}
	b = b[:recordHeaderSize]
	if allZero(b) {
		return recordHeader{}, errZeroed
	}
	if crc32.Checksum(b[4:], castagnoli) != binary.LittleEndian.Uint32(b[0:4]) {
		return recordHeader{}, errHeader
	}
	h := recordHeader{
		length:  binary.LittleEndian.Uint32(b[4:8]),
		synced:  binary.LittleEndian.Uint32(b[8:12]),
		kind:    b[12],
		created: int64(binary.LittleEndian.Uint64(b[16:24])),
		crc:     binary.LittleEndian.Uint32(b[24:28]),
	}
	switch {
	case h.kind != kindHint && h.kind != kindEnd:
		return h, errKind
	case b[13] != 0 || b[14] != 0 || b[15] != 0 || binary.LittleEndian.Uint32(b[28:32]) != 0:
		return h, errReserved
	case h.kind == kindEnd && (h.length != 0 || h.created != 0 || int64(h.synced) != off):
		return h, errLength
	case h.length > MaxHintSize:
		return h, errLength
	case h.size() > remaining:
		return h, errShort
	case int64(h.synced) > off:
		return h, errSynced
	}
	return h, nil
}

// checkPayload verifies a record's payload against its header.
func checkPayload(h recordHeader, payload []byte) error {
	if crc32.Checksum(payload, castagnoli) != h.crc {
		return errPayload
	}
	return nil
}

// decodeRecord decodes the whole record at the start of b (a record at
// offset off, b holding every remaining byte of the file). The payload
// aliases b.
func decodeRecord(b []byte, off int64) (recordHeader, []byte, error) {
	h, err := decodeRecordHeader(b, off, int64(len(b)))
	if err != nil {
		return h, nil, err
	}
	payload := b[recordHeaderSize : recordHeaderSize+int(h.length)]
	if err := checkPayload(h, payload); err != nil {
		return h, nil, err
	}
	return h, payload, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// fileHeader is what a hints file's first bytes say about it.
type fileHeader struct {
	target  ring.HostID
	created int64 // unix milliseconds, as in the file name
}

func appendFileHeader(b []byte, h fileHeader) []byte {
	start := len(b)
	b = append(b, make([]byte, fileHeaderSize)...)
	p := b[start:]
	copy(p[0:8], fileMagic)
	binary.LittleEndian.PutUint32(p[8:12], fileVersion)
	copy(p[16:32], h.target[:])
	binary.LittleEndian.PutUint64(p[32:40], uint64(h.created))
	binary.LittleEndian.PutUint32(p[40:44], crc32.Checksum(p[0:40], castagnoli))
	return b
}

var (
	errFileMagic   = errors.New("not a hints file (bad magic)")
	errFileVersion = errors.New("unknown hints file version")
)

func decodeFileHeader(b []byte) (fileHeader, error) {
	if len(b) < fileHeaderSize {
		return fileHeader{}, errShort
	}
	b = b[:fileHeaderSize]
	if allZero(b) {
		return fileHeader{}, errZeroed
	}
	if !bytes.Equal(b[0:8], []byte(fileMagic)) {
		return fileHeader{}, errFileMagic
	}
	if crc32.Checksum(b[0:40], castagnoli) != binary.LittleEndian.Uint32(b[40:44]) {
		return fileHeader{}, errHeader
	}
	if binary.LittleEndian.Uint32(b[8:12]) != fileVersion {
		return fileHeader{}, errFileVersion
	}
	if binary.LittleEndian.Uint32(b[12:16]) != 0 || binary.LittleEndian.Uint32(b[44:48]) != 0 {
		return fileHeader{}, errReserved
	}
	var h fileHeader
	copy(h.target[:], b[16:32])
	h.created = int64(binary.LittleEndian.Uint64(b[32:40]))
	return h, nil
}
