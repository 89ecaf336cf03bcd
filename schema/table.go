package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/speculate"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// analyzeCreateTable validates CREATE TABLE s against schema cur into the
// table's definition, with the id id.
func (sc *Schema) analyzeCreateTable(cur *storage.Schema, s *statements.CreateTable, session string, id [16]byte) (*storage.TableDef, error) {
	ks, err := ResolveKeyspace(s.Keyspace, session)
	if err != nil {
		return nil, err
	}
	if err := sc.userModifiable(ks); err != nil {
		return nil, err
	}
	if !keyspaceNameRE.MatchString(s.Table) {
		return nil, cqlerr.Invalidf("Table name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", s.Table)
	}
	if s.CompactStorage {
		return nil, cqlerr.Invalidf("Compact tables are not allowed in Cassandra starting with 4.0 version.")
	}
	switch {
	case s.PrimaryKeys == 0:
		return nil, cqlerr.Invalidf("No PRIMARY KEY specifed for table '%s' (exactly one required)", s.Table)
	case s.PrimaryKeys > 1:
		return nil, cqlerr.Invalidf("Multiple PRIMARY KEY specified for table '%s' (exactly one required)", s.Table)
	}
	def := &storage.TableDef{Keyspace: ks, ID: id, Name: s.Table, Options: storage.DefaultTableOptions()}
	k := cur.Keyspace(ks)
	if k == nil {
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	}
	lookup := TypeLookup(k)
	declared := map[string]statements.ColumnDef{}
	resolved := map[string]column{}
	for _, cd := range s.Columns {
		if _, dup := declared[cd.Name]; dup {
			return nil, cqlerr.Invalidf("Duplicate column '%s' declaration for table '%s'", cd.Name, s.Table)
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
			if !slices.Contains(s.Clustering, o.Column) {
				return nil, cqlerr.Invalidf("Clustering key columns must exactly match columns in CLUSTERING ORDER BY directive")
			}
			return nil, cqlerr.Invalidf("The order of columns in the CLUSTERING ORDER directive must be the one of the clustering key")
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
				return nil, cqlerr.Invalidf("Unknown column '%s' referenced in PRIMARY KEY for table '%s'", name, s.Table)
			}
			if err := checkKeyColumn(cd, resolved[name]); err != nil {
				return nil, err
			}
			if _, dup := kinds[name]; dup {
				return nil, cqlerr.Invalidf("Duplicate column '%s' in PRIMARY KEY", name)
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
				return nil, cqlerr.Invalidf("Static column %s cannot be part of the PRIMARY KEY", cd.Name)
			}
			continue
		}
		kind := storage.KindRegular
		if cd.Static {
			if len(s.Clustering) == 0 {
				return nil, cqlerr.Invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
			}
			kind = storage.KindStatic
		}
		def.Columns = append(def.Columns, storage.ColumnDef{Name: cd.Name, Type: declared[cd.Name].Type, Kind: kind, Position: -1, Order: "none"})
	}
	storage.SortColumns(def.Columns)
	if err := applyTableProperties(&def.Options, s.Properties, true); err != nil {
		return nil, err
	}
	if v, ok := s.Properties["id"]; ok {
		// WITH ID, as DESCRIBE ... WITH INTERNALS prints it: the table
		// takes that id rather than its proposer's.
		u, err := primitive.ParseUuid(v.Value)
		if err != nil || v.Map != nil {
			return nil, cqlerr.ConfigErrorf("Invalid table id")
		}
		def.ID = *u
		for _, k := range cur.SortedKeyspaces() {
			for _, t := range k.SortedTables() {
				if t.ID == def.ID && (t.Keyspace != def.Keyspace || t.Name != def.Name) {
					return nil, cqlerr.ConfigErrorf("Cannot add table %s.%s: its id %s is table %s.%s's", def.Keyspace, def.Name, v.Value, t.Keyspace, t.Name)
				}
			}
		}
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
		return nil, cqlerr.Invalidf("Cannot mix counter and non counter columns in the same table")
	}
	if counters > 0 && def.Options.DefaultTimeToLive > 0 {
		return nil, cqlerr.Invalidf("Cannot set default_time_to_live on a table with counters")
	}
	if _, err := compile(def, k); err != nil {
		return nil, cqlerr.Invalidf("%v", err)
	}
	return def, nil
}

