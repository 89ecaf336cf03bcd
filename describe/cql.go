package describe

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/statements/types"
	"github.com/cqld/cqld/storage"
)

// The CREATE statements DESCRIBE prints, as Cassandra 4.0's toCqlString
// methods print them (KeyspaceMetadata, TableMetadata with TableParams,
// UserType, IndexMetadata, UDFunction, UDAggregate), from the
// definitions system_schema shows.

const strategyPackage = "org.apache.cassandra.locator."

// keyspaceCQL is CREATE KEYSPACE for k, or for a virtual keyspace the
// comment Cassandra prints in its place.
func keyspaceCQL(k *storage.KeyspaceDef, virtual bool) string {
	var b builder
	if virtual {
		b.str("/*").nl().
			str("Warning: Keyspace ").name(k.Name).str(" is a virtual keyspace and cannot be recreated with CQL.").nl().
			str("Structure, for reference:").nl().
			str("VIRTUAL KEYSPACE ").name(k.Name).str(";").nl().
			str("*/")
		return b.String()
	}
	b.str("CREATE KEYSPACE ").name(k.Name).str(" WITH replication = ")
	replicationCQL(&b, k.Replication)
	b.str("  AND durable_writes = ").str(fmt.Sprint(k.DurableWrites)).str(";")
	return b.String()
}

// replicationCQL writes ReplicationParams.appendCqlTo: the class, short
// for Cassandra's own strategies, then the options in the order of the
// HashMap Cassandra keeps them in (made from the schema's map, sorted by
// key with the class, which is then taken out).
func replicationCQL(b *builder, repl map[string]string) {
	class := repl["class"]
	if short, ok := strings.CutPrefix(class, strategyPackage); ok && !strings.Contains(short, ".") {
		class = short
	}
	b.str("{'class': ").quoted(class)
	keys := make([]string, 0, len(repl))
	for k := range repl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = javaStringHash(k)
	}
	for _, i := range javaHashOrder(hashes, javaCopyCapacity(len(keys))) {
		if keys[i] != "class" {
			b.str(", ").quoted(keys[i]).str(": ").quoted(repl[keys[i]])
		}
	}
	b.str("}")
}

// tableName is ks.t as Cassandra's TableMetadata.toString writes it.
func tableName(keyspace, table string) string {
	return statements.MaybeQuote(keyspace) + "." + statements.MaybeQuote(table)
}

// tableCQL is CREATE TABLE for t (TableMetadata.appendCqlTo), with its id
// and dropped columns when internals is set; a virtual table is printed
// as the comment Cassandra prints in its place, with its comment as its
// only option.
func tableCQL(t *storage.TableDef, virtual, internals bool) string {
	var b builder
	create := "CREATE"
	if virtual {
		b.str("/*\nWarning: Table " + tableName(t.Keyspace, t.Name) + " is a virtual table and cannot be recreated with CQL.\nStructure, for reference:\n")
		create = "VIRTUAL"
	}
	b.str(create).str(" TABLE ").str(tableName(t.Keyspace, t.Name)).str(" (").nl().in()
	pk, ck, others := createOrder(t)
	single := len(pk) == 1 && len(ck) == 0
	cols := append(append(append([]storage.ColumnDef(nil), pk...), ck...), others...)
	dropped := droppedOrder(t)
	if !internals {
		dropped = nil
	}
	for i, c := range cols {
		if _, re := t.Dropped[c.Name]; internals && re {
			// A column added again after a drop comes in the ALTERs below.
			continue
		}
		column(&b, c.Name, c.Type, c.Kind == storage.KindStatic)
		if single && c.Kind == storage.KindPartitionKey {
			b.str(" PRIMARY KEY")
		}
		if !single || len(dropped) > 0 || i < len(cols)-1 {
			b.str(",")
		}
		b.nl()
	}
	for _, name := range dropped {
		column(&b, name, t.Dropped[name].Type, false)
		// Cassandra asks whether more live columns follow, which none
		// do: with a one-column primary key, dropped columns get no comma.
		if !single {
			b.str(",")
		}
		b.nl()
	}
	if !single {
		b.str("PRIMARY KEY (")
		if len(pk) > 1 {
			b.str("(")
			names(&b, pk)
			b.str(")")
		} else {
			b.name(pk[0].Name)
		}
		if len(ck) > 0 {
			b.str(", ")
			names(&b, ck)
		}
		b.str(")").nl()
	}
	b.out().str(")").str(" WITH ").in()
	if internals {
		id := primitive.UUID(t.ID)
		b.str("ID = ").str(id.String()).nl().str("AND ")
	}
	if len(ck) > 0 {
		b.str("CLUSTERING ORDER BY (")
		for i, c := range ck {
			if i > 0 {
				b.str(", ")
			}
			b.name(c.Name).str(" ").str(strings.ToUpper(c.Order))
		}
		b.str(")").nl().str("AND ")
	}
	if virtual {
		b.str("comment = ").quoted(t.Options.Comment)
	} else {
		tableOptions(&b, &t.Options)
	}
	b.str(";")
	b.out()
	if virtual {
		b.nl().str("*/")
	}
	for _, name := range dropped {
		b.nl().str("ALTER TABLE ").str(tableName(t.Keyspace, t.Name)).str(" DROP ").name(name).
			str(fmt.Sprintf(" USING TIMESTAMP %d;", t.Dropped[name].Time))
		if c := t.Column(name); c != nil {
			b.nl().str("ALTER TABLE ").str(tableName(t.Keyspace, t.Name)).str(" ADD ")
			column(&b, c.Name, c.Type, c.Kind == storage.KindStatic)
			b.str(";")
		}
	}
	return b.String()
}

