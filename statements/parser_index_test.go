package statements

import "testing"

func TestParseIndexStatements(t *testing.T) {
	runParseTests(t, []parseTest{
		{"CREATE INDEX ON t (v)",
			&CreateIndex{Table: "t", Targets: []IndexTarget{{Column: "v"}}}, 0},
		{"CREATE INDEX IF NOT EXISTS ks.i ON ks.t (\"V\")",
			&CreateIndex{Keyspace: "ks", Name: "i", TableKeyspace: "ks", Table: "t", IfNotExists: true, Targets: []IndexTarget{{Column: "V"}}}, 0},
		{"CREATE INDEX i ON t (full(fl))",
			&CreateIndex{Name: "i", Table: "t", Targets: []IndexTarget{{Kind: "full", Column: "fl"}}}, 0},
		{"create index on t (keys(m), values(m), entries(m))",
			&CreateIndex{Table: "t", Targets: []IndexTarget{{Kind: "keys", Column: "m"}, {Kind: "values", Column: "m"}, {Kind: "entries", Column: "m"}}}, 0},
		{"CREATE INDEX ON t (keys)",
			&CreateIndex{Table: "t", Targets: []IndexTarget{{Column: "keys"}}}, 0},
		{"CREATE INDEX ON t ()",
			&CreateIndex{Table: "t"}, 0},
		{"DROP INDEX i", &DropIndex{Name: "i"}, 0},
		{"DROP INDEX IF EXISTS ks.i;", &DropIndex{Keyspace: "ks", Name: "i", IfExists: true}, 0},
	})
}
