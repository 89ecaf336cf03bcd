package test

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// address is a UDT value as an application declares it for gocql.
type address struct {
	Street string `cql:"street"`
	City   string `cql:"city"`
	Zip    int    `cql:"zip"`
}

// rawValue sends its bytes as they are, to give the server malformed
// values a driver would not build.
type rawValue []byte

func (r rawValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

func udtSession(t *testing.T, addr, ks string) *gocql.Session {
	t.Helper()
	s := tableSession(t, addr, ks)
	mustExec(t, s, `CREATE TYPE address (street text, city text, zip int)`)
	return s
}

// TestUDTGocql stores and reads user types through gocql's own UDT
// support: structs with cql tags and maps, bound to prepared statements
// whose metadata carries the UDT type option, in frozen key columns,
// non-frozen columns and collections.
func TestUDTGocql(t *testing.T) {
	node, _ := newNode(t)
	s := udtSession(t, node.Addr(), "udt_gocql")
	mustExec(t, s, `CREATE TABLE t (k int, c frozen<address>, a address, l list<frozen<address>>, PRIMARY KEY (k, c))`)

	ins := `INSERT INTO t (k, c, a, l) VALUES (?, ?, ?, ?)`
	paris := address{Street: "Rue", City: "Paris", Zip: 75001}
	lyon := map[string]any{"street": "Quai", "city": "Lyon", "zip": 69001}
	mustExec(t, s, ins, 1, paris, lyon, []address{paris, {City: "Nice"}})
	mustExec(t, s, ins, 1, address{City: "Berlin"}, (*address)(nil), []address(nil))
	mustExec(t, s, ins, 1, map[string]any{"street": "Rue", "city": "Caen"}, address{City: "Oslo"}, []address(nil))

	// Clustering order compares fields in turn, null first.
	var cities []string
	iter := s.Query(`SELECT c FROM t WHERE k = 1`).Iter()
	var c address
	for iter.Scan(&c) {
		cities = append(cities, c.City)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Berlin", "Caen", "Paris"}; !reflect.DeepEqual(cities, want) {
		t.Fatalf("clustering order %v, want %v", cities, want)
	}

	var a address
	var m map[string]any
	var l []address
	if err := s.Query(`SELECT a, c, l FROM t WHERE k = 1 AND c = ?`, paris).Scan(&a, &m, &l); err != nil {
		t.Fatal(err)
	}
	if a != (address{Street: "Quai", City: "Lyon", Zip: 69001}) {
		t.Errorf("a = %+v", a)
	}
	if m["city"] != "Paris" || m["zip"] != 75001 {
		t.Errorf("c as a map = %v", m)
	}
	if want := []address{paris, {City: "Nice"}}; !reflect.DeepEqual(l, want) {
		t.Errorf("l = %+v, want %+v", l, want)
	}

	// Field selection and per-field updates of the non-frozen column.
	set := `UPDATE t USING TIMESTAMP ? SET a.city = ? WHERE k = 1 AND c = ?`
	mustExec(t, s, set, int64(5e15), "Lille", paris)
	mustExec(t, s, set, int64(4e15), "Older", paris) // loses: last write wins per field
	mustExec(t, s, `UPDATE t SET a.zip = ? WHERE k = 1 AND c = ?`, 59000, paris)
	mustExec(t, s, `DELETE a.street FROM t WHERE k = 1 AND c = ?`, paris)
	var city string
	var zip int
	if err := s.Query(`SELECT a.city, a.zip, a FROM t WHERE k = 1 AND c = ?`, paris).Scan(&city, &zip, &a); err != nil {
		t.Fatal(err)
	}
	if city != "Lille" || zip != 59000 || a != (address{City: "Lille", Zip: 59000}) {
		t.Errorf("after field updates: city %q zip %d a %+v", city, zip, a)
	}

	// Values are validated on write.
	for _, tc := range []struct {
		v    rawValue
		want string
	}{
		{append(fieldBytes("x", "y", "\x00\x00\x00\x01"), fieldBytes("extra")...), "Invalid remaining data after end of UDT value"},
		{fieldBytes("x", "y", "\x01"), "Expected 4 or 0 byte int"},
		{rawValue{0, 0, 0, 9, 'x'}, "Not enough bytes to read 0th field street"},
	} {
		err := s.Query(ins, 2, tc.v, (*address)(nil), []address(nil)).Exec()
		var reqErr gocql.RequestError
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("malformed value %x: %v, want an error with %q", []byte(tc.v), err, tc.want)
		} else if errorsAs(err, &reqErr) && reqErr.Code() != gocql.ErrCodeInvalid {
			t.Errorf("malformed value %x: code %#x, want INVALID", []byte(tc.v), reqErr.Code())
		}
	}

	// ALTER TYPE reaches prepared statements: they are prepared again and
	// bind and return the new field.
	q := s.Query(`SELECT c FROM t WHERE k = 1 AND c = ?`, paris)
	if err := q.Scan(&m); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s, `ALTER TYPE address ADD country text`)
	mustExec(t, s, ins, 3, map[string]any{"city": "Bern", "country": "CH"}, (*address)(nil), []address(nil))
	if err := s.Query(`SELECT c FROM t WHERE k = 3`).Scan(&m); err != nil {
		t.Fatal(err)
	}
	if m["country"] != "CH" || m["city"] != "Bern" {
		t.Errorf("after ALTER TYPE: %v", m)
	}
	m = nil
	if err := s.Query(`SELECT c FROM t WHERE k = 1 AND c = ?`, paris).Scan(&m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["country"]; !ok || v != "" {
		t.Errorf("an old value after ALTER TYPE ADD: %v, want the new field empty", m)
	}

	// gocql reads the schema's user types from system_schema.
	md, err := s.KeyspaceMetadata("udt_gocql")
	if err != nil {
		t.Fatal(err)
	}
	ut := md.UserTypes["address"]
	if ut == nil || !reflect.DeepEqual(ut.FieldNames, []string{"street", "city", "zip", "country"}) {
		t.Fatalf("gocql metadata user type: %+v", ut)
	}
	// As with Cassandra, the column type names the UDT (gocql v1 does not
	// resolve it further).
	for name, want := range map[string]string{"c": "frozen<address>", "a": "address", "l": "list<frozen<address>>"} {
		if col := md.Tables["t"].Columns[name]; col == nil || col.Validator != want {
			t.Errorf("gocql metadata column %s: %+v, want type %s", name, col, want)
		}
	}
}

