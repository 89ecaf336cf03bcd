package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/config"
)

// Start-up warns while the default superuser's password is unchanged, and
// stops warning once it is changed; the password itself is never logged.
func TestDefaultPasswordWarning(t *testing.T) {
	cfg := config.Default()
	cfg.Authenticator = "PasswordAuthenticator"
	fs := vfs.NewMem()
	start := func() (*auth.Store, string) {
		var buf bytes.Buffer
		st, a, err := startAuth(cfg, fs, "/data", slog.New(slog.NewTextHandler(&buf, nil)))
		if err != nil || st == nil || a == nil {
			t.Fatalf("startAuth: %v %v %v", st, a, err)
		}
		return st, buf.String()
	}
	st, log := start()
	if !strings.Contains(log, "the default superuser cassandra still has the password cassandra") {
		t.Fatalf("no warning on a fresh node:\n%s", log)
	}
	h, err := st.Hash("s3cret-new")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Submit(auth.Change{Op: auth.OpAlterRole, Role: auth.DefaultSuperuser, Set: auth.AttrPassword, SaltedHash: h}); err != nil {
		t.Fatal(err)
	}
	if _, log := start(); strings.Contains(log, "default superuser") || strings.Contains(log, "s3cret") {
		t.Fatalf("after the password changed:\n%s", log)
	}

	cfg.Authenticator = "AllowAllAuthenticator"
	if st, a, err := startAuth(cfg, fs, "/data", slog.Default()); st != nil || a != nil || err != nil {
		t.Fatalf("AllowAllAuthenticator opened the role state: %v %v %v", st, a, err)
	}
}
