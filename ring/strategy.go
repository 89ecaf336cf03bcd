package ring

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Strategy places a keyspace's replicas on a ring exactly as one of
// Cassandra's replication strategies does (calculateNaturalReplicas of
// SimpleStrategy and NetworkTopologyStrategy in
// src/java/org/apache/cassandra/locator/). Drivers compute the same
// placement to route requests, so any difference costs every request an
// extra hop. A Strategy is immutable and safe for concurrent use; the only
// implementations are this package's.
type Strategy interface {
	// Replicas returns the replicas of token t on r in Cassandra's order:
	// the primary owner of t's range first, then the others in the order
	// the strategy met them walking the ring clockwise. It is nil on the
	// empty ring; the slice is the caller's. For many look-ups on one
	// ring, a Placement is faster.
	Replicas(r *Ring, t int64) []HostID
	// ReplicationFactor is the number of replicas asked for in data center
	// dc (SimpleStrategy: its factor, whatever dc).
	ReplicationFactor(dc string) int
	// Options are the replication options as system_schema.keyspaces
	// stores them: the full class name and the factors. The map is the
	// caller's.
	Options() map[string]string

	// place appends to dst the indexes (in r.nodes) of the replicas of the
	// range that ends at r.tokens[start]. sc, when not nil, is scratch
	// space reused between calls, and place sets sc.walked to the number
	// of ring tokens it looked at.
	place(r *Ring, start int, dst []int, sc *scratch) []int
}

var (
	_ Strategy = SimpleStrategy{}
	_ Strategy = NetworkTopologyStrategy{}
)

const classPrefix = "org.apache.cassandra.locator."

func replicasOf(s Strategy, r *Ring, t int64) []HostID {
	if len(r.tokens) == 0 {
		return nil
	}
	idx := s.place(r, r.search(t), nil, nil)
	out := make([]HostID, len(idx))
	for i, n := range idx {
		out[i] = r.nodes[n].HostID
	}
	return out
}

// SimpleStrategy puts the replicas of a token on the first RF distinct
// nodes met walking the ring clockwise from it, ignoring data centers and
// racks. With fewer nodes than RF, every node is a replica.
type SimpleStrategy struct {
	RF int
}

func (s SimpleStrategy) Replicas(r *Ring, t int64) []HostID { return replicasOf(s, r, t) }

func (s SimpleStrategy) ReplicationFactor(string) int { return s.RF }

func (s SimpleStrategy) Options() map[string]string {
	return map[string]string{"class": classPrefix + "SimpleStrategy", "replication_factor": strconv.Itoa(s.RF)}
}

func (s SimpleStrategy) place(r *Ring, start int, dst []int, sc *scratch) []int {
	base := len(dst)
	j := 0
	for ; j < len(r.tokens) && len(dst)-base < s.RF; j++ {
		n := r.owner[(start+j)%len(r.tokens)]
		if !slices.Contains(dst[base:], n) {
			dst = append(dst, n)
		}
	}
	if sc != nil {
		sc.walked = j
	}
	return dst
}

// NetworkTopologyStrategy puts RF[dc] replicas in each data center dc,
// walking the ring once clockwise from the token (Cassandra 4's
// NetworkTopologyStrategy.calculateNaturalReplicas with its
// DatacenterEndpoints): in each data center, a node on a rack not used yet
// is always taken; a node on a rack already used is taken only while the
// data center has fewer racks than replicas left to place
// (acceptableRackRepeats = RF - racks), so replicas spread over as many
// racks as there are, and the repeats are the first such nodes met. This
// is the same set as Cassandra 3's "skipped racks" rule, which set the
// repeats aside until every rack had a replica and then took them in ring
// order. A data center with fewer nodes than its factor has every node a
// replica; one not in the ring, or with factor 0, has none.
type NetworkTopologyStrategy struct {
	RF map[string]int
}

func (s NetworkTopologyStrategy) Replicas(r *Ring, t int64) []HostID { return replicasOf(s, r, t) }

func (s NetworkTopologyStrategy) ReplicationFactor(dc string) int { return s.RF[dc] }

func (s NetworkTopologyStrategy) Options() map[string]string {
	out := map[string]string{"class": classPrefix + "NetworkTopologyStrategy"}
	for dc, n := range s.RF {
		out[dc] = strconv.Itoa(n)
	}
	return out
}

