package test

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// registerBody is a REGISTER body for the given event types.
func registerBody(types ...string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(types)))
	for _, t := range types {
		b = appendString(b, t)
	}
	return b
}

// readString reads a [string] at b, returning it and the rest.
func readString(b []byte) (string, []byte) {
	if len(b) < 2 {
		return "", nil
	}
	n := int(binary.BigEndian.Uint16(b))
	if 2+n > len(b) {
		return "", nil
	}
	return string(b[2 : 2+n]), b[2+n:]
}

// readStrings reads the [string]s that make up b.
func readStrings(b []byte) []string {
	var out []string
	for len(b) > 0 {
		s, rest := readString(b)
		if rest == nil {
			break
		}
		out, b = append(out, s), rest
	}
	return out
}

// schemaChange runs a DDL query on conn and returns the strings of its
// SCHEMA_CHANGE result (change, target, keyspace[, name]) and of the event
// listener receives for it (SCHEMA_CHANGE, change, target, keyspace[, name]).
// schemaConns returns a connection registered for SCHEMA_CHANGE events and
// another one to run schema changes on.
func schemaConns(t *testing.T, addr string) (listener, other *wire) {
	t.Helper()
	listener = dial(t, addr)
	listener.handshake()
	listener.send(4, 2, primitive.OpCodeRegister, registerBody("SCHEMA_CHANGE"))
	if r := listener.mustRead(); r.op != primitive.OpCodeReady {
		t.Fatalf("REGISTER answered %s", fmtReply(r))
	}
	other = dial(t, addr)
	other.handshake()
	return listener, other
}

func schemaChange(t *testing.T, conn, listener *wire, query string) (result, event []string) {
	t.Helper()
	conn.send(4, 3, primitive.OpCodeQuery, queryBody(query))
	r := conn.mustRead()
	if r.op != primitive.OpCodeResult || binary.BigEndian.Uint32(r.body) != uint32(primitive.ResultTypeSchemaChange) {
		t.Fatalf("%s answered %s", query, fmtReply(r))
	}
	ev := listener.mustRead()
	if ev.op != primitive.OpCodeEvent || ev.stream != -1 {
		t.Fatalf("listener got %s", fmtReply(ev))
	}
	return readStrings(r.body[4:]), readStrings(ev.body)
}

// TestSchemaChangeEvents checks that a connection registered for
// SCHEMA_CHANGE gets an EVENT on stream -1 for each keyspace change made on
// another connection, and that the DDL itself is answered with the matching
// SCHEMA_CHANGE result.
func TestSchemaChangeEvents(t *testing.T) {
	node, _ := newNode(t)
	listener := dial(t, node.Addr())
	listener.handshake()
	listener.send(4, 2, primitive.OpCodeRegister, registerBody("SCHEMA_CHANGE", "TOPOLOGY_CHANGE", "STATUS_CHANGE"))
	if r := listener.mustRead(); r.op != primitive.OpCodeReady || r.stream != 2 {
		t.Fatalf("REGISTER answered %s", fmtReply(r))
	}
	other := dial(t, node.Addr())
	other.handshake()

	for _, tc := range []struct{ query, change string }{
		{`CREATE KEYSPACE ev WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}`, "CREATED"},
		{`DROP KEYSPACE ev`, "DROPPED"},
	} {
		res, ev := schemaChange(t, other, listener, tc.query)
		if want := []string{tc.change, "KEYSPACE", "ev"}; !reflect.DeepEqual(res, want) {
			t.Fatalf("result = %q, want %q", res, want)
		}
		if want := []string{"SCHEMA_CHANGE", tc.change, "KEYSPACE", "ev"}; !reflect.DeepEqual(ev, want) {
			t.Fatalf("event = %q, want %q", ev, want)
		}
	}

	// The unregistered connection gets no events.
	other.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := other.br.ReadByte(); err == nil {
		t.Fatal("an unregistered connection was sent an event")
	}
}

