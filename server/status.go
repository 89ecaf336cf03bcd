package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// statusPath serves the ring as this node sees it, for `cqld nodetool
// status`, on the metrics endpoint.
const statusPath = "/nodetool/status"

// NodeStatus is one member of the ring as /nodetool/status reports it:
// what nodetool status prints.
type NodeStatus struct {
	Address    string  `json:"address"`
	Up         bool    `json:"up"`
	State      string  `json:"state"` // NORMAL, JOINING, LEAVING
	LoadBytes  uint64  `json:"load_bytes"`
	Tokens     int     `json:"tokens"`
	Owns       float64 `json:"owns"` // fraction of the ring it owns as primary
	HostID     string  `json:"host_id"`
	DataCenter string  `json:"data_center"`
	Rack       string  `json:"rack"`
}

// load is this node's data on disk, as gossip spreads it.
func load(e *storage.Engine) uint64 {
	st := e.LSMStats()
	var n uint64
	for _, b := range st.LevelBytes {
		n += uint64(b)
	}
	return n + st.MemtableBytes
}

// loadInterval is how often a node gossips its load again.
const loadInterval = 30 * time.Second

// spreadLoad gossips this node's load every loadInterval until ctx ends.
func (n *Node) spreadLoad(ctx context.Context) {
	t := time.NewTicker(loadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.cluster.UpdateMeta()
		}
	}
}

// Status is what /nodetool/status answers: the ring's members and, when
// Effective, each one's effective ownership of a keyspace's replicas in
// Owns, as nodetool status prints it under "Owns (effective)". Otherwise
// Owns is the share of the ring each owns as primary, which nodetool
// prints as "?" under "Owns", and Note says why no effective figure is
// meaningful (Cassandra's IllegalStateException, printed as a Note).
type Status struct {
	Nodes     []NodeStatus `json:"nodes"`
	Effective bool         `json:"effective"`
	Note      string       `json:"note,omitempty"`
}

// status reports the ring with the ownership nodetool status [keyspace]
// prints (StorageService.effectiveOwnership): keyspace's replicas, or with
// no keyspace those of the user keyspaces when they are all replicated
// alike, system_traces' when there is none. A keyspace that does not
// exist is an error naming it, as Cassandra's IllegalArgumentException.
func (m *members) status(e *storage.Engine, cat *storage.Catalog, keyspace string) (Status, error) {
	node := m.node.Load()
	topo := node.Topology()
	st := Status{Effective: true}
	owns, note, err := effectiveOwnership(topo.Ring(), cat, keyspace)
	if err != nil {
		return Status{}, err
	}
	if note != "" {
		st.Effective, st.Note, owns = false, note, topo.Ring().Ownership()
	}
	meta := m.gossipMeta()
	for _, mem := range topo.Members() {
		s := NodeStatus{
			Address: mem.Addr.Addr().String(), Up: node.Alive(mem.HostID), State: mem.Status.String(),
			Tokens: len(mem.Tokens), Owns: owns[ring.HostID(mem.HostID)], HostID: mem.HostID.String(),
			DataCenter: mem.DataCenter, Rack: mem.Rack,
		}
		if mem.HostID == m.self {
			s.LoadBytes = load(e)
		} else if g, ok := meta[mem.HostID]; ok {
			s.LoadBytes = g.Load
		}
		st.Nodes = append(st.Nodes, s)
	}
	return st, nil
}

// effectiveOwnership is each member's share of the ring it holds a replica
// of for keyspace, as StorageService.effectiveOwnership computes it, or a
// note (its IllegalStateException's message) when no such share is
// meaningful.
func effectiveOwnership(r *ring.Ring, cat *storage.Catalog, keyspace string) (map[ring.HostID]float64, string, error) {
	var ks *storage.KeyspaceDef
	if keyspace != "" {
		if ks = keyspaceNamed(cat, keyspace); ks == nil {
			return nil, "", fmt.Errorf("The keyspace %s, does not exist", keyspace)
		}
		if strings.HasSuffix(ks.Replication["class"], "LocalStrategy") {
			return nil, "Ownership values for keyspaces with LocalStrategy are meaningless", nil
		}
	} else {
		var first ring.Strategy
		for _, k := range cat.Keyspaces() {
			if systables.IsSystemKeyspace(k.Name) {
				continue
			}
			s, err := ring.ParseStrategy(k.Name, k.Replication)
			if err != nil {
				return nil, "", err
			}
			if first == nil {
				first, ks = s, k
			} else if !reflect.DeepEqual(s, first) {
				return nil, "Non-system keyspaces don't have the same replication settings, effective ownership information is meaningless", nil
			}
		}
		if ks == nil {
			ks = keyspaceNamed(cat, "system_traces")
		}
	}
	s, err := ring.ParseStrategy(ks.Name, ks.Replication)
	if err != nil {
		return nil, "", err
	}
	return ring.NewPlacement(r, s).Ownership(), "", nil
}

// keyspaceNamed is the keyspace of that name in the schema, or one of the
// node's own system keyspaces (virtual ones excepted, which have no
// replication), or nil.
func keyspaceNamed(cat *storage.Catalog, name string) *storage.KeyspaceDef {
	if ks, ok := cat.Keyspace(name); ok {
		return ks
	}
	own, virtual := systables.Keyspaces()
	for _, ks := range own {
		if ks.Name == name && !virtual[name] {
			return ks
		}
	}
	return nil
}

func (m *members) statusHandler(e *storage.Engine, cat *storage.Catalog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := m.status(e, cat, r.URL.Query().Get("keyspace"))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, AdminError{Class: "IllegalArgumentException", Message: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
}
