package schema

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// Secondary indexes (CREATE INDEX / DROP INDEX). An index lives in its
// table's definition (storage.TableDef.Indexes), so it is durable with the
// catalog and goes away with its table. A query on an indexed column is
// answered by a read of the table that checks every row's current value,
// so its answers are exact whatever was written, deleted or expired.

// checkIndexKeyspace refuses CREATE INDEX ks.name ON other.table.
func checkIndexKeyspace(s *statements.CreateIndex) error {
	if s.TableKeyspace != "" && s.Keyspace != "" && s.Keyspace != s.TableKeyspace {
		return cqlerr.Invalidf("Keyspace name '%s' doesn't match index name '%s'", s.Keyspace, s.TableKeyspace+"."+s.Table)
	}
	return nil
}

// indexedTable returns the table of k holding the named index, or nil.
func indexedTable(k *storage.KeyspaceDef, name string) *storage.TableDef {
	for _, t := range k.Tables {
		for _, ix := range t.Indexes {
			if ix.Name == name {
				return t
			}
		}
	}
	return nil
}

var (
	nonWord  = regexp.MustCompile(`\W`)
	wordName = regexp.MustCompile(`^\w+$`) // IndexMetadata.isNameValid
)

// defaultIndexName is Cassandra's IndexMetadata.generateDefaultIndexName
// made unique in k as KeyspaceMetadata.findAvailableIndexName does.
func defaultIndexName(k *storage.KeyspaceDef, table, column string) string {
	base := nonWord.ReplaceAllString(table+"_"+column+"_idx", "")
	name := base
	for i := 1; indexedTable(k, name) != nil; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return name
}

func (sc *Schema) createIndex(ks string, k *storage.KeyspaceDef, s *statements.CreateIndex, ch *Change) (*edit, error) {
	if k == nil {
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	}
	old := k.Tables[s.Table]
	if old == nil {
		return nil, cqlerr.Invalidf("Table '%s' doesn't exist", s.Table)
	}
	if s.Name != "" && indexedTable(k, s.Name) != nil {
		if s.IfNotExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Index '%s' already exists", s.Name)
	}
	for _, cd := range old.Columns {
		if cd.Type == "counter" {
			return nil, cqlerr.Invalidf("Secondary indexes on counter tables aren't supported")
		}
	}
	if len(s.Targets) == 0 {
		return nil, cqlerr.Invalidf("Only CUSTOM indexes can be created without specifying a target column")
	}
	if len(s.Targets) > 1 {
		return nil, cqlerr.Invalidf("Only CUSTOM indexes support multiple columns")
	}
	t, err := compile(old, k)
	if err != nil {
		return nil, err
	}
	ix, err := indexTarget(t, s.Targets[0])
	if err != nil {
		return nil, err
	}
	ix.Name = s.Name
	if ix.Name == "" {
		ix.Name = defaultIndexName(k, s.Table, ix.Column)
	}
	for _, e := range old.Indexes {
		if e.Target == ix.Target {
			if s.IfNotExists {
				return unchanged(), nil
			}
			return nil, cqlerr.Invalidf("Index %s is a duplicate of existing index %s", ix.Name, e.Name)
		}
	}
	if !wordName.MatchString(ix.Name) {
		return nil, cqlerr.ConfigErrorf("Illegal index name %s", ix.Name)
	}
	// The index is in the schema (so writes index themselves) before the
	// rows already written are indexed; until then it is marked building
	// and queries scan the table.
	ix.Building = true
	def := *old
	def.Indexes = append(append([]storage.IndexDef(nil), old.Indexes...), ix)
	return change(changed(primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, ks, s.Table), func() error {
		if err := sc.catalog.ReplaceTable(&def); err != nil {
			return fmt.Errorf("create index %s.%s: %w", ks, ix.Name, err)
		}
		sc.data.WaitApplies()
		// The build is this node's alone: when it fails the index stays,
		// building, as on the nodes where it succeeds, so every node keeps
		// the same indexes. Queries scan the table until a restart builds
		// it, as Cassandra's index builds are local and retried.
		if err := sc.buildIndex(&def, ix.Name, ch.now()); err != nil {
			sc.log.Error("cannot build a new index; it answers queries by scanning until the node restarts", "index", ks+"."+ix.Name, "err", err)
		}
		return nil
	}), nil
}

