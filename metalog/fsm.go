package metalog

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"
)

// FSM is the state machine the log's entries are applied to, the caller's:
// entries are opaque bytes to the log.
//
// Apply, Snapshot and Restore are called one at a time, in log order, from
// one goroutine; Applied is called by Open and by Restore. Apply must be
// deterministic: every node applies the same entries in the same order
// and must reach the same state and the same result.
type FSM interface {
	// Apply applies the entry at index and returns its result, or the
	// error the proposer gets (the state must then be as if the entry
	// were not there, on every node alike). The FSM may keep entry.
	Apply(index uint64, entry []byte) (result []byte, err error)
	// Snapshot returns the whole state, as Restore takes it.
	Snapshot() ([]byte, error)
	// Restore replaces the state with a snapshot's, which holds every
	// entry through index.
	Restore(index uint64, snapshot []byte) error
	// Applied is the last index whose effects the FSM has made durable on
	// its own (0 if it keeps nothing across restarts). After a restart
	// raft replays the log from its last snapshot; entries at or below
	// Applied are then not applied again, and a snapshot at or below it
	// is not restored. It must belong to this node's log: an FSM whose
	// state outlived the log's directory must not report one.
	Applied() uint64
}

// proposalID names one proposal, so the node that proposed it finds its
// result as its own FSM applies it: 8 bytes chosen at random when the log
// opens, then a sequence number.
type proposalID [16]byte

// The envelope of an entry in the log: the codec's version, the proposal's
// id, then the caller's entry.
const envelopeSize = 1 + len(proposalID{})

func seal(id proposalID, entry []byte) []byte {
	b := make([]byte, 0, envelopeSize+len(entry))
	b = append(b, codecVersion)
	b = append(b, id[:]...)
	return append(b, entry...)
}

func unseal(b []byte) (proposalID, []byte, error) {
	var id proposalID
	if len(b) < envelopeSize || b[0] != codecVersion {
		return id, nil, fmt.Errorf("%w: entry envelope", ErrBadMessage)
	}
	copy(id[:], b[1:envelopeSize])
	return id, b[envelopeSize:], nil
}

// outcome is what applying a proposal came to, on this node.
type outcome struct {
	result []byte
	err    error
}

// waiter is a proposal waiting for its entry to be applied on this node.
type waiter struct {
	ch chan outcome // buffered: the FSM never blocks on it
	// index is the entry's index once the leader has told it, else 0.
	index uint64
}

// fsmAdapter is raft's FSM over the caller's: it takes entries out of
// their envelopes, skips the ones the caller's FSM already has, and hands
// each result to the proposal waiting for it.
type fsmAdapter struct {
	fsm FSM
	// skipThrough is the caller's Applied when the log opened: raft
	// replays entries it has already applied.
	skipThrough uint64
	// last is the last index applied or restored (raft's FSM goroutine
	// only).
	last        uint64
	maxSnapshot int64

	mu       sync.Mutex
	waiters  map[proposalID]*waiter
	restored uint64 // the index of the last snapshot restored
}

var _ raft.FSM = (*fsmAdapter)(nil)

func newFSMAdapter(fsm FSM, maxSnapshot int64) *fsmAdapter {
	a := &fsmAdapter{fsm: fsm, maxSnapshot: maxSnapshot, waiters: make(map[proposalID]*waiter)}
	a.skipThrough = fsm.Applied()
	a.last = a.skipThrough
	return a
}

// register starts waiting for id's entry; the caller must forget it.
func (a *fsmAdapter) register(id proposalID) *waiter {
	w := &waiter{ch: make(chan outcome, 1)}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiters[id] = w
	return w
}

// waiting returns how many proposals wait for their entries.
func (a *fsmAdapter) waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.waiters)
}

func (a *fsmAdapter) forget(id proposalID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.waiters, id)
}

// placed records the index the leader gave id's entry. An entry that a
// snapshot restored here already holds has its outcome then.
func (a *fsmAdapter) placed(id proposalID, index uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.waiters[id]
	if w == nil || w.index != 0 {
		return
	}
	w.index = index
	if index <= a.restored {
		a.viaSnapshotLocked(id, w)
	}
}

// ErrResultUnknown is Propose's error for an entry that this node
// received within a snapshot (it fell far behind while the entry was
// committed): the entry was applied, but its result is not known here.
var ErrResultUnknown = errors.New("metalog: the entry was applied, but reached this node within a snapshot: its result is not known")

func (a *fsmAdapter) viaSnapshotLocked(id proposalID, w *waiter) {
	w.ch <- outcome{err: fmt.Errorf("entry %d: %w", w.index, ErrResultUnknown)}
	delete(a.waiters, id)
}

// Apply implements raft.FSM.
func (a *fsmAdapter) Apply(l *raft.Log) any {
	a.last = l.Index
	if l.Index <= a.skipThrough {
		return nil
	}
	var o outcome
	id, entry, err := unseal(l.Data)
	if err != nil {
		// Never proposed by a Log; every node answers it alike.
		o.err = fmt.Errorf("metalog: entry %d: %w", l.Index, err)
		return o
	}
	o.result, o.err = a.fsm.Apply(l.Index, entry)
	a.mu.Lock()
	w := a.waiters[id]
	delete(a.waiters, id)
	a.mu.Unlock()
	if w != nil {
		w.ch <- o
	}
	return o
}

// Snapshot implements raft.FSM. The caller's FSM makes its snapshot here,
// between two applies, so it holds exactly the entries through last.
func (a *fsmAdapter) Snapshot() (raft.FSMSnapshot, error) {
	b, err := a.fsm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("metalog: snapshot at %d: %w", a.last, err)
	}
	e := &encoder{b: make([]byte, 0, 16+len(b))}
	e.byte(codecVersion)
	e.uint(a.last)
	e.b = append(e.b, b...)
	return fsmSnapshot(e.b), nil
}

// Restore implements raft.FSM.
func (a *fsmAdapter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, a.maxSnapshot+1))
	if err != nil {
		return fmt.Errorf("metalog: read snapshot: %w", err)
	}
	if int64(len(b)) > a.maxSnapshot {
		return fmt.Errorf("metalog: snapshot over %d bytes", a.maxSnapshot)
	}
	d := &decoder{b: b}
	if v := d.byte("snapshot version"); d.err == nil && v != codecVersion {
		return fmt.Errorf("%w: snapshot version %d, want %d", ErrBadMessage, v, codecVersion)
	}
	index := d.uint("snapshot index")
	if d.err != nil {
		return fmt.Errorf("metalog: snapshot: %w", d.err)
	}
	if index > a.fsm.Applied() {
		if err := a.fsm.Restore(index, d.b); err != nil {
			return fmt.Errorf("metalog: restore snapshot at %d: %w", index, err)
		}
	}
	a.last = max(a.last, index)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.restored = max(a.restored, index)
	for id, w := range a.waiters {
		if w.index != 0 && w.index <= index {
			a.viaSnapshotLocked(id, w)
		}
	}
	return nil
}

// fsmSnapshot is a snapshot's bytes, ready to persist.
type fsmSnapshot []byte

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("metalog: write snapshot: %w", err)
	}
	return sink.Close()
}

func (s fsmSnapshot) Release() {}
