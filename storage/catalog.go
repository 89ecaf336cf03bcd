package storage

import (
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Catalog errors; callers test them with errors.Is.
var (
	ErrKeyspaceExists   = errors.New("storage: keyspace already exists")
	ErrKeyspaceNotFound = errors.New("storage: keyspace does not exist")
	ErrTableExists      = errors.New("storage: table already exists")
	ErrTableNotFound    = errors.New("storage: table does not exist")
	ErrTypeExists       = errors.New("storage: type already exists")
	ErrTypeNotFound     = errors.New("storage: type does not exist")
	ErrFunctionNotFound = errors.New("storage: function does not exist")
	// ErrCatalogWrite means the catalog could not be written (an I/O
	// error): the change was not made, in memory or on disk.
	ErrCatalogWrite = errors.New("storage: catalog write failed")
)

// catalogFile is the catalog's on-disk form. Its Version lets a later
// format be told apart.
type catalogFile struct {
	Version   int            `json:"version"`
	Keyspaces []*KeyspaceDef `json:"keyspaces"`
	// Applied is the index of the cluster metadata log entry the schema
	// is as of, written with it so the two never disagree.
	Applied uint64 `json:"applied,omitempty"`
}

const catalogName = "schema.json"

// Catalog is the node's user schema. It is safe for concurrent use; a
// change is durable before the method that makes it returns. Readers take
// an immutable Schema with Current.
type Catalog struct {
	fs   vfs.FS
	path string

	mu  sync.Mutex // serialises changes
	cur atomic.Pointer[Schema]
	// applied is the metadata log index of the last change written;
	// applying is the index the next changes are written as.
	applied, applying uint64
}

// OpenCatalog loads the catalog kept in dir, creating an empty one if dir
// holds none.
func OpenCatalog(fs vfs.FS, dir string) (*Catalog, error) {
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, err
	}
	c := &Catalog{fs: fs, path: filepath.Join(dir, catalogName)}
	keyspaces := map[string]*KeyspaceDef{}
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
			if k.Tables == nil {
				k.Tables = map[string]*TableDef{}
			}
			keyspaces[k.Name] = k
		}
		c.applied = f.Applied
	}
	c.applying = c.applied
	c.cur.Store(newSchema(keyspaces))
	return c, nil
}

func newSchema(keyspaces map[string]*KeyspaceDef) *Schema {
	s := &Schema{Keyspaces: keyspaces}
	// json.Marshal sorts map keys, so equal schemas hash equal. An
	// index's build state is each node's own (each builds its index
	// when it applies the CREATE INDEX, and a restart may finish a
	// build): it is no part of the schema nodes agree on, as Cassandra's
	// schema version does not change with a build.
	data, _ := json.Marshal(withoutBuildState(s.SortedKeyspaces()))
	s.Digest = md5.Sum(data)
	return s
}

// withoutBuildState returns ks with every index's Building cleared,
// copying only the definitions that have one set.
func withoutBuildState(ks []*KeyspaceDef) []*KeyspaceDef {
	out := ks
	for i, k := range ks {
		if !k.building() {
			continue
		}
		if len(out) > 0 && &out[0] == &ks[0] {
			out = slices.Clone(ks)
		}
		kc := *k
		kc.Tables = make(map[string]*TableDef, len(k.Tables))
		for name, t := range k.Tables {
			if t.building() {
				tc := *t
				tc.Indexes = slices.Clone(t.Indexes)
				for j := range tc.Indexes {
					tc.Indexes[j].Building = false
				}
				t = &tc
			}
			kc.Tables[name] = t
		}
		out[i] = &kc
	}
	return out
}

func (k *KeyspaceDef) building() bool {
	for _, t := range k.Tables {
		if t.building() {
			return true
		}
	}
	return false
}

func (t *TableDef) building() bool {
	for _, ix := range t.Indexes {
		if ix.Building {
			return true
		}
	}
	return false
}

// Current returns the schema as of now. The caller must not modify it.
func (c *Catalog) Current() *Schema { return c.cur.Load() }

// Keyspaces returns every keyspace, sorted by name.
func (c *Catalog) Keyspaces() []*KeyspaceDef { return c.Current().SortedKeyspaces() }

// Keyspace returns the named keyspace.
func (c *Catalog) Keyspace(name string) (*KeyspaceDef, bool) {
	k := c.Current().Keyspace(name)
	return k, k != nil
}

