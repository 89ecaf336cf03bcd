package coordinator

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// Secondary indexes (CREATE INDEX / DROP INDEX). An index lives in its
// table's definition (storage.TableDef.Indexes), so it is durable with the
// catalog and goes away with its table. A query on an indexed column is
// answered by a read of the table that checks every row's current value,
// so its answers are exact whatever was written, deleted or expired.

// createIndexPlan is CREATE INDEX, checked against the schema current
// when it runs.
type createIndexPlan struct {
	noMarkers
	keyspace string
	s        *statements.CreateIndex
}

// dropIndexPlan is DROP INDEX.
type dropIndexPlan struct {
	noMarkers
	keyspace, name string
	ifExists       bool
}

func (c *Coordinator) analyzeIndex(stmt statements.Statement, session string) (plan, error) {
	switch s := stmt.(type) {
	case *statements.CreateIndex:
		ks := s.TableKeyspace
		if ks == "" {
			ks = s.Keyspace
		}
		ks, err := resolveKeyspace(ks, session)
		if err != nil {
			return nil, err
		}
		if s.TableKeyspace != "" && s.Keyspace != "" && s.Keyspace != s.TableKeyspace {
			return nil, invalidf("Keyspace name '%s' doesn't match index name '%s'", s.Keyspace, s.TableKeyspace+"."+s.Table)
		}
		return &createIndexPlan{keyspace: ks, s: s}, nil
	case *statements.DropIndex:
		ks, err := resolveKeyspace(s.Keyspace, session)
		if err != nil {
			return nil, err
		}
		return &dropIndexPlan{keyspace: ks, name: s.Name, ifExists: s.IfExists}, nil
	}
	return nil, fmt.Errorf("coordinator: not an index statement: %T", stmt)
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

func (p *createIndexPlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	s := p.s
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		if k == nil {
			return nil, invalidf("Keyspace '%s' doesn't exist", p.keyspace)
		}
		old := k.Tables[s.Table]
		if old == nil {
			return nil, invalidf("Table '%s' doesn't exist", s.Table)
		}
		if s.Name != "" && indexedTable(k, s.Name) != nil {
			if s.IfNotExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Index '%s' already exists", s.Name)
		}
		for _, cd := range old.Columns {
			if cd.Type == "counter" {
				return nil, invalidf("Secondary indexes on counter tables aren't supported")
			}
		}
		if len(s.Targets) == 0 {
			return nil, invalidf("Only CUSTOM indexes can be created without specifying a target column")
		}
		if len(s.Targets) > 1 {
			return nil, invalidf("Only CUSTOM indexes support multiple columns")
		}
		t, err := compileTable(old, k)
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
					return &message.VoidResult{}, nil
				}
				return nil, invalidf("Index %s is a duplicate of existing index %s", ix.Name, e.Name)
			}
		}
		if !wordName.MatchString(ix.Name) {
			return nil, configErrorf("Illegal index name %s", ix.Name)
		}
		// The index is in the schema (so writes index themselves) before the
		// rows already written are indexed; until then it is marked building
		// and queries scan the table.
		ix.Building = true
		def := *old
		def.Indexes = append(append([]storage.IndexDef(nil), old.Indexes...), ix)
		if err := c.catalog.ReplaceTable(&def); err != nil {
			return nil, fmt.Errorf("create index %s.%s: %w", p.keyspace, ix.Name, err)
		}
		c.engine.WaitApplies()
		if err := c.buildIndex(&def, ix.Name, x.now()); err != nil {
			if rerr := c.catalog.ReplaceTable(old); rerr != nil {
				c.log.Error("cannot remove an index whose build failed", "index", p.keyspace+"."+ix.Name, "err", rerr)
			}
			return nil, err
		}
		return c.tableChanged(primitive.SchemaChangeTypeUpdated, p.keyspace, s.Table), nil
	})
}

