package coordinator

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/systables"
)

// System tables are read through the user tables' plan (tableSelectPlan);
// these tests cover what only a generated table shows. The corpus file
// systables.cql covers the statements.

// Cells of generated rows are written at the statement's clock, so
// writetime() is the read's time (and ttl() null, in the corpus).
func TestSystemTableWritetime(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	c := newTestCoordinatorWith(t, func(o *Options) { o.Now = func() time.Time { return at } })
	rows := runQuery(t, c, `SELECT writetime(cluster_name) FROM system.local`).(*message.RowsResult)
	if len(rows.Data) != 1 || int64(binary.BigEndian.Uint64(rows.Data[0][0])) != at.UnixMicro() {
		t.Fatalf("writetime = %x, want %d", rows.Data, at.UnixMicro())
	}
}

// A whole-table read comes in token order, as a stored table's does.
func TestSystemTableScanInTokenOrder(t *testing.T) {
	c := newTestCoordinator(t)
	for i := range 5 {
		runQuery(t, c, fmt.Sprintf(`CREATE KEYSPACE k%d WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, i))
	}
	rows := runQuery(t, c, `SELECT token(keyspace_name), keyspace_name FROM system_schema.keyspaces`).(*message.RowsResult)
	var toks []int64
	var names []string
	for _, r := range rows.Data {
		toks = append(toks, int64(binary.BigEndian.Uint64(r[0])))
		names = append(names, string(r[1]))
	}
	if len(names) != 9 || !slices.IsSorted(toks) || !slices.Contains(names, "k3") || !slices.Contains(names, "system") {
		t.Fatalf("keyspaces %q with tokens %d: want 9, in token order", names, toks)
	}
}

// Paging through a generated table gives the rows of one read.
func TestSystemTablePaging(t *testing.T) {
	c := newTestCoordinator(t)
	const q = `SELECT keyspace_name, table_name, column_name FROM system_schema.columns`
	all := runQuery(t, c, q).(*message.RowsResult).Data
	var paged message.RowSet
	var state []byte
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("paging does not end")
		}
		resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4,
			Message: &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne, PageSize: 7, PagingState: state}}})
		rows, ok := resp.Message.(*message.RowsResult)
		if !ok {
			t.Fatalf("page %d: %v", pages, resp.Message)
		}
		paged = append(paged, rows.Data...)
		if state = rows.Metadata.PagingState; state == nil {
			break
		}
	}
	if len(all) < 100 || !reflect.DeepEqual(paged, all) {
		t.Fatalf("%d rows paged, %d in one read: they differ", len(paged), len(all))
	}
}

type fakeCluster struct{ peers []systables.Peer }

func (f fakeCluster) LocalTokens() []int64    { return []int64{-5, 7, 100} }
func (f fakeCluster) Peers() []systables.Peer { return f.peers }

// system.peers and peers_v2 show the cluster view's peers, and
// system.local its tokens: a set<text> whose elements sort as text.
func TestSystemPeers(t *testing.T) {
	view := fakeCluster{peers: []systables.Peer{
		{HostID: [16]byte{1}, Addr: netip.MustParseAddrPort("10.0.0.2:7000"), NativeAddr: netip.MustParseAddr("10.0.1.2"), NativePort: 9042,
			DataCenter: "dc1", Rack: "r1", ReleaseVersion: "4.0.11", Tokens: []int64{3, 20}},
		{HostID: [16]byte{2}, Addr: netip.MustParseAddrPort("10.0.0.3:7001"), DataCenter: "dc2", Rack: "r2"},
	}}
	c := newTestCoordinatorWith(t, func(o *Options) { o.Cluster = view })
	show := func(q string) string {
		rows := runQuery(t, c, q).(*message.RowsResult)
		var out string
		for _, r := range rows.Data {
			for i, v := range r {
				out += renderCell(rows.Metadata.Columns[i], v) + " "
			}
			out += "\n"
		}
		return out
	}
	if got, want := show(`SELECT tokens FROM system.local`), `["-5", "100", "7"] `+"\n"; got != want {
		t.Errorf("system.local tokens:\n%s want\n%s", got, want)
	}
	if got, want := show(`SELECT peer, rpc_address, data_center, tokens FROM system.peers WHERE peer = '10.0.0.2'`),
		`"10.0.0.2" "10.0.1.2" "dc1" ["20", "3"] `+"\n"; got != want {
		t.Errorf("system.peers:\n%s want\n%s", got, want)
	}
	if got, want := show(`SELECT peer, peer_port, native_address, native_port, release_version FROM system.peers_v2 WHERE peer = '10.0.0.3'`),
		`"10.0.0.3" 7001 null null null `+"\n"; got != want {
		t.Errorf("system.peers_v2:\n%s want\n%s", got, want)
	}
	if got := show(`SELECT count(*) FROM system.peers`); got != "2 \n" {
		t.Errorf("count of system.peers: %s", got)
	}
}

// system.prepared_statements is a table in the engine, written by the
// prepared statement cache and read like a user table.
func TestSystemPreparedStatementsStored(t *testing.T) {
	c := newTestCoordinator(t)
	runQuery(t, c, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	const q = `SELECT keyspace_name FROM system_schema.keyspaces`
	resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4, Keyspace: "ks", Message: &message.Prepare{Query: q}})
	p, ok := resp.Message.(*message.PreparedResult)
	if !ok {
		t.Fatalf("PREPARE: %v", resp.Message)
	}
	rows := runQuery(t, c, `SELECT logged_keyspace, query_string FROM system.prepared_statements WHERE prepared_id = 0x`+hex.EncodeToString(p.PreparedQueryId)).(*message.RowsResult)
	if len(rows.Data) != 1 || string(rows.Data[0][0]) != "ks" || string(rows.Data[0][1]) != q {
		t.Fatalf("system.prepared_statements row for %x: %q", p.PreparedQueryId, rows.Data)
	}
}

func renderCell(col *message.ColumnMetadata, v []byte) string {
	if v == nil {
		return "null"
	}
	return string(types.AppendJSONValue(nil, col.Type, v))
}
