package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

// The combinations of levels and statements Cassandra refuses, refused
// with its words (ConsistencyLevel.validateForRead/validateForWrite/
// validateForCasCommit, SelectStatement). Whether enough replicas are up
// for a level is the proxy's to answer (Data).

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
