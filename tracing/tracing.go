package tracing

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/storage"
)

// Tables are the tables traces are written to: system_traces.sessions and
// system_traces.events.
type Tables struct {
	Sessions, Events *storage.Table
}

// Options configure a Tracer.
type Options struct {
	Tables Tables
	// Write writes a trace mutation to its replicas (at consistency ANY).
	// It is called from the writer goroutine alone.
	Write func(ctx context.Context, m *mutation.Mutation) error
	// Source is this node's broadcast address and internode port: the
	// coordinator of its sessions, the source of its events.
	Source netip.AddrPort
	// TTL is how long traces are kept (trace_type_query_ttl); 0 keeps
	// them forever.
	TTL time.Duration
	// Probability is the share of requests traced unasked
	// (trace_probability).
	Probability float64
	// QueueSize bounds the records waiting to be written; 0 means 4096.
	QueueSize int
	// Now is the clock; nil means time.Now. Rand draws the requests traced
	// unasked, in [0, 1); nil means math/rand/v2's.
	Now    func() time.Time
	Rand   func() float64
	Logger *slog.Logger
}

// Tracer records this node's part of traced requests. It is safe for
// concurrent use.
type Tracer struct {
	opts    Options
	queue   chan record
	dropped atomic.Int64
	written atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
}

// New starts a Tracer and its writer goroutine; Close stops it.
func New(opts Options) *Tracer {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	t := &Tracer{opts: opts, queue: make(chan record, opts.QueueSize), stop: make(chan struct{})}
	t.wg.Add(1)
	go t.writer()
	return t
}

// Close writes what is queued and stops the writer.
func (t *Tracer) Close() {
	close(t.stop)
	t.wg.Wait()
}

// Dropped is how many trace records were dropped because the queue was
// full or their write failed.
func (t *Tracer) Dropped() int64 { return t.dropped.Load() }

// Written is how many trace records were written.
func (t *Tracer) Written() int64 { return t.written.Load() }

// writeTimeout bounds one trace write.
const writeTimeout = 10 * time.Second

func (t *Tracer) writer() {
	defer t.wg.Done()
	write := func(r record) {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		err := t.opts.Write(ctx, r.m)
		cancel()
		r.m.Release()
		if r.done != nil {
			close(r.done)
		}
		if err != nil {
			t.dropped.Add(1)
			t.opts.Logger.Debug("tracing: a trace write failed", "err", err)
			return
		}
		t.written.Add(1)
	}
	for {
		select {
		case m := <-t.queue:
			write(m)
		case <-t.stop:
			for {
				select {
				case m := <-t.queue:
					write(m)
				default:
					return
				}
			}
		}
	}
}

// record is a trace mutation waiting to be written; done, if set, is
// closed once it is.
type record struct {
	m    *mutation.Mutation
	done chan struct{}
}

// enqueue hands m to the writer, or drops it when the queue is full. It
// reports whether m was queued.
func (t *Tracer) enqueue(m *mutation.Mutation, done chan struct{}) bool {
	select {
	case t.queue <- record{m: m, done: done}:
		return true
	default:
		m.Release()
		t.dropped.Add(1)
		return false
	}
}

// Request is what a session records of the request it traces.
type Request struct {
	Client     netip.Addr
	Command    string // QUERY, EXECUTE, BATCH, PREPARE
	Request    string // "Execute CQL3 query", ...
	Parameters map[string]string
}

// Sample reports whether a request its client did not ask to trace is
// traced anyway (trace_probability).
func (t *Tracer) Sample() bool {
	p := t.opts.Probability
	return p > 0 && (p >= 1 || t.opts.Rand() < p)
}

// Begin starts a session on this node, the request's coordinator, and
// records its start. End records its duration.
func (t *Tracer) Begin(r Request) *Session {
	now := t.opts.Now()
	s := &Session{t: t, started: now, last: now, thread: "Native-Transport-Requests"}
	copy(s.id[:], functions.NewTimeUUID(now))
	m := mutation.New()
	pk := s.id[:]
	tb := t.opts.Tables.Sessions
	c := t.cell(now, nil)
	m.WriteRowMarker(tb, pk, nil, c)
	write := func(col string, v []byte) {
		m.WriteCell(tb, pk, storage.CellTarget{Column: col}, t.cell(now, v))
	}
	if r.Client.IsValid() {
		write("client", r.Client.Unmap().AsSlice())
	}
	write("command", []byte(r.Command))
	write("coordinator", t.opts.Source.Addr().Unmap().AsSlice())
	write("coordinator_port", binary.BigEndian.AppendUint32(nil, uint32(t.opts.Source.Port())))
	write("request", []byte(r.Request))
	write("started_at", binary.BigEndian.AppendUint64(nil, uint64(now.UnixMilli())))
	for k, v := range r.Parameters {
		m.WriteCell(tb, pk, storage.CellTarget{Column: "parameters", PathType: datatype.Varchar, Path: []byte(k)}, t.cell(now, []byte(v)))
	}
	t.enqueue(m, nil)
	return s
}

