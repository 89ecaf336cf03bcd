package schema

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/commitlog"
	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// testNode is a Schema over a fresh catalog and engine in memory.
type testNode struct {
	schema  *Schema
	catalog *storage.Catalog
	engine  *storage.Engine
}

func newTestNode(t testing.TB) *testNode {
	t.Helper()
	fs := vfs.NewMem()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	catalog, err := storage.OpenCatalog(fs, "system_schema")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := storage.OpenEngine(storage.EngineOptions{FS: fs, Dir: "data",
		Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncPeriodic, SegmentSize: 1 << 20}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := engine.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	s := New(Options{Catalog: catalog, Data: engine, Logger: log,
		SystemKeyspace: func(ks string) bool { return ks == "system" || ks == "system_schema" }})
	return &testNode{schema: s, catalog: catalog, engine: engine}
}

// proposals are statements with their session keyspace, as a coordinator
// would propose them: ALTERs, DROPs and failures mixed in.
var proposals = []struct{ session, cql string }{
	{"", `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`},
	{"", `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`}, // exists
	{"", `CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`},
	{"", `CREATE KEYSPACE ks2 WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 3}`},
	{"ks", `CREATE TYPE addr (street text, zip int)`},
	{"ks", `CREATE TABLE t (k int PRIMARY KEY, v text, a frozen<addr>)`},
	{"ks", `CREATE TABLE t (k int PRIMARY KEY)`}, // exists
	{"", `CREATE TABLE nowhere.t (k int PRIMARY KEY)`},
	{"", `CREATE TABLE system.t (k int PRIMARY KEY)`},
	{"ks", `ALTER TABLE t ADD (w int, x int)`},
	{"ks", `ALTER TABLE t DROP (v, w)`},
	{"ks", `ALTER TABLE t ADD v int`}, // dropped as text
	{"ks", `CREATE INDEX ON t (x)`},
	{"ks", `CREATE INDEX ON t (x)`}, // duplicate
	{"ks", `ALTER TYPE addr ADD city text`},
	{"ks", `DROP TYPE addr`}, // in use
	{"ks", `CREATE TABLE u (k int, c int, s int static, PRIMARY KEY (k, c)) WITH comment = 'u' AND gc_grace_seconds = 5`},
	{"ks", `DROP TABLE u`},
	{"ks", `DROP TABLE IF EXISTS u`},
	{"ks", `DROP TABLE u`}, // gone
	{"ks", `DROP INDEX t_x_idx`},
	{"ks", `ALTER TABLE t WITH default_time_to_live = 60`},
	{"ks", `ALTER TABLE t RENAME k TO key`},
	{"", `DROP KEYSPACE ks2`},
	{"", `DROP KEYSPACE system`},
	{"", `CREATE TABLEX ks.t (k int PRIMARY KEY)`},
}

func proposedChanges(t *testing.T) []Change {
	t.Helper()
	var out []Change
	for i, p := range proposals {
		stmt, _, err := statements.Parse(p.cql)
		if err != nil {
			stmt = nil // the change carries the text; applying it fails alike everywhere
		}
		out = append(out, NewChange(stmt, p.cql, p.session, 1_700_000_000_000_000+int64(i), []string{"dc1", "dc2"}))
	}
	return out
}

// outcome is what applying a change answered, comparable across nodes.
func outcome(res message.Message, err error) string {
	if err != nil {
		var ce *cqlerr.Error
		if errors.As(err, &ce) {
			return fmt.Sprintf("error 0x%04x %s", uint32(ce.Code), ce.Msg)
		}
		return "error " + err.Error()
	}
	return fmt.Sprintf("%T %+v", res, res)
}

// Two nodes applying the same changes in the same order, one of them
// through the codec, answer alike and end with equal schemas; Validate
// predicts each answer and changes nothing.
func TestApplyIsDeterministic(t *testing.T) {
	a, b := newTestNode(t), newTestNode(t)
	changes := proposedChanges(t)
	failed, applied := 0, 0
	for i, ch := range changes {
		before := a.catalog.Digest()
		verr := a.schema.Validate(ch)
		if a.catalog.Digest() != before {
			t.Fatalf("%s: Validate changed the schema", ch.Statement)
		}
		resA, errA := a.schema.Apply(ch)
		if (verr == nil) != (errA == nil) || verr != nil && verr.Error() != errA.Error() {
			t.Errorf("%s: Validate said %v, Apply %v", ch.Statement, verr, errA)
		}
		enc, err := ch.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		resB, errB := b.schema.Apply(dec)
		if oa, ob := outcome(resA, errA), outcome(resB, errB); oa != ob {
			t.Fatalf("change %d %s: node a %s, node b %s", i, ch.Statement, oa, ob)
		}
		if a.catalog.Digest() != b.catalog.Digest() {
			t.Fatalf("change %d %s: the schemas differ", i, ch.Statement)
		}
		if errA != nil {
			failed++
			if a.catalog.Digest() != before {
				t.Fatalf("%s failed (%v) but changed the schema", ch.Statement, errA)
			}
		} else if a.catalog.Digest() != before {
			applied++
		}
	}
	if failed < 8 || applied < 12 {
		t.Fatalf("%d changes failed and %d changed the schema: the list no longer mixes them", failed, applied)
	}
	if !reflect.DeepEqual(a.catalog.Current().Keyspaces, b.catalog.Current().Keyspaces) {
		t.Fatal("equal digests, different schemas")
	}
	tbl := a.catalog.Current().Table("ks", "t")
	if tbl == nil || tbl.Dropped["v"].Time != changes[10].Time || tbl.Options.DefaultTimeToLive != 60 || tbl.Column("key") == nil {
		t.Fatalf("ks.t is %+v", tbl)
	}
	if a.catalog.Current().Keyspace("ks2") != nil {
		t.Fatal("ks2 was not dropped")
	}
}

// Each answer is the one Cassandra gives, with its class.
func TestApplyAnswers(t *testing.T) {
	n := newTestNode(t)
	want := map[int]string{
		0:  "*message.SchemaChangeResult RESULT SCHEMA CHANGE (type=CREATED target=KEYSPACE keyspace=ks object= args=[])",
		1:  `error 0x2400 Cannot add existing keyspace "ks"`,
		2:  "*message.VoidResult RESULT VOID",
		6:  `error 0x2400 Cannot add already existing table "t" to keyspace "ks"`,
		7:  "error 0x2200 Keyspace 'nowhere' doesn't exist",
		8:  "error 0x2100 system keyspace is not user-modifiable.",
		11: "error 0x2200 Cannot re-add previously dropped column 'v' of type int, incompatible with previous type text",
		13: "error 0x2200 Index t_x_idx_1 is a duplicate of existing index t_x_idx",
		15: "error 0x2200 Cannot drop user type 'ks.addr' as it is still used by tables t",
		19: "error 0x2200 Table 'ks.u' doesn't exist",
		24: "error 0x2100 system keyspace is not user-modifiable.",
	}
	for i, ch := range proposedChanges(t) {
		res, err := n.schema.Apply(ch)
		got := outcome(res, err)
		if w, ok := want[i]; ok && got != w {
			t.Errorf("%s:\n got %s\nwant %s", ch.Statement, got, w)
		}
	}
	ks2 := proposedChanges(t)[3]
	n2 := newTestNode(t)
	if _, err := n2.schema.Apply(ks2); err != nil {
		t.Fatal(err)
	}
	if got := n2.catalog.Current().Keyspace("ks2").Replication; got["dc1"] != "3" || got["dc2"] != "3" {
		t.Fatalf("replication_factor expanded to %v, want dc1 and dc2 of the change", got)
	}
}

// Local publishes each change's event, and none for a no-op.
func TestLocalPublishes(t *testing.T) {
	n := newTestNode(t)
	var events []string
	l := NewLocal(n.schema, func(m message.Message) {
		ev := m.(*message.SchemaChangeEvent)
		events = append(events, fmt.Sprintf("%v %v %s", ev.ChangeType, ev.Target, ev.Keyspace))
	})
	for _, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE KEYSPACE IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`DROP KEYSPACE ks`,
		`DROP KEYSPACE ks`,
	} {
		_, _ = l.Submit(t.Context(), Change{Statement: q})
	}
	if want := []string{"CREATED KEYSPACE ks", "DROPPED KEYSPACE ks"}; !reflect.DeepEqual(events, want) {
		t.Fatalf("events %q, want %q", events, want)
	}
	if _, err := l.Submit(t.Context(), Change{Statement: `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Submit(t.Context(), Change{Keyspace: "ks", Statement: `CREATE TABLE t (k int PRIMARY KEY)`}); err == nil {
		t.Fatal("a CREATE TABLE change without a table id applied")
	}
}

// FuzzValidate decides arbitrary statements against a schema with a
// keyspace, a type, a table and an index: a change from another node must
// answer an error, never panic.
func FuzzValidate(f *testing.F) {
	for _, p := range proposals {
		f.Add(p.session, p.cql)
	}
	n := fuzzNode(f) // Validate changes nothing, so every input shares it
	f.Fuzz(func(t *testing.T, session, cql string) {
		_ = n.schema.Validate(Change{Keyspace: session, Statement: cql, TableID: [16]byte{1}, DataCenters: []string{"dc1"}})
	})
}

// fuzzNode is a node with a small schema.
func fuzzNode(t testing.TB) *testNode {
	n := newTestNode(t)
	for i, q := range []string{
		`CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TYPE ks.addr (street text, zip int)`,
		`CREATE TABLE ks.t (k int, c int, v text, a frozen<addr>, m map<int, text>, s int static, PRIMARY KEY (k, c))`,
		`CREATE INDEX vi ON ks.t (v)`,
	} {
		stmt, _, err := statements.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.schema.Apply(NewChange(stmt, q, "", int64(i+1), nil)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return n
}
