package messaging

import "strconv"

// Verb names what a message asks of its receiver; each receiver registers
// one Handler per verb. The ids are part of the wire format: frozen, new
// verbs are added at the end, and an id is never reused.
type Verb uint16

// The verbs of cqld's internode protocol. A response travels under its
// request's verb, so there are no separate response verbs.
const (
	// VerbEcho is a liveness probe; its handler answers the payload back.
	VerbEcho Verb = 1
	// VerbMutation applies a partition update on a replica.
	VerbMutation Verb = 2
	// VerbRead reads one partition (data or digest) from a replica.
	VerbRead Verb = 3
	// VerbRangeRead reads a token range from a replica.
	VerbRangeRead Verb = 4
	// VerbHint replays a hinted mutation to a replica that was down.
	VerbHint Verb = 5
	// VerbBatchStore and VerbBatchRemove write and remove a logged batch
	// in another node's batchlog.
	VerbBatchStore  Verb = 6
	VerbBatchRemove Verb = 7
	// VerbCounterMutation sends a counter update to its leader replica.
	VerbCounterMutation Verb = 8
	// VerbTruncate truncates a table on a replica.
	VerbTruncate Verb = 9
	// VerbPaxosPrepare, VerbPaxosPropose and VerbPaxosCommit are the three
	// rounds of a lightweight transaction.
	VerbPaxosPrepare Verb = 10
	VerbPaxosPropose Verb = 11
	VerbPaxosCommit  Verb = 12
	// VerbGossip carries membership (memberlist) packets.
	VerbGossip Verb = 13
	// VerbMetadata carries the cluster metadata log's RPCs.
	VerbMetadata Verb = 14
	// VerbStream carries token ranges streamed to a joining node.
	VerbStream Verb = 15
	// VerbTopology asks a node about its view of the cluster's topology
	// (which metadata log entry it has applied), for topology changes.
	VerbTopology Verb = 16
	// VerbHintTransfer hands a hint for another node over to its receiver,
	// which applies it if it is that node and otherwise keeps it as a hint
	// for it: a decommissioning node's hints (Cassandra's transferHints).
	VerbHintTransfer Verb = 17
)

var verbNames = [...]string{
	VerbEcho:            "ECHO",
	VerbMutation:        "MUTATION",
	VerbRead:            "READ",
	VerbRangeRead:       "RANGE_READ",
	VerbHint:            "HINT",
	VerbBatchStore:      "BATCH_STORE",
	VerbBatchRemove:     "BATCH_REMOVE",
	VerbCounterMutation: "COUNTER_MUTATION",
	VerbTruncate:        "TRUNCATE",
	VerbPaxosPrepare:    "PAXOS_PREPARE",
	VerbPaxosPropose:    "PAXOS_PROPOSE",
	VerbPaxosCommit:     "PAXOS_COMMIT",
	VerbGossip:          "GOSSIP",
	VerbMetadata:        "METADATA",
	VerbStream:          "STREAM",
	VerbTopology:        "TOPOLOGY",
	VerbHintTransfer:    "HINT_TRANSFER",
}

// String returns the verb's name, or VERB_<id> for an id this build does
// not know (a newer peer's).
func (v Verb) String() string {
	if int(v) < len(verbNames) && verbNames[v] != "" {
		return verbNames[v]
	}
	return "VERB_" + strconv.Itoa(int(v))
}
