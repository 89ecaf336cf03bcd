package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// SchemaApplier applies schema changes, as the schema package encodes them,
// to this node's catalog. ApplySchema must be deterministic: the same
// changes in the same order give every node the same schema.
type SchemaApplier interface {
	// ApplySchema applies the encoded change of the entry at index and
	// returns what answers the statement that proposed it, or the error it
	// fails with. What the change writes is recorded with index, durably,
	// in the same write.
	ApplySchema(index uint64, change []byte) (result any, err error)
	// SchemaSnapshot encodes the whole schema; RestoreSchema replaces the
	// schema with a snapshot's, recorded as of index.
	SchemaSnapshot() ([]byte, error)
	RestoreSchema(index uint64, snapshot []byte) error
	// SchemaApplied is the index recorded with the schema's last write.
	SchemaApplied() uint64
}

// Result is what applying an entry gave the node that proposed it.
type Result struct {
	Value any
	Err   error
	// Index is the entry's index in the log.
	Index uint64
}

// StateOptions configure a State.
type StateOptions struct {
	// FS and Dir are where metadata.json lives (the node's system
	// directory).
	FS  vfs.FS
	Dir string
	// Schema applies schema entries.
	Schema SchemaApplier
	// OnTopology, when set, is called after each topology change with the
	// topologies before and after, in log order, on the goroutine that
	// applies entries.
	OnTopology func(before, after *Topology)
	// OnFailure is told, once, when an entry could not be applied because
	// this node could not write its state (the catalog or metadata.json):
	// the State then applies nothing more, so the node must stop; a
	// restart applies that entry again. Called on the goroutine that
	// applies entries: it must not wait for the log.
	OnFailure func(error)
	// Self is this node's host id: an entry removing it records that the
	// node has left the cluster (Left).
	Self   ring.HostID
	Logger *slog.Logger
}

// State is the metadata log's state machine on one node. Its methods are
// safe for concurrent use; the log calls Apply, Snapshot and Restore from
// one goroutine.
type State struct {
	opts StateOptions

	// mu serialises applications and snapshots.
	mu      sync.Mutex
	applied uint64
	left    bool
	topo    atomic.Pointer[Topology]
	// failed is why an entry could not be applied, after which nothing
	// more is (fail-stop).
	failed error

	waitMu  sync.Mutex
	waiters map[[16]byte]chan Result
}

const stateFile = "metadata.json"