// columnType resolves a column's type in keyspace k, refuses the types
// Cassandra refuses for a column, and rewrites cd.Type as system_schema
// shows it (user types by bare name, frozen when nested).
func columnType(cd *statements.ColumnDef, k *storage.KeyspaceDef, lookup statements.UserTypeLookup) (column, error) {
	typ, frozen, err := resolveType(cd.Type, k, lookup)
	if err != nil {
		return column{}, err
	}
	if cd.Type, err = statements.NormalizeType(cd.Type); err != nil {
		return column{}, cqlerr.Invalidf("%v", err)
	}
	ci := column{typ: typ, frozen: frozen}
	if ut := ci.multiCellUDT(); ut != nil {
		for _, ft := range k.Types[ut.Name].FieldTypes {
			if sh, err := statements.ShapeOf(ft); err == nil && sh.Collection && !sh.Frozen {
				return column{}, cqlerr.Invalidf("Non-frozen UDTs with nested non-frozen collections are not supported")
			}
		}
	}
	return ci, nil
}

// checkKeyColumn refuses types Cassandra does not allow in a primary key.
func checkKeyColumn(cd statements.ColumnDef, ci column) error {
	switch ci.typ.Code() {
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		if !ci.frozen {
			return cqlerr.Invalidf("Invalid non-frozen collection type %s for PRIMARY KEY column '%s'", cd.Type, cd.Name)
		}
	case primitive.DataTypeCodeUdt:
		if !ci.frozen {
			// Cassandra names the type ks.name, quoted as one identifier.
			ut := ci.typ.(*datatype.UserDefined)
			return cqlerr.Invalidf("Invalid non-frozen user-defined type \"%s.%s\" for PRIMARY KEY column '%s'", ut.Keyspace, ut.Name, cd.Name)
		}
	case primitive.DataTypeCodeDuration:
		return cqlerr.Invalidf("duration type is not supported for PRIMARY KEY column '%s'", cd.Name)
	case primitive.DataTypeCodeCounter:
		return cqlerr.Invalidf("counter type is not supported for PRIMARY KEY column '%s'", cd.Name)
	}
	return nil
}