func column(b *builder, name, typ string, static bool) {
	b.name(name).str(" ").str(typ)
	if static {
		b.str(" static")
	}
}

func names(b *builder, cols []storage.ColumnDef) {
	for i, c := range cols {
		if i > 0 {
			b.str(", ")
		}
		b.name(c.Name)
	}
}

// createOrder returns t's columns in Cassandra's create order: the
// partition key and clustering columns by position, then the static
// columns and the regular ones, each single-cell columns first and
// multi-cell ones (non-frozen collections and user types) after, by name.
func createOrder(t *storage.TableDef) (pk, ck, others []storage.ColumnDef) {
	for _, c := range t.Columns {
		switch c.Kind {
		case storage.KindPartitionKey:
			pk = append(pk, c)
		case storage.KindClustering:
			ck = append(ck, c)
		default:
			others = append(others, c)
		}
	}
	byPos := func(cs []storage.ColumnDef) {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Position < cs[j].Position })
	}
	byPos(pk)
	byPos(ck)
	rank := func(c storage.ColumnDef) int {
		r := 0
		if c.Kind == storage.KindRegular {
			r = 2
		}
		if multiCell(c.Type) {
			r++
		}
		return r
	}
	sort.SliceStable(others, func(i, j int) bool {
		if a, b := rank(others[i]), rank(others[j]); a != b {
			return a < b
		}
		return others[i].Name < others[j].Name
	})
	return pk, ck, others
}

// multiCell reports whether a column of type typ keeps its elements or
// fields as cells of their own: a non-frozen collection or user type.
func multiCell(typ string) bool {
	sh, err := statements.ShapeOf(typ)
	return err == nil && !sh.Frozen && (sh.Collection || sh.UDT)
}

// droppedOrder returns the names of t's dropped columns in the order
// Cassandra iterates them: the HashMap of the schema's rows (by name) put
// into the table's HashMap, keyed by the names' bytes.
func droppedOrder(t *storage.TableDef) []string {
	names := make([]string, 0, len(t.Dropped))
	for name := range t.Dropped {
		names = append(names, name)
	}
	sort.Strings(names)
	hashes := make([]int32, len(names))
	for i, n := range names {
		hashes[i] = javaBytesHash([]byte(n))
	}
	first := javaHashOrder(hashes, javaGrownCapacity(len(names)))
	reordered := make([]int32, len(first))
	for i, j := range first {
		reordered[i] = hashes[j]
	}
	out := make([]string, len(names))
	for i, j := range javaHashOrder(reordered, javaCopyCapacity(len(names))) {
		out[i] = names[first[j]]
	}
	return out
}

