package test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// TestClusterAlterKeyspace changes a keyspace's replication factor on a
// three-node cluster from 1 to 3 through node1: the change is answered
// with SCHEMA_CHANGE and the warning Cassandra gives (repair brings the
// rows written before to the new replicas), the clients registered on
// node2 and node3 get the event, every node shows the new replication in
// system_schema, and every node places the keyspace's partitions on three
// replicas: with node3 down a write at ALL is Unavailable through node1 and
// node2 (3 required, 2 alive), and with node2 down too, node1 reads back at
// ONE every row written at ALL after the change, which at factor 1 it held
// only a third of.
func TestClusterAlterKeyspace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	tc := startCluster(t, 3)
	s := tc.session(0, gocql.One)
	for _, q := range []string{
		`CREATE KEYSPACE ak WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE ak.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var listeners []*wire
	for _, nd := range tc.nodes[1:] {
		l, _ := schemaConns(t, fmt.Sprintf("%s:%d", nd.addr, tc.native))
		listeners = append(listeners, l)
	}

	iter := s.Query(`ALTER KEYSPACE ak WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Iter()
	w := iter.Warnings() // gone once the iterator is closed
	if err := iter.Close(); err != nil {
		t.Fatalf("ALTER KEYSPACE: %v", err)
	}
	const repair = "When increasing replication factor you need to run a full (-full) repair to distribute the data."
	if !slices.Contains(w, repair) {
		t.Errorf("ALTER KEYSPACE warnings %q, want %q", w, repair)
	}
	for i, l := range listeners {
		ev := l.mustRead()
		if got, want := readStrings(ev.body), []string{"SCHEMA_CHANGE", "UPDATED", "KEYSPACE", "ak"}; ev.op != primitive.OpCodeEvent || !reflect.DeepEqual(got, want) {
			t.Fatalf("node%d's listener got %s %q, want %q", i+2, fmtReply(ev), got, want)
		}
	}
	singles := make([]*gocql.Session, 3)
	for i := range tc.nodes {
		singles[i] = tc.single(i, gocql.One)
		eventually(t, 30*time.Second, fmt.Sprintf("node%d's replication", i+1), func() error {
			var repl map[string]string
			if err := singles[i].Query(`SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'ak'`).Scan(&repl); err != nil {
				return err
			}
			if repl["replication_factor"] != "3" {
				return fmt.Errorf("replication %v", repl)
			}
			return nil
		})
	}

	const rows = 30
	all := tc.single(0, gocql.All)
	for k := 0; k < rows; k++ {
		if err := all.Query(`INSERT INTO ak.t (k, v) VALUES (?, ?)`, k, k).Exec(); err != nil {
			t.Fatalf("insert %d at ALL: %v", k, err)
		}
	}

	tc.stop(tc.nodes[2], syscall.SIGTERM)
	for i := 0; i < 2; i++ {
		s := tc.single(i, gocql.All)
		eventually(t, 30*time.Second, fmt.Sprintf("node%d sees node3 down", i+1), func() error {
			err := s.Query(`INSERT INTO ak.t (k, v) VALUES (?, ?)`, 1000+i, 0).Exec()
			var unavailable *gocql.RequestErrUnavailable
			if !errors.As(err, &unavailable) {
				return fmt.Errorf("insert at ALL with node3 down: %v, want Unavailable", err)
			}
			if unavailable.Required != 3 || unavailable.Alive != 2 {
				return fmt.Errorf("Unavailable required %d alive %d, want 3 and 2", unavailable.Required, unavailable.Alive)
			}
			return nil
		})
	}

	tc.stop(tc.nodes[1], syscall.SIGTERM)
	for k := 0; k < rows; k++ {
		var v int
		if err := singles[0].Query(`SELECT v FROM ak.t WHERE k = ?`, k).Scan(&v); err != nil || v != k {
			t.Fatalf("row %d at ONE through node1 alone: %d, %v", k, v, err)
		}
	}
}

// TestAlterKeyspaceEvent checks ALTER KEYSPACE on one node at the byte
// level: the SCHEMA_CHANGE result and event (UPDATED KEYSPACE), and an
// ALTER that changes nothing answered VOID with no event, as Cassandra
// answers an empty schema diff.
func TestAlterKeyspaceEvent(t *testing.T) {
	node, _ := newNode(t)
	listener, other := schemaConns(t, node.Addr())
	res, ev := schemaChange(t, other, listener, `CREATE KEYSPACE ake WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	if res[0] != "CREATED" || ev[1] != "CREATED" {
		t.Fatalf("CREATE: %q %q", res, ev)
	}
	res, ev = schemaChange(t, other, listener, `ALTER KEYSPACE ake WITH durable_writes = false`)
	if want := []string{"UPDATED", "KEYSPACE", "ake"}; !reflect.DeepEqual(res, want) {
		t.Fatalf("result %q, want %q", res, want)
	}
	if want := []string{"SCHEMA_CHANGE", "UPDATED", "KEYSPACE", "ake"}; !reflect.DeepEqual(ev, want) {
		t.Fatalf("event %q, want %q", ev, want)
	}
	other.send(4, 5, primitive.OpCodeQuery, queryBody(`ALTER KEYSPACE ake WITH durable_writes = false AND replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`))
	r := other.mustRead()
	if r.op != primitive.OpCodeResult || binary.BigEndian.Uint32(r.body) != uint32(primitive.ResultTypeVoid) {
		t.Fatalf("an ALTER changing nothing answered %s", fmtReply(r))
	}
	listener.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := listener.br.ReadByte(); err == nil {
		t.Fatal("an ALTER changing nothing sent an event")
	}
}
