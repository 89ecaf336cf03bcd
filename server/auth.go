package server

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/frontend"
)

// Failed logins allowed per client address per window before that address
// must wait for the window to end.
const (
	maxFailedLogins   = 10
	failedLoginWindow = time.Minute
)

// startAuth opens the role state under the data directory when clients
// must log in (PasswordAuthenticator), and returns the authenticator the
// frontend asks; both nil under AllowAllAuthenticator.
func startAuth(cfg config.Config, fs vfs.FS, dataDir string, log *slog.Logger) (*auth.Store, frontend.Authenticator, error) {
	if cfg.Authenticator != "PasswordAuthenticator" {
		return nil, nil, nil
	}
	st, err := auth.OpenStore(auth.StoreOptions{FS: fs, Dir: filepath.Join(dataDir, "system_auth")})
	if err != nil {
		return nil, nil, err
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), auth.NewLimiter(maxFailedLogins, failedLoginWindow, nil))
	if err != nil {
		return nil, nil, err
	}
	if auth.UsesDefaultPassword(st.State()) {
		log.Warn("the default superuser cassandra still has the password cassandra: change it " +
			"(ALTER ROLE cassandra WITH PASSWORD = '...'), or create another superuser and drop it")
	}
	if cfg.Authorizer == "CassandraAuthorizer" {
		log.Warn("authorizer CassandraAuthorizer: clients must log in, but cqld does not check permissions yet; " +
			"every logged-in role may do everything")
	}
	return st, a, nil
}