// Digest identifies the schema's contents: equal schemas have equal digests.
func (c *Catalog) Digest() [16]byte { return c.Current().Digest }

// update applies change to a copy of the keyspace map and makes the result
// durable and current. change may replace entries but must not modify the
// definitions it finds: they belong to older schemas still in use.
func (c *Catalog) update(change func(ks map[string]*KeyspaceDef) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.Current()
	next := make(map[string]*KeyspaceDef, len(old.Keyspaces)+1)
	for k, v := range old.Keyspaces {
		next[k] = v
	}
	if err := change(next); err != nil {
		return err
	}
	s := newSchema(next)
	data, err := json.MarshalIndent(catalogFile{Version: 1, Keyspaces: s.SortedKeyspaces(), Applied: c.applying}, "", "  ")
	if err != nil {
		return fmt.Errorf("storage: encode catalog: %w", err)
	}
	if err := writeFileAtomic(c.fs, c.path, data); err != nil {
		return fmt.Errorf("%w: %w", ErrCatalogWrite, err)
	}
	c.applied = c.applying
	c.cur.Store(s)
	return nil
}

// Applying makes index the metadata log index the catalog's next changes
// are recorded as, until the next call: the caller applying that entry's
// schema change calls it first.
func (c *Catalog) Applying(index uint64) {
	c.mu.Lock()
	c.applying = index
	c.mu.Unlock()
}

// Applied is the metadata log index recorded with the last change written.
func (c *Catalog) Applied() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

// CreateKeyspace adds def. It fails with ErrKeyspaceExists if a keyspace of
// that name exists. The catalog keeps def: callers must not change it.
func (c *Catalog) CreateKeyspace(def *KeyspaceDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		if _, ok := ks[def.Name]; ok {
			return fmt.Errorf("%w: %s", ErrKeyspaceExists, def.Name)
		}
		if def.Tables == nil {
			def.Tables = map[string]*TableDef{}
		}
		ks[def.Name] = def
		return nil
	})
}

// AlterKeyspace replaces the named keyspace's replication options and
// durable_writes, keeping its tables and types, or fails with
// ErrKeyspaceNotFound. The catalog keeps replication: callers must not
// change it.
func (c *Catalog) AlterKeyspace(name string, replication map[string]string, durableWrites bool) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[name]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, name)
		}
		n := *k
		n.Replication, n.DurableWrites = replication, durableWrites
		ks[name] = &n
		return nil
	})
}

// DropKeyspace removes the named keyspace and its tables, or fails with
// ErrKeyspaceNotFound. It returns the dropped definition.
func (c *Catalog) DropKeyspace(name string) (*KeyspaceDef, error) {
	var dropped *KeyspaceDef
	err := c.update(func(ks map[string]*KeyspaceDef) error {
		dropped = ks[name]
		if dropped == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, name)
		}
		delete(ks, name)
		return nil
	})
	return dropped, err
}

// CreateTable adds def to its keyspace. It fails with ErrKeyspaceNotFound or
// ErrTableExists. The catalog keeps def: callers must not change it.
func (c *Catalog) CreateTable(def *TableDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, def.Keyspace)
		}
		if _, ok := k.Tables[def.Name]; ok {
			return fmt.Errorf("%w: %s.%s", ErrTableExists, def.Keyspace, def.Name)
		}
		ks[def.Keyspace] = k.withTable(def.Name, def)
		return nil
	})
}

// ReplaceTable swaps in a new definition of an existing table (ALTER).
func (c *Catalog) ReplaceTable(def *TableDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil || k.Tables[def.Name] == nil {
			return fmt.Errorf("%w: %s.%s", ErrTableNotFound, def.Keyspace, def.Name)
		}
		ks[def.Keyspace] = k.withTable(def.Name, def)
		return nil
	})
}

// DropTable removes a table and returns its definition, or fails with
// ErrKeyspaceNotFound or ErrTableNotFound.
func (c *Catalog) DropTable(keyspace, name string) (*TableDef, error) {
	var dropped *TableDef
	err := c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, keyspace)
		}
		dropped = k.Tables[name]
		if dropped == nil {
			return fmt.Errorf("%w: %s.%s", ErrTableNotFound, keyspace, name)
		}
		ks[keyspace] = k.withTable(name, nil)
		return nil
	})
	return dropped, err
}

