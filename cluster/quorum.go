package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/ring"
)

// quorumGrace is how long a change waits for a majority of the metadata
// log's voters to be up, by gossip, before it is refused: a node that
// just started has not heard from every peer yet.
const quorumGrace = 2 * time.Second

// checkQuorum returns nil once a majority of the metadata log's voters
// are up, by gossip, or after quorumGrace an Unavailable saying how many
// are: the log commits nothing without a majority, so a change would wait
// out its whole timeout. Before gossip starts it has nothing to go by and
// returns nil. what names the change for the message.
func (n *Node) checkQuorum(ctx context.Context, what string) error {
	return n.checkQuorumWithout(ctx, what, ring.HostID{})
}

// CheckLeaveQuorum is checkQuorum for the log without leaving, the member
// about to leave it: its removal is committed by a majority of the
// members left, so a decommission with too few of them up is refused
// before it starts rather than left LEAVING when the removal cannot
// commit.
func (n *Node) CheckLeaveQuorum(ctx context.Context, leaving ring.HostID, what string) error {
	return n.checkQuorumWithout(ctx, what, leaving)
}

func (n *Node) checkQuorumWithout(ctx context.Context, what string, without ring.HostID) error {
	if n.gossip.Load() == nil {
		return nil
	}
	deadline := time.Now().Add(quorumGrace)
	for {
		ms, err := n.log.Members()
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		voters, up := 0, 0
		for _, m := range ms {
			if !m.Voter || m.HostID == without {
				continue
			}
			voters++
			if n.Alive(m.HostID) {
				up++
			}
		}
		need := voters/2 + 1
		if up >= need {
			return nil
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("Cannot %s: %d of the %d members of the cluster metadata log are up, and it commits a change "+
				"only with a majority (%d) up", what, up, voters, need)
			if voters == 2 {
				msg += "; a cluster of two nodes changes nothing while one is down"
			}
			return &cqlerr.Unavailable{Consistency: primitive.ConsistencyLevelQuorum, Required: int32(need), Alive: int32(up), Message: msg}
		}
		select {
		case <-time.After(waitAppliedPoll):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