func (s NetworkTopologyStrategy) place(r *Ring, start int, dst []int, sc *scratch) []int {
	if sc == nil {
		sc = &scratch{}
	}
	// Per data center of the ring: replicas still to place and rack
	// repeats still allowed (DatacenterEndpoints.rfLeft and
	// acceptableRackRepeats).
	rfLeft := resize(&sc.rfLeft, len(r.dcs))
	repeats := resize(&sc.repeats, len(r.dcs))
	seenRack := resize(&sc.seenRack, len(r.rackNames))
	toFill := 0
	for d, dc := range r.dcs {
		rf := s.RF[dc]
		if rf <= 0 {
			continue
		}
		rfLeft[d] = min(rf, r.dcNodes[d])
		repeats[d] = rf - r.dcRacks[d]
		toFill++
	}
	base := len(dst)
	j := 0
	for ; j < len(r.tokens) && toFill > 0; j++ {
		n := r.owner[(start+j)%len(r.tokens)]
		d := r.nodeDC[n]
		if rfLeft[d] == 0 || slices.Contains(dst[base:], n) {
			continue
		}
		if rack := r.nodeRack[n]; !seenRack[rack] {
			seenRack[rack] = true
		} else if repeats[d] > 0 {
			repeats[d]--
		} else {
			continue
		}
		dst = append(dst, n)
		if rfLeft[d]--; rfLeft[d] == 0 {
			toFill--
		}
	}
	sc.walked = j
	return dst
}

// scratch is the working space of Strategy.place.
type scratch struct {
	rfLeft, repeats []int
	seenRack        []bool
	walked          int
}

// resize makes *buf n zero values long, reusing its array when it can.
func resize[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// ConfigError is replication options Cassandra refuses. Its message is
// Cassandra's own, which the client sees in a CONFIG_ERROR, so it carries
// no package prefix.
type ConfigError struct {
	Message string
}

func (e *ConfigError) Error() string { return e.Message }

func configErrorf(format string, args ...any) error {
	return &ConfigError{Message: fmt.Sprintf(format, args...)}
}

// ParseStrategy returns the strategy of keyspace ks's replication options
// (as CREATE KEYSPACE gives them, after NetworkTopologyStrategy's
// replication_factor has been expanded into data centers), refusing with
// Cassandra 4's messages what Cassandra refuses: a missing or unknown
// class, a factor that is not a non-negative integer, an unrecognized
// SimpleStrategy option, a NetworkTopologyStrategy without data centers,
// and transient replicas ("3/1"), which Cassandra only accepts with
// enable_transient_replication, an experimental option cqld does not have.
// It keeps none of opts.
func ParseStrategy(ks string, opts map[string]string) (Strategy, error) {
	class, ok := opts["class"]
	if !ok {
		return nil, configErrorf("Missing replication strategy class")
	}
	short := strings.TrimPrefix(class, classPrefix)
	switch short {
	case "SimpleStrategy":
		v, ok := opts["replication_factor"]
		if !ok {
			return nil, configErrorf("SimpleStrategy requires a replication_factor strategy option.")
		}
		rf, err := ParseReplicationFactor(v)
		if err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(opts) {
			if k != "class" && k != "replication_factor" {
				return nil, configErrorf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, ks)
			}
		}
		return SimpleStrategy{RF: rf}, nil
	case "NetworkTopologyStrategy":
		s := NetworkTopologyStrategy{RF: map[string]int{}}
		for _, dc := range sortedKeys(opts) {
			if dc == "class" {
				continue
			}
			if strings.EqualFold(dc, "replication_factor") {
				return nil, configErrorf("replication_factor should not appear as an option at construction time for NetworkTopologyStrategy")
			}
			rf, err := ParseReplicationFactor(opts[dc])
			if err != nil {
				return nil, err
			}
			s.RF[dc] = rf
		}
		if len(s.RF) == 0 {
			return nil, configErrorf("Configuration for at least one datacenter must be present")
		}
		return s, nil
	case "LocalStrategy", "EverywhereStrategy":
		return nil, configErrorf("Unable to use given strategy class: %s is reserved for internal use.", short)
	default:
		return nil, configErrorf("Unable to find replication strategy class '%s%s'", classPrefix, short)
	}
}

// ParseReplicationFactor is ReplicationFactor.fromString with transient
// replication disabled: "<replicas>" or "<replicas>/<transient>", checked
// in ReplicationFactor.validate's order.
func ParseReplicationFactor(s string) (int, error) {
	all := s
	if strings.Contains(s, "/") {
		parts := javaSplit(s, "/")
		if len(parts) != 2 {
			return 0, configErrorf("Replication factor format is <replicas> or <replicas>/<transient>")
		}
		all = parts[0]
		if _, err := javaParseInt(parts[0]); err != nil {
			return 0, err
		}
		transient, err := javaParseInt(parts[1])
		if err != nil {
			return 0, err
		}
		if transient != 0 {
			return 0, configErrorf("Transient replication is not enabled on this node")
		}
	}
	n, err := javaParseInt(all)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, configErrorf("Replication factor must be non-negative, found %d", n)
	}
	return n, nil
}

// javaParseInt is Integer.parseInt, whose NumberFormatException message
// Cassandra passes on.
func javaParseInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, configErrorf("For input string: \"%s\"", s)
	}
	return int(n), nil
}

// javaSplit is String.split with a literal separator: trailing empty
// strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
