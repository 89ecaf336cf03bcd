package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/primitive"
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
		name := "SERIAL"
		if cl == primitive.ConsistencyLevelLocalSerial {
			name = "LOCAL_SERIAL"
		}
		return invalidf(`%s is not supported as conditional update commit consistency. Use ANY if you mean "make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads"`, name)
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

// errSerialRange refuses a serial read of more than one partition.
var errSerialRange = invalidf("SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time")
