package coordinator

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
)

// authCoord is a coordinator under CassandraAuthorizer whose role reader
// may read every keyspace through the role it is granted.
func authCoord(tb testing.TB) *Coordinator {
	tb.Helper()
	roles, err := auth.OpenStore(auth.StoreOptions{FS: vfs.NewMem(), Dir: "/system_auth", Cost: bcrypt.MinCost})
	if err != nil {
		tb.Fatal(err)
	}
	err = roles.Submit(
		auth.Change{Op: auth.OpCreateRole, Role: "reader", Set: auth.AttrLogin, Login: true},
		auth.Change{Op: auth.OpCreateRole, Role: "readers"},
		auth.Change{Op: auth.OpGrantRole, Role: "readers", Grantee: "reader"},
		auth.Change{Op: auth.OpGrantPermissions, Grantee: "readers", Resource: auth.AllKeyspaces(), Permissions: auth.Of(auth.Select)})
	if err != nil {
		tb.Fatal(err)
	}
	return newTestCoordinatorWith(tb, func(o *Options) { o.Roles, o.Authorizer = roles, true })
}

// unchecked runs setup on c with its checks off: the test's own requests,
// which carry no role.
func unchecked(c *Coordinator, setup func()) {
	on := c.opts.Authorizer
	c.opts.Authorizer = false
	defer func() { c.opts.Authorizer = on }()
	setup()
}

// The check on every request: a prepared SELECT run inline and through
// Handle is allowed to a role holding SELECT through a granted role and
// refused to one without it, with Cassandra's message.
func TestAuthorizeOnEveryPath(t *testing.T) {
	c := authCoord(t)
	unchecked(c, func() {
		runQuery(t, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
		runQuery(t, c, "CREATE TABLE bench.kv (k int PRIMARY KEY, v blob)")
	})
	resp := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4, Message: &message.Prepare{Query: benchSelect}})
	id := resp.Message.(*message.PreparedResult).PreparedQueryId
	for _, tc := range []struct {
		role string
		ok   bool
	}{{"reader", true}, {"cassandra", true}, {"nobody", false}} {
		e := newBenchExec(id, 1)
		e.vals[0].Contents = []byte{0, 0, 0, 1}
		e.req.Role = tc.role
		inline, taken := c.Inline(context.Background(), &e.req, &benchLater{})
		for _, resp := range []*protocol.Response{c.Handle(context.Background(), &e.req), inline} {
			if !taken {
				t.Fatal("not inlined")
			}
			_, rows := resp.Message.(*message.RowsResult)
			if rows != tc.ok {
				t.Fatalf("%s: %v", tc.role, resp.Message)
			}
			if u, ok := resp.Message.(*message.Unauthorized); !tc.ok && (!ok || u.ErrorMessage != "User nobody has no SELECT permission on <table bench.kv> or any of its parents") {
				t.Fatalf("%s: %v", tc.role, resp.Message)
			}
		}
	}
}

