package batchlog

import (
	"crypto/md5"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/storage"
)

// Store is this node's batchlog: the table system.batches in its storage
// engine. Safe for concurrent use.
type Store struct {
	engine *storage.Engine
	table  *storage.Table
	now    func() time.Time
}

const colMutations = "mutations"

// OpenStore returns the batchlog kept in engine; now is the clock of its
// writes' timestamps and deletion times (time.Now when nil).
func OpenStore(engine *storage.Engine, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	id := md5.Sum([]byte("system" + "batches"))
	id[6] = id[6]&0x0f | 0x30 // a name-based UUID, as system tables' ids
	id[8] = id[8]&0x3f | 0x80
	def := &storage.TableDef{
		Keyspace: "system",
		Name:     "batches",
		ID:       id,
		Columns: []storage.ColumnDef{
			{Name: "id", Type: "blob", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
			{Name: colMutations, Type: "blob", Kind: storage.KindRegular, Position: -1, Order: "none"},
		},
		// Removed batches are purged at once, as Cassandra's
		// system.batches has gc_grace_seconds 0.
		Options: storage.TableOptions{GCGraceSeconds: 0},
	}
	t, err := storage.NewTable(def, func(string) (datatype.DataType, error) { return datatype.Blob, nil })
	if err != nil {
		return nil, fmt.Errorf("batchlog: system.batches: %w", err)
	}
	return &Store{engine: engine, table: t, now: now}, nil
}

// Put stores batch id, durably as the commit log makes writes. It does
// not keep batch.
func (s *Store) Put(id ID, batch []byte) error {
	m := s.engine.NewMutation()
	if err := m.WriteCell(s.table, id[:], storage.CellTarget{Column: colMutations}, storage.Cell{Timestamp: s.now().UnixMicro(), Value: batch}); err != nil {
		return fmt.Errorf("batchlog: storing batch %s: %w", id, err)
	}
	if err := s.engine.Apply(m); err != nil {
		return fmt.Errorf("batchlog: storing batch %s: %w", id, err)
	}
	return nil
}

// Remove deletes batch id, if stored.
func (s *Store) Remove(id ID) error {
	now := s.now()
	m := s.engine.NewMutation()
	if err := m.DeletePartition(s.table, id[:], storage.Cell{Timestamp: now.UnixMicro(), Tombstone: true, LocalDeletionTime: int32(now.Unix())}); err != nil {
		return fmt.Errorf("batchlog: removing batch %s: %w", id, err)
	}
	if err := s.engine.Apply(m); err != nil {
		return fmt.Errorf("batchlog: removing batch %s: %w", id, err)
	}
	return nil
}

// Each calls fn with every stored batch, in no particular order, until
// fn returns false. The batch bytes are fn's to keep.
func (s *Store) Each(fn func(id ID, batch []byte) bool) error {
	return s.engine.Scan(s.table, storage.ScanOptions{Now: int32(s.now().Unix())}, func(pk []byte, r *storage.Row) bool {
		var id ID
		if len(pk) != len(id) {
			return true // not a batch cqld wrote
		}
		copy(id[:], pk)
		for _, c := range r.Cells {
			if c.Column == colMutations {
				return fn(id, c.Cell.Value)
			}
		}
		return true
	})
}

// purge drops the tombstones of removed batches.
func (s *Store) purge() error {
	_, err := s.engine.Purge(s.table, int32(s.now().Unix())+1)
	return err
}
