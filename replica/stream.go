package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Streaming moves a token range of a table from one replica to another
// when the ring changes (a node joining, leaving or removed): the source
// reads its partitions a page at a time, unresolved (cells, tombstones,
// timestamps and TTLs as stored), and the sink writes each page through
// its commit log exactly as the source holds it (mutation.Repair of each
// partition against nothing). The sink asks for the next page only once
// it has applied the one before, so a stream holds at most two pages in
// memory and runs no faster than the slower side. A Stream remembers the
// last partition applied: run again, from the same source or another one,
// it resumes there. Writes are idempotent (last write wins), so a page
// applied twice changes nothing.
//
// Local and Remote are both sources and sinks: a node pulls a range from
// a peer (Remote source, Local sink), pushes one to a peer (Local source,
// Remote sink), or relays between two peers.

// StreamSource is what a stream reads from.
type StreamSource interface {
	// StreamPage returns t's partitions in rg after partition after (from
	// the start when nil), in ring order, unresolved, until they pass
	// maxBytes (at least one), and whether more follow.
	StreamPage(ctx context.Context, t *storage.Table, rg storage.TokenRange, after []byte, maxBytes int) (ps []*storage.Partition, more bool, err error)
}

// StreamSink is what a stream writes to.
type StreamSink interface {
	// StreamApply writes partitions of t, as a source read them, durably.
	// It does not keep ps.
	StreamApply(ctx context.Context, t *storage.Table, ps []*storage.Partition) error
}

var (
	_ StreamSource = (*Local)(nil)
	_ StreamSink   = (*Local)(nil)
	_ StreamSource = (*Remote)(nil)
	_ StreamSink   = (*Remote)(nil)
)

// DefaultStreamPage is the size a stream's pages stop at.
const DefaultStreamPage = 1 << 20

// StreamPage implements StreamSource.
func (l *Local) StreamPage(ctx context.Context, t *storage.Table, rg storage.TokenRange, after []byte, maxBytes int) ([]*storage.Partition, bool, error) {
	return l.ReadRange(ctx, t, RangeCommand{Range: rg, After: after, MaxBytes: maxBytes})
}

// streamRecordBytes is how many bytes of partitions StreamApply writes in
// one commit log record: well under the largest record of the default
// segment size, so that a page is a few records the log syncs together.
const streamRecordBytes = 256 << 10

