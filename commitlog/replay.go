package commitlog

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReplayStats reports what Replay read.
type ReplayStats struct {
	Segments int
	Records  int
	// Bytes counts payload bytes handed to fn.
	Bytes int64
	// TruncatedBytes counts the bytes of torn records cut from the tails
	// of segments, up to their last byte that is not zero (zeros to the end
	// of a file are space written ahead of the records, not a tail).
	TruncatedBytes int64
	// LeftoverBytes counts the bytes cut after the last record of a
	// recycled segment that are the older segment's it was recycled from:
	// no data of this log, so kept apart from TruncatedBytes, which a
	// reader would take for loss.
	LeftoverBytes int64
	// SkippedBytes counts corrupt bytes skipped under IgnoreReplayErrors.
	SkippedBytes int64
	Duration     time.Duration
}

// Replay calls fn for every valid record of every segment that existed at
// Open, in log order. fn gets the payload, valid only during the call, and
// its position. A segment ends at its end record, at the end of the file, or
// at its first record that does not decode:
//
//   - if no later record of the segment claims that the bytes there had been
//     synced, they are a tail torn by a crash (or zeroed, or left over from
//     the file's previous life as another segment): replay truncates the
//     segment there and logs how many bytes it cut;
//   - otherwise the record was damaged after it was made durable: Replay
//     fails with a *CorruptionError naming the file and offset, or, under
//     IgnoreReplayErrors, logs it and resumes at the next valid record.
//
// Replaying twice gives the same records. Replay must be called before the
// first Append; an error from fn stops it and is returned.
func (l *Log) Replay(fn func(payload []byte, pos Position) error) (ReplayStats, error) {
	start := time.Now()
	var st ReplayStats
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return st, ErrClosed
	}
	if l.appended {
		l.mu.Unlock()
		return st, ErrReplayAfterAppend
	}
	var segs []*segment
	for _, s := range l.old {
		if s.state == segOld {
			segs = append(segs, s)
		}
	}
	l.mu.Unlock()

	for _, s := range segs {
		st.Segments++
		if err := l.replaySegment(s, fn, &st); err != nil {
			st.Duration = time.Since(start)
			l.countReplay(st)
			return st, err
		}
	}
	st.Duration = time.Since(start)
	l.countReplay(st)
	l.log.Info("commit log replayed", "segments", st.Segments, "records", st.Records, "bytes", st.Bytes,
		"truncated_bytes", st.TruncatedBytes, "leftover_bytes", st.LeftoverBytes, "skipped_bytes", st.SkippedBytes, "duration", st.Duration,
		"records_per_second", int64(float64(st.Records)/max(st.Duration.Seconds(), 1e-9)))
	return st, nil
}

