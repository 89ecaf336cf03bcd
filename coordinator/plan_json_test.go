package coordinator

import (
	"reflect"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// TestInsertJSONPlan runs INSERT JSON through the coordinator: the
// prepared [json] marker, DEFAULT UNSET and NULL, and a SELECT JSON round
// trip.
func TestInsertJSONPlan(t *testing.T) {
	c := selTestCoord(t)
	runQuery(t, c, `CREATE TABLE ks.j (k int, c text, v int, w int, l list<int>, s int static, PRIMARY KEY (k, c))`)

	prep := selHandle(c, &message.Prepare{Query: `INSERT INTO ks.j JSON ? DEFAULT UNSET USING TTL ?`})
	pr, ok := prep.(*message.PreparedResult)
	if !ok {
		t.Fatalf("PREPARE: %v", prep)
	}
	if got := selColNames(pr.VariablesMetadata.Columns); !reflect.DeepEqual(got, []string{"[json] text", "[ttl] int"}) {
		t.Errorf("variables = %q", got)
	}
	if col := pr.VariablesMetadata.Columns[0]; col.Keyspace != "ks" || col.Table != "j" {
		t.Errorf("[json] marker of %s.%s", col.Keyspace, col.Table)
	}
	exec := func(json string) message.Message {
		return selHandle(c, &message.Execute{QueryId: pr.PreparedQueryId, Options: &message.QueryOptions{
			Consistency:      primitive.ConsistencyLevelOne,
			PositionalValues: []*primitive.Value{primitive.NewValue([]byte(json)), primitive.NewValue([]byte{0, 0, 0, 0})},
		}})
	}
	if r := exec(`{"k": 1, "c": "a", "v": 1, "w": 2, "l": [1, 2], "s": 9}`); r == nil {
		t.Fatal("no result")
	} else if e, ok := r.(message.Error); ok {
		t.Fatal(e)
	}
	if e, ok := exec(`{"k": 1, "c": "a", "v": 5}`).(message.Error); ok {
		t.Fatal(e)
	}
	runQuery(t, c, `INSERT INTO ks.j JSON '{"k": 1, "c": "b"}'`)
	rows := runQuery(t, c, `SELECT JSON * FROM ks.j WHERE k = 1`).(*message.RowsResult)
	var got []string
	for _, r := range rows.Data {
		got = append(got, string(r[0]))
	}
	want := []string{
		`{"k": 1, "c": "a", "s": null, "l": [1, 2], "v": 5, "w": 2}`,
		`{"k": 1, "c": "b", "s": null, "l": null, "v": null, "w": null}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for q, msg := range map[string]string{
		`INSERT INTO ks.j JSON '{"c": "a"}'`:                     "Invalid null value in condition for column k",
		`INSERT INTO ks.j JSON '{"k": 1}'`:                       "Invalid null value in condition for column c",
		`INSERT INTO ks.j JSON '{"k": 1, "s": 1}' DEFAULT UNSET`: "Invalid unset value for column c",
		`INSERT INTO ks.j JSON '{"k": 1, "c": "a", "x": 1}'`:     "JSON values map contains unrecognized column: x",
	} {
		resp := selHandle(c, &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		if e, ok := resp.(*message.Invalid); !ok || e.ErrorMessage != msg {
			t.Errorf("%s: %v, want %q", q, resp, msg)
		}
	}
}
