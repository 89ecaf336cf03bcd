package systables

import (
	"encoding/hex"
	"sort"
	"strings"
	"testing"
)

// cqlNativeTypes are the native type names Cassandra writes to
// system_schema.columns.type. "varchar" is left out on purpose: Cassandra
// always writes UTF8Type as "text".
var cqlNativeTypes = map[string]bool{
	"ascii": true, "bigint": true, "blob": true, "boolean": true, "counter": true,
	"date": true, "decimal": true, "double": true, "duration": true, "float": true,
	"inet": true, "int": true, "smallint": true, "text": true, "time": true,
	"timestamp": true, "timeuuid": true, "tinyint": true, "uuid": true, "varint": true,
}

// parseCQLType consumes one type spelled the way CQL3Type.toString spells it
// (arguments separated by ", ") from the front of s and returns what is left.
// ok is false if s does not start with a well-formed type.
func parseCQLType(s string) (rest string, ok bool) {
	for _, c := range []struct {
		prefix string
		args   int // -1: one or more
	}{
		{"frozen<", 1}, {"set<", 1}, {"list<", 1}, {"map<", 2}, {"tuple<", -1},
	} {
		if !strings.HasPrefix(s, c.prefix) {
			continue
		}
		rest = s[len(c.prefix):]
		for n := 0; ; n++ {
			if rest, ok = parseCQLType(rest); !ok {
				return "", false
			}
			if strings.HasPrefix(rest, ">") {
				if c.args >= 0 && n+1 != c.args {
					return "", false
				}
				return rest[1:], true
			}
			if !strings.HasPrefix(rest, ", ") {
				return "", false
			}
			rest = rest[2:]
		}
	}
	end := strings.IndexAny(s, ",>")
	if end < 0 {
		end = len(s)
	}
	if !cqlNativeTypes[s[:end]] {
		return "", false
	}
	return s[end:], true
}

func validCQLType(s string) bool {
	rest, ok := parseCQLType(s)
	return ok && rest == ""
}

