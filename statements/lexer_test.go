package statements

import (
	"fmt"
	"strings"
	"testing"
)

// lexed is a token as seen by tests: kind, source text, value and position.
type lexed struct {
	kind tokenKind
	text string // source text
	val  string
	line int
	col  int
}

func (l lexed) String() string {
	return fmt.Sprintf("%v %q val=%q @%d:%d", l.kind, l.text, l.val, l.line, l.col)
}

func lexAll(t *testing.T, src string) ([]lexed, error) {
	t.Helper()
	toks, err := tokenize(src, nil)
	if err != nil {
		return nil, err
	}
	var out []lexed
	for _, tk := range toks {
		if tk.kind == tokEOF {
			break
		}
		line, col := position(src, int(tk.start))
		out = append(out, lexed{tk.kind, src[tk.start:tk.end], tk.val, line, col})
	}
	return out, nil
}

// tok builds an expected token on line 1.
func tok(kind tokenKind, text, val string, col int) lexed {
	return lexed{kind, text, val, 1, col}
}

func TestLexerTokenKinds(t *testing.T) {
	tests := []struct {
		src  string
		want []lexed
	}{
		// identifiers and keywords
		{"SeLeCt Foo_1 x", []lexed{tok(kwSelect, "SeLeCt", "", 0), tok(tokIdent, "Foo_1", "foo_1", 7), tok(tokIdent, "x", "x", 13)}},
		{"table TABLE columnfamily COLUMNFAMILIES tables schema", []lexed{
			tok(kwColumnFamily, "table", "", 0), tok(kwColumnFamily, "TABLE", "", 6), tok(kwColumnFamily, "columnfamily", "", 12),
			tok(kwTables, "COLUMNFAMILIES", "", 25), tok(kwTables, "tables", "", 40), tok(kwSchema, "schema", "", 47)}},
		{"select_masked selectx", []lexed{tok(kwSelectMasked, "select_masked", "", 0), tok(tokIdent, "selectx", "selectx", 14)}},
		{`"Foo" "a""b" "" """x"`, []lexed{
			tok(tokQuotedName, `"Foo"`, "Foo", 0), tok(tokQuotedName, `"a""b"`, `a"b`, 6),
			tok(tokEmptyQuotedName, `""`, "", 13), tok(tokQuotedName, `"""x"`, `"x`, 16)}},
		{`"select" "héllo"`, []lexed{tok(tokQuotedName, `"select"`, "select", 0), tok(tokQuotedName, `"héllo"`, "héllo", 9)}},
		// strings
		{`'abc' 'it''s' '' $$a'b$$ $$$$`, []lexed{
			tok(tokString, `'abc'`, "abc", 0), tok(tokString, `'it''s'`, "it's", 6), tok(tokString, `''`, "", 14),
			tok(tokString, `$$a'b$$`, "a'b", 17), tok(tokString, `$$$$`, "", 25)}},
		{"'multi\nline'", []lexed{tok(tokString, "'multi\nline'", "multi\nline", 0)}},
		// numbers
		{"1 -42 007", []lexed{tok(tokInteger, "1", "", 0), tok(tokInteger, "-42", "", 2), tok(tokInteger, "007", "", 6)}},
		{"1.5 1e10 -1.5E-3 2. 3.e+2 1E5", []lexed{
			tok(tokFloat, "1.5", "", 0), tok(tokFloat, "1e10", "", 4), tok(tokFloat, "-1.5E-3", "", 9),
			tok(tokFloat, "2.", "", 17), tok(tokFloat, "3.e+2", "", 20), tok(tokFloat, "1E5", "", 26)}},
		{"NaN -nan Infinity -INFINITY nanx", []lexed{
			tok(tokFloat, "NaN", "NaN", 0), tok(tokFloat, "-nan", "NaN", 4), tok(tokFloat, "Infinity", "Infinity", 9),
			tok(tokFloat, "-INFINITY", "-Infinity", 18), tok(tokIdent, "nanx", "nanx", 28)}},
		{"1..2", []lexed{tok(tokInteger, "1", "", 0), tok(tokRange, "..", "", 1), tok(tokInteger, "2", "", 3)}},
		{"1e", []lexed{tok(tokInteger, "1", "", 0), tok(tokIdent, "e", "e", 1)}},
		// hex, uuid, booleans
		{"0xCAFE 0X00 0x", []lexed{tok(tokHex, "0xCAFE", "", 0), tok(tokHex, "0X00", "", 7), tok(tokHex, "0x", "", 12)}},
		{"123e4567-e89b-12d3-a456-426614174000 DEADBEEF-dead-beef-dead-beefdeadbeef", []lexed{
			tok(tokUUID, "123e4567-e89b-12d3-a456-426614174000", "", 0),
			tok(tokUUID, "DEADBEEF-dead-beef-dead-beefdeadbeef", "", 37)}},
		{"12345678-1234", []lexed{tok(tokInteger, "12345678", "", 0), tok(tokInteger, "-1234", "", 8)}},
		{"true FALSE truex", []lexed{tok(tokBoolean, "true", "true", 0), tok(tokBoolean, "FALSE", "false", 5), tok(tokIdent, "truex", "truex", 11)}},
		// durations
		{"1h30m 12mo -3d 1y2mo3w4d5h6m7s8ms9us10µs11ns 5MS", []lexed{
			tok(tokDuration, "1h30m", "", 0), tok(tokDuration, "12mo", "", 6), tok(tokDuration, "-3d", "", 11),
			tok(tokDuration, "1y2mo3w4d5h6m7s8ms9us10µs11ns", "", 15), tok(tokDuration, "5MS", "", 45)}},
		{"1day", []lexed{tok(tokDuration, "1d", "", 0), tok(tokIdent, "ay", "ay", 2)}},
		{"P1D PT2H P1Y2M3DT4H5M6S P3W -P1M P0001-02-03T04:05:06 P1Dx Px", []lexed{
			tok(tokDuration, "P1D", "", 0), tok(tokDuration, "PT2H", "", 4), tok(tokDuration, "P1Y2M3DT4H5M6S", "", 9),
			tok(tokDuration, "P3W", "", 24), tok(tokDuration, "-P1M", "", 28), tok(tokDuration, "P0001-02-03T04:05:06", "", 33),
			tok(tokIdent, "P1Dx", "p1dx", 54), tok(tokIdent, "Px", "px", 59)}},
		// bind markers and punctuation
		{"? :name :", []lexed{tok(tokQMark, "?", "", 0), tok(tokColon, ":", "", 2), tok(tokIdent, "name", "name", 3), tok(tokColon, ":", "", 8)}},
		{"( ) [ ] { } , ; . * / % + - += -= = != < <= > >= ..", []lexed{
			tok(tokLParen, "(", "", 0), tok(tokRParen, ")", "", 2), tok(tokLBracket, "[", "", 4), tok(tokRBracket, "]", "", 6),
			tok(tokLBrace, "{", "", 8), tok(tokRBrace, "}", "", 10), tok(tokComma, ",", "", 12), tok(tokSemicolon, ";", "", 14),
			tok(tokDot, ".", "", 16), tok(tokStar, "*", "", 18), tok(tokSlash, "/", "", 20), tok(tokPercent, "%", "", 22),
			tok(tokPlus, "+", "", 24), tok(tokMinus, "-", "", 26), tok(tokPlusEq, "+=", "", 28), tok(tokMinusEq, "-=", "", 31),
			tok(tokEq, "=", "", 34), tok(tokNeq, "!=", "", 36), tok(tokLt, "<", "", 39), tok(tokLte, "<=", "", 41),
			tok(tokGt, ">", "", 44), tok(tokGte, ">=", "", 46), tok(tokRange, "..", "", 49)}},
		{"map<text,frozen<list<int>>>", []lexed{
			tok(kwMap, "map", "", 0), tok(tokLt, "<", "", 3), tok(kwText, "text", "", 4), tok(tokComma, ",", "", 8),
			tok(kwFrozen, "frozen", "", 9), tok(tokLt, "<", "", 15), tok(kwList, "list", "", 16), tok(tokLt, "<", "", 20),
			tok(kwInt, "int", "", 21), tok(tokGt, ">", "", 24), tok(tokGt, ">", "", 25), tok(tokGt, ">", "", 26)}},
		{"a-b x - 1", []lexed{tok(tokIdent, "a", "a", 0), tok(tokMinus, "-", "", 1), tok(tokIdent, "b", "b", 2),
			tok(tokIdent, "x", "x", 4), tok(tokMinus, "-", "", 6), tok(tokInteger, "1", "", 8)}},
		{"expr(i, 'x') EXPR(", []lexed{tok(tokExprOpen, "expr(", "", 0), tok(tokIdent, "i", "i", 5),
			tok(tokComma, ",", "", 6), tok(tokString, "'x'", "x", 8), tok(tokRParen, ")", "", 11),
			tok(tokIdent, "EXPR", "expr", 13), tok(tokLParen, "(", "", 17)}},
	}
	for _, tc := range tests {
		got, err := lexAll(t, tc.src)
		if err != nil {
			t.Errorf("%q: unexpected error %v", tc.src, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%q: got %d tokens, want %d:\n got %v\nwant %v", tc.src, len(got), len(tc.want), got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q token %d:\n got %v\nwant %v", tc.src, i, got[i], tc.want[i])
			}
		}
	}
}