// StreamApply implements StreamSink: the page in records of about
// streamRecordBytes, appended together (one fsync covers them all when
// the sync mode waits for one). A record the commit log finds too large
// for its segment size is split in two until it is one partition.
func (l *Local) StreamApply(ctx context.Context, t *storage.Table, ps []*storage.Partition) error {
	if err := expired(ctx); err != nil {
		return err
	}
	var chunks [][]*storage.Partition
	for start, size, i := 0, 0, 0; i < len(ps); i++ {
		size += ps[i].Size()
		if size >= streamRecordBytes || i == len(ps)-1 {
			chunks = append(chunks, ps[start:i+1])
			start, size = i+1, 0
		}
	}
	errs := make(chan error, len(chunks))
	for _, c := range chunks {
		go func() { errs <- l.streamRecord(t, c) }()
	}
	var first error
	for range chunks {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// streamRecord writes ps as one commit log record, or as two halves when
// the log refuses one that large.
func (l *Local) streamRecord(t *storage.Table, ps []*storage.Partition) error {
	m := mutation.New()
	defer m.Release()
	for _, p := range ps {
		if err := m.Repair(t, p, nil); err != nil {
			return fmt.Errorf("replica: streamed partition of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
	}
	err := l.apply(m, nil)
	if errors.Is(err, commitlog.ErrTooLarge) && len(ps) > 1 {
		half := len(ps) / 2
		if err := l.streamRecord(t, ps[:half]); err != nil {
			return err
		}
		return l.streamRecord(t, ps[half:])
	}
	if err != nil {
		return fmt.Errorf("replica: streamed partitions of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	return nil
}

// StreamPage implements StreamSource.
func (r *Remote) StreamPage(ctx context.Context, t *storage.Table, rg storage.TokenRange, after []byte, maxBytes int) ([]*storage.Partition, bool, error) {
	req := appendStreamPage(nil, &streamPageRequest{Table: t.Def.ID, Range: rg, After: after, MaxBytes: maxBytes})
	out, err := r.request(ctx, messaging.VerbStream, req)
	if err != nil {
		return nil, false, err
	}
	ps, more, err := DecodePartitions(out, t)
	if err != nil {
		return nil, false, fmt.Errorf("replica %s: stream page: %w", r.peer, err)
	}
	for _, p := range ps {
		if !rg.Contains(storage.Token(p.Key)) {
			return nil, false, fmt.Errorf("%w: replica %s streamed partition %x outside range (%d, %d]", ErrBadMessage, r.peer, p.Key, rg.Start, rg.End)
		}
	}
	return ps, more, nil
}

// StreamApply implements StreamSink.
func (r *Remote) StreamApply(ctx context.Context, t *storage.Table, ps []*storage.Partition) error {
	_, err := r.request(ctx, messaging.VerbStream, appendStreamApply(nil, t.Def.ID, ps))
	return err
}

// Stream is one table's token range moving from a source to a sink. Not
// safe for concurrent use.
type Stream struct {
	Table *storage.Table
	Range storage.TokenRange
	// After is the last partition the sink has applied, where the stream
	// resumes; nil before the first.
	After []byte
	// Partitions and Bytes count what the sink has applied.
	Partitions, Bytes int64
	// Done is set once the range has been applied to its end.
	Done bool
}

// StreamOptions tune Stream.Run.
type StreamOptions struct {
	// PageBytes is where a page stops; zero is DefaultStreamPage.
	PageBytes int
	// Metrics, when set, counts what is applied, under Direction.
	Metrics   *StreamMetrics
	Direction string
	// OnPage, when set, is called after each page the sink applied.
	OnPage func(partitions, bytes int)
}

// Run copies the rest of s from from to to, reading the next page while
// the sink applies the one before. It returns when the range is done, or
// with the first error of either side; s then says where it stopped.
func (s *Stream) Run(ctx context.Context, from StreamSource, to StreamSink, o StreamOptions) error {
	if s.Done {
		return nil
	}
	if o.PageBytes <= 0 {
		o.PageBytes = DefaultStreamPage
	}
	type page struct {
		ps   []*storage.Partition
		more bool
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	pages := make(chan page, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		after := s.After
		for {
			ps, more, err := from.StreamPage(ctx, s.Table, s.Range, after, o.PageBytes)
			if err == nil && more && len(ps) == 0 {
				err = fmt.Errorf("%w: an empty stream page says more follow", ErrBadMessage)
			}
			select {
			case pages <- page{ps, more, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || !more {
				return
			}
			after = ps[len(ps)-1].Key
		}
	}()
	defer func() {
		cancel()
		<-done
	}()
	for {
		var pg page
		select {
		case pg = <-pages:
		case <-ctx.Done():
			return ctx.Err()
		}
		if pg.err != nil {
			return fmt.Errorf("replica: stream of %s.%s %v: %w", s.Table.Def.Keyspace, s.Table.Def.Name, s.Range, pg.err)
		}
		if len(pg.ps) > 0 {
			if err := to.StreamApply(ctx, s.Table, pg.ps); err != nil {
				return fmt.Errorf("replica: stream of %s.%s %v: %w", s.Table.Def.Keyspace, s.Table.Def.Name, s.Range, err)
			}
			var bytes int
			for _, p := range pg.ps {
				bytes += p.Size()
			}
			s.After = pg.ps[len(pg.ps)-1].Key
			s.Partitions += int64(len(pg.ps))
			s.Bytes += int64(bytes)
			if m := o.Metrics; m != nil {
				m.Partitions.WithLabelValues(o.Direction).Add(float64(len(pg.ps)))
				m.Bytes.WithLabelValues(o.Direction).Add(float64(bytes))
			}
			if o.OnPage != nil {
				o.OnPage(len(pg.ps), bytes)
			}
		}
		if !pg.more {
			s.Done = true
			return nil
		}
	}
}

// StreamMetrics count streamed data by direction: "in" (this node
// received it), "out" (it sent it), "relay" (it passed it between two
// peers).
type StreamMetrics struct {
	Bytes      *prometheus.CounterVec
	Partitions *prometheus.CounterVec
}

// NewStreamMetrics registers the stream metrics with reg.
func NewStreamMetrics(reg prometheus.Registerer) *StreamMetrics {
	m := &StreamMetrics{
		Bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqld_stream_bytes_total", Help: "Bytes of partitions streamed for topology changes, by direction.",
		}, []string{"direction"}),
		Partitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqld_stream_partitions_total", Help: "Partitions streamed for topology changes, by direction.",
		}, []string{"direction"}),
	}
	reg.MustRegister(m.Bytes, m.Partitions)
	return m
}

// Internode encodings of VerbStream, version 1 (frozen, as codec.go's):
//
//	page request:  version, 1, table id (16), start, end (8 bytes each,
//	               big-endian signed), flags (1 byte: 0x01 has a resume
//	               partition), after (bytes, with 0x01), max bytes (uvarint)
//	page answer:   partitions (codec.go)
//	apply request: version, 2, table id (16), count (uvarint), count
//	               partitions (codec.go's partition)
//	apply answer:  empty
const (
	streamKindPage  = 1
	streamKindApply = 2
)

type streamPageRequest struct {
	Table    [16]byte
	Range    storage.TokenRange
	After    []byte
	MaxBytes int
}

func appendStreamPage(dst []byte, c *streamPageRequest) []byte {
	dst = append(dst, codecV1, streamKindPage)
	dst = append(dst, c.Table[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Range.Start))
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Range.End))
	if c.After != nil {
		dst = wire.AppendBytes(append(dst, 0x01), c.After)
	} else {
		dst = append(dst, 0)
	}
	return binary.AppendUvarint(dst, uint64(max(c.MaxBytes, 0)))
}

func appendStreamApply(dst []byte, table [16]byte, ps []*storage.Partition) []byte {
	dst = slices.Grow(dst, 2+16+binary.MaxVarintLen64+encodedSize(ps))
	dst = append(dst, codecV1, streamKindApply)
	dst = append(dst, table[:]...)
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	for _, p := range ps {
		dst = appendPartition(dst, p)
	}
	return dst
}

// decodeStreamRequest reads a VerbStream request's kind and table, and
// the page request of kind streamKindPage; r is left at the partitions
// of an apply request. Its slices alias b.
func decodeStreamRequest(b []byte) (kind byte, c *streamPageRequest, r *reader) {
	r = newReader(b)
	r.version()
	kind = r.Byte()
	c = &streamPageRequest{}
	copy(c.Table[:], r.Next(16))
	switch kind {
	case streamKindPage:
		c.Range.Start = int64(r.Uint64())
		c.Range.End = int64(r.Uint64())
		switch flags := r.Byte(); flags {
		case 0:
		case 0x01:
			if c.After = r.Bytes(); c.After == nil {
				r.Fail("empty resume partition")
			}
		default:
			r.Fail("unknown stream flags %#x", flags)
		}
		c.MaxBytes = r.Uvarint(math.MaxInt32)
	case streamKindApply:
	default:
		if r.Err() == nil {
			r.Fail("unknown stream message kind %d", kind)
		}
	}
	return kind, c, r
}

// decodeStreamApply reads the partitions of an apply request of table t,
// each checked as DecodePartitions checks them.
func decodeStreamApply(r *reader, t *storage.Table) ([]*storage.Partition, error) {
	// A partition takes at least two bytes.
	n := r.Uvarint(min(maxPageCount, len(r.B)/2))
	var ps []*storage.Partition
	for i := 0; i < n && r.Err() == nil; i++ {
		ps = append(ps, r.partition(t))
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return ps, nil
}

// stream serves VerbStream: a page of this node's data, or a page of a
// peer's to apply here.
func (s *Server) stream(ctx context.Context, b []byte) ([]byte, error) {
	kind, c, r := decodeStreamRequest(b)
	if err := r.Err(); err != nil {
		return nil, err
	}
	t, err := s.table(c.Table)
	if err != nil {
		return nil, err
	}
	switch kind {
	case streamKindPage:
		if err := r.End(); err != nil {
			return nil, err
		}
		if c.MaxBytes <= 0 || c.MaxBytes > serveMaxBytes {
			c.MaxBytes = serveMaxBytes
		}
		ps, more, err := s.local.ReadRange(ctx, t, RangeCommand{Range: c.Range, After: c.After, MaxPartitions: serveMaxPartitions, MaxBytes: c.MaxBytes})
		if err != nil {
			return nil, badRequest(err)
		}
		return AppendPartitions(nil, ps, more), nil
	default:
		ps, err := decodeStreamApply(r, t)
		if err != nil {
			return nil, err
		}
		return nil, s.local.StreamApply(ctx, t, ps)
	}
}
