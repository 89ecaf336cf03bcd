package test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestHardeningDeepJSON sends JSON documents of 7 million nested brackets
// (14 MB, under the frame limit) through INSERT JSON, its bound marker and
// fromJson(): each is refused at Jackson's nesting limit (INVALID; fromJson
// fails as a function, FUNCTION_FAILURE), and
// the node still serves the next request. (Before the bound, the literal
// overflowed the stack and ended the process.)
func TestHardeningDeepJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 14 MB documents")
	}
	node, _ := newNode(t)
	s := tableSession(t, node.Addr(), "hardening_json")
	mustExec(t, s, `CREATE TABLE t (k int PRIMARY KEY, v list<int>)`)

	const depth = 7_000_000
	brackets := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	doc := `{"k": 1, "v": ` + brackets + `}`
	const refusal = "Depth (1001) exceeds the maximum allowed nesting depth (1000)"

	for _, tc := range []struct {
		name, query string
		args        []any
		code        int
	}{
		{"literal", `INSERT INTO t JSON '` + doc + `'`, nil, gocql.ErrCodeInvalid},
		{"bound", `INSERT INTO t JSON ?`, []any{doc}, gocql.ErrCodeInvalid},
		{"fromJson", `INSERT INTO t (k, v) VALUES (1, fromJson(?))`, []any{brackets}, gocql.ErrCodeFunctionFailure},
		{"unclosed", `INSERT INTO t JSON ?`, []any{`{"k": 1, "v": ` + strings.Repeat("[", 2*depth)}, gocql.ErrCodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The driver's timeout bounds the wait: a node that spins
			// fails the test instead of hanging it.
			err := s.Query(tc.query, tc.args...).Exec()
			var re gocql.RequestError
			if !errors.As(err, &re) || re.Code() != tc.code || !strings.Contains(re.Message(), refusal) {
				t.Fatalf("got %T %s; want code 0x%04x %q", err, tail(err), tc.code, refusal)
			}
			// The message quotes the start of the document, not all of it.
			if len(re.Message()) > 4096 {
				t.Errorf("error message of %d bytes", len(re.Message()))
			}
			mustExec(t, s, `INSERT INTO t JSON '{"k": 2, "v": [1, 2]}'`)
			var v []int
			if err := s.Query(`SELECT v FROM t WHERE k = 2`).Scan(&v); err != nil || len(v) != 2 {
				t.Fatalf("after the refusal: %v, %v", v, err)
			}
		})
	}
	var n int
	if err := s.Query(`SELECT count(*) FROM t WHERE k = 1`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused document was stored: %d rows, %v", n, err)
	}
}

// tail is the end of err's message, where the reason follows the echoed
// document.
func tail(err error) string {
	if err == nil {
		return "no error"
	}
	msg := err.Error()
	return "..." + msg[max(0, len(msg)-200):]
}
