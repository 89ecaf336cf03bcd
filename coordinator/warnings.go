package coordinator

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// Client warnings, as Cassandra's ClientWarn: a statement notes them on
// its execution, and the result carries them to respond, which puts them
// in the response (v4 and later) and takes the result out again.

// warned is a result with the client warnings of the statement that made
// it.
type warned struct {
	message.Message
	warnings []string
}

// warn notes a client warning of the statement x runs.
func (x *execution) warn(msg string) { x.warnings = append(x.warnings, msg) }

// result is msg with the warnings x noted.
func (x *execution) result(msg message.Message, err error) (message.Message, error) {
	if err != nil || len(x.warnings) == 0 {
		return msg, err
	}
	return &warned{Message: msg, warnings: x.warnings}, nil
}

// The warnings of an aggregation that reads more than one partition
// (SelectStatement.execute).
const (
	warnAggregateNoKey = "Aggregation query used without partition key"
	warnAggregateIn    = "Aggregation query used on multiple partition keys (IN restriction)"
)

// replicationWarnings notes the warnings of a CREATE or ALTER KEYSPACE
// that res answers, as Cassandra's strategies' maybeWarnOnOptions and
// AlterKeyspaceStatement.clientWarnings give them: a replication factor
// above the nodes there are (in the ring, or in a data center), and an
// increase of the factor, whose rows only repair brings to the new
// replicas. before is the keyspace before an ALTER.
func (c *Coordinator) replicationWarnings(res message.Message, before *storage.KeyspaceDef, x *execution) {
	r, ok := res.(*message.SchemaChangeResult)
	if !ok || r.Target != primitive.SchemaChangeTargetKeyspace || r.ChangeType == primitive.SchemaChangeTypeDropped {
		return
	}
	k, ok := c.catalog.Keyspace(r.Keyspace)
	if !ok {
		return
	}
	after, err := ring.ParseStrategy(k.Name, k.Replication)
	if err != nil {
		return
	}
	nodes := map[string]int{c.opts.DataCenter: 1}
	all := 1
	if c.opts.Cluster != nil {
		for _, p := range c.opts.Cluster.Peers() {
			nodes[p.DataCenter]++
			all++
		}
	}
	switch s := after.(type) {
	case ring.SimpleStrategy:
		if s.RF > all {
			x.warn(fmt.Sprintf("Your replication factor %d for keyspace %s is higher than the number of nodes %d", s.RF, k.Name, all))
		}
	case ring.NetworkTopologyStrategy:
		for _, dc := range slices.Sorted(maps.Keys(s.RF)) {
			if n := nodes[dc]; s.RF[dc] > n && n != 0 {
				x.warn(fmt.Sprintf("Your replication factor %d for keyspace %s is higher than the number of nodes %d for datacenter %s", s.RF[dc], k.Name, n, dc))
			}
		}
	}
	if before == nil {
		return
	}
	if prev, err := ring.ParseStrategy(before.Name, before.Replication); err == nil && replicas(prev) < replicas(after) {
		x.warn("When increasing replication factor you need to run a full (-full) repair to distribute the data.")
	}
}

// replicas is a strategy's replication factor in all, Cassandra's
// getReplicationFactor().fullReplicas.
func replicas(s ring.Strategy) int {
	switch s := s.(type) {
	case ring.SimpleStrategy:
		return s.RF
	case ring.NetworkTopologyStrategy:
		n := 0
		for _, rf := range s.RF {
			n += rf
		}
		return n
	}
	return 0
}

// TombstoneLimits are tombstone_warn_threshold and
// tombstone_failure_threshold: a read meeting more tombstones than Warn
// is answered with a client warning (and logged), one meeting more than
// Fail fails. Zero fields check nothing.
type TombstoneLimits struct{ Warn, Fail int }

// checkTombstones warns about a read of r that met too many tombstones,
// or turns its failure for them (err) into Cassandra's READ_FAILURE from
// this node with the reason READ_TOO_MANY_TOMBSTONES, as
// ReadCommand's metrics recording does.
func (c *Coordinator) checkTombstones(r *selectRun, err error) error {
	if r.tombstones == nil {
		return err
	}
	return c.countedTombstones(r, err)
}

// countedTombstones is checkTombstones of a read that counted them.
func (c *Coordinator) countedTombstones(r *selectRun, err error) error {
	ts := r.tombstones
	query := r.x.text()
	if len(query) > 512 {
		query = query[:512]
	}
	if over, ok := errors.AsType[*storage.TombstoneOverwhelmError](err); ok {
		c.log.Error(fmt.Sprintf("Scanned over %d tombstones during query '%s' (last scanned row token was %d); query aborted",
			c.opts.Tombstones.Fail, query, storage.Token(over.Key)))
		addr := c.opts.ListenAddress
		endpoint := "/" + addr.String() + ":" + strconv.Itoa(c.opts.StoragePort)
		return &cqlerr.ReadFailure{Consistency: r.x.opts.Consistency, BlockFor: int32(c.blockFor(r.p.t.def.Keyspace, r.x.opts.Consistency)),
			Reasons: []*primitive.FailureReason{{Endpoint: addr, Code: primitive.FailureCodeTooManyTombstonesRead}},
			Err:     errors.New("READ_TOO_MANY_TOMBSTONES from " + endpoint)}
	}
	if err == nil && c.opts.Tombstones.Warn > 0 && ts.Count > c.opts.Tombstones.Warn {
		msg := fmt.Sprintf("Read %d live rows and %d tombstone cells for query %s; token %d (see tombstone_warn_threshold)",
			ts.LiveRows, ts.Count, query, storage.Token(r.pk))
		r.x.warn(msg)
		c.log.Warn(msg)
	}
	return err
}

