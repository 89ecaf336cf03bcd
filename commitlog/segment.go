package commitlog

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const (
	segmentPrefix    = "CommitLog-"
	segmentSuffix    = ".log"
	recycledSuffix   = ".recycle"
	lockFileName     = "LOCK"
	writeCategory    = vfs.DiskWriteCategory("commitlog")
	maxRecycledFiles = 2
)

// segmentName is the file name of segment id: zero-padded so that names sort
// like ids.
func segmentName(id uint64) string { return fmt.Sprintf("%s%020d%s", segmentPrefix, id, segmentSuffix) }

// recycledName is the name a freed segment waits under until it is reused.
// It never looks like a segment, so replay never reads it.
func recycledName(id uint64) string {
	return fmt.Sprintf("%s%020d%s", segmentPrefix, id, recycledSuffix)
}

// parseFileName recognises segment and recycled file names.
func parseFileName(name string) (id uint64, recycled, ok bool) {
	rest, found := strings.CutPrefix(name, segmentPrefix)
	if !found {
		return 0, false, false
	}
	digits, found := strings.CutSuffix(rest, segmentSuffix)
	if !found {
		if digits, found = strings.CutSuffix(rest, recycledSuffix); !found {
			return 0, false, false
		}
		recycled = true
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || id == 0 {
		return 0, false, false
	}
	return id, recycled, true
}

type segState int

const (
	segOld     segState = iota // found at Open; read only by Replay
	segReady                   // prepared, not yet appended to
	segActive                  // Log.cur: appends go here
	segSealing                 // rotated out: the flusher owes it a final sync and an end record
	segClosed                  // handles closed; waits for MarkFlushed
	segRemoved                 // deleted or recycled
)

// segment is one file of the log. Its mutable fields are guarded by Log.mu,
// except the handles: w belongs to the appender holding Log.mu while the
// segment is active and to the flusher afterwards; s belongs to the flusher.
type segment struct {
	id   uint64
	path string
	// size is what the segment counts against TotalSpace.
	size int64

	state   segState
	written int64 // end of the last record appended (buffered or written)
	synced  int64 // everything before it is durable
	failed  bool  // an I/O error hit it: it gets no more syncs and no end record

	// chunks hold the records appended since the flusher last wrote: the
	// bytes [bufOff, written), one chunk after the other, each record
	// within one chunk. The flusher takes them and writes each with one
	// WriteAt (a lone writer's records: one), so synced <= bufOff <=
	// written.
	chunks [][]byte
	bufOff int64

	// zeroed is the end of the zeros written ahead of the records (see
	// zeroAhead): set by the preparer, then the flusher's.
	zeroed int64

	// NB: two handles on one file, both the flusher's: it writes through w
	// and fdatasyncs through s. (Before the segment is current, the
	// preparer writes its header through w.)
	// REQUIRES: syncing one handle makes durable what was written through
	// another handle of the same file, as fsync(2) does.
	w, s vfs.File
}

// Appends buffer in chunks of chunkSize, or of a record's size when it is
// larger: a buffer that grew instead would copy what it holds at every
// growth, and it grows most when the flusher's write waits for the
// kernel's writeback (a node ingesting at disk speed). The log keeps up to
// maxSpares empty chunks the flusher wrote out.
const (
	chunkSize = 1 << 20
	maxSpares = 16
)

// maxUnwritten bounds what periodic-mode appends buffer ahead of the
// flusher's writes to the OS. Those writes normally keep up, but the
// kernel may hold a writer for as long as it takes to write back dirty
// pages (a disk slower than the writes): appends, which do not wait in
// periodic mode, would buffer all the while, and at ingest speed a
// stall of a second or two holds tens of MiB. Past the bound an append
// waits for the next sync instead (see add), so that its client's next
// request waits too: what is buffered beyond the bound is then bounded by
// the requests in flight.
const maxUnwritten = 8 << 20

// reserveLocked returns room for a record of size bytes at the end of
// seg's chunks.
// REQUIRES: l.mu held.
func (l *Log) reserveLocked(seg *segment, size int) []byte {
	n := len(seg.chunks)
	if n == 0 || cap(seg.chunks[n-1])-len(seg.chunks[n-1]) < size {
		seg.chunks = append(seg.chunks, l.chunkLocked(size))
		n++
	}
	c := seg.chunks[n-1]
	seg.chunks[n-1] = c[:len(c)+size]
	return c[len(c) : len(c)+size]
}

// chunkLocked returns an empty chunk with room for size bytes.
// REQUIRES: l.mu held.
func (l *Log) chunkLocked(size int) []byte {
	if size > chunkSize {
		return make([]byte, 0, size)
	}
	if n := len(l.spares); n > 0 {
		c := l.spares[n-1]
		l.spares[n-1] = nil
		l.spares = l.spares[:n-1]
		return c
	}
	return make([]byte, 0, chunkSize)
}

// keepChunksLocked keeps written chunks of the usual size for reuse, up to
// maxSpares.
// REQUIRES: l.mu held.
func (l *Log) keepChunksLocked(chunks [][]byte) {
	for _, c := range chunks {
		if cap(c) == chunkSize && len(l.spares) < maxSpares {
			l.spares = append(l.spares, c[:0])
		}
	}
}

// writeBuffered writes what appends have buffered in seg to the operating
// system, one WriteAt per chunk, and returns the end of what is written. Appends
// keep buffering meanwhile. Only the flusher calls it. A segment that
// failed is not written.
func (l *Log) writeBuffered(seg *segment) (int64, error) {
	l.mu.Lock()
	if seg.failed || len(seg.chunks) == 0 {
		end := seg.bufOff
		l.mu.Unlock()
		return end, nil
	}
	chunks, off := seg.chunks, seg.bufOff
	seg.chunks = nil
	seg.bufOff = seg.written
	end := seg.written
	l.mu.Unlock()
	taken := end - off

	var err error
	for _, c := range chunks {
		if err = writeFull(seg.w, c, off); err != nil {
			break
		}
		off += int64(len(c))
	}
	if err == nil {
		err = l.zeroAhead(seg, end)
	}

	l.mu.Lock()
	l.unwritten -= taken
	l.keepChunksLocked(chunks)
	l.mu.Unlock()
	return end, err
}

func (s *segment) pos() Position { return Position{Segment: s.id, Offset: s.written} }

// closeFiles closes the segment's handles, keeping the first error.
func (s *segment) closeFiles() error {
	var err error
	for _, f := range []*vfs.File{&s.w, &s.s} {
		if *f != nil {
			err = errors.Join(err, (*f).Close())
			*f = nil
		}
	}
	return err
}

// prepareSegment makes segment id ready for appends, off the write path: it
// reuses a recycled file when there is one (its stale records carry an older
// segment id, so they are never replayed) or creates and preallocates a new
// one, writes the header, and syncs the file and the directory so that
// nothing acknowledged in it can be lost with its directory entry.
func (l *Log) prepareSegment(id uint64, recycled string) (*segment, error) {
	fs := l.opts.FS
	path := fs.PathJoin(l.opts.Dir, segmentName(id))
	if recycled != "" {
		if err := fs.Rename(recycled, path); err != nil {
			l.log.Warn("commit log could not reuse a recycled segment; creating a new one", "file", recycled, "err", err)
			_ = fs.Remove(recycled)
			recycled = ""
		}
	}
	seg := &segment{id: id, path: path, size: l.opts.SegmentSize, state: segReady,
		written: segmentHeaderSize, synced: segmentHeaderSize, bufOff: segmentHeaderSize}
	err := func() error {
		var err error
		if seg.w, err = fs.OpenReadWrite(path, writeCategory); err != nil {
			return err
		}
		if recycled == "" {
			// Preallocation only saves allocations on the write path; a
			// file system without it still works.
			if err := seg.w.Preallocate(0, l.opts.SegmentSize); err != nil && !l.preallocWarned.Swap(true) {
				l.log.Warn("commit log could not preallocate a segment", "file", path, "err", err)
			}
			// The first zeros (see zeroAhead) are written here, off the
			// write path.
			seg.zeroed = min(l.opts.SegmentSize, segmentHeaderSize+zeroChunk)
			if err := zeroFill(seg.w, segmentHeaderSize, seg.zeroed); err != nil {
				return err
			}
		} else {
			seg.zeroed = l.opts.SegmentSize // written whole in its first life
		}
		if err := writeFull(seg.w, segmentHeader(id), 0); err != nil {
			return err
		}
		if err := seg.w.SyncData(); err != nil {
			return err
		}
		if seg.s, err = fs.OpenReadWrite(path, writeCategory); err != nil {
			return err
		}
		return l.syncDir()
	}()
	if err != nil {
		_ = seg.closeFiles()
		_ = fs.Remove(path)
		return nil, fmt.Errorf("commitlog: prepare segment %s: %w", path, err)
	}
	return seg, nil
}

// sealSegment finishes a rotated segment once its final sync is done: an end
// record (proof for replay that everything before it was synced, and the
// end of a recycled file's live part), one more sync, and closing. Only the
// flusher calls it. A segment that failed, or a log that stopped, gets no
// end record.
func (l *Log) sealSegment(seg *segment) {
	l.mu.Lock()
	failed := seg.failed || l.err != nil
	if !failed && seg.synced < seg.written {
		l.mu.Unlock()
		return // not yet synced; the next flush cycle gets to it
	}
	end := seg.written
	l.mu.Unlock()

	var err error
	if !failed {
		if err = writeFull(seg.w, endRecord(seg.id, end), end); err == nil {
			err = seg.s.SyncData()
		}
	}
	closeErr := seg.closeFiles()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.sealing = removeSegment(l.sealing, seg)
	seg.state = segClosed
	l.cond.Broadcast()
	if err != nil {
		l.failLocked(seg, "seal", err)
	} else if closeErr != nil {
		l.log.Warn("commit log could not close a segment", "file", seg.path, "err", closeErr)
	}
}

// disposeFile recycles or deletes a freed segment file.
func (l *Log) disposeFile(path string, id uint64, recycle bool) error {
	fs := l.opts.FS
	if recycle {
		to := fs.PathJoin(l.opts.Dir, recycledName(id))
		if err := fs.Rename(path, to); err == nil {
			l.mu.Lock()
			l.pool = append(l.pool, to)
			l.poolReserved--
			l.mu.Unlock()
			if m := l.opts.Metrics; m != nil {
				m.SegmentsRecycled.Inc()
			}
			l.poke(l.prepC)
			return nil
		}
		l.mu.Lock()
		l.poolReserved--
		l.mu.Unlock()
	}
	if err := fs.Remove(path); err != nil {
		return fmt.Errorf("commitlog: remove %s: %w", path, err)
	}
	return nil
}

func (l *Log) syncDir() error {
	d, err := l.opts.FS.OpenDir(l.opts.Dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Segments are zero-filled a chunk ahead of their records. Into fallocated
// (unwritten) space, or past the end of the file, every fdatasync would
// also commit extent and size changes to the file system's journal; over
// zeros already written it is a flush of data alone (docs/commitlog.md has
// the measurement). Writing the zeros as the records come, a chunk at a
// time, spreads the cost over the segment's life instead of paying it
// whole when the segment is created.
const (
	zeroChunk = 1 << 20
	zeroAhead = 256 << 10 // a new chunk once the records come this close
)

var zeros = make([]byte, zeroChunk)

// zeroFill writes zeros into f from off to end.
func zeroFill(f vfs.File, off, end int64) error {
	for off < end {
		n := min(int64(len(zeros)), end-off)
		if err := writeFull(f, zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// zeroAhead writes the next chunk of zeros after end, the end of what the
// flusher has written to seg, when end has come close to the zeros. Only
// the flusher calls it, and the flusher writes every record: so the zeros
// land before any record at their offsets is written, never over one.
func (l *Log) zeroAhead(seg *segment, end int64) error {
	if seg.zeroed >= l.opts.SegmentSize || end+zeroAhead <= seg.zeroed {
		return nil
	}
	from := max(seg.zeroed, end)
	to := min(l.opts.SegmentSize, from+zeroChunk)
	if err := zeroFill(seg.w, from, to); err != nil {
		return err
	}
	seg.zeroed = to
	return nil
}

func writeFull(f vfs.File, b []byte, off int64) error {
	n, err := f.WriteAt(b, off)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}

func removeSegment(list []*segment, seg *segment) []*segment {
	for i, s := range list {
		if s == seg {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
