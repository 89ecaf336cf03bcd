package storage

import (
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Catalog errors; callers test them with errors.Is.
var (
	ErrKeyspaceExists   = errors.New("storage: keyspace already exists")
	ErrKeyspaceNotFound = errors.New("storage: keyspace does not exist")
)

// KeyspaceDef is a keyspace's definition.
type KeyspaceDef struct {
	Name          string            `json:"name"`
	Replication   map[string]string `json:"replication"`
	DurableWrites bool              `json:"durable_writes"`
}

// catalogFile is the catalog's on-disk form. Its Version lets a later
// format be told apart.
type catalogFile struct {
	Version   int           `json:"version"`
	Keyspaces []KeyspaceDef `json:"keyspaces"`
}

const catalogName = "schema.json"

// Catalog is the node's user schema. It is safe for concurrent use; a
// change is durable before the method that makes it returns.
type Catalog struct {
	fs   vfs.FS
	path string

	mu     sync.RWMutex
	ks     map[string]KeyspaceDef
	digest [16]byte
}

// OpenCatalog loads the catalog kept in dir, creating an empty one if dir
// holds none.
func OpenCatalog(fs vfs.FS, dir string) (*Catalog, error) {
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, err
	}
	c := &Catalog{fs: fs, path: filepath.Join(dir, catalogName), ks: map[string]KeyspaceDef{}}
	data, ok, err := readFile(fs, c.path)
	if err != nil {
		return nil, err
	}
	if ok {
		var f catalogFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("storage: %s is corrupt: %w", c.path, err)
		}
		if f.Version != 1 {
			return nil, fmt.Errorf("storage: %s has unknown format version %d", c.path, f.Version)
		}
		for _, k := range f.Keyspaces {
			c.ks[k.Name] = k
		}
	}
	c.digest = c.computeDigest()
	return c, nil
}

// Keyspaces returns every keyspace, sorted by name. The caller owns the
// result.
func (c *Catalog) Keyspaces() []KeyspaceDef {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sortedLocked()
}

func (c *Catalog) sortedLocked() []KeyspaceDef {
	out := make([]KeyspaceDef, 0, len(c.ks))
	for _, k := range c.ks {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Keyspace returns the named keyspace.
func (c *Catalog) Keyspace(name string) (KeyspaceDef, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.ks[name]
	return k, ok
}

// Digest identifies the schema's contents: equal schemas have equal digests.
func (c *Catalog) Digest() [16]byte {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.digest
}

// CreateKeyspace adds def. It fails with ErrKeyspaceExists if a keyspace of
// that name exists. The catalog keeps def (callers must not change its map).
func (c *Catalog) CreateKeyspace(def KeyspaceDef) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ks[def.Name]; ok {
		return fmt.Errorf("%w: %s", ErrKeyspaceExists, def.Name)
	}
	c.ks[def.Name] = def
	if err := c.saveLocked(); err != nil {
		delete(c.ks, def.Name)
		return err
	}
	return nil
}

// DropKeyspace removes the named keyspace, or fails with
// ErrKeyspaceNotFound.
func (c *Catalog) DropKeyspace(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.ks[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, name)
	}
	delete(c.ks, name)
	if err := c.saveLocked(); err != nil {
		c.ks[name] = old
		return err
	}
	return nil
}

func (c *Catalog) saveLocked() error {
	data, err := json.MarshalIndent(catalogFile{Version: 1, Keyspaces: c.sortedLocked()}, "", "  ")
	if err != nil {
		return fmt.Errorf("storage: encode catalog: %w", err)
	}
	if err := writeFileAtomic(c.fs, c.path, data); err != nil {
		return err
	}
	c.digest = c.computeDigest()
	return nil
}

// computeDigest hashes the sorted definitions; json.Marshal sorts map keys,
// so equal schemas hash equal.
func (c *Catalog) computeDigest() [16]byte {
	data, _ := json.Marshal(c.sortedLocked())
	return md5.Sum(data)
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