func TestLexerExprToken(t *testing.T) {
	// "expr(" is one ANTLR literal token (case-sensitive, no space before '(').
	got, err := lexAll(t, "expr (")
	if err != nil || len(got) != 2 || got[0].kind != tokIdent {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestLexerCommentsAndPositions(t *testing.T) {
	src := "SELECT -- comment\n  a, // another\r\n\tb /* multi\nline */ FROM\n\n  t;-- trailing"
	got, err := lexAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []lexed{
		{kwSelect, "SELECT", "", 1, 0},
		{tokIdent, "a", "a", 2, 2},
		{tokComma, ",", "", 2, 3},
		{tokIdent, "b", "b", 3, 1},
		{kwFrom, "FROM", "", 4, 8},
		{tokIdent, "t", "t", 6, 2},
		{tokSemicolon, ";", "", 6, 3},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	// EOF is positioned after the last character.
	toks, _ := tokenize("a\nbc ", nil)
	if eof := toks[len(toks)-1]; eof.kind != tokEOF {
		t.Errorf("last token %v", eof.kind)
	} else if line, col := position("a\nbc ", int(eof.start)); line != 2 || col != 3 {
		t.Errorf("EOF token at %d:%d", line, col)
	}
}

func TestLexerColumnsCountUTF16(t *testing.T) {
	// Columns count UTF-16 code units, like Java: é is one, 😀 two.
	got, err := lexAll(t, "'é😀' x\n'😀'y")
	if err != nil {
		t.Fatal(err)
	}
	if got[1].col != 6 || got[3].line != 2 || got[3].col != 4 {
		t.Errorf("got %v", got)
	}
}

func TestLexerErrors(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"SELECT 'abc", "line 1:11 mismatched character '<EOF>' expecting '''"},
		{"SELECT * FROM t WHERE k = 'x''", "line 1:30 mismatched character '<EOF>' expecting '''"},
		{`SELECT "abc`, `line 1:11 mismatched character '<EOF>' expecting '"'`},
		{"x = $$abc", "line 1:9 mismatched character '<EOF>' expecting '$'"},
		{"x = $a", "line 1:5 mismatched character 'a' expecting '$'"},
		{"a ! b", "line 1:3 mismatched character ' ' expecting '='"},
		{"a !", "line 1:3 mismatched character '<EOF>' expecting '='"},
		{"a /* never closed", "line 1:17 mismatched character '<EOF>' expecting '*'"},
		{"a\n  @", "line 2:2 no viable alternative at character '@'"},
		{"a é", "line 1:2 no viable alternative at character 'é'"},
		{"_a", "line 1:0 no viable alternative at character '_'"},
		{"a\tb\\", `line 1:3 no viable alternative at character '\'`},
	}
	for _, tc := range tests {
		_, err := lexAll(t, tc.src)
		if err == nil {
			t.Errorf("%q: no error, want %s", tc.src, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestKeywordTable(t *testing.T) {
	for k := kwFirst; k < kwLast; k++ {
		name := k.kwName()
		if got := lookupKeyword(strings.ToUpper(name)); got != k {
			t.Errorf("lookupKeyword(%q) = %v, want %v", strings.ToUpper(name), got, k)
		}
		if !strings.HasPrefix(k.String(), "K_") {
			t.Errorf("%v: bad token name", k)
		}
	}
	if lookupKeyword("notakeyword") != tokEOF || lookupKeyword("x") != tokEOF {
		t.Error("non-keywords found")
	}
	// Spot-check the reserved/unreserved classification against Cassandra's grammar.
	for _, w := range []string{"key", "type", "ttl", "count", "writetime", "json", "distinct", "keys", "text", "timestamp", "filtering", "as", "values"} {
		if !lookupKeyword(w).kwHas(flagUnreserved) {
			t.Errorf("%s should be usable as a name", w)
		}
	}
	for _, w := range []string{"select", "from", "where", "token", "keyspace", "table", "limit", "set", "in", "null"} {
		if lookupKeyword(w).kwHas(flagUnreserved) {
			t.Errorf("%s should be reserved", w)
		}
	}
}

func TestTokenizeAllocations(t *testing.T) {
	src := "SELECT keyspace_name, table_name FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = ? -- hi"
	buf := make([]token, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		toks, err := tokenize(src, buf)
		if err != nil || len(toks) != 17 {
			t.Fatalf("tokenize: %d tokens, %v", len(toks), err)
		}
	})
	if allocs != 0 {
		t.Errorf("tokenize allocated %v times per run, want 0", allocs)
	}
}

// tokenize lexes all of src into toks (reusing its storage), ending with a
// tokEOF token.
func tokenize(src string, toks []token) ([]token, *SyntaxError) {
	var l lexer
	l.init(src)
	toks = toks[:0]
	for {
		toks = append(toks, token{})
		t := &toks[len(toks)-1]
		if err := l.next(t); err != nil {
			return toks, err
		}
		if t.kind == tokEOF {
			return toks, nil
		}
	}
}