// Continue continues on this node, a replica, the session id a
// coordinator started: its events are recorded under id with this node
// as their source.
func (t *Tracer) Continue(id [16]byte, thread string) *Session {
	now := t.opts.Now()
	return &Session{t: t, id: id, started: now, last: now, thread: thread, remote: true}
}

// cell is a trace cell written at now with the tracer's TTL.
func (t *Tracer) cell(now time.Time, v []byte) storage.Cell {
	c := storage.Cell{Timestamp: now.UnixMicro(), Value: v}
	if t.opts.TTL > 0 {
		c.TTL = int32(t.opts.TTL / time.Second)
		c.LocalDeletionTime = int32(now.Unix()) + c.TTL
	}
	return c
}

// Session is one traced request's part on this node. Its methods are safe
// for concurrent use (a request may record from several goroutines).
type Session struct {
	t       *Tracer
	id      [16]byte
	started time.Time
	thread  string
	remote  bool

	mu   sync.Mutex
	last time.Time // the last event's time: event ids increase
}

// ID is the session's id, what the response's tracing id says.
func (s *Session) ID() [16]byte { return s.id }

// Trace records an event.
func (s *Session) Trace(activity string) {
	t := s.t
	now := t.opts.Now()
	s.mu.Lock()
	if !now.After(s.last) {
		now = s.last.Add(100 * time.Nanosecond) // a timeuuid's resolution
	}
	s.last = now
	s.mu.Unlock()
	m := mutation.New()
	tb := t.opts.Tables.Events
	ck := [][]byte{functions.NewTimeUUID(now)}
	m.WriteRowMarker(tb, s.id[:], ck, t.cell(now, nil))
	write := func(col string, v []byte) {
		m.WriteCell(tb, s.id[:], storage.CellTarget{Clustering: ck, Column: col}, t.cell(now, v))
	}
	write("activity", []byte(activity))
	write("source", t.opts.Source.Addr().Unmap().AsSlice())
	write("source_port", binary.BigEndian.AppendUint32(nil, uint32(t.opts.Source.Port())))
	write("source_elapsed", binary.BigEndian.AppendUint32(nil, uint32(now.Sub(s.started).Microseconds())))
	write("thread", []byte(s.thread))
	t.enqueue(m, nil)
}

// endWait bounds how long End waits for the session's records to be
// written, as Cassandra's TraceStateImpl.waitForPendingEvents does.
const endWait = time.Second

// End records the session's duration, which tells readers the request is
// complete (the Python driver waits for it), and waits (at most endWait)
// until it and every record before it are written, so a client reading
// its trace as soon as it is answered (gocql's Tracer) finds it. A
// continued session has no duration.
func (s *Session) End() {
	if s.remote {
		return
	}
	t := s.t
	now := t.opts.Now()
	m := mutation.New()
	us := now.Sub(s.started).Microseconds()
	m.WriteCell(t.opts.Tables.Sessions, s.id[:], storage.CellTarget{Column: "duration"},
		t.cell(now, binary.BigEndian.AppendUint32(nil, uint32(int32(min(us, 1<<31-1))))))
	done := make(chan struct{})
	if !t.enqueue(m, done) {
		return
	}
	timer := time.NewTimer(endWait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-t.stop:
	}
}

// ---- the session of a request's context ----

type ctxKey struct{}

// WithSession returns ctx carrying s.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the session ctx carries, or nil.
func FromContext(ctx context.Context) *Session {
	s, _ := ctx.Value(ctxKey{}).(*Session)
	return s
}

// Trace records an event in ctx's session, if it has one.
func Trace(ctx context.Context, activity string) {
	if s := FromContext(ctx); s != nil {
		s.Trace(activity)
	}
}

// Tracef records a formatted event in ctx's session, if it has one; the
// arguments are formatted only then.
func Tracef(ctx context.Context, format string, args ...any) {
	if s := FromContext(ctx); s != nil {
		s.Trace(fmt.Sprintf(format, args...))
	}
}

// Sampling reports whether the tracer traces some requests unasked.
func (t *Tracer) Sampling() bool { return t.opts.Probability > 0 }