// TestSchemaDurableAcrossRestart checks that keyspaces survive a restart and
// that the schema version depends only on the schema: the same keyspaces
// give the same version on a restarted node and on a fresh one.
func TestSchemaDurableAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	ddl := []string{
		`CREATE KEYSPACE a WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE KEYSPACE b WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1} AND durable_writes = false`,
	}
	version := func(addr string) (gocql.UUID, map[string]bool) {
		s, err := gocqlCluster(addr).CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var v gocql.UUID
		if err := s.Query(`SELECT schema_version FROM system.local`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		durable := map[string]bool{}
		iter := s.Query(`SELECT keyspace_name, durable_writes FROM system_schema.keyspaces`).Iter()
		var name string
		var dw bool
		for iter.Scan(&name, &dw) {
			durable[name] = dw
		}
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		return v, durable
	}
	run := func(addr string, stmts []string) {
		s, err := gocqlCluster(addr).CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, q := range stmts {
			if err := s.Query(q).Exec(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}

	n1, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run(n1.Addr(), ddl)
	v1, ks1 := version(n1.Addr())
	hostID := n1.Info.HostID
	if err := stopNode(n1); err != nil {
		t.Fatal(err)
	}

	n2 := startNode(t, cfg)
	v2, ks2 := version(n2.Addr())
	if !ks2["a"] || ks2["b"] || len(ks2) != len(ks1) {
		t.Fatalf("after restart keyspaces = %v, before %v", ks2, ks1)
	}
	if v1 != v2 {
		t.Errorf("schema_version changed across a restart: %v -> %v", v1, v2)
	}
	if n2.Info.HostID != hostID {
		t.Errorf("host_id changed across a restart")
	}

	fresh, _ := newNode(t)
	run(fresh.Addr(), []string{ddl[1], ddl[0]}) // same schema, other order
	if v3, _ := version(fresh.Addr()); v3 != v1 {
		t.Errorf("equal schemas, different versions: %v and %v", v1, v3)
	}
	run(fresh.Addr(), []string{`DROP KEYSPACE a`})
	if v4, _ := version(fresh.Addr()); v4 == v1 {
		t.Errorf("schema_version unchanged by DROP KEYSPACE")
	}
}

// TestKeyspaceDDLErrors checks the errors Cassandra gives for bad keyspace
// DDL, as a driver surfaces them.
func TestKeyspaceDDLErrors(t *testing.T) {
	node, _ := newNode(t)
	s, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Query(`CREATE KEYSPACE dup WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		code  int
		msg   string
	}{
		{`CREATE KEYSPACE dup WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, gocql.ErrCodeAlreadyExists, `Cannot add existing keyspace "dup"`},
		{`CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy'}`, gocql.ErrCodeConfig, "SimpleStrategy requires a replication_factor strategy option."},
		{`CREATE KEYSPACE k2 WITH replication = {'class': 'NoSuchStrategy', 'replication_factor': 1}`, gocql.ErrCodeConfig, "Unable to find replication strategy class 'org.apache.cassandra.locator.NoSuchStrategy'"},
		{`CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': -1}`, gocql.ErrCodeConfig, "Replication factor must be non-negative"},
		{`CREATE KEYSPACE k2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1, 'foo': 'x'}`, gocql.ErrCodeConfig, "Unrecognized strategy option {foo}"},
		{`DROP KEYSPACE nope`, gocql.ErrCodeInvalid, "Keyspace 'nope' doesn't exist"},
		{`DROP KEYSPACE system`, gocql.ErrCodeUnauthorized, "system keyspace is not user-modifiable."},
		{`SELECT * FROM system.nope`, gocql.ErrCodeInvalid, "unconfigured table nope"},
		{`SELECT nope FROM system.local`, gocql.ErrCodeInvalid, "Undefined column name nope"},
		{`SELECT * FROM system.local WHERE cluster_name = 'x'`, gocql.ErrCodeInvalid, "ALLOW FILTERING"},
		{`SELEC * FROM system.local`, gocql.ErrCodeSyntax, "line 1:0"},
		{`CREATE KEYSPACE k3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1`, gocql.ErrCodeSyntax, "mismatched input '<EOF>' expecting '}'"},
	} {
		err := s.Query(tc.query).Exec()
		re, ok := err.(gocql.RequestError)
		if !ok {
			t.Errorf("%s: got %v (%T), want code 0x%04x", tc.query, err, err, tc.code)
			continue
		}
		if re.Code() != tc.code || !strings.Contains(re.Message(), tc.msg) {
			t.Errorf("%s:\n got 0x%04x %q\nwant 0x%04x containing %q", tc.query, re.Code(), re.Message(), tc.code, tc.msg)
		}
	}
	if err := s.Query(`CREATE KEYSPACE IF NOT EXISTS dup WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Errorf("IF NOT EXISTS on an existing keyspace: %v", err)
	}
	if err := s.Query(`DROP KEYSPACE IF EXISTS nope`).Exec(); err != nil {
		t.Errorf("IF EXISTS on a missing keyspace: %v", err)
	}

	// gocql refuses USE client-side; drivers that send it get INVALID.
	w := dial(t, node.Addr())
	w.handshake()
	w.send(4, 2, primitive.OpCodeQuery, queryBody(`USE nope`))
	if code, msg := w.mustRead().errorCode(); code != primitive.ErrorCodeInvalid || msg != "Keyspace 'nope' does not exist" {
		t.Errorf("USE nope: 0x%04x %q", uint32(code), msg)
	}
	w.send(4, 3, primitive.OpCodeQuery, queryBody(`USE "dup"`))
	if r := w.mustRead(); r.op != primitive.OpCodeResult || binary.BigEndian.Uint32(r.body) != uint32(primitive.ResultTypeSetKeyspace) {
		t.Errorf("USE dup: %s", fmtReply(r))
	}
}
