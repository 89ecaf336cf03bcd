package auth

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"golang.org/x/crypto/bcrypt"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/data/system_auth", Cost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func plain(user, password string) []byte { return []byte("\x00" + user + "\x00" + password) }

var client = netip.MustParseAddr("127.0.0.1")

// The bad-input cases of issue 15 for a login, each with Cassandra's
// BAD_CREDENTIALS message.
func TestAuthenticate(t *testing.T) {
	st := testStore(t)
	h, err := st.Hash("pw")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(Change{Op: OpCreateRole, Role: "nologin", Set: AttrPassword, SaltedHash: h}); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(Change{Op: OpCreateRole, Role: "nopassword", Set: AttrLogin, Login: true}); err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	role, err := a.Authenticate(client, plain("cassandra", "cassandra"))
	if err != nil || role != "cassandra" {
		t.Fatalf("cassandra/cassandra: %q %v", role, err)
	}
	if role, err := a.Authenticate(client, []byte("authz\x00cassandra\x00cassandra")); err != nil || role != "cassandra" {
		t.Fatalf("with an authorization id: %q %v", role, err)
	}
	huge := strings.Repeat("u", 1<<20)
	for _, tc := range []struct {
		name  string
		token []byte
		msg   string
	}{
		{"wrong password", plain("cassandra", "nope"), "Provided username cassandra and/or password are incorrect"},
		{"unknown user", plain("mallory", "cassandra"), "Provided username mallory and/or password are incorrect"},
		{"no password set", plain("nopassword", ""), "Password must not be null"},
		{"role without a password", plain("nopassword", "x"), "Provided username nopassword and/or password are incorrect"},
		{"empty password", plain("cassandra", ""), "Password must not be null"},
		{"empty user", plain("", "cassandra"), "Authentication ID must not be null"},
		{"no NUL", []byte("cassandra"), "Password must not be null"},
		{"empty token", nil, "Password must not be null"},
		{"extra NUL", []byte("a\x00b\x00c\x00d"), "Credential format error: username or password is empty or contains NUL(\\0) character"},
		{"not permitted to log in", plain("nologin", "pw"), "nologin is not permitted to log in"},
		{"long password right prefix", plain("cassandra", "cassandra"+strings.Repeat("x", 100)), "Provided username cassandra and/or password are incorrect"},
	} {
		_, err := a.Authenticate(client, tc.token)
		wantErr(t, err, primitive.ErrorCodeAuthenticationError, tc.msg)
	}
	_, err = a.Authenticate(client, plain(huge, "x"))
	if err == nil || len(err.Error()) > 1<<16 || !strings.HasPrefix(err.Error(), "Provided username uuu") {
		t.Fatalf("1 MB username: %.80v (%d bytes)", err, len(err.Error()))
	}
}

// Past Max failures in a window an address is refused without a check
// until the window ends; other addresses are not affected, and a success
// does not count.
func TestLimiter(t *testing.T) {
	st := testStore(t)
	now := time.Unix(1000, 0)
	lim := NewLimiter(3, time.Minute, func() time.Time { return now })
	a, err := NewAuthenticator(st.State, st.Cost(), lim)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := a.Authenticate(client, plain("cassandra", "cassandra")); err != nil {
			t.Fatalf("success counted as failure: %v", err)
		}
	}
	for range 3 {
		if _, err := a.Authenticate(client, plain("cassandra", "bad")); err == nil {
			t.Fatal("bad password accepted")
		}
	}
	now = now.Add(20 * time.Second)
	_, err = a.Authenticate(client, plain("cassandra", "cassandra"))
	wantErr(t, err, primitive.ErrorCodeAuthenticationError, "Too many failed login attempts from 127.0.0.1; try again in 40 s")
	if _, err := a.Authenticate(netip.MustParseAddr("127.0.0.2"), plain("cassandra", "cassandra")); err != nil {
		t.Fatalf("another address: %v", err)
	}
	now = now.Add(40 * time.Second)
	if _, err := a.Authenticate(client, plain("cassandra", "cassandra")); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// A fresh store has cassandra/cassandra; changes survive a reopen; a
// change that fails is not written.
func TestStorePersists(t *testing.T) {
	fs := vfs.NewMem()
	o := StoreOptions{FS: fs, Dir: "/d/system_auth", Cost: bcrypt.MinCost}
	st, err := OpenStore(o)
	if err != nil {
		t.Fatal(err)
	}
	if !UsesDefaultPassword(st.State()) || !st.State().IsSuper(DefaultSuperuser) {
		t.Fatal("fresh store has no default superuser with the default password")
	}
	h, _ := st.Hash("secret")
	if err := st.Submit(Change{Op: OpAlterRole, Role: DefaultSuperuser, Set: AttrPassword, SaltedHash: h}); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(create("alice", false)); err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(create("alice", false)); err == nil {
		t.Fatal("duplicate create accepted")
	}
	again, err := OpenStore(o)
	if err != nil {
		t.Fatal(err)
	}
	if UsesDefaultPassword(again.State()) {
		t.Fatal("changed password not persisted")
	}
	if got := len(again.State().Roles()); got != 2 {
		t.Fatalf("%d roles after reopen", got)
	}
	f, _ := fs.Create("/d/system_auth/roles", vfs.WriteCategoryUnspecified)
	f.Write([]byte("cqldauth garbage"))
	f.Close()
	if _, err := OpenStore(o); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt file: %v", err)
	}
}

// BenchmarkCheckPassword checks a known user's password and an unknown
// user's at bcrypt's default cost: the two should take the same time, so
// that the answer's delay does not tell which users exist.
func BenchmarkCheckPassword(b *testing.B) {
	st, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/system_auth"})
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, user := range []string{"cassandra", "unknown"} {
		b.Run(user, func(b *testing.B) {
			for b.Loop() {
				if a.CheckPassword(user, "wrong") == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
