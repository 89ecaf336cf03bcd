package auth

import "context"

// Submitter orders and applies role changes: the cluster's metadata log
// (cluster.AuthLog) on a node, or a Store alone (Local). Submit applies the
// changes of one statement together, all or none, and returns once they
// are visible on this node; its error is Apply's (Cassandra's, for the
// client) or why they could not be ordered. Implementations are safe for
// concurrent use.
type Submitter interface {
	Submit(ctx context.Context, cs []Change) error
}

// Local is a Store as its own Submitter: changes apply here alone.
type Local struct{ Store *Store }

var _ Submitter = Local{}

// Submit implements Submitter.
func (l Local) Submit(_ context.Context, cs []Change) error { return l.Store.Submit(cs...) }
