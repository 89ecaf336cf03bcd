package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cqld/cqld/auth"
)

// AuthLog carries role changes through the metadata log: as an
// auth.Submitter it proposes each statement's changes as one entry, and
// as the State's AuthApplier it applies the entries in log order to this
// node's auth.Store, so that every node holds the same roles and
// permissions once it has applied the same index. A change takes effect
// on a node as it applies it: the store publishes a new state, whose
// cache of resolved permissions starts empty.
type AuthLog struct {
	store *auth.Store

	mu   sync.Mutex
	node *Node
}

var (
	_ auth.Submitter = (*AuthLog)(nil)
	_ AuthApplier    = (*AuthLog)(nil)
)

// NewAuthLog returns the AuthLog applying changes to store, which must be
// a replicated one (auth.StoreOptions.Replicated).
func NewAuthLog(store *auth.Store) *AuthLog { return &AuthLog{store: store} }

// Attach gives the AuthLog the node whose log it proposes to; Submit
// fails before.
func (l *AuthLog) Attach(n *Node) {
	l.mu.Lock()
	l.node = n
	l.mu.Unlock()
}

func (l *AuthLog) attached() (*Node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.node == nil {
		return nil, fmt.Errorf("cluster: role change before the node joined its cluster")
	}
	return l.node, nil
}

// roleChangeWait bounds how long Submit waits for the other live members
// to apply a role change: one that is slow or cut off delays a role
// statement this long, and sees the change once it catches up.
const roleChangeWait = 2 * time.Second

// Submit proposes cs, once they apply to this node's current state, and
// returns when this node and every other member gossip says is up have
// applied them (Node.WaitApplied, at most roleChangeWait): a role created
// through one node logs in through another at once, and a permission
// revoked is refused there on the next request. Changes that would change
// nothing now (an IF [NOT] EXISTS with nothing to do) are answered here,
// without an entry.
func (l *AuthLog) Submit(ctx context.Context, cs []auth.Change) error {
	n, err := l.attached()
	if err != nil {
		return err
	}
	cur := l.store.State()
	next := cur
	for _, c := range cs {
		if next, err = next.Apply(c); err != nil {
			return err
		}
	}
	if next == cur {
		return nil
	}
	r, err := n.propose(ctx, Entry{Kind: KindAuth, Auth: auth.AppendChanges(nil, cs)})
	if err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, roleChangeWait)
	defer cancel()
	if err := n.WaitApplied(wait, r.Index); err != nil {
		n.opts.Logger.Warn("a role change is not applied on every node yet; it holds there once they catch up", "err", err)
	}
	return nil
}

// ApplyAuth implements AuthApplier.
func (l *AuthLog) ApplyAuth(index uint64, b []byte) error {
	cs, err := auth.DecodeChanges(b)
	if err != nil {
		return fmt.Errorf("cluster: role change of entry %d: %w", index, err)
	}
	return l.store.ApplyAt(index, cs...)
}

// AuthSnapshot implements AuthApplier.
func (l *AuthLog) AuthSnapshot() []byte { return l.store.Snapshot() }

// RestoreAuth implements AuthApplier.
func (l *AuthLog) RestoreAuth(index uint64, b []byte) error { return l.store.RestoreAt(index, b) }

// AuthApplied implements AuthApplier.
func (l *AuthLog) AuthApplied() uint64 { return l.store.Applied() }

// ForgetDropped forgets the permissions granted on a keyspace (and its
// tables) or a table that a schema change drops: SchemaLog.OnDrop.
func (l *AuthLog) ForgetDropped(keyspace, table string) error {
	r := auth.Keyspace(keyspace)
	if table != "" {
		r = auth.Table(keyspace, table)
	}
	return l.store.Forget(r)
}

// Setup puts this node's roles in the log when they are not there yet:
// roles kept by a node of before the log carried them (a legacy file) are
// proposed once, replacing the cluster's; otherwise, with
// defaultSuperuser (PasswordAuthenticator), a state without roles gets
// cassandra/cassandra, which applies only if no node made roles first.
// Call it once the node has started: it proposes.
func (l *AuthLog) Setup(ctx context.Context, defaultSuperuser bool, log *slog.Logger) error {
	n, err := l.attached()
	if err != nil {
		return err
	}
	switch {
	case l.store.Legacy():
		log.Warn("this node's roles predate the metadata log: they become the cluster's roles",
			"roles", len(l.store.State().Roles()))
		if _, err := n.Propose(ctx, Entry{Kind: KindAuthReset, Auth: l.store.Snapshot()}); err != nil {
			return fmt.Errorf("cluster: handing this node's roles to the metadata log: %w", err)
		}
	case defaultSuperuser && len(l.store.State().Roles()) == 0:
		c, err := l.store.DefaultSuperuserChange()
		if err != nil {
			return err
		}
		if _, err := n.Propose(ctx, Entry{Kind: KindAuth, Auth: auth.AppendChanges(nil, []auth.Change{c})}); err != nil {
			return fmt.Errorf("cluster: creating the default superuser: %w", err)
		}
	}
	return nil
}
