package batchlog

import (
	"encoding/binary"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

func i32(n int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// testTable is ks.t (k int PRIMARY KEY, v text) with id id.
func testTable(t testing.TB, id byte) *storage.Table {
	t.Helper()
	tbl, err := storage.NewTable(&storage.TableDef{Keyspace: "ks", Name: "t", ID: [16]byte{id}, Columns: []storage.ColumnDef{
		{Name: "k", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
		{Name: "v", Type: "text", Kind: storage.KindRegular, Position: -1, Order: "none"},
	}}, func(s string) (datatype.DataType, error) {
		if s == "int" {
			return datatype.Int, nil
		}
		return datatype.Varchar, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// batchOf is a mutation writing v into partitions keys of each table.
func batchOf(v string, tables []*storage.Table, keys ...int) *mutation.Mutation {
	m := &mutation.Mutation{}
	for _, tbl := range tables {
		for _, k := range keys {
			m.WriteCell(tbl, i32(k), storage.CellTarget{Column: "v"}, storage.Cell{Timestamp: 10, Value: []byte(v)})
		}
	}
	return m
}

func openEngine(t testing.TB, fs vfs.FS, dir string) *storage.Engine {
	t.Helper()
	e, err := storage.OpenEngine(storage.EngineOptions{
		FS: fs, Dir: filepath.Join(dir, "data"),
		Log:    commitlog.Options{Dir: filepath.Join(dir, "commitlog"), Sync: "batch", SegmentSize: 1 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// clock is a settable clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
