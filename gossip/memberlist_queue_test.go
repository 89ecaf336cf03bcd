package gossip

import (
	"testing"

	"github.com/hashicorp/memberlist"
)

// namedNews is a broadcast about one node, as memberlist's own alive
// messages are: news of a node replaces older news of it in the queue.
type namedNews struct{ node, msg string }

func (b namedNews) Invalidates(memberlist.Broadcast) bool { return false }
func (b namedNews) Message() []byte                       { return []byte(b.msg) }
func (b namedNews) Finished()                             {}
func (b namedNews) Name() string                          { return b.node }

// TestMemberlistQueueLosesReplacedNews pins the behaviour of memberlist's
// broadcast queue that spreadLoop works around: news replacing the only
// queued message empties the queue, which restarts its ids, and the next
// messages of the same length take the new news's place. If this test
// fails, memberlist no longer loses it, and spreadLoop's wait and
// requeueing may go.
func TestMemberlistQueueLosesReplacedNews(t *testing.T) {
	q := &memberlist.TransmitLimitedQueue{NumNodes: func() int { return 3 }, RetransmitMult: 4}
	q.QueueBroadcast(namedNews{"a", "a-v1"})
	q.QueueBroadcast(namedNews{"a", "a-v2"}) // replaces a-v1, the only message
	q.QueueBroadcast(namedNews{"b", "b-v1"})
	q.QueueBroadcast(namedNews{"c", "c-v1"})
	var sent []string
	for _, m := range q.GetBroadcasts(0, 1<<20) {
		sent = append(sent, string(m))
	}
	for _, m := range sent {
		if m == "a-v2" {
			t.Fatalf("memberlist sent %q: its queue no longer loses replaced news", sent)
		}
	}
	if len(sent) != 2 {
		t.Fatalf("memberlist sent %q, want b-v1 and c-v1 (a-v2 lost)", sent)
	}
}
