package statements

import (
	"reflect"
	"testing"
)

func TestParseDescribe(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  Describe
	}{
		{"DESCRIBE CLUSTER", Describe{Kind: DescribeCluster}},
		{"desc cluster;", Describe{Kind: DescribeCluster}},
		{"DESCRIBE SCHEMA", Describe{Kind: DescribeSchema}},
		{"DESCRIBE FULL SCHEMA WITH INTERNALS", Describe{Kind: DescribeFullSchema, Internals: true}},
		{"DESCRIBE KEYSPACES", Describe{Kind: DescribeKeyspaces}},
		{"DESCRIBE KEYSPACE", Describe{Kind: DescribeKeyspace}},
		{"DESCRIBE KEYSPACE ks", Describe{Kind: DescribeKeyspace, Keyspace: "ks"}},
		{`DESC ONLY KEYSPACE "Ks" WITH INTERNALS`, Describe{Kind: DescribeKeyspace, Keyspace: "Ks", Only: true, Internals: true}},
		{"DESCRIBE ONLY KEYSPACE", Describe{Kind: DescribeKeyspace, Only: true}},
		{"DESCRIBE TABLES", Describe{Kind: DescribeTables}},
		{"DESCRIBE COLUMNFAMILIES", Describe{Kind: DescribeTables}},
		{"DESCRIBE TABLE t", Describe{Kind: DescribeTable, Name: "t"}},
		{"DESCRIBE COLUMNFAMILY ks.t", Describe{Kind: DescribeTable, Keyspace: "ks", Name: "t"}},
		{"DESCRIBE INDEX ks.i", Describe{Kind: DescribeIndex, Keyspace: "ks", Name: "i"}},
		{"DESCRIBE MATERIALIZED VIEW v", Describe{Kind: DescribeView, Name: "v"}},
		{"DESCRIBE TYPES", Describe{Kind: DescribeTypes}},
		{"DESCRIBE TYPE ks.address", Describe{Kind: DescribeType, Keyspace: "ks", Name: "address"}},
		{"DESCRIBE FUNCTIONS", Describe{Kind: DescribeFunctions}},
		{"DESCRIBE FUNCTION ks.f", Describe{Kind: DescribeFunction, Keyspace: "ks", Name: "f"}},
		{"DESCRIBE AGGREGATES", Describe{Kind: DescribeAggregates}},
		{"DESCRIBE AGGREGATE a", Describe{Kind: DescribeAggregate, Name: "a"}},
		{"DESCRIBE ks.t", Describe{Kind: DescribeGeneric, Keyspace: "ks", Name: "t"}},
		{"DESCRIBE t WITH INTERNALS", Describe{Kind: DescribeGeneric, Name: "t", Internals: true}},
		// Keywords that are names when their form cannot go on.
		{"DESCRIBE type", Describe{Kind: DescribeGeneric, Name: "type"}},
		{"DESCRIBE only", Describe{Kind: DescribeGeneric, Name: "only"}},
		{"DESCRIBE function", Describe{Kind: DescribeGeneric, Name: "function"}},
		{"DESCRIBE ks.types", Describe{Kind: DescribeGeneric, Keyspace: "ks", Name: "types"}},
	} {
		st, n, err := Parse(tc.query)
		if err != nil || n != 0 {
			t.Errorf("Parse(%q): %v, %d markers", tc.query, err, n)
			continue
		}
		if got, ok := st.(*Describe); !ok || !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.query, st, tc.want)
		}
	}
}

func TestParseDescribeErrors(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"DESCRIBE", "line 0:-1 no viable alternative at input '<EOF>'"},
		{"DESCRIBE TABLE", "line 0:-1 no viable alternative at input '<EOF>'"},
		{"DESCRIBE FULL", "line 0:-1 mismatched input '<EOF>' expecting K_SCHEMA"},
		{"DESCRIBE tables.t", "line 1:15 mismatched input '.' expecting EOF"},
		{"DESCRIBE t WITH", "line 0:-1 mismatched input '<EOF>' expecting K_INTERNALS"},
		{"DESCRIBE KEYSPACE ks extra", "line 1:21 mismatched input 'extra' expecting EOF"},
		{"DESCRIBE TABLE ?", "Bind variables cannot be used for table names"},
	} {
		_, _, err := Parse(tc.query)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%q): %v, want %q", tc.query, err, tc.want)
		}
	}
}
