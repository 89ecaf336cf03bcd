package server

import (
	"context"
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

// startAuth opens the node's role state under the data directory (the
// metadata log's auth part, kept whatever the authenticator: roles made
// through other nodes apply here too), and returns the authenticator the
// frontend asks, nil under AllowAllAuthenticator. cost is the bcrypt cost
// of new hashes (0: auth.DefaultCost).
func startAuth(cfg config.Config, fs vfs.FS, dataDir string, cost int) (*auth.Store, frontend.Authenticator, error) {
	st, err := auth.OpenStore(auth.StoreOptions{FS: fs, Dir: filepath.Join(dataDir, "system_auth"), Replicated: true, Cost: cost,
		Cache: auth.CacheOptions{
			Off:        cfg.RolesValidity.Duration == 0 && cfg.PermissionsValidity.Duration == 0,
			MaxEntries: max(cfg.RolesCacheMaxEntries, cfg.PermissionsCacheMaxEntries),
		}})
	if err != nil {
		return nil, nil, err
	}
	if cfg.Authenticator != "PasswordAuthenticator" {
		return st, nil, nil
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), auth.NewLimiter(maxFailedLogins, failedLoginWindow, nil))
	if err != nil {
		return nil, nil, err
	}
	return st, a, nil
}

// setupRoles puts the node's roles in the metadata log when they are not
// there (a role file of before the log, or none at all under
// PasswordAuthenticator: the default superuser), then warns while the
// default superuser's password is unchanged.
func (n *Node) setupRoles(ctx context.Context) error {
	password := n.cfg.Authenticator == "PasswordAuthenticator"
	if err := n.authLog.Setup(ctx, password, n.log); err != nil {
		return err
	}
	if password && auth.UsesDefaultPassword(n.Auth.State()) {
		n.log.Warn("the default superuser cassandra still has the password cassandra: change it " +
			"(ALTER ROLE cassandra WITH PASSWORD = '...'), or create another superuser and drop it")
	}
	return nil
}