// stateJSON is metadata.json, and the topology part of a snapshot.
type stateJSON struct {
	Applied uint64   `json:"applied"`
	Members []Member `json:"members"`
	// Left records that this node was removed from the cluster.
	Left   bool            `json:"left,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// OpenState reads the state a node last recorded, or starts empty.
func OpenState(o StateOptions) (*State, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &State{opts: o, waiters: map[[16]byte]chan Result{}}
	if err := storage.MkdirAllSynced(o.FS, o.Dir); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	data, ok, err := storage.ReadFileIfExists(o.FS, filepath.Join(o.Dir, stateFile))
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	var st stateJSON
	if ok {
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("cluster: %s is corrupt: %w", filepath.Join(o.Dir, stateFile), err)
		}
	}
	t, err := NewTopology(st.Members)
	if err != nil {
		return nil, err
	}
	s.applied, s.left = st.Applied, st.Left
	s.topo.Store(t)
	return s, nil
}

// Left reports whether this node has applied its own removal from the
// cluster (a decommission): it must not rejoin with the same identity.
func (s *State) Left() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.left
}

// Topology is the topology at the last applied entry.
func (s *State) Topology() *Topology { return s.topo.Load() }

// Applied is the index of the last entry this node has applied and
// recorded: metadata.json records topology entries, the schema its own.
func (s *State) Applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.applied, s.opts.Schema.SchemaApplied())
}

// Expect registers a proposal: the Result of applying the entry carrying
// id is sent on the returned channel (buffered) when this node applies it.
// Forget unregisters it, when the proposal failed.
func (s *State) Expect(id [16]byte) <-chan Result {
	ch := make(chan Result, 1)
	s.waitMu.Lock()
	s.waiters[id] = ch
	s.waitMu.Unlock()
	return ch
}

// Forget drops the waiter of proposal id.
func (s *State) Forget(id [16]byte) {
	s.waitMu.Lock()
	delete(s.waiters, id)
	s.waitMu.Unlock()
}

func (s *State) deliver(id [16]byte, r Result) {
	if id == ([16]byte{}) {
		return
	}
	s.waitMu.Lock()
	ch, ok := s.waiters[id]
	delete(s.waiters, id)
	s.waitMu.Unlock()
	if ok {
		ch <- r
	}
}

// Apply applies the entry at index. Entries at or below Applied were
// applied before a restart and are skipped. An entry that fails (a schema
// change refused, a topology change that would make an invalid ring)
// changes nothing; its error goes to its proposer and is also returned.
// An entry whose state this node cannot write (storage.ErrCatalogWrite,
// metadata.json) is not skipped: the State fails (OnFailure) and applies
// nothing more, so that its state never lacks an entry that later ones
// build on; a restart applies the entry again.
func (s *State) Apply(index uint64, entry []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index <= max(s.applied, s.opts.Schema.SchemaApplied()) {
		return nil, nil
	}
	e, err := DecodeEntry(entry)
	var r Result
	switch {
	case s.failed != nil:
		r.Err = fmt.Errorf("%w: entry %d not applied: %w", ErrStopped, index, s.failed)
	case err != nil:
		s.opts.Logger.Error("metadata log entry cannot be decoded; skipped", "index", index, "err", err)
		r.Err = err
	default:
		r = s.apply(index, e)
		r.Index = index
		if errors.Is(r.Err, storage.ErrCatalogWrite) {
			s.fail(index, r.Err)
		}
	}
	if s.failed == nil && err == nil && (e.Kind == KindMember || e.Kind == KindRemove) {
		// A schema entry is recorded by the schema's own write; one that
		// changed nothing is applied again after a restart, against the
		// same state, and changes nothing again.
		s.applied = index
		if err := s.save(); err != nil {
			r.Err = fmt.Errorf("cluster: recording entry %d: %w", index, err)
			s.fail(index, r.Err)
		}
	}
	s.deliver(e.Proposal, r)
	return nil, r.Err
}

// ErrStopped is the error of every entry after one this node could not
// apply: it applies nothing more until it restarts.
var ErrStopped = errors.New("cluster: this node stopped applying the metadata log")

// fail stops the State at entry index, which failed with err. REQUIRES:
// s.mu held.
func (s *State) fail(index uint64, err error) {
	s.failed = fmt.Errorf("entry %d: %w", index, err)
	s.opts.Logger.Error("metadata log entry could not be applied, this node's state could not be written: it applies "+
		"nothing more (fail-stop) and applies the entry again when restarted", "index", index, "err", err)
	if s.opts.OnFailure != nil {
		s.opts.OnFailure(fmt.Errorf("%w: %w", ErrStopped, s.failed))
	}
}

func (s *State) apply(index uint64, e Entry) Result {
	switch e.Kind {
	case KindSchema:
		v, err := s.opts.Schema.ApplySchema(index, e.Schema)
		return Result{Value: v, Err: err}
	case KindSchemaReset:
		return Result{Err: s.opts.Schema.RestoreSchema(index, e.Schema)}
	case KindMember, KindRemove:
		before := s.topo.Load()
		var after *Topology
		var err error
		if e.Kind == KindMember {
			if err := before.checkChange(e.Member); err != nil {
				return Result{Err: err}
			}
			after, err = before.with(e.Member)
		} else {
			if _, ok := before.Member(e.Member.HostID); !ok {
				return Result{Err: fmt.Errorf("cluster: no member %s to remove", e.Member.HostID)}
			}
			after, err = before.without(e.Member.HostID)
		}
		if err != nil {
			return Result{Err: err}
		}
		s.topo.Store(after)
		if e.Kind == KindRemove && e.Member.HostID == s.opts.Self && s.opts.Self != (ring.HostID{}) {
			s.left = true
		}
		if s.opts.OnTopology != nil {
			s.opts.OnTopology(before, after)
		}
		return Result{Value: after}
	}
	return Result{Err: fmt.Errorf("%w: kind %d", ErrBadEntry, e.Kind)}
}

// save records the applied index and the topology. REQUIRES: s.mu held.
func (s *State) save() error {
	data, err := json.Marshal(stateJSON{Applied: s.applied, Members: s.topo.Load().Members(), Left: s.left})
	if err != nil {
		return err
	}
	return storage.WriteFileAtomic(s.opts.FS, filepath.Join(s.opts.Dir, stateFile), data)
}

// Snapshot encodes the state: topology, applied index and schema.
func (s *State) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		// A snapshot would hold the entries after the one not applied
		// as if they all were, and let the log drop them.
		return nil, fmt.Errorf("%w: %w", ErrStopped, s.failed)
	}
	schema, err := s.opts.Schema.SchemaSnapshot()
	if err != nil {
		return nil, fmt.Errorf("cluster: snapshot: %w", err)
	}
	return json.Marshal(stateJSON{Applied: max(s.applied, s.opts.Schema.SchemaApplied()), Members: s.topo.Load().Members(), Schema: schema})
}

// Restore replaces the state with a snapshot taken at index.
func (s *State) Restore(index uint64, snapshot []byte) error {
	var st stateJSON
	if err := json.Unmarshal(snapshot, &st); err != nil {
		return fmt.Errorf("cluster: snapshot: %w", err)
	}
	if st.Applied != index && st.Applied != 0 {
		return fmt.Errorf("cluster: snapshot of index %d restored as %d", st.Applied, index)
	}
	t, err := NewTopology(st.Members)
	if err != nil {
		return fmt.Errorf("cluster: snapshot: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrStopped, s.failed)
	}
	if err := s.opts.Schema.RestoreSchema(index, st.Schema); err != nil {
		return fmt.Errorf("cluster: snapshot: %w", err)
	}
	before := s.topo.Load()
	s.topo.Store(t)
	s.applied = index
	if err := s.save(); err != nil {
		return fmt.Errorf("cluster: snapshot: %w", err)
	}
	if s.opts.OnTopology != nil {
		s.opts.OnTopology(before, t)
	}
	return nil
}