// indexTarget checks a target as CreateIndexStatement.validateIndexTarget
// does and returns the index it makes (without its name).
func indexTarget(t *table, tg statements.IndexTarget) (storage.IndexDef, error) {
	i, ok := t.byName[tg.Column]
	if !ok {
		return storage.IndexDef{}, cqlerr.Invalidf("Column '%s' doesn't exist", tg.Column)
	}
	col := &t.cols[i]
	name := col.def.Name
	kind := tg.Kind
	if kind == "" && col.isCollection() {
		kind = "values"
	}
	if strings.Contains(col.def.Type, "duration") {
		switch {
		case col.isCollection():
			return storage.IndexDef{}, cqlerr.Invalidf("Secondary indexes are not supported on collections containing durations")
		case col.typ.Code() == primitive.DataTypeCodeTuple:
			return storage.IndexDef{}, cqlerr.Invalidf("Secondary indexes are not supported on tuples containing durations")
		case col.typ.Code() == primitive.DataTypeCodeDuration:
			return storage.IndexDef{}, cqlerr.Invalidf("Secondary indexes are not supported on duration columns")
		}
	}
	if col.def.Kind == storage.KindPartitionKey && len(t.st.PartitionTypes) == 1 {
		return storage.IndexDef{}, cqlerr.Invalidf("Cannot create secondary index on the only partition key column %s", name)
	}
	frozenColl := col.isCollection() && col.frozen
	switch {
	case frozenColl && kind != "full":
		return storage.IndexDef{}, cqlerr.Invalidf("Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully indexed by using the 'full(%s)' modifier", kind, name, name)
	case !frozenColl && kind == "full":
		return storage.IndexDef{}, cqlerr.Invalidf("full() indexes can only be created on frozen collections")
	case !col.isCollection() && kind != "":
		return storage.IndexDef{}, cqlerr.Invalidf("Cannot create %s() index on %s. Non-collection columns only support simple indexes", kind, name)
	case (kind == "keys" || kind == "entries") && !(col.typ.Code() == primitive.DataTypeCodeMap && !col.frozen):
		return storage.IndexDef{}, cqlerr.Invalidf("Cannot create index on %s of column %s with non-map type", kind, name)
	case col.multiCellUDT() != nil:
		return storage.IndexDef{}, cqlerr.Invalidf("Cannot create index on non-frozen UDT column %s", name)
	case col.multiCell():
		// The elements of a non-frozen collection, for CONTAINS (values),
		// CONTAINS KEY (keys) and m[key] = value (entries).
		return storage.IndexDef{Column: name, Target: kind + "(" + cqlName(name) + ")", Elements: kind}, nil
	}
	target := cqlName(name)
	if kind == "full" {
		target = "full(" + target + ")"
	}
	return storage.IndexDef{Column: name, Target: target}, nil
}

var plainName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// cqlName is a column name as CQL text spells it: quoted unless it is a
// plain lower-case identifier.
func cqlName(s string) string {
	if plainName.MatchString(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func (sc *Schema) dropIndex(ks string, k *storage.KeyspaceDef, s *statements.DropIndex) (*edit, error) {
	var old *storage.TableDef
	if k != nil {
		old = indexedTable(k, s.Name)
	}
	if old == nil {
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Index '%s.%s' doesn't exist'", ks, s.Name)
	}
	def := *old
	def.Indexes = nil
	for _, ix := range old.Indexes {
		if ix.Name != s.Name {
			def.Indexes = append(def.Indexes, ix)
		}
	}
	ot, err := compile(old, k)
	if err != nil {
		return nil, fmt.Errorf("drop index %s.%s: %w", ks, s.Name, err)
	}
	return change(changed(primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, ks, old.Name), func() error {
		if err := sc.catalog.ReplaceTable(&def); err != nil {
			return fmt.Errorf("drop index %s.%s: %w", ks, s.Name, err)
		}
		if it := ot.st.IndexTable(s.Name); it != nil {
			if err := sc.data.Truncate(it); err != nil {
				sc.log.Error("cannot remove the entries of a dropped index", "index", ks+"."+s.Name, "err", err)
			}
		}
		return nil
	}), nil
}

// buildIndex indexes the rows of def (current in the catalog) for its
// building index name as of now, then marks the index built.
// REQUIRES: sc.mu held.
func (sc *Schema) buildIndex(def *storage.TableDef, name string, now time.Time) error {
	t, err := compile(def, sc.catalog.Current().Keyspace(def.Keyspace))
	if err == nil {
		err = sc.data.BuildIndex(t.st, name, int32(now.Unix()))
	}
	if err == nil {
		built := *def
		built.Indexes = append([]storage.IndexDef(nil), def.Indexes...)
		for i := range built.Indexes {
			if built.Indexes[i].Name == name {
				built.Indexes[i].Building = false
			}
		}
		err = sc.catalog.ReplaceTable(&built)
	}
	if err != nil {
		return fmt.Errorf("build index %s.%s: %w", def.Keyspace, name, err)
	}
	return nil
}

// FinishIndexBuilds builds the indexes a crash left building. It runs
// before the node serves, so no write races with it.
func (sc *Schema) FinishIndexBuilds(now time.Time) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, k := range sc.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for _, ix := range t.Indexes {
				if !ix.Building {
					continue
				}
				sc.log.Info("building an index a restart interrupted", "index", k.Name+"."+ix.Name)
				if err := sc.buildIndex(sc.catalog.Current().Table(k.Name, t.Name), ix.Name, now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
