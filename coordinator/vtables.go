package coordinator

import (
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// vtable is a system table answered from live state rather than storage.
type vtable struct {
	def   *storage.TableDef
	types []datatype.DataType       // per column of def.Columns
	meta  []*message.ColumnMetadata // per column of def.Columns
	index map[string]int            // column name -> position in def.Columns
	pk    []int                     // partition key columns, by position
	rows  func(c *Coordinator) []systables.Row
	// info is the table as the user read path's selection compiler sees
	// it (no storage: the rows are made on each read).
	info *tableInfo
}

// vtables indexes the system tables by keyspace and table name.
type vtables map[string]map[string]*vtable

func newVTables() (vtables, error) {
	vt := vtables{}
	for _, st := range systables.All() {
		d := st.Storage.Def
		t := &vtable{def: d, index: map[string]int{}}
		t.rows = func(c *Coordinator) []systables.Row { return st.Rows(sysState{c}) }
		if d.Keyspace == "system" && d.Name == "prepared_statements" {
			t.rows = (*Coordinator).preparedRows
		}
		for j, col := range d.Columns {
			typ, err := statements.ParseType(col.Type)
			if err != nil {
				return nil, fmt.Errorf("coordinator: %s.%s.%s: %w", d.Keyspace, d.Name, col.Name, err)
			}
			t.types = append(t.types, typ)
			t.meta = append(t.meta, &message.ColumnMetadata{Keyspace: d.Keyspace, Table: d.Name, Name: col.Name, Index: int32(j), Type: typ})
			t.index[col.Name] = j
		}
		for _, col := range d.Key(storage.KindPartitionKey) {
			t.pk = append(t.pk, t.index[col.Name])
		}
		t.info = t.selInfo()
		if vt[d.Keyspace] == nil {
			vt[d.Keyspace] = map[string]*vtable{}
		}
		vt[d.Keyspace][d.Name] = t
	}
	return vt, nil
}

// selInfo describes t as a tableInfo for compiling selections. Its
// values are whole (frozen): a system table's rows are encoded values.
func (t *vtable) selInfo() *tableInfo {
	ti := &tableInfo{def: t.def, byName: t.index, pk: t.pk, meta: t.meta}
	for i := range t.def.Columns {
		ti.cols = append(ti.cols, colInfo{def: &t.def.Columns[i], typ: t.types[i], frozen: true})
	}
	return ti
}

// sysState is the node's state as the system tables read it.
type sysState struct{ c *Coordinator }

var _ systables.State = sysState{}

func (s sysState) Schema() *storage.Schema { return s.c.catalog.Current() }

func (s sysState) Local() systables.Local {
	c := s.c
	return systables.Local{
		ClusterName:   c.node.ClusterName,
		HostID:        c.node.HostID,
		DataCenter:    c.opts.DataCenter,
		Rack:          c.opts.Rack,
		ListenAddress: c.opts.ListenAddress,
		RPCAddress:    c.opts.RPCAddress,
		NativePort:    c.opts.NativePort,
		StoragePort:   c.opts.StoragePort,
		Generation:    c.generation,
		Tokens:        c.localTokens(),
	}
}

func (s sysState) Peers() []systables.Peer {
	if s.c.opts.Cluster == nil {
		return nil
	}
	return s.c.opts.Cluster.Peers()
}

func (c *Coordinator) localTokens() []int64 {
	if c.opts.Cluster != nil {
		return c.opts.Cluster.LocalTokens()
	}
	return c.node.Tokens
}

// pagingState encodes the offset of the next row of a system-table read.
func pagingState(offset int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(offset))
}

func parsePagingState(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, protocolErrorf("Invalid value for the paging state")
	}
	return int(binary.BigEndian.Uint32(b)), nil
}