// indexTarget checks a target as CreateIndexStatement.validateIndexTarget
// does and returns the index it makes (without its name).
func indexTarget(t *tableInfo, tg statements.IndexTarget) (storage.IndexDef, error) {
	_, col, err := t.column(tg.Column)
	if err != nil {
		return storage.IndexDef{}, invalidf("Column '%s' doesn't exist", tg.Column)
	}
	name := col.def.Name
	kind := tg.Kind
	if kind == "" && col.isCollection() {
		kind = "values"
	}
	if strings.Contains(col.def.Type, "duration") {
		switch {
		case col.isCollection():
			return storage.IndexDef{}, invalidf("Secondary indexes are not supported on collections containing durations")
		case col.typ.Code() == primitive.DataTypeCodeTuple:
			return storage.IndexDef{}, invalidf("Secondary indexes are not supported on tuples containing durations")
		case col.typ.Code() == primitive.DataTypeCodeDuration:
			return storage.IndexDef{}, invalidf("Secondary indexes are not supported on duration columns")
		}
	}
	if col.def.Kind == storage.KindPartitionKey && len(t.pk) == 1 {
		return storage.IndexDef{}, invalidf("Cannot create secondary index on the only partition key column %s", name)
	}
	frozenColl := col.isCollection() && col.frozen
	switch {
	case frozenColl && kind != "full":
		return storage.IndexDef{}, invalidf("Cannot create %s() index on frozen column %s. Frozen collections are immutable and must be fully indexed by using the 'full(%s)' modifier", kind, name, name)
	case !frozenColl && kind == "full":
		return storage.IndexDef{}, invalidf("full() indexes can only be created on frozen collections")
	case !col.isCollection() && kind != "":
		return storage.IndexDef{}, invalidf("Cannot create %s() index on %s. Non-collection columns only support simple indexes", kind, name)
	case (kind == "keys" || kind == "entries") && !(col.typ.Code() == primitive.DataTypeCodeMap && !col.frozen):
		return storage.IndexDef{}, invalidf("Cannot create index on %s of column %s with non-map type", kind, name)
	case col.multiCellUDT() != nil:
		return storage.IndexDef{}, invalidf("Cannot create index on non-frozen UDT column %s", name)
	case col.multiCell():
		// Cassandra indexes the elements of a non-frozen collection for
		// CONTAINS / CONTAINS KEY queries; cqld does not filter on them yet.
		return storage.IndexDef{}, invalidf("Indexes on non-frozen collection %s are not supported yet", name)
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

func (p *dropIndexPlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		var old *storage.TableDef
		if k != nil {
			old = indexedTable(k, p.name)
		}
		if old == nil {
			if p.ifExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Index '%s.%s' doesn't exist'", p.keyspace, p.name)
		}
		def := *old
		def.Indexes = nil
		for _, ix := range old.Indexes {
			if ix.Name != p.name {
				def.Indexes = append(def.Indexes, ix)
			}
		}
		ot, err := compileTable(old, k)
		if err != nil {
			return nil, fmt.Errorf("drop index %s.%s: %w", p.keyspace, p.name, err)
		}
		err = c.catalog.ReplaceTable(&def)
		if errors.Is(err, storage.ErrTableNotFound) {
			return nil, invalidf("Index '%s.%s' doesn't exist'", p.keyspace, p.name)
		}
		if err != nil {
			return nil, fmt.Errorf("drop index %s.%s: %w", p.keyspace, p.name, err)
		}
		if it := ot.st.IndexTable(p.name); it != nil {
			if err := c.engine.Truncate(it); err != nil {
				c.log.Error("cannot remove the entries of a dropped index", "index", p.keyspace+"."+p.name, "err", err)
			}
		}
		return c.tableChanged(primitive.SchemaChangeTypeUpdated, p.keyspace, old.Name), nil
	})
}

// indexRows are system_schema.indexes.
func (c *Coordinator) indexRows() []row {
	var rows []row
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for _, ix := range t.Indexes {
				rows = append(rows, row{
					"keyspace_name": t.Keyspace,
					"table_name":    t.Name,
					"index_name":    ix.Name,
					"kind":          "COMPOSITES",
					"options":       map[string]string{"target": ix.Target},
				})
			}
		}
	}
	return sortRows(rows, "keyspace_name", "table_name", "index_name")
}

// buildIndex indexes the rows of def (current in the catalog) for its
// building index name as of now, then marks the index built.
// REQUIRES: c.schemaMu held.
func (c *Coordinator) buildIndex(def *storage.TableDef, name string, now time.Time) error {
	t, err := compileTable(def, c.catalog.Current().Keyspace(def.Keyspace))
	if err == nil {
		err = c.engine.BuildIndex(t.st, name, int32(now.Unix()))
	}
	if err == nil {
		built := *def
		built.Indexes = append([]storage.IndexDef(nil), def.Indexes...)
		for i := range built.Indexes {
			if built.Indexes[i].Name == name {
				built.Indexes[i].Building = false
			}
		}
		err = c.catalog.ReplaceTable(&built)
	}
	if err != nil {
		return fmt.Errorf("build index %s.%s: %w", def.Keyspace, name, err)
	}
	return nil
}

// finishIndexBuilds builds the indexes a crash left building. It runs
// before the node serves, so no write races with it.
func (c *Coordinator) finishIndexBuilds() error {
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	for _, k := range c.catalog.Keyspaces() {
		for _, t := range k.SortedTables() {
			for _, ix := range t.Indexes {
				if !ix.Building {
					continue
				}
				c.log.Info("building an index a restart interrupted", "index", k.Name+"."+ix.Name)
				if err := c.buildIndex(c.catalog.Current().Table(k.Name, t.Name), ix.Name, c.opts.Now()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
