package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/schema"
)

// recordingSubmitter applies changes locally and keeps what it was given.
type recordingSubmitter struct {
	local   *schema.Local
	changes []schema.Change
}

func (r *recordingSubmitter) Submit(ctx context.Context, ch schema.Change) (message.Message, error) {
	r.changes = append(r.changes, ch)
	return r.local.Submit(ctx, ch)
}

// A prepared schema change is checked when prepared as Cassandra checks it
// (a CREATE TABLE in full, a DROP only by its names), and each EXECUTE is
// submitted as a change carrying the statement's text, its session
// keyspace, and a new table id for each CREATE TABLE.
func TestPreparedSchemaChanges(t *testing.T) {
	c := newTestCoordinator(t)
	rec := &recordingSubmitter{local: schema.NewLocal(c.schema, nil)}
	c.schemaChanges = rec
	runQuery(t, c, `CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)

	if m, ok := selHandle(c, &message.Prepare{Query: `CREATE TABLE nope.t (k int PRIMARY KEY)`}).(*message.Invalid); !ok || m.ErrorMessage != "Keyspace 'nope' doesn't exist" {
		t.Fatalf("PREPARE of a table in no keyspace answered %v", m)
	}
	prepare := func(q string) []byte {
		t.Helper()
		r, ok := selHandle(c, &message.Prepare{Query: q, Keyspace: "ks"}).(*message.PreparedResult)
		if !ok {
			t.Fatalf("PREPARE %s failed", q)
		}
		return r.PreparedQueryId
	}
	execute := func(id []byte) message.Message {
		return selHandle(c, &message.Execute{QueryId: id, Options: &message.QueryOptions{}})
	}
	drop := prepare(`DROP TABLE t`)
	if m, ok := execute(drop).(*message.Invalid); !ok || m.ErrorMessage != "Table 'ks.t' doesn't exist" {
		t.Fatalf("EXECUTE of DROP TABLE of nothing answered %v", m)
	}
	create := prepare(`CREATE TABLE t (k int PRIMARY KEY)`)
	for i, want := range []string{"*message.SchemaChangeResult", "*message.SchemaChangeResult", "*message.AlreadyExists"} {
		if i == 1 {
			if _, ok := execute(drop).(*message.SchemaChangeResult); !ok {
				t.Fatal("DROP TABLE failed")
			}
		}
		if got := typeOf(execute(create)); got != want {
			t.Fatalf("EXECUTE %d of CREATE TABLE answered %s, want %s", i, got, want)
		}
	}
	var creates []schema.Change
	for _, ch := range rec.changes {
		if strings.HasPrefix(ch.Statement, "CREATE TABLE") {
			creates = append(creates, ch)
		}
		if ch.Time == 0 {
			t.Errorf("%s: no time", ch.Statement)
		}
	}
	if len(creates) != 3 || creates[0].Keyspace != "ks" || creates[0].TableID == creates[1].TableID || creates[0].TableID == ([16]byte{}) {
		t.Fatalf("CREATE TABLE changes %+v: want three in ks, each with its own id", creates)
	}
}

func typeOf(m message.Message) string { return fmt.Sprintf("%T", m) }