// CreateType adds def to its keyspace. It fails with ErrKeyspaceNotFound or
// ErrTypeExists. The catalog keeps def: callers must not change it.
func (c *Catalog) CreateType(def *TypeDef) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, def.Keyspace)
		}
		if _, ok := k.Types[def.Name]; ok {
			return fmt.Errorf("%w: %s.%s", ErrTypeExists, def.Keyspace, def.Name)
		}
		ks[def.Keyspace] = k.withType(def.Name, def)
		return nil
	})
}

// ReplaceType swaps in a new definition of an existing type (ALTER TYPE)
// and renews the named tables: each gets a new, equal *TableDef, so that
// everything compiled against the old definition (cached plans, prepared
// statements) sees that it is stale. It fails with ErrKeyspaceNotFound or
// ErrTypeNotFound.
func (c *Catalog) ReplaceType(def *TypeDef, renewTables []string) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[def.Keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, def.Keyspace)
		}
		if k.Types[def.Name] == nil {
			return fmt.Errorf("%w: %s.%s", ErrTypeNotFound, def.Keyspace, def.Name)
		}
		k = k.withType(def.Name, def)
		for _, name := range renewTables {
			if old := k.Tables[name]; old != nil {
				renewed := *old
				k = k.withTable(name, &renewed)
			}
		}
		ks[def.Keyspace] = k
		return nil
	})
}

// DropType removes a type, or fails with ErrKeyspaceNotFound or
// ErrTypeNotFound. Callers check that nothing uses it.
func (c *Catalog) DropType(keyspace, name string) error {
	return c.update(func(ks map[string]*KeyspaceDef) error {
		k := ks[keyspace]
		if k == nil {
			return fmt.Errorf("%w: %s", ErrKeyspaceNotFound, keyspace)
		}
		if k.Types[name] == nil {
			return fmt.Errorf("%w: %s.%s", ErrTypeNotFound, keyspace, name)
		}
		ks[keyspace] = k.withType(name, nil)
		return nil
	})
}

// withType returns a copy of k with the named type set, or removed when
// def is nil.
func (k *KeyspaceDef) withType(name string, def *TypeDef) *KeyspaceDef {
	n := *k
	n.Types = make(map[string]*TypeDef, len(k.Types)+1)
	for t, d := range k.Types {
		n.Types[t] = d
	}
	if def == nil {
		delete(n.Types, name)
	} else {
		n.Types[name] = def
	}
	if len(n.Types) == 0 {
		n.Types = nil
	}
	return &n
}

// withTable returns a copy of k with the named table set, or removed when
// def is nil.
func (k *KeyspaceDef) withTable(name string, def *TableDef) *KeyspaceDef {
	n := *k
	n.Tables = make(map[string]*TableDef, len(k.Tables)+1)
	for t, d := range k.Tables {
		n.Tables[t] = d
	}
	if def == nil {
		delete(n.Tables, name)
	} else {
		n.Tables[name] = def
	}
	return &n
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// Snapshot encodes the whole schema, as Restore takes it.
func (c *Catalog) Snapshot() ([]byte, error) {
	data, err := json.Marshal(catalogFile{Version: 1, Keyspaces: c.Current().SortedKeyspaces()})
	if err != nil {
		return nil, fmt.Errorf("storage: encode catalog: %w", err)
	}
	return data, nil
}

// Restore replaces the whole schema with a Snapshot's, durably, and
// returns the schema it replaced.
func (c *Catalog) Restore(snapshot []byte) (old *Schema, err error) {
	var f catalogFile
	if len(snapshot) > 0 {
		if err := json.Unmarshal(snapshot, &f); err != nil {
			return nil, fmt.Errorf("storage: schema snapshot: %w", err)
		}
		if f.Version != 1 {
			return nil, fmt.Errorf("storage: schema snapshot has unknown format version %d", f.Version)
		}
	}
	err = c.update(func(ks map[string]*KeyspaceDef) error {
		old = c.Current()
		clear(ks)
		for _, k := range f.Keyspaces {
			if k.Tables == nil {
				k.Tables = map[string]*TableDef{}
			}
			ks[k.Name] = k
		}
		return nil
	})
	return old, err
}