func (l *Log) replaySegment(seg *segment, fn func([]byte, Position) error, st *ReplayStats) error {
	f, err := l.opts.FS.Open(seg.path, vfs.SequentialReadsOption)
	if err != nil {
		return fmt.Errorf("commitlog: open %s: %w", seg.path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("commitlog: stat %s: %w", seg.path, err)
	}
	r := &segmentReader{f: f, size: info.Size()}
	res, err := scanSegment(r, seg.id, l.opts.IgnoreReplayErrors, func(payload []byte, off int64) error {
		st.Records++
		st.Bytes += int64(len(payload))
		return fn(payload, Position{Segment: seg.id, Offset: off})
	})
	if err != nil {
		var ce *CorruptionError
		if errors.As(err, &ce) {
			ce.File = seg.path
		}
		return err
	}
	if res.headerErr != nil {
		l.log.Warn("commit log segment has no valid header", "file", seg.path, "err", res.headerErr)
	}
	for _, sk := range res.skipped {
		st.SkippedBytes += sk.bytes
		l.log.Warn("commit log skipped a corrupt record (commitlog_ignore_replay_errors is set)",
			"file", seg.path, "offset", sk.off, "bytes", sk.bytes, "reason", sk.reason)
	}
	if res.unused {
		l.log.Info("commit log segment was prepared but never used", "file", seg.path)
		return nil
	}
	if res.tornAt < 0 {
		return nil
	}
	cut := res.tornEnd - res.tornAt
	if res.tornStale {
		// The normal end of a recycled segment after a kill: no data is
		// lost, the bytes are an older segment's.
		st.LeftoverBytes += cut
		l.log.Info("commit log segment ends at its last record; the rest of the file is left over from the older segment it was recycled from, and is cut off",
			"file", seg.path, "offset", res.tornAt, "leftover_bytes", cut)
	} else {
		st.TruncatedBytes += cut
		l.log.Warn("commit log segment ends at a record the crash left incomplete; it and what follows are cut off",
			"file", seg.path, "offset", res.tornAt, "bytes", cut, "reason", res.tornReason)
	}
	if err := l.truncateSegment(seg, res.tornAt); err != nil {
		return fmt.Errorf("commitlog: truncate %s at %d: %w", seg.path, res.tornAt, err)
	}
	return nil
}

// truncateSegment ends seg at off for good: an end record there makes every
// later replay stop at it, and where the file can be truncated it is.
func (l *Log) truncateSegment(seg *segment, off int64) error {
	f, err := l.opts.FS.OpenReadWrite(seg.path, writeCategory)
	if err != nil {
		return err
	}
	err = writeFull(f, endRecord(seg.id, off), off)
	if t, ok := f.(interface{ Truncate(int64) error }); ok && err == nil {
		err = t.Truncate(off + recordHeaderSize)
	}
	if err == nil {
		err = f.SyncData()
	}
	return errors.Join(err, f.Close())
}

type skip struct {
	off, bytes int64
	reason     string
}

// scanResult says how a segment ended.
type scanResult struct {
	headerErr  error
	unused     bool   // no valid header and no valid first record
	tornAt     int64  // offset of a torn tail, or -1
	tornEnd    int64  // after its last non-zero byte (zeros follow to the end of the file)
	tornReason string // why the record there did not decode
	tornStale  bool   // the record there is an older segment's: the file was recycled
	skipped    []skip
}

// scanSegment decodes the records of segment id from r, calling fn for each
// data record. It never panics on any input.
func scanSegment(r *segmentReader, id uint64, skipCorrupt bool, fn func(payload []byte, off int64) error) (scanResult, error) {
	res := scanResult{tornAt: -1}
	hdr, err := r.at(0, segmentHeaderSize)
	if err != nil {
		return res, err
	}
	if hid, _, herr := parseSegmentHeader(hdr); herr != nil {
		if errors.Is(herr, errHeaderVersion) {
			return res, fmt.Errorf("commitlog: segment %d: %w", id, herr)
		}
		res.headerErr = herr
	} else if hid != id {
		res.headerErr = fmt.Errorf("header names segment %d", hid)
	}
	off := int64(segmentHeaderSize)
	for off < r.size {
		h, payload, derr, err := r.record(off, id)
		if err != nil {
			return res, err
		}
		if derr == nil {
			if h.kind == kindEnd {
				return res, nil
			}
			if err := fn(payload, off); err != nil {
				return res, err
			}
			off += h.size()
			continue
		}
		next, synced, err := r.scanAhead(off+recordAlign, id)
		if err != nil {
			return res, err
		}
		if synced <= off {
			if off == segmentHeaderSize && (res.headerErr != nil || errors.Is(derr, errRecordSegment)) {
				// A file created or renamed for reuse that was never
				// written to: what follows its header, if anything, is an
				// older segment's.
				res.unused = true
				return res, nil
			}
			// Zeros to the end of the file are space not yet written
			// (segments are zero-filled ahead of their records): the
			// segment's end, not a torn tail.
			end, err := r.nonZeroEnd(off)
			if err != nil || end == off {
				return res, err
			}
			res.tornAt, res.tornEnd, res.tornReason = off, end, derr.Error()
			res.tornStale = errors.Is(derr, errRecordSegment)
			return res, nil
		}
		if !skipCorrupt {
			return res, &CorruptionError{Offset: off, Reason: derr.Error()}
		}
		res.skipped = append(res.skipped, skip{off: off, bytes: next - off, reason: derr.Error()})
		off = next
	}
	return res, nil
}

// segmentReader reads a segment file through a window, so that a segment
// never needs to be in memory whole.
type segmentReader struct {
	f      io.ReaderAt
	size   int64
	buf    []byte
	bufOff int64
}

const readWindow = 1 << 20

// at returns up to n bytes from off (fewer at the end of the file), valid
// until the next call.
func (r *segmentReader) at(off int64, n int) ([]byte, error) {
	if off >= r.size {
		return nil, nil
	}
	n = int(min(int64(n), r.size-off))
	if off >= r.bufOff && off+int64(n) <= r.bufOff+int64(len(r.buf)) {
		return r.buf[off-r.bufOff : off-r.bufOff+int64(n)], nil
	}
	want := int(min(int64(max(n, readWindow)), r.size-off))
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, off)
	if err != nil && !(errors.Is(err, io.EOF) && m == want) {
		r.buf = r.buf[:0]
		return nil, fmt.Errorf("commitlog: read at %d: %w", off, err)
	}
	r.bufOff = off
	return r.buf[:n], nil
}

// nonZeroEnd returns the offset after the last byte in [off, size) that is
// not zero, or off when all of them are.
func (r *segmentReader) nonZeroEnd(off int64) (int64, error) {
	end := off
	for at := off; at < r.size; {
		b, err := r.at(at, readWindow)
		if err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				end = at + int64(i) + 1
				break
			}
		}
		at += int64(len(b))
	}
	return end, nil
}

// record decodes the record at off. derr says why it does not decode; err
// is an I/O error.
func (r *segmentReader) record(off int64, id uint64) (h recordHeader, payload []byte, derr, err error) {
	b, err := r.at(off, recordHeaderSize)
	if err != nil {
		return h, nil, nil, err
	}
	if h, derr = parseRecordHeader(b, id, off); derr != nil {
		return h, nil, derr, nil
	}
	if h.size() > r.size-off {
		return h, nil, errRecordShort, nil
	}
	if b, err = r.at(off, int(h.size())); err != nil {
		return h, nil, nil, err
	}
	payload, derr = checkRecord(h, b)
	return h, payload, derr, nil
}

// scanAhead looks at every aligned offset from off on for valid records of
// segment id. It returns the first one's offset (the end of the file if
// none) and the highest synced offset any of them claims. A claim past a
// bad record proves the bad record had been synced before it was damaged.
func (r *segmentReader) scanAhead(off int64, id uint64) (first, synced int64, err error) {
	first = r.size
	for ; off+recordHeaderSize <= r.size; off += recordAlign {
		h, _, derr, err := r.record(off, id)
		if err != nil {
			return first, synced, err
		}
		if derr != nil {
			continue
		}
		first = min(first, off)
		synced = max(synced, int64(h.synced))
	}
	return first, synced, nil
}

// countReplay adds what a replay read to the metrics.
func (l *Log) countReplay(st ReplayStats) {
	if m := l.opts.Metrics; m != nil {
		m.ReplayRecords.Add(float64(st.Records))
		m.ReplayBytes.Add(float64(st.Bytes))
		m.ReplayTruncatedBytes.Add(float64(st.TruncatedBytes))
		m.ReplaySkippedBytes.Add(float64(st.SkippedBytes))
		m.ReplaySeconds.Add(st.Duration.Seconds())
	}
}
