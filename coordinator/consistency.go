package coordinator

import (
	"strconv"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/storage"
)

// Consistency levels on one node: every level is met by the one replica,
// but the combinations Cassandra refuses are refused with its words
// (ConsistencyLevel.validateForRead/validateForWrite/validateForCasCommit,
// SelectStatement), so an application that works here works there.

func isSerial(cl primitive.ConsistencyLevel) bool {
	return cl == primitive.ConsistencyLevelSerial || cl == primitive.ConsistencyLevelLocalSerial
}

// checkWriteConsistency refuses a serial level for a write without
// conditions.
func checkWriteConsistency(x *execution) error {
	if isSerial(x.opts.Consistency) {
		return invalidf("You must use conditional updates for serializable writes")
	}
	return nil
}

// checkCasConsistency checks a conditional write's commit and serial
// levels.
func checkCasConsistency(x *execution) error {
	if cl := x.opts.Consistency; isSerial(cl) {
		return invalidf(`%s is not supported as conditional update commit consistency. Use ANY if you mean "make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads"`, cqlerr.ConsistencyName(cl))
	}
	if s := x.opts.SerialConsistency; s != nil && !isSerial(*s) {
		return invalidf("Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	}
	return nil
}

// checkReadConsistency refuses ANY for reads.
func checkReadConsistency(x *execution) error {
	if x.opts.Consistency == primitive.ConsistencyLevelAny {
		return invalidf("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}

// errSerialPartitions refuses a serial read of more than one named
// partition.
var errSerialPartitions = invalidf("SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")

// Availability on one node. Cassandra counts the replicas a level needs
// from the keyspace's replication factor (ConsistencyLevel.blockFor), and
// the live ones from the ring: here this node alone, a replica of every
// keyspace that places any replica in its datacenter. A level that needs
// more than that is UNAVAILABLE, as on a one-node Cassandra: QUORUM on a
// keyspace with replication_factor 3 needs 2 replicas and has 1.

// replicas is what a keyspace's replication means for this node.
type replicas struct {
	total int // replication factor over all datacenters
	local int // in this node's datacenter (SimpleStrategy: total)
}

var replicasCache sync.Map // *storage.KeyspaceDef -> replicas (defs are immutable)

func (c *Coordinator) replicasOf(ks *storage.KeyspaceDef) replicas {
	if r, ok := replicasCache.Load(ks); ok {
		return r.(replicas)
	}
	var r replicas
	for k, v := range ks.Replication {
		n, err := strconv.Atoi(v)
		if k == "class" || err != nil {
			continue
		}
		r.total += n
		if k == "replication_factor" || k == c.opts.DataCenter {
			r.local += n
		}
	}
	replicasCache.Store(ks, r)
	return r
}

// blockFor is how many replicas cl needs. This node is the one live
// replica whether the level counts one datacenter or all.
func blockFor(cl primitive.ConsistencyLevel, r replicas) int {
	switch cl {
	case primitive.ConsistencyLevelOne:
		return 1
	case primitive.ConsistencyLevelLocalOne:
		return 1
	case primitive.ConsistencyLevelTwo:
		return 2
	case primitive.ConsistencyLevelThree:
		return 3
	case primitive.ConsistencyLevelQuorum, primitive.ConsistencyLevelSerial, primitive.ConsistencyLevelEachQuorum:
		return r.total/2 + 1
	case primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelLocalSerial:
		return r.local/2 + 1
	case primitive.ConsistencyLevelAll:
		return r.total
	}
	return 0 // ANY: a hint is always possible
}

// checkAvailable refuses a request on keyspace ks at level cl that needs
// more live replicas than this node can be.
func (c *Coordinator) checkAvailable(ks string, cl primitive.ConsistencyLevel) error {
	def := c.catalog.Current().Keyspace(ks)
	if def == nil || isSystemKeyspace(ks) {
		return nil
	}
	r := c.replicasOf(def)
	need := blockFor(cl, r)
	alive := 0
	if r.local > 0 {
		alive = 1
	}
	if alive >= need {
		return nil
	}
	return &cqlerr.Unavailable{Consistency: cl, Required: int32(need), Alive: int32(alive)}
}
