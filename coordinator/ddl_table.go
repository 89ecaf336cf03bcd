package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/functions"
	"github.com/cqld/cqld/storage"
)

// createTablePlan is CREATE TABLE, validated into a definition.
type createTablePlan struct {
	noMarkers
	def         *storage.TableDef
	ifNotExists bool
}

func resolveKeyspace(ks, session string) (string, error) {
	if ks != "" {
		return ks, nil
	}
	if session == "" {
		return "", invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return session, nil
}

func (c *Coordinator) analyzeCreateTable(s *statements.CreateTable, session string) (plan, error) {
	ks, err := resolveKeyspace(s.Keyspace, session)
	if err != nil {
		return nil, err
	}
	if err := userModifiable(ks); err != nil {
		return nil, err
	}
	if !keyspaceNameRE.MatchString(s.Table) {
		return nil, invalidf("Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", s.Table)
	}
	if s.CompactStorage {
		return nil, invalidf("Compact tables are not allowed in Cassandra starting with 4.0 version.")
	}
	switch {
	case s.PrimaryKeys == 0:
		return nil, invalidf("No PRIMARY KEY specifed for table '%s' (exactly one required)", s.Table)
	case s.PrimaryKeys > 1:
		return nil, invalidf("Multiple PRIMARY KEY specified for table '%s' (exactly one required)", s.Table)
	}
	def := &storage.TableDef{Keyspace: ks, Name: s.Table, Options: storage.DefaultTableOptions()}
	copy(def.ID[:], functions.NewTimeUUID(time.Now()))
	k := c.catalog.Current().Keyspace(ks)
	if k == nil {
		return nil, invalidf("Keyspace '%s' doesn't exist", ks)
	}
	lookup := typeLookup(k)
	declared := map[string]statements.ColumnDef{}
	resolved := map[string]colInfo{}
	for _, cd := range s.Columns {
		if _, dup := declared[cd.Name]; dup {
			return nil, invalidf("Duplicate column '%s' declaration for table '%s'", cd.Name, s.Table)
		}
		ci, err := columnType(&cd, k, lookup)
		if err != nil {
			return nil, err
		}
		declared[cd.Name] = cd
		resolved[cd.Name] = ci
	}
	order := map[string]string{}
	for i, o := range s.ClusteringOrder {
		if i >= len(s.Clustering) || s.Clustering[i] != o.Column {
			if !contains(s.Clustering, o.Column) {
				return nil, invalidf("Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive")
			}
			return nil, invalidf("The order of columns in the CLUSTERING ORDER directive must be the one of the clustering key")
		}
		order[o.Column] = map[bool]string{true: "desc", false: "asc"}[o.Desc]
	}
	kinds := map[string]string{}
	for _, key := range []struct {
		names []string
		kind  string
	}{{s.PartitionKey, storage.KindPartitionKey}, {s.Clustering, storage.KindClustering}} {
		for i, name := range key.names {
			cd, ok := declared[name]
			if !ok {
				return nil, invalidf("Unknown column '%s' referenced in PRIMARY KEY for table '%s'", name, s.Table)
			}
			if err := checkKeyColumn(cd, resolved[name]); err != nil {
				return nil, err
			}
			if _, dup := kinds[name]; dup {
				return nil, invalidf("Duplicate column '%s' in PRIMARY KEY", name)
			}
			kinds[name] = key.kind
			o := "none"
			if key.kind == storage.KindClustering {
				if o = order[name]; o == "" {
					o = "asc"
				}
			}
			def.Columns = append(def.Columns, storage.ColumnDef{Name: name, Type: cd.Type, Kind: key.kind, Position: i, Order: o})
		}
	}
	for _, cd := range s.Columns {
		if _, isKey := kinds[cd.Name]; isKey {
			if cd.Static {
				return nil, invalidf("Static column %s cannot be part of the PRIMARY KEY", cd.Name)
			}
			continue
		}
		kind := storage.KindRegular
		if cd.Static {
			if len(s.Clustering) == 0 {
				return nil, invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
			}
			kind = storage.KindStatic
		}
		def.Columns = append(def.Columns, storage.ColumnDef{Name: cd.Name, Type: declared[cd.Name].Type, Kind: kind, Position: -1, Order: "none"})
	}
	storage.SortColumns(def.Columns)
	if err := applyTableProperties(&def.Options, s.Properties); err != nil {
		return nil, err
	}
	counters, others := 0, 0
	for _, cd := range def.Columns {
		if cd.Kind == storage.KindPartitionKey || cd.Kind == storage.KindClustering {
			continue
		}
		if cd.Type == "counter" {
			counters++
		} else {
			others++
		}
	}
	if counters > 0 && others > 0 {
		return nil, invalidf("Cannot mix counter and non counter columns in the same table")
	}
	if counters > 0 && def.Options.DefaultTimeToLive > 0 {
		return nil, invalidf("Cannot set default_time_to_live on a table with counters")
	}
	if _, err := compileTable(def, k); err != nil {
		return nil, invalidf("%v", err)
	}
	return &createTablePlan{def: def, ifNotExists: s.IfNotExists}, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// columnType resolves a column's type in keyspace k, refuses the types
// Cassandra refuses for a column, and rewrites cd.Type as system_schema
// shows it (user types by bare name, frozen when nested).
func columnType(cd *statements.ColumnDef, k *storage.KeyspaceDef, lookup statements.UserTypeLookup) (colInfo, error) {
	typ, frozen, err := resolveType(cd.Type, k, lookup)
	if err != nil {
		return colInfo{}, err
	}
	if cd.Type, err = statements.NormalizeType(cd.Type); err != nil {
		return colInfo{}, invalidf("%v", err)
	}
	ci := colInfo{typ: typ, frozen: frozen}
	if ut := ci.multiCellUDT(); ut != nil {
		for _, ft := range k.Types[ut.Name].FieldTypes {
			if sh, err := statements.ShapeOf(ft); err == nil && sh.Collection && !sh.Frozen {
				return colInfo{}, invalidf("Non-frozen UDTs with nested non-frozen collections are not supported")
			}
		}
	}
	return ci, nil
}

// checkKeyColumn refuses types Cassandra does not allow in a primary key.
func checkKeyColumn(cd statements.ColumnDef, ci colInfo) error {
	switch ci.typ.Code() {
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		if !ci.frozen {
			return invalidf("Invalid non-frozen collection type %s for PRIMARY KEY column '%s'", cd.Type, cd.Name)
		}
	case primitive.DataTypeCodeUdt:
		if !ci.frozen {
			// Cassandra names the type ks.name, quoted as one identifier.
			ut := ci.typ.(*datatype.UserDefined)
			return invalidf("Invalid non-frozen user-defined type \"%s.%s\" for PRIMARY KEY column '%s'", ut.Keyspace, ut.Name, cd.Name)
		}
	case primitive.DataTypeCodeDuration:
		return invalidf("duration type is not supported for PRIMARY KEY column '%s'", cd.Name)
	case primitive.DataTypeCodeCounter:
		return invalidf("counter type is not supported for PRIMARY KEY column '%s'", cd.Name)
	}
	return nil
}

// applyTableProperties sets the WITH options Cassandra 4.0 accepts.
func applyTableProperties(o *storage.TableOptions, props statements.Properties) error {
	num := func(name string, v statements.PropertyValue) (float64, error) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if err != nil || v.Map != nil {
			return 0, configErrorf("Invalid value for property '%s': %s", name, v.Value)
		}
		return f, nil
	}
	integer := func(name string, v statements.PropertyValue) (int32, error) {
		n, err := strconv.ParseInt(v.Value, 10, 32)
		if err != nil || v.Map != nil {
			return 0, configErrorf("Invalid value for property '%s': %s", name, v.Value)
		}
		return int32(n), nil
	}
	for name, v := range props {
		var err error
		switch name {
		case "comment":
			o.Comment = v.Value
		case "default_time_to_live":
			o.DefaultTimeToLive, err = integer(name, v)
			if err == nil && (o.DefaultTimeToLive < 0 || o.DefaultTimeToLive > 630720000) {
				err = configErrorf("default_time_to_live must be greater than or equal to 0 and lesser than or equal to 630720000 (got %d)", o.DefaultTimeToLive)
			}
		case "gc_grace_seconds":
			o.GCGraceSeconds, err = integer(name, v)
			if err == nil && o.GCGraceSeconds < 0 {
				err = configErrorf("gc_grace_seconds must be greater than or equal to 0 (got %d)", o.GCGraceSeconds)
			}
		case "bloom_filter_fp_chance":
			o.BloomFilterFPChance, err = num(name, v)
		case "crc_check_chance":
			o.CRCCheckChance, err = num(name, v)
		case "max_index_interval":
			o.MaxIndexInterval, err = integer(name, v)
		case "min_index_interval":
			o.MinIndexInterval, err = integer(name, v)
		case "memtable_flush_period_in_ms":
			o.MemtableFlushPeriodInMs, err = integer(name, v)
		case "speculative_retry":
			o.SpeculativeRetry = v.Value
		case "additional_write_policy":
			o.AdditionalWritePolicy = v.Value
		case "read_repair":
			o.ReadRepair = strings.ToUpper(v.Value)
		case "caching":
			if v.Map == nil {
				return configErrorf("Invalid value for property 'caching': must be a map")
			}
			o.Caching = mergeMap(o.Caching, v.Map)
		case "compaction":
			if v.Map == nil || v.Map["class"] == "" {
				return configErrorf("Missing sub-option 'class' for the 'compaction' option.")
			}
			o.Compaction = qualifyClass(v.Map, "org.apache.cassandra.db.compaction.")
		case "compression":
			if v.Map == nil {
				return configErrorf("Invalid value for property 'compression': must be a map")
			}
			o.Compression = qualifyClass(v.Map, "org.apache.cassandra.io.compress.")
		case "extensions", "cdc", "dclocal_read_repair_chance", "read_repair_chance":
			// accepted, not used by a single node
		default:
			return configErrorf("Unknown property '%s'", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func mergeMap(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func qualifyClass(m map[string]string, pkg string) map[string]string {
	out := mergeMap(nil, m)
	if c, ok := out["class"]; ok && !strings.Contains(c, ".") {
		out["class"] = pkg + c
	}
	return out
}

func (p *createTablePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.def.Keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		// The user types may have changed since the analysis.
		if k != nil {
			lookup := typeLookup(k)
			for _, col := range p.def.Columns {
				if _, _, err := resolveType(col.Type, k, lookup); err != nil {
					return nil, err
				}
			}
		}
		err := c.catalog.CreateTable(p.def)
		switch {
		case errors.Is(err, storage.ErrKeyspaceNotFound):
			return nil, invalidf("Keyspace '%s' doesn't exist", p.def.Keyspace)
		case errors.Is(err, storage.ErrTableExists):
			if p.ifNotExists {
				return &message.VoidResult{}, nil
			}
			return nil, &cqlError{Code: primitive.ErrorCodeAlreadyExists,
				Msg:      fmt.Sprintf("Cannot add already existing table \"%s\" to keyspace \"%s\"", p.def.Name, p.def.Keyspace),
				Keyspace: p.def.Keyspace, Table: p.def.Name}
		case err != nil:
			return nil, fmt.Errorf("create table %s.%s: %w", p.def.Keyspace, p.def.Name, err)
		}
		return c.tableChanged(primitive.SchemaChangeTypeCreated, p.def.Keyspace, p.def.Name), nil
	})
}

// dropTablePlan is DROP TABLE.
type dropTablePlan struct {
	noMarkers
	keyspace, table string
	ifExists        bool
}

func (p *dropTablePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		def, err := c.catalog.DropTable(p.keyspace, p.table)
		switch {
		case errors.Is(err, storage.ErrKeyspaceNotFound):
			if p.ifExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Keyspace '%s' doesn't exist", p.keyspace)
		case errors.Is(err, storage.ErrTableNotFound):
			if p.ifExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Table '%s.%s' doesn't exist", p.keyspace, p.table)
		case err != nil:
			return nil, fmt.Errorf("drop table %s.%s: %w", p.keyspace, p.table, err)
		}
		c.dropData(def, k)
		return c.tableChanged(primitive.SchemaChangeTypeDropped, p.keyspace, p.table), nil
	})
}

// dropData removes a dropped table's rows; k is its keyspace (for its
// user types). The table id is never reused, so a failure here leaves only
// unreachable data behind.
func (c *Coordinator) dropData(def *storage.TableDef, k *storage.KeyspaceDef) {
	ti, err := compileTable(def, k)
	if err == nil {
		err = c.engine.Truncate(ti.st)
	}
	if err != nil {
		c.log.Error("cannot remove the data of a dropped table", "table", def.Keyspace+"."+def.Name, "err", err)
	}
}

// truncatePlan is TRUNCATE.
type truncatePlan struct {
	noMarkers
	keyspace, table string
}

func (p *truncatePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	if err := userModifiable(p.keyspace); err != nil {
		return nil, err
	}
	t, err := c.userTable(p.keyspace, p.table)
	if err != nil {
		return nil, err
	}
	if err := c.engine.Truncate(t.st); err != nil {
		return nil, fmt.Errorf("truncate %s.%s: %w", p.keyspace, p.table, err)
	}
	return &message.VoidResult{}, nil
}

// tableChanged pushes the event for a table change and returns its result.
// REQUIRES: c.schemaMu held.
func (c *Coordinator) tableChanged(t primitive.SchemaChangeType, ks, table string) message.Message {
	c.opts.Publish(&message.SchemaChangeEvent{ChangeType: t, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: table})
	return &message.SchemaChangeResult{ChangeType: t, Target: primitive.SchemaChangeTargetTable, Keyspace: ks, Object: table}
}

// alterTablePlan is ALTER TABLE, applied to the definition current when it
// runs.
type alterTablePlan struct {
	noMarkers
	keyspace string
	s        *statements.AlterTable
}

func (p *alterTablePlan) run(_ context.Context, c *Coordinator, x *execution) (message.Message, error) {
	s := p.s
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		var old *storage.TableDef
		if k != nil {
			old = k.Tables[s.Table]
		}
		if old == nil {
			if s.IfExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Table '%s.%s' doesn't exist", p.keyspace, s.Table)
		}
		def := *old
		def.Columns = append([]storage.ColumnDef(nil), old.Columns...)
		def.Dropped = map[string]storage.DroppedColumn{}
		for k, v := range old.Dropped {
			def.Dropped[k] = v
		}
		hasClustering := len(old.Key(storage.KindClustering)) > 0
		lookup := typeLookup(k)
		changed := false
		switch s.Op {
		case statements.AlterTableAdd:
			for _, cd := range s.Columns {
				if def.Column(cd.Name) != nil {
					if s.IfColumnNotExists {
						continue
					}
					return nil, invalidf("Column with name '%s' already exists", cd.Name)
				}
				if _, err := columnType(&cd, k, lookup); err != nil {
					return nil, err
				}
				if d, ok := def.Dropped[cd.Name]; ok && d.Type != cd.Type {
					return nil, invalidf("Cannot re-add previously dropped column '%s' of type %s, incompatible with previous type %s", cd.Name, cd.Type, d.Type)
				}
				kind := storage.KindRegular
				if cd.Static {
					if !hasClustering {
						return nil, invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
					}
					kind = storage.KindStatic
				}
				def.Columns = append(def.Columns, storage.ColumnDef{Name: cd.Name, Type: cd.Type, Kind: kind, Position: -1, Order: "none"})
				changed = true
			}
		case statements.AlterTableDrop:
			for _, name := range s.Drop {
				col := def.Column(name)
				if col == nil {
					if s.IfColumnExists {
						continue
					}
					return nil, invalidf("Column %s was not found in table %s", name, s.Table)
				}
				if col.Kind == storage.KindPartitionKey || col.Kind == storage.KindClustering {
					return nil, invalidf("Cannot drop PRIMARY KEY column %s", name)
				}
				if ix := old.IndexOn(col.Name); ix != nil {
					return nil, invalidf("Cannot drop column %s because it has dependent secondary indexes (%s)", col.Name, ix.Name)
				}
				ts := serverTimestamp(x.now())
				if s.DropTimestamp != nil {
					n, err := strconv.ParseInt(s.DropTimestamp.Text, 10, 64)
					if err != nil {
						return nil, invalidf("Invalid timestamp %s", s.DropTimestamp.Text)
					}
					ts = n
				}
				def.Dropped[name] = storage.DroppedColumn{Type: col.Type, Time: ts}
				cols := def.Columns[:0]
				for _, cd := range def.Columns {
					if cd.Name != name {
						cols = append(cols, cd)
					}
				}
				def.Columns = cols
				changed = true
			}
		case statements.AlterTableRename:
			for _, r := range s.Renames {
				col := def.Column(r.From)
				if col == nil {
					if s.IfColumnExists {
						continue
					}
					return nil, invalidf("Column %s was not found in table %s", r.From, s.Table)
				}
				if col.Kind != storage.KindPartitionKey && col.Kind != storage.KindClustering {
					return nil, invalidf("Cannot rename non PRIMARY KEY column %s", r.From)
				}
				if ix := old.IndexOn(col.Name); ix != nil {
					return nil, invalidf("Cannot rename column %s because it has dependent secondary indexes (%s)", col.Name, ix.Name)
				}
				if def.Column(r.To) != nil {
					return nil, invalidf("Cannot rename column %s to %s in table '%s'; another column with that name already exists", r.From, r.To, s.Table)
				}
				for i := range def.Columns {
					if def.Columns[i].Name == r.From {
						def.Columns[i].Name = r.To
					}
				}
				changed = true
			}
		case statements.AlterTableWith:
			opts := old.Options
			if err := applyTableProperties(&opts, s.Properties); err != nil {
				return nil, err
			}
			def.Options = opts
			changed = true
		case statements.AlterTableAlterType:
			return nil, invalidf("Altering column types is no longer supported")
		default:
			return nil, invalidf("This ALTER TABLE is not supported")
		}
		if !changed {
			return &message.VoidResult{}, nil
		}
		storage.SortColumns(def.Columns)
		if len(def.Dropped) == 0 {
			def.Dropped = nil
		}
		if _, err := compileTable(&def, k); err != nil {
			return nil, invalidf("%v", err)
		}
		if err := c.catalog.ReplaceTable(&def); err != nil {
			return nil, fmt.Errorf("alter table %s.%s: %w", p.keyspace, s.Table, err)
		}
		return c.tableChanged(primitive.SchemaChangeTypeUpdated, p.keyspace, s.Table), nil
	})
}