// tableOptions writes TableParams.appendCqlTo: every option, in
// alphabetical order. cqld has no change data capture: cdc is false.
func tableOptions(b *builder, o *storage.TableOptions) {
	b.str("additional_write_policy = ").quoted(o.AdditionalWritePolicy).nl().
		str("AND bloom_filter_fp_chance = ").str(types.JavaFloatString(o.BloomFilterFPChance, 64)).nl().
		str("AND caching = ").textMap(o.Caching, true).nl().
		str("AND cdc = false").nl().
		str("AND comment = ").quoted(o.Comment).nl().
		str("AND compaction = ").textMap(o.Compaction, true).nl().
		str("AND compression = ").textMap(o.Compression, true).nl().
		str("AND crc_check_chance = ").str(types.JavaFloatString(o.CRCCheckChance, 64)).nl().
		str(fmt.Sprintf("AND default_time_to_live = %d", o.DefaultTimeToLive)).nl()
	ext := make(map[string]string, len(o.Extensions))
	for k, v := range o.Extensions {
		ext[k] = "0x" + hex.EncodeToString(v)
	}
	b.str("AND extensions = ").textMap(ext, false).nl().
		str(fmt.Sprintf("AND gc_grace_seconds = %d", o.GCGraceSeconds)).nl().
		str(fmt.Sprintf("AND max_index_interval = %d", o.MaxIndexInterval)).nl().
		str(fmt.Sprintf("AND memtable_flush_period_in_ms = %d", o.MemtableFlushPeriodInMs)).nl().
		str(fmt.Sprintf("AND min_index_interval = %d", o.MinIndexInterval)).nl().
		str("AND read_repair = ").quoted(o.ReadRepair).nl().
		str("AND speculative_retry = ").quoted(o.SpeculativeRetry)
}

// indexCQL is CREATE INDEX for t's index ix (IndexMetadata.appendCqlTo).
func indexCQL(t *storage.TableDef, ix *storage.IndexDef) string {
	var b builder
	b.str("CREATE INDEX ").name(ix.Name).str(" ON ").str(tableName(t.Keyspace, t.Name)).
		str(" (").str(ix.Target).str(");")
	return b.String()
}

// typeCQL is CREATE TYPE for u (UserType.toCqlString).
func typeCQL(u *storage.TypeDef) string {
	var b builder
	b.str("CREATE TYPE ").name(u.Keyspace).str(".").name(u.Name).str(" (").nl().in()
	for i := range u.FieldNames {
		if i > 0 {
			b.str(",").nl()
		}
		b.name(u.FieldNames[i]).str(" ").str(u.FieldTypes[i])
	}
	b.nl().out().str(");")
	return b.String()
}

// functionType is a function's argument or return type as Cassandra's
// AbstractFunction.toCqlString writes it: a tuple, frozen by nature,
// without its frozen<>.
func functionType(t string) string {
	if inner, ok := strings.CutPrefix(t, "frozen<tuple<"); ok && strings.HasSuffix(inner, ">") {
		return "tuple<" + strings.TrimSuffix(inner, ">")
	}
	return t
}

func functionTypes(ts []string) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = functionType(t)
	}
	return strings.Join(out, ", ")
}

// functionCQL is CREATE FUNCTION for f (UDFunction.toCqlString).
func functionCQL(f *storage.FunctionDef) string {
	var b builder
	b.str("CREATE FUNCTION ").name(f.Keyspace).str(".").name(f.Name).str("(")
	for i := range f.ArgNames {
		if i > 0 {
			b.str(", ")
		}
		b.name(f.ArgNames[i]).str(" ").str(functionType(f.ArgTypes[i]))
	}
	b.str(")").nl().in()
	if f.CalledOnNullInput {
		b.str("CALLED")
	} else {
		b.str("RETURNS NULL")
	}
	b.str(" ON NULL INPUT").nl().
		str("RETURNS ").str(functionType(f.ReturnType)).nl().
		str("LANGUAGE ").str(f.Language).nl().
		str("AS $$").str(f.Body).str("$$;")
	return b.String()
}

// aggregateCQL is CREATE AGGREGATE for a (UDAggregate.toCqlString). Its
// state and final functions are quoted where needed, as Cassandra 5.0
// does: 4.0 wrote them bare, which does not recreate an aggregate whose
// function's name needs quotes.
func aggregateCQL(a *storage.AggregateDef) string {
	var b builder
	b.str("CREATE AGGREGATE ").name(a.Keyspace).str(".").name(a.Name).
		str("(").str(functionTypes(a.ArgTypes)).str(")").nl().in().
		str("SFUNC ").name(a.StateFunc).nl().
		str("STYPE ").str(functionType(a.StateType))
	if a.FinalFunc != "" {
		b.nl().str("FINALFUNC ").name(a.FinalFunc)
	}
	if a.InitCond != nil {
		b.nl().str("INITCOND ").str(*a.InitCond)
	}
	b.str(";")
	return b.String()
}
