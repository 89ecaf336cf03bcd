package coordinator

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// prepStore keeps the prepared statements in the table Cassandra keeps
// them in, system.prepared_statements (prepared_id blob PRIMARY KEY,
// logged_keyspace text, query_string text), stored by the engine like any
// table: through the commit log, so it survives a crash as user data does.
// A node reads it at start and prepares every statement again, so an id a
// client prepared before a restart still executes.
//
// Writes are best effort: a statement that fails to persist is still
// cached, and only costs the client a re-prepare after a restart. A nil
// *prepStore persists nothing.
type prepStore struct {
	engine *storage.Engine
	table  *storage.Table
	log    *slog.Logger
}

const (
	colPreparedKeyspace = "logged_keyspace"
	colPreparedQuery    = "query_string"
)

func openPrepStore(engine *storage.Engine, log *slog.Logger) (*prepStore, error) {
	t := systables.Lookup("system", "prepared_statements")
	if t == nil || !t.Stored() {
		return nil, fmt.Errorf("coordinator: no stored system.prepared_statements")
	}
	return &prepStore{engine: engine, table: t.Storage, log: log}, nil
}

// storeOps are store writes gathered under the cache lock, each with its
// timestamp, and applied later in one mutation.
type storeOps struct {
	saves   []*preparedStmt
	saveTS  []int64
	removes [][16]byte
	rmTS    []int64
}

func (o *storeOps) save(ps *preparedStmt, ts int64) {
	o.saves, o.saveTS = append(o.saves, ps), append(o.saveTS, ts)
}

func (o *storeOps) remove(id [16]byte, ts int64) {
	o.removes, o.rmTS = append(o.removes, id), append(o.rmTS, ts)
}

// apply writes ops in one mutation: one commit log record, one wait for
// its durability.
func (s *prepStore) apply(ops *storeOps) {
	if s == nil || len(ops.saves)+len(ops.removes) == 0 {
		return
	}
	m := s.engine.NewMutation()
	err := s.addTo(m, ops)
	if err == nil {
		err = s.engine.Apply(m)
	}
	if err != nil {
		s.log.Warn("cannot persist prepared statements", "saves", len(ops.saves), "removes", len(ops.removes), "err", err)
	}
}

func (s *prepStore) addTo(m *storage.Mutation, ops *storeOps) error {
	for i, ps := range ops.saves {
		ts := ops.saveTS[i]
		if err := m.WriteRowMarker(s.table, ps.id[:], nil, storage.Cell{Timestamp: ts}); err != nil {
			return err
		}
		if ps.keyspace != "" {
			if err := m.WriteCell(s.table, ps.id[:], storage.CellTarget{Column: colPreparedKeyspace}, storage.Cell{Timestamp: ts, Value: []byte(ps.keyspace)}); err != nil {
				return err
			}
		}
		if err := m.WriteCell(s.table, ps.id[:], storage.CellTarget{Column: colPreparedQuery}, storage.Cell{Timestamp: ts, Value: []byte(ps.query)}); err != nil {
			return err
		}
	}
	now := int32(time.Now().Unix())
	for i, id := range ops.removes {
		if err := m.DeletePartition(s.table, id[:], storage.Cell{Timestamp: ops.rmTS[i], Tombstone: true, LocalDeletionTime: now}); err != nil {
			return err
		}
	}
	return nil
}

// load calls fn for every stored statement.
func (s *prepStore) load(fn func(id [16]byte, keyspace, query string)) error {
	if s == nil {
		return nil
	}
	return s.engine.Scan(s.table, storage.ScanOptions{Now: int32(time.Now().Unix())}, func(pk []byte, r *storage.Row) bool {
		var id [16]byte
		if len(pk) != len(id) {
			return true // not an id cqld wrote
		}
		copy(id[:], pk)
		var ks, q string
		for _, c := range r.Cells {
			switch c.Column {
			case colPreparedKeyspace:
				ks = string(c.Cell.Value)
			case colPreparedQuery:
				q = string(c.Cell.Value)
			}
		}
		fn(id, ks, q)
		return true
	})
}
