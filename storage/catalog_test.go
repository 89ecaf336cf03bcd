package storage

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestCatalogPersistsAndDigests(t *testing.T) {
	fs := vfs.NewMem()
	c, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	empty := c.Digest()
	ks := &KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "x", "replication_factor": "1"}, DurableWrites: true}
	if err := c.CreateKeyspace(ks); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateKeyspace(ks); !errors.Is(err, ErrKeyspaceExists) {
		t.Fatalf("second create: %v, want ErrKeyspaceExists", err)
	}
	withKS := c.Digest()
	if withKS == empty {
		t.Fatal("digest unchanged by a new keyspace")
	}

	c2, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := c2.Keyspace("ks")
	if !ok || got.Replication["replication_factor"] != "1" || !got.DurableWrites {
		t.Fatalf("reopened catalog has %+v, %v", got, ok)
	}
	if c2.Digest() != withKS {
		t.Fatal("equal schemas have different digests")
	}
	if _, err := c2.DropKeyspace("ks"); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.DropKeyspace("ks"); !errors.Is(err, ErrKeyspaceNotFound) {
		t.Fatalf("second drop: %v", err)
	}
	if c2.Digest() != empty {
		t.Fatal("dropping back to an empty schema gives a new digest")
	}
}

// TestCatalogSurvivesCrash checks that a change is synced before
// CreateKeyspace returns: a crash clone keeps only synced data.
func TestCatalogSurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	c, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := c.CreateKeyspace(&KeyspaceDef{Name: name, Replication: map[string]string{"class": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	c2, err := OpenCatalog(crashed, "schema")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c2.Keyspaces()); got != 3 {
		t.Fatalf("after crash: %d keyspaces, want 3", got)
	}
}

func TestNodeIdentityStable(t *testing.T) {
	fs := vfs.NewMem()
	n1, err := LoadOrCreateNode(fs, "system", "Test Cluster", 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(n1.Tokens) != 16 {
		t.Fatalf("%d tokens", len(n1.Tokens))
	}
	n2, err := LoadOrCreateNode(fs, "system", "Test Cluster", 16)
	if err != nil {
		t.Fatal(err)
	}
	if n1.HostID != n2.HostID || len(n2.Tokens) != 16 || n1.Tokens[0] != n2.Tokens[0] {
		t.Fatal("node identity changed across loads")
	}
	if _, err := LoadOrCreateNode(fs, "system", "Other", 16); err == nil {
		t.Fatal("a different cluster name was accepted")
	}
}

// TestCatalogTypes checks user types persist, and that replacing a type
// renews the tables named with it (new pointers, equal contents).
func TestCatalogTypes(t *testing.T) {
	fs := vfs.NewMem()
	c, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateType(&TypeDef{Keyspace: "ks", Name: "addr"}); !errors.Is(err, ErrKeyspaceNotFound) {
		t.Fatalf("type in a missing keyspace: %v", err)
	}
	if err := c.CreateKeyspace(&KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "x"}}); err != nil {
		t.Fatal(err)
	}
	addr := &TypeDef{Keyspace: "ks", Name: "addr", FieldNames: []string{"city"}, FieldTypes: []string{"text"}}
	if err := c.CreateType(addr); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateType(addr); !errors.Is(err, ErrTypeExists) {
		t.Fatalf("second create: %v", err)
	}
	tbl := &TableDef{Keyspace: "ks", Name: "t", Columns: []ColumnDef{{Name: "a", Type: "frozen<addr>", Kind: KindPartitionKey}}}
	if err := c.CreateTable(tbl); err != nil {
		t.Fatal(err)
	}
	before := c.Digest()
	wider := &TypeDef{Keyspace: "ks", Name: "addr", FieldNames: []string{"city", "zip"}, FieldTypes: []string{"text", "int"}}
	if err := c.ReplaceType(wider, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if c.Digest() == before {
		t.Fatal("digest unchanged by ALTER TYPE")
	}
	got := c.Current().Table("ks", "t")
	if got == tbl || got.Columns[0] != tbl.Columns[0] {
		t.Fatalf("table not renewed as an equal copy: %p %p %+v", got, tbl, got)
	}
	c2, err := OpenCatalog(fs, "schema")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := c2.Keyspace("ks")
	if ty := k.Types["addr"]; ty == nil || len(ty.FieldNames) != 2 || ty.FieldTypes[1] != "int" {
		t.Fatalf("reopened type: %+v", k.Types)
	}
	if err := c2.DropType("ks", "addr"); err != nil {
		t.Fatal(err)
	}
	if err := c2.DropType("ks", "addr"); !errors.Is(err, ErrTypeNotFound) {
		t.Fatalf("second drop: %v", err)
	}
	if err := c2.ReplaceType(wider, nil); !errors.Is(err, ErrTypeNotFound) {
		t.Fatalf("replace of a dropped type: %v", err)
	}
}

func TestCatalogSnapshotRestore(t *testing.T) {
	fs := vfs.NewMem()
	a, err := OpenCatalog(fs, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateKeyspace(&KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "SimpleStrategy", "replication_factor": "1"}, Tables: map[string]*TableDef{}}); err != nil {
		t.Fatal(err)
	}
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenCatalog(fs, "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateKeyspace(&KeyspaceDef{Name: "other", Tables: map[string]*TableDef{}}); err != nil {
		t.Fatal(err)
	}
	old, err := b.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	if old.Keyspace("other") == nil || b.Digest() != a.Digest() {
		t.Fatalf("restored digest %x, want %x", b.Digest(), a.Digest())
	}
	// Durable: a reopened catalog has the snapshot's schema.
	b, err = OpenCatalog(fs, "b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest() != a.Digest() {
		t.Fatalf("reopened digest %x, want %x", b.Digest(), a.Digest())
	}
}

// TestDigestLeavesOutIndexBuilds: a node building an index has the schema
// version of one that has built it; the index itself counts.
func TestDigestLeavesOutIndexBuilds(t *testing.T) {
	c, err := OpenCatalog(vfs.NewMem(), "schema")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CreateKeyspace(&KeyspaceDef{Name: "ks", Replication: map[string]string{"class": "x"}}); err != nil {
		t.Fatal(err)
	}
	tbl := &TableDef{Keyspace: "ks", Name: "t", Columns: []ColumnDef{{Name: "k", Type: "int", Kind: KindPartitionKey},
		{Name: "v", Type: "int", Kind: KindRegular}}}
	if err := c.CreateTable(tbl); err != nil {
		t.Fatal(err)
	}
	noIndex := c.Digest()
	building := *tbl
	building.Indexes = []IndexDef{{Name: "t_v", Column: "v", Target: "v", Building: true}}
	if err := c.ReplaceTable(&building); err != nil {
		t.Fatal(err)
	}
	whileBuilding := c.Digest()
	stored := c.Current().Table("ks", "t")
	built := *stored
	built.Indexes = []IndexDef{{Name: "t_v", Column: "v", Target: "v"}}
	if err := c.ReplaceTable(&built); err != nil {
		t.Fatal(err)
	}
	if whileBuilding == noIndex {
		t.Fatal("the digest does not change with CREATE INDEX")
	}
	if c.Digest() != whileBuilding {
		t.Fatalf("digest %x once the index is built, %x while it builds", c.Digest(), whileBuilding)
	}
	if !stored.Indexes[0].Building {
		t.Fatal("the digest cleared the stored definition's Building")
	}
}