// fieldBytes serializes UDT fields (each [int] length + bytes).
func fieldBytes(fields ...string) rawValue {
	var b []byte
	for _, f := range fields {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

func errorsAs(err error, target *gocql.RequestError) bool {
	re, ok := err.(gocql.RequestError)
	if ok {
		*target = re
	}
	return ok
}

// TestUDTSchemaChanges checks the SCHEMA_CHANGE results and events of
// CREATE, ALTER and DROP TYPE: target TYPE, the keyspace and the type.
func TestUDTSchemaChanges(t *testing.T) {
	node, _ := newNode(t)
	tableSession(t, node.Addr(), "udt_ev")
	listener, other := schemaConns(t, node.Addr())
	for _, tc := range []struct{ query, change string }{
		{`CREATE TYPE udt_ev.pt (x int)`, "CREATED"},
		{`ALTER TYPE udt_ev.pt ADD y int`, "UPDATED"},
		{`DROP TYPE udt_ev.pt`, "DROPPED"},
	} {
		res, ev := schemaChange(t, other, listener, tc.query)
		if want := []string{tc.change, "TYPE", "udt_ev", "pt"}; !reflect.DeepEqual(res, want) {
			t.Fatalf("%s: result %q, want %q", tc.query, res, want)
		}
		if want := []string{"SCHEMA_CHANGE", tc.change, "TYPE", "udt_ev", "pt"}; !reflect.DeepEqual(ev, want) {
			t.Fatalf("%s: event %q, want %q", tc.query, ev, want)
		}
	}
}

// TestUDTDurableAcrossRestart checks that user types, the tables using
// them and their frozen and per-field values survive a restart.
func TestUDTDurableAcrossRestart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	n1, err := startStoppable(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := udtSession(t, n1.Addr(), "udt_restart")
	mustExec(t, s, `CREATE TYPE person (name text, home frozen<address>)`)
	mustExec(t, s, `CREATE TABLE t (k frozen<address> PRIMARY KEY, p frozen<person>, a address)`)
	key := address{City: "Oslo", Zip: 150}
	mustExec(t, s, `INSERT INTO t (k, p, a) VALUES (?, ?, ?)`, key,
		map[string]any{"name": "Ann", "home": address{City: "Bergen"}}, address{Street: "Main"})
	mustExec(t, s, `UPDATE t SET a.zip = 7 WHERE k = ?`, key)
	s.Close()
	if err := stopNode(n1); err != nil {
		t.Fatal(err)
	}

	n2 := startNode(t, cfg)
	c := gocqlCluster(n2.Addr())
	c.Keyspace = "udt_restart"
	s, err = c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var p map[string]any
	var a address
	if err := s.Query(`SELECT p, a FROM t WHERE k = ?`, key).Scan(&p, &a); err != nil {
		t.Fatal(err)
	}
	home, _ := p["home"].(map[string]any)
	if p["name"] != "Ann" || home["city"] != "Bergen" || a != (address{Street: "Main", Zip: 7}) {
		t.Fatalf("after restart: p %v a %+v", p, a)
	}
	var names []string
	if err := s.Query(`SELECT field_names FROM system_schema.types WHERE keyspace_name = 'udt_restart' AND type_name = 'person'`).Scan(&names); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"name", "home"}) {
		t.Fatalf("person fields after restart: %v", names)
	}
	if err := s.Query(`DROP TYPE address`).Exec(); err == nil || !strings.Contains(err.Error(), "still used by user types person") {
		t.Fatalf("DROP TYPE of a used type after restart: %v", err)
	}
}