func TestDefsCQLTypeValidator(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want bool
	}{
		{"text", true},
		{"frozen<map<text, text>>", true},
		{"map<uuid, blob>", true},
		{"frozen<list<text>>", true},
		{"tuple<int, text, frozen<set<inet>>>", true},
		{"varchar", false},
		{"map<text,text>", false},
		{"map<text>", false},
		{"set<text, text>", false},
		{"frozen<map<text, text>", false},
		{"list<text>>", false},
		{"Text", false},
		{"", false},
	} {
		if got := validCQLType(tc.typ); got != tc.want {
			t.Errorf("validCQLType(%q) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

func TestDefsTableShapes(t *testing.T) {
	seenTables := map[string]bool{}
	for _, td := range systemTableDefs {
		id := td.keyspace + "." + td.name
		if seenTables[id] {
			t.Errorf("%s: listed twice", id)
		}
		seenTables[id] = true
		if td.comment == "" && td.keyspace != viewsKeyspace {
			// Cassandra gives thread_pools and the latency tables none.
			t.Errorf("%s: empty comment", id)
		}

		names := map[string]bool{}
		var pks, cks, others []colDef
		for i, c := range td.cols {
			if names[c.name] {
				t.Errorf("%s: column %q listed twice", id, c.name)
			}
			names[c.name] = true
			if !validCQLType(c.typ) {
				t.Errorf("%s.%s: bad type %q", id, c.name, c.typ)
			}
			switch c.kind {
			case kindPartitionKey:
				if len(cks)+len(others) > 0 {
					t.Errorf("%s.%s: partition key column at index %d comes after a non-key column", id, c.name, i)
				}
				if c.order != "none" {
					t.Errorf("%s.%s: order %q, want none", id, c.name, c.order)
				}
				pks = append(pks, c)
			case kindClustering:
				if len(others) > 0 {
					t.Errorf("%s.%s: clustering column at index %d comes after a regular column", id, c.name, i)
				}
				if c.order != "asc" && c.order != "desc" {
					t.Errorf("%s.%s: order %q, want asc or desc", id, c.name, c.order)
				}
				cks = append(cks, c)
			case kindRegular, kindStatic:
				if c.position != -1 {
					t.Errorf("%s.%s: position %d, want -1", id, c.name, c.position)
				}
				if c.order != "none" {
					t.Errorf("%s.%s: order %q, want none", id, c.name, c.order)
				}
				others = append(others, c)
			default:
				t.Errorf("%s.%s: unknown kind %q", id, c.name, c.kind)
			}
		}
		if len(pks) == 0 {
			t.Errorf("%s: no partition key column", id)
		}
		for i, c := range pks {
			if c.position != i {
				t.Errorf("%s.%s: partition key position %d, want %d", id, c.name, c.position, i)
			}
		}
		for i, c := range cks {
			if c.position != i {
				t.Errorf("%s.%s: clustering position %d, want %d", id, c.name, c.position, i)
			}
		}
		// Statics first, then regulars, each by name bytes.
		if !sort.SliceIsSorted(others, func(i, j int) bool {
			if others[i].kind != others[j].kind {
				return others[i].kind == kindStatic
			}
			return others[i].name < others[j].name
		}) {
			t.Errorf("%s: non-key columns not in select order", id)
		}
	}

	for _, want := range []string{
		"system.local", "system.peers", "system.peers_v2", "system.size_estimates",
		"system.prepared_statements", "system.IndexInfo",
		"system_schema.keyspaces", "system_schema.tables", "system_schema.columns",
		"system_schema.dropped_columns", "system_schema.triggers", "system_schema.views",
		"system_schema.types", "system_schema.functions", "system_schema.aggregates",
		"system_schema.indexes",
		"system_virtual_schema.keyspaces", "system_virtual_schema.tables",
		"system_virtual_schema.columns",
		"system_auth.roles", "system_traces.sessions", "system_traces.events",
	} {
		if !seenTables[want] {
			t.Errorf("%s missing from systemTableDefs", want)
		}
	}
}

func findDef(t *testing.T, keyspace, name string) tableDef {
	t.Helper()
	for _, td := range systemTableDefs {
		if td.keyspace == keyspace && td.name == name {
			return td
		}
	}
	t.Fatalf("%s.%s not in systemTableDefs", keyspace, name)
	return tableDef{}
}

// A table's row of system_schema.tables must cover exactly its option
// columns and carry the Go type that matches each column's CQL type, so
// that it encodes without conversion.
func TestDefsOptionsMatchTablesColumns(t *testing.T) {
	tables := findDef(t, "system_schema", "tables")
	cols := map[string]string{}
	for _, c := range tables.cols {
		cols[c.name] = c.typ
	}
	row := userTableRow(Lookup("system", "local").Storage.Def)
	for name, typ := range cols {
		v, ok := row[name]
		if !ok {
			if name != "cdc" { // null, see systemTableOptions
				t.Errorf("the row lacks %q", name)
			}
			continue
		}
		var good bool
		switch typ {
		case "text":
			_, good = v.(string)
		case "int":
			_, good = v.(int32)
		case "double":
			_, good = v.(float64)
		case "boolean":
			_, good = v.(bool)
		case "uuid":
			_, good = v.([16]byte)
		case "frozen<map<text, text>>":
			_, good = v.(map[string]string)
		case "frozen<set<text>>":
			var s []string
			s, good = v.([]string)
			good = good && sort.StringsAreSorted(s)
		case "frozen<map<text, blob>>":
			_, good = v.(map[string][]byte)
		}
		if !good {
			t.Errorf("row[%q] = %#v does not fit type %s", name, v, typ)
		}
	}
	for name := range row {
		if _, ok := cols[name]; !ok {
			t.Errorf("the row has %q, which is not a system_schema.tables column", name)
		}
	}
	if row["gc_grace_seconds"] != int32(0) || row["memtable_flush_period_in_ms"] != int32(3600000) || row["comment"] != "information about the local node" {
		t.Errorf("system.local's options: %v", row)
	}

	views := findDef(t, "system_schema", "views")
	for _, c := range views.cols {
		if want, ok := cols[c.name]; ok && want != c.typ {
			t.Errorf("views.%s is %s but tables.%s is %s", c.name, c.typ, c.name, want)
		}
	}
}

// Spot checks of the columns drivers type-check (DRIVERS.md §2.2-2.4).
func TestDefsDriverCriticalColumns(t *testing.T) {
	for _, tc := range []struct{ ks, table, col, typ string }{
		{"system", "local", "tokens", "set<text>"},
		{"system", "local", "host_id", "uuid"},
		{"system", "local", "rpc_address", "inet"},
		{"system", "local", "truncated_at", "map<uuid, blob>"},
		{"system", "peers_v2", "native_port", "int"},
		{"system_schema", "keyspaces", "replication", "frozen<map<text, text>>"},
		{"system_schema", "tables", "flags", "frozen<set<text>>"},
		{"system_schema", "columns", "kind", "text"},
		{"system_schema", "columns", "position", "int"},
		{"system_schema", "types", "field_types", "frozen<list<text>>"},
		{"system_schema", "functions", "argument_names", "frozen<list<text>>"},
	} {
		td := findDef(t, tc.ks, tc.table)
		found := false
		for _, c := range td.cols {
			if c.name == tc.col {
				found = true
				if c.typ != tc.typ {
					t.Errorf("%s.%s.%s: type %s, want %s", tc.ks, tc.table, tc.col, c.typ, tc.typ)
				}
			}
		}
		if !found {
			t.Errorf("%s.%s.%s missing", tc.ks, tc.table, tc.col)
		}
	}
}

// The expected ids are the table-directory suffixes of a stock Cassandra data
// directory (data/system/local-7ad54392bcdd35a684174e047860b377, ...).
func TestDefsSystemTableID(t *testing.T) {
	for _, tc := range []struct{ ks, table, want string }{
		{"system", "local", "7ad54392bcdd35a684174e047860b377"},
		{"system", "peers", "37f71aca7dc2383ba70672528af04d4f"},
		{"system_schema", "keyspaces", "abac5682dea631c5b535b3d6cffd0fb6"},
		{"system_schema", "tables", "afddfb9dbc1e30688056eed6c302ba09"},
		{"system_schema", "columns", "24101c25a2ae3af787c1b40ee1aca33f"},
	} {
		id := systemTableID(tc.ks, tc.table)
		if got := hex.EncodeToString(id[:]); got != tc.want {
			t.Errorf("systemTableID(%s, %s) = %s, want %s", tc.ks, tc.table, got, tc.want)
		}
	}
}
