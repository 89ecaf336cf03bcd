package systables

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// fakeState is a node with one user keyspace holding a table (with an
// index and a dropped column) and a type, and two peers.
type fakeState struct{}

func (fakeState) Schema() *storage.Schema {
	opts := storage.DefaultTableOptions()
	opts.Comment = "users"
	t := &storage.TableDef{Keyspace: "app", Name: "users", ID: [16]byte{9},
		Columns: []storage.ColumnDef{
			{Name: "id", Type: "int", Kind: storage.KindPartitionKey, Position: 0, Order: "none"},
			{Name: "at", Type: "timestamp", Kind: storage.KindClustering, Position: 0, Order: "desc"},
			{Name: "tags", Type: "set<text>", Kind: storage.KindRegular, Position: -1, Order: "none"},
		},
		Options: opts,
		Dropped: map[string]storage.DroppedColumn{"old": {Type: "int", Time: 1_600_000_000_000_000}},
		Indexes: []storage.IndexDef{{Name: "users_tags", Column: "tags", Target: "tags"}},
	}
	k := &storage.KeyspaceDef{Name: "app", Replication: map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "3"},
		DurableWrites: true, Tables: map[string]*storage.TableDef{"users": t},
		Types: map[string]*storage.TypeDef{"addr": {Keyspace: "app", Name: "addr", FieldNames: []string{"street"}, FieldTypes: []string{"text"}}}}
	return &storage.Schema{Keyspaces: map[string]*storage.KeyspaceDef{"app": k}}
}

func (fakeState) Local() Local {
	return Local{ClusterName: "c", HostID: [16]byte{1}, DataCenter: "dc1", Rack: "r1", ListenAddress: net.IPv4(127, 0, 0, 1),
		RPCAddress: net.IPv4(127, 0, 0, 1), NativePort: 9042, StoragePort: 7000, Generation: 5, Tokens: []int64{-1, 1}}
}

func (fakeState) Views() Views { return nil }

func (fakeState) SizeEstimates() []SizeEstimate { return nil }

func (fakeState) Peers() []Peer {
	return []Peer{
		{HostID: [16]byte{2}, Addr: netip.MustParseAddrPort("127.0.0.2:7000"), NativeAddr: netip.MustParseAddr("127.0.0.2"), NativePort: 9042, Tokens: []int64{2}},
		{HostID: [16]byte{3}, Addr: netip.MustParseAddrPort("127.0.0.3:7000")},
	}
}

// Roles: alice (a member of readers, with a password) and readers, which
// holds SELECT on the keyspace app and MODIFY and SELECT on app.users.
func (fakeState) Roles() *auth.State {
	s := auth.Empty()
	for _, c := range []auth.Change{
		{Op: auth.OpCreateRole, Role: "alice", Set: auth.AttrLogin | auth.AttrPassword, Login: true, SaltedHash: []byte("$2a$04$hash")},
		{Op: auth.OpCreateRole, Role: "readers"},
		{Op: auth.OpGrantRole, Role: "readers", Grantee: "alice"},
		{Op: auth.OpGrantPermissions, Grantee: "readers", Resource: auth.Keyspace("app"), Permissions: auth.Of(auth.Select)},
		{Op: auth.OpGrantPermissions, Grantee: "readers", Resource: auth.Table("app", "users"), Permissions: auth.Of(auth.Select, auth.Modify)},
	} {
		var err error
		if s, err = s.Apply(c); err != nil {
			panic(err)
		}
	}
	return s
}

var errStored = errors.New("read of the stored replica")

// storedReader stands for the node's replica of its engine.
type storedReader struct{}

func (storedReader) ReadPartition(context.Context, *storage.Table, []byte, storage.ReadOptions, func(*storage.Row) bool) error {
	return errStored
}

func (storedReader) Scan(context.Context, *storage.Table, storage.ScanOptions, func([]byte, *storage.Row) bool) error {
	return errStored
}

func (storedReader) ScanIndex(context.Context, *storage.Table, string, []byte, storage.ScanOptions, func([]byte, *storage.Row) bool) error {
	return errStored
}

func newTestReplica() *Replica {
	return NewReplica(fakeState{}, storedReader{}, func() time.Time { return time.Unix(100, 0) })
}