// BenchmarkAuthorizedSelect is BenchmarkExecuteSelect's inline frames on
// a node without an authorizer and on one with CassandraAuthorizer whose
// role holds SELECT through a granted role on ALL KEYSPACES: the cost of
// the check on the hottest path. Run with -count to interleave them.
func BenchmarkAuthorizedSelect(b *testing.B) {
	keys := benchKeyBytes()
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	for _, tc := range []struct {
		name string
		c    *Coordinator
		role string
	}{{"authorizer=none", newTestCoordinator(b), ""}, {"authorizer=cassandra", authCoord(b), "reader"}} {
		c := tc.c
		var id []byte
		unchecked(c, func() {
			runQuery(b, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
			runQuery(b, c, "CREATE TABLE bench.kv (k int PRIMARY KEY, v blob)")
			populate(b, c, benchPrepare(b, c, benchInsert), keys, value)
			id = benchPrepare(b, c, benchSelect)
		})
		b.Run(tc.name, func(b *testing.B) {
			benchFramesAs(b, c, newBenchExec(id, 1), keys, true, benchValueLen, tc.role)
		})
	}
}

// A schema change without a permission rule (here a USE posing as one) is
// refused under CassandraAuthorizer rather than run unchecked, and left
// alone without an authorizer.
func TestAuthorizeUnknownSchemaChange(t *testing.T) {
	c := authCoord(t)
	p := &ddlPlan{stmt: &statements.Use{Keyspace: "ks"}, session: "ks"}
	if err := c.authorize("cassandra", p); err == nil {
		t.Fatal("a schema change without a rule passed the check")
	}
	unchecked(c, func() {
		if err := c.authorize("", p); err != nil {
			t.Fatalf("without an authorizer: %v", err)
		}
	})
}

// CREATE and DROP of functions and aggregates take CREATE, ALTER (to
// replace one) and DROP on the keyspace's functions, as Cassandra's
// statements do: a role granted nothing is refused with Cassandra's
// message, a superuser is not.
func TestAuthorizeFunctions(t *testing.T) {
	c := authCoord(t)
	unchecked(c, func() {
		runQuery(t, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	})
	for _, tc := range []struct {
		stmt statements.Statement
		want string
	}{
		{&statements.CreateFunction{Keyspace: "bench", Name: "f"}, "User nobody has no CREATE permission on <all functions in bench> or any of its parents"},
		{&statements.CreateAggregate{Keyspace: "bench", Name: "a"}, "User nobody has no CREATE permission on <all functions in bench> or any of its parents"},
		{&statements.DropFunction{Keyspace: "bench", Name: "f"}, "User nobody has no DROP permission on <all functions in bench> or any of its parents"},
	} {
		p := &ddlPlan{stmt: tc.stmt, session: "bench"}
		if err := c.authorize("cassandra", p); err != nil {
			t.Errorf("%T as a superuser: %v", tc.stmt, err)
		}
		if err := c.authorize("nobody", p); err == nil || err.Error() != tc.want {
			t.Errorf("%T as a role granted nothing: %v, want %q", tc.stmt, err, tc.want)
		}
	}
}

// DESCRIBE needs no permission under CassandraAuthorizer, as Cassandra's
// DescribeStatement checks none: a role granted nothing describes the
// schema it could read from system_schema anyway.
func TestAuthorizeDescribe(t *testing.T) {
	c := authCoord(t)
	unchecked(c, func() {
		runQuery(t, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	})
	req := &protocol.Request{Version: primitive.ProtocolVersion4, Role: "nobody", Message: &message.Query{Query: "DESCRIBE KEYSPACE bench"}}
	resp := c.Handle(context.Background(), req)
	if _, ok := resp.Message.(*message.RowsResult); !ok {
		t.Fatalf("DESCRIBE as a role granted nothing: %v", resp.Message)
	}
}

// A user-defined function called by a statement needs EXECUTE, as
// Cassandra's statements check each function they use: in a selector, a
// WHERE term, a value, through an aggregate's state function, and in a
// CREATE AGGREGATE naming it. A grant on the keyspace's functions allows it.
func TestAuthorizeExecute(t *testing.T) {
	c := authCoord(t)
	c.opts.Functions.Enabled, c.opts.Functions.Scripted = true, true
	c.users = functions.NewUsers(c.userOptions())
	unchecked(c, func() {
		runQuery(t, c, "CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
		runQuery(t, c, "CREATE TABLE bench.kv (k int PRIMARY KEY, v int)")
		runQuery(t, c, "CREATE FUNCTION bench.f(x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'x + 1'")
		runQuery(t, c, "CREATE FUNCTION bench.st(s int, x int) CALLED ON NULL INPUT RETURNS int LANGUAGE javascript AS 's + x'")
		runQuery(t, c, "CREATE AGGREGATE bench.total(int) SFUNC st STYPE int INITCOND 0")
	})
	grant := func(ps ...auth.Permission) {
		err := c.opts.Roles.Submit(auth.Change{Op: auth.OpGrantPermissions, Grantee: "readers",
			Resource: auth.AllKeyspaces(), Permissions: auth.Of(ps...)})
		if err != nil {
			t.Fatal(err)
		}
	}
	grant(auth.Modify)
	if err := c.opts.Roles.Submit(auth.Change{Op: auth.OpGrantPermissions, Grantee: "readers",
		Resource: auth.AllFunctions(), Permissions: auth.Of(auth.Create)}); err != nil {
		t.Fatal(err)
	}
	const refused = "User reader has no EXECUTE permission on <function bench.f(int)> or any of its parents"
	stmts := []struct{ q, want string }{
		{"SELECT bench.f(v) FROM bench.kv", refused},
		{"SELECT v FROM bench.kv WHERE k = bench.f(1)", refused},
		{"INSERT INTO bench.kv (k, v) VALUES (1, bench.f(?))", refused},
		{"UPDATE bench.kv SET v = bench.f(2) WHERE k = 1", refused},
		{"UPDATE bench.kv SET v = 1 WHERE k = 1 IF v = bench.f(0)", refused},
		{"BEGIN BATCH INSERT INTO bench.kv (k, v) VALUES (1, 1); INSERT INTO bench.kv (k, v) VALUES (2, bench.f(1)); APPLY BATCH", refused},
		{"SELECT bench.total(v) FROM bench.kv", "User reader has no EXECUTE permission on <function bench.total(int)> or any of its parents"},
		{"CREATE AGGREGATE bench.total2(int) SFUNC st STYPE int INITCOND 0", "User reader has no EXECUTE permission on <function bench.st(int, int)> or any of its parents"},
		{"SELECT intAsBlob(v) FROM bench.kv", ""},
	}
	run := func(q string) error {
		opts := &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}
		if strings.Contains(q, "?") {
			opts.PositionalValues = []*primitive.Value{primitive.NewValue([]byte{0, 0, 0, 1})}
		}
		ps := c.Handle(context.Background(), &protocol.Request{Version: primitive.ProtocolVersion4, Role: "reader",
			Message: &message.Query{Query: q, Options: opts}})
		if e, ok := ps.Message.(message.Error); ok {
			return errors.New(e.GetErrorMessage())
		}
		return nil
	}
	for _, tc := range stmts {
		err := run(tc.q)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.q, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s without EXECUTE: %v, want %q", tc.q, err, tc.want)
		}
	}
	if err := c.opts.Roles.Submit(auth.Change{Op: auth.OpGrantPermissions, Grantee: "readers",
		Resource: auth.KeyspaceFunctions("bench"), Permissions: auth.Of(auth.Execute)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range stmts {
		if err := run(tc.q); err != nil {
			t.Errorf("%s with EXECUTE on the keyspace's functions: %v", tc.q, err)
		}
	}
}

// CREATE INDEX needs ALTER on the table it indexes, in the keyspace the
// schema change resolves it to: the table's, else the index name's, else
// the session's (CreateIndexStatement.Raw.prepare).
func TestAuthorizeCreateIndexKeyspace(t *testing.T) {
	c := authCoord(t)
	unchecked(c, func() {
		for _, ks := range []string{"a", "b"} {
			runQuery(t, c, "CREATE KEYSPACE "+ks+" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
			runQuery(t, c, "CREATE TABLE "+ks+".t (k int PRIMARY KEY, v int)")
		}
	})
	if err := c.opts.Roles.Submit(auth.Change{Op: auth.OpGrantPermissions, Grantee: "readers",
		Resource: auth.Keyspace("a"), Permissions: auth.Of(auth.Alter)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stmt *statements.CreateIndex
		want string
	}{
		{&statements.CreateIndex{Keyspace: "b", Name: "i", Table: "t"}, "User reader has no ALTER permission on <table b.t> or any of its parents"},
		{&statements.CreateIndex{Keyspace: "b", Name: "i", TableKeyspace: "a", Table: "t"}, ""},
		{&statements.CreateIndex{Name: "i", Table: "t"}, ""},
	} {
		err := c.authorize("reader", &ddlPlan{stmt: tc.stmt, session: "a"})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%+v in keyspace a: %v, want %q", *tc.stmt, err, tc.want)
		}
	}
}