// TestUDTSurvivesKill writes whole values and single fields of user types
// through a cqld process in batch commit log mode, kills it with SIGKILL,
// and checks the type and every acknowledged write after a restart.
func TestUDTSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProc(t, dir, "-commitlog_sync", "batch")
	s := udtSession(t, p.addr, "udt_kill")
	mustExec(t, s, `CREATE TABLE t (k int, c frozen<address>, a address, PRIMARY KEY (k, c))`)
	const n = 50
	for i := 0; i < n; i++ {
		c := address{City: "c", Zip: i}
		mustExec(t, s, `INSERT INTO t (k, c, a) VALUES (?, ?, ?)`, i%5, c, address{Street: "s", City: "x"})
		mustExec(t, s, `UPDATE t SET a.zip = ? WHERE k = ? AND c = ?`, i, i%5, c)
		mustExec(t, s, `DELETE a.city FROM t WHERE k = ? AND c = ?`, i%5, c)
	}
	s.Close()
	p.cmd.Process.Kill()
	p.wait(t)

	p2 := startProc(t, dir)
	c := gocqlCluster(p2.addr)
	c.Keyspace = "udt_kill"
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows := 0
	iter := s.Query(`SELECT c, a FROM t`).Iter()
	var key, a address
	for iter.Scan(&key, &a) {
		rows++
		if a != (address{Street: "s", Zip: key.Zip}) {
			t.Errorf("row %+v: a = %+v after restart", key, a)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Fatalf("after restart: %d rows, %d acknowledged", rows, n)
	}
}