// blockFor is how many replicas of keyspace ks a read at cl waits for
// (ConsistencyLevel.blockFor).
func (c *Coordinator) blockFor(ks string, cl primitive.ConsistencyLevel) int {
	rf, local := 1, 1
	if k, ok := c.catalog.Keyspace(ks); ok {
		if st, err := ring.ParseStrategy(k.Name, k.Replication); err == nil {
			rf, local = replicas(st), st.ReplicationFactor(c.opts.DataCenter)
		}
	}
	switch cl {
	case primitive.ConsistencyLevelTwo:
		return 2
	case primitive.ConsistencyLevelThree:
		return 3
	case primitive.ConsistencyLevelQuorum, primitive.ConsistencyLevelSerial:
		return rf/2 + 1
	case primitive.ConsistencyLevelLocalQuorum, primitive.ConsistencyLevelLocalSerial:
		return local/2 + 1
	case primitive.ConsistencyLevelAll:
		return rf
	}
	return 1
}

// BatchLimits are the checks of a batch's size and spread, by Cassandra's
// names: batch_size_warn_threshold, batch_size_fail_threshold and
// unlogged_batch_across_partitions_warn_threshold. Zero fields check
// nothing.
type BatchLimits struct {
	WarnBytes, FailBytes   int64
	UnloggedPartitionsWarn int
}

var errBatchTooLarge = invalidf("Batch too large")

// checkBatch warns about, or refuses, the batch m as Cassandra's
// BatchStatement.verifyBatchSize and verifyBatchType do: only a batch of
// several partitions, by the size of its data, and an unlogged one by its
// number of partitions.
func (c *Coordinator) checkBatch(m *mutation.Mutation, logged bool, x *execution) error {
	type partition struct{ keyspace, key string }
	parts := map[partition]bool{}
	keys := map[string]bool{}
	tables := map[string]bool{}
	for _, u := range m.Updates {
		parts[partition{u.Table.Def.Keyspace, string(u.Key)}] = true
		keys[string(u.Key)] = true
		tables[u.Table.Def.Keyspace+"."+u.Table.Def.Name] = true
	}
	if len(parts) <= 1 {
		return nil
	}
	names := "[" + strings.Join(slices.Sorted(maps.Keys(tables)), ", ") + "]"
	l := c.opts.BatchLimits
	if size := batchDataSize(m); l.WarnBytes > 0 && size > l.WarnBytes {
		if l.FailBytes > 0 && size > l.FailBytes {
			c.log.Error("batch refused", "tables", names, "size", size, "batch_size_fail_threshold", l.FailBytes)
			return errBatchTooLarge
		}
		x.warn(fmt.Sprintf("Batch for %s is of size %d, exceeding specified threshold of %d by %d.", names, size, l.WarnBytes, size-l.WarnBytes))
	}
	if !logged && l.UnloggedPartitionsWarn > 0 && len(keys) > l.UnloggedPartitionsWarn {
		s := "s"
		if len(tables) == 1 {
			s = ""
		}
		x.warn(fmt.Sprintf("Unlogged batch covering %d partitions detected against table%s %s. You should use a logged batch for atomicity, or asynchronous writes for performance.", len(keys), s, names))
	}
	return nil
}

// batchDataSize is the size of m's data as Cassandra's
// PartitionUpdate.dataSize counts it: each cell its value and path and 16
// bytes of timestamp, TTL and deletion time; each row its clustering, 8
// bytes of liveness (16 when it expires) and 12 of deletion time; other
// deletions 12 bytes and their bounds. Partition keys are not counted.
func batchDataSize(m *mutation.Mutation) int64 {
	var n int64
	clusteringSize := func(ck [][]byte) (s int64) {
		for _, v := range ck {
			s += int64(len(v))
		}
		return s
	}
	for _, u := range m.Updates {
		rows := map[string]bool{}
		for _, op := range u.Ops {
			tg := op.Target
			if op.Kind != mutation.KindPartitionDeletion && op.Kind != mutation.KindRangeDeletion {
				key := []byte{0}
				if tg.Static {
					key[0] = 1
				} else {
					for _, v := range tg.Clustering {
						key = types.AppendBytes(key, v)
					}
				}
				if k := string(key); !rows[k] {
					rows[k] = true
					n += 8 + 12
					if !tg.Static {
						n += clusteringSize(tg.Clustering)
					}
				}
			}
			switch op.Kind {
			case mutation.KindCell, mutation.KindCounterAdd:
				n += 16 + int64(len(op.Cell.Value)+len(tg.Path))
			case mutation.KindRowMarker:
				if op.Cell.TTL > 0 {
					n += 8
				}
			case mutation.KindRowDeletion: // the row's deletion time, counted above
			case mutation.KindRangeDeletion:
				n += 24
				for _, b := range []*storage.Bound{op.Range.Start, op.Range.End} {
					if b != nil {
						n += clusteringSize(b.Prefix)
					}
				}
			default: // partition and collection deletions
				n += 12
			}
		}
	}
	return n
}
