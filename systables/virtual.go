package systables

import "github.com/cqld/cqld/storage"

// The rows of system_virtual_schema: the virtual keyspace and its tables.

func virtualTables() []*tableDef {
	var out []*tableDef
	for i := range systemTableDefs {
		if d := &systemTableDefs[i]; IsVirtualKeyspace(d.keyspace) {
			out = append(out, d)
		}
	}
	return out
}

func virtualKeyspaceRows(State) []Row {
	return []Row{{"keyspace_name": viewsKeyspace}, {"keyspace_name": virtualKeyspace}}
}

func virtualTableRows(State) []Row {
	var rows []Row
	for _, d := range virtualTables() {
		rows = append(rows, Row{"keyspace_name": d.keyspace, "table_name": d.name, "comment": d.comment})
	}
	return rows
}

func virtualColumnRows(State) []Row {
	var defs []*storage.TableDef
	for _, d := range virtualTables() {
		defs = append(defs, d.storageDef())
	}
	return columnRowsOf(defs)
}