// Every generated table's rows fit its layout: each scans without error,
// and each row read by its partition key is the row the scan gave.
func TestEveryTableReads(t *testing.T) {
	r := newTestReplica()
	ctx := context.Background()
	want := map[string]int{"system.local": 1, "system.peers": 2, "system.peers_v2": 2, "system_schema.keyspaces": 5,
		"system_schema.types": 1, "system_schema.indexes": 1, "system_schema.dropped_columns": 1,
		"system_virtual_schema.keyspaces": 2, "system_traces.events": 0,
		"system_auth.roles": 2, "system_auth.role_members": 1, "system_auth.role_permissions": 2,
		"system_auth.resource_role_permissons_index": 2, "system_auth.network_permissions": 0}
	for _, st := range All() {
		def := st.Storage.Def
		name := def.Keyspace + "." + def.Name
		if st.Stored() {
			if err := r.Scan(ctx, st.Storage, storage.ScanOptions{}, func([]byte, *storage.Row) bool { return true }); err != errStored {
				t.Errorf("%s: scan of a stored table: %v, want the stored replica's", name, err)
			}
			continue
		}
		n := 0
		err := r.Scan(ctx, st.Storage, storage.ScanOptions{}, func(pk []byte, row *storage.Row) bool {
			n++
			found := false
			err := r.ReadPartition(ctx, st.Storage, pk, storage.ReadOptions{}, func(got *storage.Row) bool {
				found = found || storageRowsEqual(got, row)
				return true
			})
			if err != nil || !found {
				t.Errorf("%s: partition %x read alone: %v, row found %v", name, pk, err, found)
			}
			return true
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if w, ok := want[name]; ok && n != w {
			t.Errorf("%s: %d rows, want %d", name, n, w)
		}
	}
}

func storageRowsEqual(a, b *storage.Row) bool {
	if len(a.Cells) != len(b.Cells) || len(a.Clustering) != len(b.Clustering) {
		return false
	}
	for i := range a.Clustering {
		if string(a.Clustering[i]) != string(b.Clustering[i]) {
			return false
		}
	}
	for i := range a.Cells {
		if a.Cells[i].Column != b.Cells[i].Column || string(a.Cells[i].Path) != string(b.Cells[i].Path) || string(a.Cells[i].Cell.Value) != string(b.Cells[i].Cell.Value) {
			return false
		}
	}
	return true
}

// A non-frozen collection's elements are cells of their own, as a stored
// table keeps them; a frozen one is one cell.
func TestCollectionsAsCells(t *testing.T) {
	r := newTestReplica()
	local := Lookup("system", "local")
	var paths, frozen int
	err := r.ReadPartition(context.Background(), local.Storage, []byte("local"), storage.ReadOptions{}, func(row *storage.Row) bool {
		for _, c := range row.Cells {
			if c.Column == "tokens" {
				paths++
			}
		}
		return true
	})
	if err != nil || paths != 2 {
		t.Fatalf("system.local tokens: %d element cells, %v; want 2", paths, err)
	}
	ks := Lookup("system_schema", "keyspaces")
	err = r.ReadPartition(context.Background(), ks.Storage, []byte("app"), storage.ReadOptions{}, func(row *storage.Row) bool {
		for _, c := range row.Cells {
			if c.Column == "replication" && c.Path == nil {
				frozen++
			}
		}
		return true
	})
	if err != nil || frozen != 1 {
		t.Fatalf("system_schema.keyspaces replication: %d whole cells, %v; want 1", frozen, err)
	}
}

func TestNotASystemTable(t *testing.T) {
	r := newTestReplica()
	local := Lookup("system", "local")
	other, err := storage.NewTable(local.Storage.Def, func(s string) (datatype.DataType, error) { return statements.ParseType(s) })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReadPartition(context.Background(), other, []byte("local"), storage.ReadOptions{}, func(*storage.Row) bool { return true }); err == nil {
		t.Fatal("a table that is not the system table read as it")
	}
}

// A partition key that no row has reads nothing, an empty or a nil one
// included.
func TestReadOfNoPartition(t *testing.T) {
	r := newTestReplica()
	local := Lookup("system", "local")
	for _, pk := range [][]byte{nil, {}, []byte("remote")} {
		n := 0
		if err := r.ReadPartition(context.Background(), local.Storage, pk, storage.ReadOptions{}, func(*storage.Row) bool { n++; return true }); err != nil || n != 0 {
			t.Errorf("partition %q: %d rows, %v", pk, n, err)
		}
	}
}
