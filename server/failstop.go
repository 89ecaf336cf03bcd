package server

import (
	"errors"
	"os"

	"github.com/cqld/cqld/metalog"
)

// failStop stops this node for good (until it is restarted) when going
// on would serve a wrong state: its metadata log could not apply an entry
// (the catalog or the topology could not be written), or its address is
// another node's in a running cluster (metalog.ErrAddressTaken: a first
// seed restarted without its data started a cluster of its own).
//
// An address conflict always ends the process, as a node refused at start
// does. A failed apply follows disk_failure_policy, as Cassandra's disk
// failures do: under die the process ends; otherwise the node stops its
// client transports and its gossip (its peers see it down and hint its
// writes) and stays up for inspection. Either way the entry was not
// skipped: a restarted node applies it again. Safe to call from any
// goroutine, the log's apply goroutine included, and more than once.
func (n *Node) failStop(err error) {
	n.log.Error("fail-stop: this node stops, because going on would serve a wrong state; restart it once the cause "+
		"is fixed", "err", err)
	if errors.Is(err, metalog.ErrAddressTaken) || n.cfg.DiskFailurePolicy == "die" {
		n.die(err)
		return
	}
	if !n.stoppedByFailure.CompareAndSwap(false, true) {
		return
	}
	// Not on the caller's goroutine: the log's apply goroutine must not
	// wait for the transports, nor gossip for itself. Shutdown waits for
	// it.
	n.stopping.Add(1)
	go func() {
		defer n.stopping.Done()
		if n.fe.Load() != nil {
			_ = n.stopTransports()
		}
		if c := n.clusterRef.Load(); c != nil {
			c.StopGossip()
		}
	}()
}

// die ends the process (Options.Die).
func (n *Node) die(err error) {
	if n.dieFunc != nil {
		n.dieFunc(err)
		return
	}
	os.Exit(1)
}
