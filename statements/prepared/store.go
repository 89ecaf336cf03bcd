package prepared

import (
	"log/slog"
	"time"

	"github.com/cqld/cqld/storage"
)

// Store keeps the prepared statements in the table Cassandra keeps them
// in, system.prepared_statements (prepared_id blob PRIMARY KEY,
// logged_keyspace text, query_string text), stored by the engine like any
// table: through the commit log, so it survives a crash as user data does.
// A node reads it at start and prepares every statement again (Load), so
// an id a client prepared before a restart still executes.
//
// Writes are best effort: a statement that fails to persist is still
// cached, and only costs the client a re-prepare after a restart. A nil
// *Store persists nothing.
type Store struct {
	engine *storage.Engine
	table  *storage.Table
	log    *slog.Logger
	now    func() time.Time
}

const (
	colKeyspace = "logged_keyspace"
	colQuery    = "query_string"
)

// OpenStore keeps the statements in table, system.prepared_statements of
// engine; now is the clock of deletion times.
func OpenStore(engine *storage.Engine, table *storage.Table, log *slog.Logger, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{engine: engine, table: table, log: log, now: now}
}

// Writes are store writes gathered under the cache lock, each with its
// timestamp, and applied later in one mutation. The zero value is empty.
type Writes struct {
	saves   []*Statement
	saveTS  []int64
	removes [][16]byte
	rmTS    []int64
}

func (w *Writes) save(ps *Statement, ts int64) {
	w.saves, w.saveTS = append(w.saves, ps), append(w.saveTS, ts)
}

func (w *Writes) remove(id [16]byte, ts int64) {
	w.removes, w.rmTS = append(w.removes, id), append(w.rmTS, ts)
}

// apply writes w in one mutation: one commit log record, one wait for
// its durability.
func (s *Store) apply(w *Writes) {
	m := s.mutation(w)
	if m == nil {
		return
	}
	if err := s.engine.Apply(m); err != nil {
		s.warn(w, err)
	}
}

// applyAsync is apply for a caller that must not wait for a sync: an
// EXECUTE that finds its statement stale runs on an event loop, which a
// sync would hold up with every connection on it. Writes carry their own
// timestamps, so one landing after a later one loses to it as it should.
func (s *Store) applyAsync(w *Writes) {
	m := s.mutation(w)
	if m == nil {
		return
	}
	if _, err := s.engine.ApplyAsync(m, nil, func(err error) {
		if err != nil {
			s.warn(w, err)
		}
	}); err != nil {
		s.warn(w, err)
	}
}

// mutation is w as one mutation, nil when there is nothing to write (or
// no store) or it cannot be built.
func (s *Store) mutation(w *Writes) *storage.Mutation {
	if s == nil || len(w.saves)+len(w.removes) == 0 {
		return nil
	}
	m := s.engine.NewMutation()
	if err := s.addTo(m, w); err != nil {
		m.Discard()
		s.warn(w, err)
		return nil
	}
	return m
}

func (s *Store) warn(w *Writes, err error) {
	s.log.Warn("cannot persist prepared statements", "saves", len(w.saves), "removes", len(w.removes), "err", err)
}

func (s *Store) addTo(m *storage.Mutation, w *Writes) error {
	for i, ps := range w.saves {
		ts := w.saveTS[i]
		if err := m.WriteRowMarker(s.table, ps.ID[:], nil, storage.Cell{Timestamp: ts}); err != nil {
			return err
		}
		if ps.Keyspace != "" {
			if err := m.WriteCell(s.table, ps.ID[:], storage.CellTarget{Column: colKeyspace}, storage.Cell{Timestamp: ts, Value: []byte(ps.Keyspace)}); err != nil {
				return err
			}
		}
		if err := m.WriteCell(s.table, ps.ID[:], storage.CellTarget{Column: colQuery}, storage.Cell{Timestamp: ts, Value: []byte(ps.Query)}); err != nil {
			return err
		}
	}
	now := int32(s.now().Unix())
	for i, id := range w.removes {
		if err := m.DeletePartition(s.table, id[:], storage.Cell{Timestamp: w.rmTS[i], Tombstone: true, LocalDeletionTime: now}); err != nil {
			return err
		}
	}
	return nil
}

// load calls fn for every stored statement.
func (s *Store) load(fn func(id [16]byte, keyspace, query string)) error {
	if s == nil {
		return nil
	}
	return s.engine.Scan(s.table, storage.ScanOptions{Now: int32(s.now().Unix())}, func(pk []byte, r *storage.Row) bool {
		var id [16]byte
		if len(pk) != len(id) {
			return true // not an id cqld wrote
		}
		copy(id[:], pk)
		var ks, q string
		for _, c := range r.Cells {
			switch c.Column {
			case colKeyspace:
				ks = string(c.Cell.Value)
			case colQuery:
				q = string(c.Cell.Value)
			}
		}
		fn(id, ks, q)
		return true
	})
}