// applyTableProperties sets the WITH options Cassandra 4.0 accepts, of a
// table being created or altered.
func applyTableProperties(o *storage.TableOptions, props statements.Properties, creating bool) error {
	num := func(name string, v statements.PropertyValue) (float64, error) {
		f, err := strconv.ParseFloat(v.Value, 64)
		if err != nil || v.Map != nil {
			return 0, cqlerr.ConfigErrorf("Invalid value for property '%s': %s", name, v.Value)
		}
		return f, nil
	}
	integer := func(name string, v statements.PropertyValue) (int32, error) {
		n, err := strconv.ParseInt(v.Value, 10, 32)
		if err != nil || v.Map != nil {
			return 0, cqlerr.ConfigErrorf("Invalid value for property '%s': %s", name, v.Value)
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
				err = cqlerr.ConfigErrorf("default_time_to_live must be greater than or equal to 0 and lesser than or equal to 630720000 (got %d)", o.DefaultTimeToLive)
			}
		case "gc_grace_seconds":
			o.GCGraceSeconds, err = integer(name, v)
			if err == nil && o.GCGraceSeconds < 0 {
				err = cqlerr.ConfigErrorf("gc_grace_seconds must be greater than or equal to 0 (got %d)", o.GCGraceSeconds)
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
			o.SpeculativeRetry, err = retryPolicy(v)
		case "additional_write_policy":
			o.AdditionalWritePolicy, err = retryPolicy(v)
		case "read_repair":
			o.ReadRepair = strings.ToUpper(v.Value)
		case "caching":
			if v.Map == nil {
				return cqlerr.ConfigErrorf("Invalid value for property 'caching': must be a map")
			}
			o.Caching = mergeMap(o.Caching, v.Map)
		case "compaction":
			if v.Map == nil || v.Map["class"] == "" {
				return cqlerr.ConfigErrorf("Missing sub-option 'class' for the 'compaction' option.")
			}
			o.Compaction = qualifyClass(v.Map, "org.apache.cassandra.db.compaction.")
		case "compression":
			if v.Map == nil {
				return cqlerr.ConfigErrorf("Invalid value for property 'compression': must be a map")
			}
			o.Compression = qualifyClass(v.Map, "org.apache.cassandra.io.compress.")
		case "id":
			if !creating {
				return cqlerr.ConfigErrorf("Cannot alter table id.")
			}
		case "extensions", "cdc", "dclocal_read_repair_chance", "read_repair_chance":
			// accepted, not used by a single node
		default:
			return cqlerr.ConfigErrorf("Unknown property '%s'", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// retryPolicy is a speculative_retry or additional_write_policy value as
// Cassandra stores it (99PERCENTILE is kept as 99p), refused with its
// words when it does not parse.
func retryPolicy(v statements.PropertyValue) (string, error) {
	p, err := speculate.Parse(v.Value)
	if err != nil {
		return "", err
	}
	return p.String(), nil
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

// createTable adds def, which analyzeCreateTable made against cur.
func (sc *Schema) createTable(cur *storage.Schema, def *storage.TableDef, ifNotExists bool) (*edit, error) {
	if cur.Table(def.Keyspace, def.Name) != nil {
		if ifNotExists {
			return unchanged(), nil
		}
		return nil, &cqlerr.Error{Code: primitive.ErrorCodeAlreadyExists,
			Msg:      fmt.Sprintf("Cannot add already existing table \"%s\" to keyspace \"%s\"", def.Name, def.Keyspace),
			Keyspace: def.Keyspace, Table: def.Name}
	}
	return change(changed(primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetTable, def.Keyspace, def.Name), func() error {
		if err := sc.catalog.CreateTable(def); err != nil {
			return fmt.Errorf("create table %s.%s: %w", def.Keyspace, def.Name, err)
		}
		return nil
	}), nil
}

// errNoView is Cassandra's answer to DROP or ALTER MATERIALIZED VIEW of a
// view that does not exist, as every view here: cqld has none.
func errNoView(ks, name string) error {
	return cqlerr.Invalidf("Materialized view '%s.%s' doesn't exist", ks, name)
}

func (sc *Schema) dropTable(ks string, k *storage.KeyspaceDef, s *statements.DropTable) (*edit, error) {
	switch {
	case s.View:
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, errNoView(ks, s.Table)
	case k == nil:
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", ks)
	case k.Tables[s.Table] == nil:
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Table '%s.%s' doesn't exist", ks, s.Table)
	}
	return change(changed(primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetTable, ks, s.Table), func() error {
		def, err := sc.catalog.DropTable(ks, s.Table)
		if err != nil {
			return fmt.Errorf("drop table %s.%s: %w", ks, s.Table, err)
		}
		sc.dropData(def, k)
		return nil
	}), nil
}

// dropData removes a dropped table's rows; k is its keyspace (for its
// user types). The table id is never reused, so a failure here leaves only
// unreachable data behind.
func (sc *Schema) dropData(def *storage.TableDef, k *storage.KeyspaceDef) {
	t, err := compile(def, k)
	if err == nil {
		err = sc.data.Truncate(t.st)
	}
	if err != nil {
		sc.log.Error("cannot remove the data of a dropped table", "table", def.Keyspace+"."+def.Name, "err", err)
	}
}

// alterTable applies ALTER TABLE s to the definition current in k, with
// the change's time for the columns it drops.
func (sc *Schema) alterTable(ks string, k *storage.KeyspaceDef, s *statements.AlterTable, ch *Change) (*edit, error) {
	if s.View {
		return nil, errNoView(ks, s.Table)
	}
	var old *storage.TableDef
	if k != nil {
		old = k.Tables[s.Table]
	}
	if old == nil {
		if s.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Table '%s.%s' doesn't exist", ks, s.Table)
	}
	def := *old
	def.Columns = append([]storage.ColumnDef(nil), old.Columns...)
	def.Dropped = map[string]storage.DroppedColumn{}
	for k, v := range old.Dropped {
		def.Dropped[k] = v
	}
	hasClustering := len(old.Key(storage.KindClustering)) > 0
	lookup := TypeLookup(k)
	altered := false
	switch s.Op {
	case statements.AlterTableAdd:
		counter := old.IsCounter()
		for _, cd := range s.Columns {
			if def.Column(cd.Name) != nil {
				if s.IfColumnNotExists {
					continue
				}
				return nil, cqlerr.Invalidf("Column with name '%s' already exists", cd.Name)
			}
			if _, err := columnType(&cd, k, lookup); err != nil {
				return nil, err
			}
			kind := storage.KindRegular
			if cd.Static {
				if !hasClustering {
					return nil, cqlerr.Invalidf("Static columns are only useful (and thus allowed) if the table has at least one clustering column")
				}
				kind = storage.KindStatic
			}
			if d, ok := def.Dropped[cd.Name]; ok {
				if d.Type != cd.Type {
					return nil, cqlerr.Invalidf("Cannot re-add previously dropped column '%s' of type %s, incompatible with previous type %s", cd.Name, cd.Type, d.Type)
				}
				if counter {
					return nil, cqlerr.Invalidf("Cannot re-add previously dropped counter column %s", cd.Name)
				}
			}
			def.Columns = append(def.Columns, storage.ColumnDef{Name: cd.Name, Type: cd.Type, Kind: kind, Position: -1, Order: "none"})
			altered = true
		}
	case statements.AlterTableDrop:
		for _, name := range s.Drop {
			col := def.Column(name)
			if col == nil {
				if s.IfColumnExists {
					continue
				}
				return nil, cqlerr.Invalidf("Column %s was not found in table %s", name, s.Table)
			}
			if col.Kind == storage.KindPartitionKey || col.Kind == storage.KindClustering {
				return nil, cqlerr.Invalidf("Cannot drop PRIMARY KEY column %s", name)
			}
			if ix := old.IndexOn(col.Name); ix != nil {
				return nil, cqlerr.Invalidf("Cannot drop column %s because it has dependent secondary indexes (%s)", col.Name, ix.Name)
			}
			ts := ch.Time
			if s.DropTimestamp != nil {
				n, err := strconv.ParseInt(s.DropTimestamp.Text, 10, 64)
				if err != nil {
					return nil, cqlerr.Invalidf("Invalid timestamp %s", s.DropTimestamp.Text)
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
			altered = true
		}
	case statements.AlterTableRename:
		for _, r := range s.Renames {
			col := def.Column(r.From)
			if col == nil {
				if s.IfColumnExists {
					continue
				}
				return nil, cqlerr.Invalidf("Column %s was not found in table %s", r.From, s.Table)
			}
			if col.Kind != storage.KindPartitionKey && col.Kind != storage.KindClustering {
				return nil, cqlerr.Invalidf("Cannot rename non PRIMARY KEY column %s", r.From)
			}
			if ix := old.IndexOn(col.Name); ix != nil {
				return nil, cqlerr.Invalidf("Cannot rename column %s because it has dependent secondary indexes (%s)", col.Name, ix.Name)
			}
			if def.Column(r.To) != nil {
				return nil, cqlerr.Invalidf("Cannot rename column %s to %s in table '%s'; another column with that name already exists", r.From, r.To, s.Table)
			}
			for i := range def.Columns {
				if def.Columns[i].Name == r.From {
					def.Columns[i].Name = r.To
				}
			}
			altered = true
		}
	case statements.AlterTableWith:
		opts := old.Options
		if err := applyTableProperties(&opts, s.Properties, false); err != nil {
			return nil, err
		}
		def.Options = opts
		altered = true
	case statements.AlterTableAlterType:
		return nil, cqlerr.Invalidf("Altering column types is no longer supported")
	default:
		return nil, cqlerr.Invalidf("This ALTER TABLE is not supported")
	}
	if !altered {
		return unchanged(), nil
	}
	storage.SortColumns(def.Columns)
	if err := checkCounterColumns(&def, old.IsCounter()); err != nil {
		return nil, err
	}
	if len(def.Dropped) == 0 {
		def.Dropped = nil
	}
	if _, err := compile(&def, k); err != nil {
		return nil, cqlerr.Invalidf("%v", err)
	}
	return change(changed(primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetTable, ks, s.Table), func() error {
		if err := sc.catalog.ReplaceTable(&def); err != nil {
			return fmt.Errorf("alter table %s.%s: %w", ks, s.Table, err)
		}
		return nil
	}), nil
}

// checkCounterColumns makes Cassandra's TableMetadata.validate check of
// counter and other columns on an altered table: a counter table has
// only counters besides its key, any other table none.
func checkCounterColumns(def *storage.TableDef, counter bool) error {
	for _, kind := range []string{storage.KindStatic, storage.KindRegular} {
		for _, c := range def.Columns {
			if c.Kind != kind {
				continue
			}
			switch {
			case counter && c.Type != "counter":
				return cqlerr.ConfigErrorf("%s.%s: Cannot have a non counter column (\"%s\") in a counter table", def.Keyspace, def.Name, c.Name)
			case !counter && c.Type == "counter":
				return cqlerr.ConfigErrorf("%s.%s: Cannot have a counter column (\"%s\") in a non counter table", def.Keyspace, def.Name, c.Name)
			}
		}
	}
	return nil
}
