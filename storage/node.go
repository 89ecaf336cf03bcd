package storage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// NodeInfo is what a node must remember about itself across restarts.
type NodeInfo struct {
	HostID      [16]byte `json:"host_id"`
	ClusterName string   `json:"cluster_name"`
	// Tokens are the node's Murmur3 tokens, sorted.
	Tokens []int64 `json:"tokens"`
}

const nodeName = "local.json"

// LoadOrCreateNode reads the node's identity from dir, or creates one with a
// random host id and numTokens random tokens. As Cassandra does, it refuses
// to start a node whose saved cluster name differs from the configured one.
func LoadOrCreateNode(fs vfs.FS, dir, clusterName string, numTokens int) (NodeInfo, error) {
	if err := mkdirAllSynced(fs, dir); err != nil {
		return NodeInfo{}, err
	}
	path := filepath.Join(dir, nodeName)
	data, ok, err := readFile(fs, path)
	if err != nil {
		return NodeInfo{}, err
	}
	if ok {
		var n NodeInfo
		if err := json.Unmarshal(data, &n); err != nil {
			return NodeInfo{}, fmt.Errorf("storage: %s is corrupt: %w", path, err)
		}
		if n.ClusterName != clusterName {
			return NodeInfo{}, fmt.Errorf("storage: saved cluster name %q != configured name %q", n.ClusterName, clusterName)
		}
		if len(n.Tokens) == 0 {
			return NodeInfo{}, fmt.Errorf("storage: %s holds no tokens", path)
		}
		return n, nil
	}
	n := NodeInfo{ClusterName: clusterName}
	if _, err := rand.Read(n.HostID[:]); err != nil {
		return NodeInfo{}, fmt.Errorf("storage: host id: %w", err)
	}
	n.HostID[6] = n.HostID[6]&0x0f | 0x40 // a version 4 UUID, as Cassandra's
	n.HostID[8] = n.HostID[8]&0x3f | 0x80
	seen := map[int64]bool{}
	var b [8]byte
	for len(n.Tokens) < numTokens {
		if _, err := rand.Read(b[:]); err != nil {
			return NodeInfo{}, fmt.Errorf("storage: tokens: %w", err)
		}
		t := int64(binary.LittleEndian.Uint64(b[:]))
		if t == math.MinInt64 || seen[t] { // MinInt64 is the ring's minimum, never a token
			continue
		}
		seen[t] = true
		n.Tokens = append(n.Tokens, t)
	}
	sort.Slice(n.Tokens, func(i, j int) bool { return n.Tokens[i] < n.Tokens[j] })
	data, err = json.MarshalIndent(n, "", "  ")
	if err != nil {
		return NodeInfo{}, fmt.Errorf("storage: encode node info: %w", err)
	}
	if err := writeFileAtomic(fs, path, data); err != nil {
		return NodeInfo{}, err
	}
	return n, nil
}
