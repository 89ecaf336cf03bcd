package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cqld/cqld/gossip"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/storage"
)

// peerFacts is what gossip last said of a peer that system.peers shows
// and the ring does not hold: where its clients connect, its release and
// its schema version.
type peerFacts struct {
	RPCAddr        netip.Addr `json:"rpc_address"`
	NativePort     uint16     `json:"native_port"`
	ReleaseVersion string     `json:"release_version"`
	SchemaVersion  [16]byte   `json:"schema_version"`
}

func factsOf(m gossip.Meta) peerFacts {
	return peerFacts{RPCAddr: m.RPCAddr, NativePort: m.NativePort, ReleaseVersion: m.ReleaseVersion, SchemaVersion: m.SchemaVersion}
}

// savedPeers keeps peerFacts on disk, as Cassandra keeps system.peers, so
// that a node restarted before gossip has heard from its peers (all down,
// or not answering yet) still gives drivers their rpc addresses: a driver
// ignores a peer without one.
type savedPeers struct {
	fs   vfs.FS
	path string
	log  *slog.Logger

	mu    sync.Mutex
	facts map[ring.HostID]peerFacts
}

// peersFileVersion is the version of the file's layout.
const peersFileVersion = 1

type peersFile struct {
	Version int                  `json:"version"`
	Peers   map[string]peerFacts `json:"peers"` // by host id
}

// openSavedPeers reads what path holds, none if it does not exist. A file
// it cannot read is a warning, not a failure: gossip gives the same facts
// again once the peers answer, and the file is written anew.
func openSavedPeers(fs vfs.FS, path string, log *slog.Logger) (*savedPeers, error) {
	s := &savedPeers{fs: fs, path: path, log: log, facts: map[ring.HostID]peerFacts{}}
	data, ok, err := storage.ReadFileIfExists(fs, path)
	if err != nil || !ok {
		return s, err
	}
	facts, err := decodePeers(data)
	if err != nil {
		log.Warn("ignoring the saved peers: system.peers lacks the peers' rpc addresses until gossip gives them", "path", path, "err", err)
		return s, nil
	}
	s.facts = facts
	return s, nil
}

func decodePeers(data []byte) (map[ring.HostID]peerFacts, error) {
	var f peersFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Version != peersFileVersion {
		return nil, fmt.Errorf("version %d, this release reads %d", f.Version, peersFileVersion)
	}
	facts := map[ring.HostID]peerFacts{}
	for id, p := range f.Peers {
		h, err := ring.ParseHostID(id)
		if err != nil {
			return nil, err
		}
		facts[h] = p
	}
	return facts, nil
}

// get is what was last saved of h.
func (s *savedPeers) get(h ring.HostID) (peerFacts, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.facts[h]
	return p, ok
}

// record keeps what gossip says of h when it differs from what is saved.
// A failed write is logged: the facts stay in memory, and gossip gives
// them again after a restart.
func (s *savedPeers) record(h ring.HostID, m gossip.Meta) {
	p := factsOf(m)
	if !p.RPCAddr.IsValid() {
		return
	}
	s.update(func(facts map[ring.HostID]peerFacts) bool {
		if facts[h] == p {
			return false
		}
		facts[h] = p
		return true
	})
}

// forget drops h, a node removed from the ring.
func (s *savedPeers) forget(h ring.HostID) {
	s.update(func(facts map[ring.HostID]peerFacts) bool {
		if _, ok := facts[h]; !ok {
			return false
		}
		delete(facts, h)
		return true
	})
}

// update applies change and writes the file when it changed something.
func (s *savedPeers) update(change func(map[ring.HostID]peerFacts) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !change(s.facts) {
		return
	}
	f := peersFile{Version: peersFileVersion, Peers: map[string]peerFacts{}}
	for h, p := range s.facts {
		f.Peers[h.String()] = p
	}
	data, err := json.Marshal(f)
	if err == nil {
		err = storage.WriteFileAtomic(s.fs, s.path, data)
	}
	if err != nil {
		s.log.Warn("cannot save what gossip said of the peers (system.peers after a restart)", "path", s.path, "err", err)
	}
}
