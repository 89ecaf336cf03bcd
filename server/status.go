package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
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

func (m *members) status(e *storage.Engine) []NodeStatus {
	node := m.node.Load()
	topo := node.Topology()
	owns := topo.Ring().Ownership()
	meta := m.gossipMeta()
	var out []NodeStatus
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
		out = append(out, s)
	}
	return out
}

func (m *members) statusHandler(e *storage.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m.status(e))
	})
}
