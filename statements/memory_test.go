package statements

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseHostileMemory parses queries built to make a parser hold or
// recurse on far more than their size: each is refused at the nesting
// bound having allocated almost nothing, since tokens past the point of
// failure are never kept. (The input, 10 MB of '(', once cost
// 2 GB.)
func TestParseHostileMemory(t *testing.T) {
	const n = 1 << 20
	where := "SELECT * FROM t WHERE a = "
	for name, q := range map[string]string{
		"10 MB of (":      where + strings.Repeat("(", 10<<20),
		"open brackets":   where + strings.Repeat("[", n),
		"open braces":     where + strings.Repeat("{", n),
		"close parens":    where + strings.Repeat(")", n),
		"commas":          where + strings.Repeat(",", n),
		"function calls":  where + strings.Repeat("f(", n/2),
		"casts":           where + strings.Repeat("CAST(", n/5),
		"type hints":      where + strings.Repeat("(int)", n/5) + "1",
		"tuples":          where + strings.Repeat("(1,", n/3),
		"sums":            where + strings.Repeat("1+", n/2) + "1",
		"products":        where + strings.Repeat("1*", n/2) + "1",
		"negations":       where + strings.Repeat("-(", n/2),
		"maps":            where + strings.Repeat("{1:", n/3),
		"user types":      where + strings.Repeat("{f:", n/3),
		"assignment sums": "UPDATE t SET a = " + strings.Repeat("1+", n/2) + "1 WHERE k = 1",
		"selector sums":   "SELECT " + strings.Repeat("a+", n/2) + "a FROM t",
		"selector hints":  "SELECT " + strings.Repeat("(int)", n/5) + "a FROM t",
		"selector parens": "SELECT " + strings.Repeat("(", n) + "a FROM t",
		"selector casts":  "SELECT " + strings.Repeat("CAST(", n/5) + "a FROM t",
		"selector calls":  "SELECT " + strings.Repeat("f(", n/2) + "a FROM t",
		"field chain":     "SELECT a" + strings.Repeat(".f", n/2) + " FROM t",
		"element chain":   "SELECT a" + strings.Repeat("[1]", n/3) + " FROM t",
		"relations":       "SELECT * FROM t WHERE " + strings.Repeat("(", n) + "a = 1",
		"types":           "CREATE TABLE t (k int PRIMARY KEY, v " + strings.Repeat("frozen<", n/7) + "int)",
		"type strings":    "SELECT * FROM t WHERE a = (" + strings.Repeat("list<", n/5) + "int)1",
	} {
		var err error
		b := allocated(func() { _, _, err = Parse(q) })
		var se *SyntaxError
		if !errors.As(err, &se) || se.Msg != "expression nesting too deep" && !strings.Contains(se.Msg, "no viable alternative") {
			t.Errorf("%s: got %.100v; want a syntax error", name, err)
		}
		if perByte := float64(b) / float64(len(q)); perByte > 1 {
			t.Errorf("%s: %.2f bytes allocated per input byte, want at most 1", name, perByte)
		}
	}
}

// TestParseLargeMemory parses long valid lists: what they cost grows with
// their length, by a bounded factor.
func TestParseLargeMemory(t *testing.T) {
	const n = 1 << 20
	for name, q := range map[string]string{
		"IN list":       "SELECT * FROM t WHERE a IN (" + strings.Repeat("1,", n/2) + "1)",
		"selector list": "SELECT " + strings.Repeat("a,", n/2) + "a FROM t",
		"markers":       "INSERT INTO t (a) VALUES (" + strings.Repeat("?,", n/2) + "?)",
		"list literal":  "UPDATE t SET l = [" + strings.Repeat("1,", n/2) + "1] WHERE k = 1",
		"string":        "SELECT * FROM t WHERE a = '" + strings.Repeat("x", n) + "'",
		"lexing error":  "SELECT * FROM t WHERE a = " + strings.Repeat("(", n) + "'",
	} {
		var err error
		b := allocated(func() { _, _, err = Parse(q) })
		if name == "lexing error" {
			// Found after the parser gave up, on the last byte.
			if err == nil || !strings.HasSuffix(err.Error(), `mismatched character '<EOF>' expecting '''`) {
				t.Errorf("%s: got %.100v", name, err)
			}
		} else if err != nil {
			t.Errorf("%s: %.100v", name, err)
		}
		if perByte := float64(b) / float64(len(q)); perByte > 128 {
			t.Errorf("%s: %.2f bytes allocated per input byte, want at most 128", name, perByte)
		}
	}
}
