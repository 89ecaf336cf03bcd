package statements

import (
	"strings"
	"unicode/utf8"
)

// tokenKind identifies the kind of a lexical token.
type tokenKind uint16

// Literal, name and punctuation tokens. Keywords follow, starting at kwFirst.
const (
	tokEOF             tokenKind = iota
	tokIdent                     // unquoted identifier; val is lower-cased
	tokQuotedName                // "..."; val has "" resolved
	tokEmptyQuotedName           // ""
	tokString                    // '...' or $$...$$; val has '' resolved, no quotes
	tokInteger                   // -?[0-9]+
	tokFloat                     // 1.5, 1e10, -1.5E-3; NaN, -NaN, Infinity, -Infinity (val is then NaN, NaN, Infinity, -Infinity)
	tokBoolean                   // true / false; val is lower-cased
	tokDuration                  // 1h30m, -12mo, P1D, PT2H, P0001-02-03T04:05:06
	tokUUID                      // 8-4-4-4-12 hex digits
	tokHex                       // 0xCAFE
	tokQMark                     // ?
	tokRange                     // ..
	tokExprOpen                  // expr(  (custom index expressions)
	tokLParen                    // (
	tokRParen                    // )
	tokLBracket                  // [
	tokRBracket                  // ]
	tokLBrace                    // {
	tokRBrace                    // }
	tokComma                     // ,
	tokSemicolon                 // ;
	tokDot                       // .
	tokColon                     // :
	tokStar                      // *
	tokSlash                     // /
	tokPercent                   // %
	tokPlus                      // +
	tokMinus                     // -
	tokPlusEq                    // +=
	tokMinusEq                   // -=
	tokEq                        // =
	tokNeq                       // !=
	tokLt                        // <
	tokLte                       // <=
	tokGt                        // >
	tokGte                       // >=

	kwFirst // first keyword kind; see keywords below
)

var tokenNames = [kwFirst]string{
	tokEOF:             "EOF",
	tokIdent:           "IDENT",
	tokQuotedName:      "QUOTED_NAME",
	tokEmptyQuotedName: "EMPTY_QUOTED_NAME",
	tokString:          "STRING_LITERAL",
	tokInteger:         "INTEGER",
	tokFloat:           "FLOAT",
	tokBoolean:         "BOOLEAN",
	tokDuration:        "DURATION",
	tokUUID:            "UUID",
	tokHex:             "HEXNUMBER",
	tokQMark:           "QMARK",
	tokRange:           "RANGE",
	tokExprOpen:        "'expr('",
	tokLParen:          "'('",
	tokRParen:          "')'",
	tokLBracket:        "'['",
	tokRBracket:        "']'",
	tokLBrace:          "'{'",
	tokRBrace:          "'}'",
	tokComma:           "','",
	tokSemicolon:       "';'",
	tokDot:             "'.'",
	tokColon:           "':'",
	tokStar:            "'*'",
	tokSlash:           "'/'",
	tokPercent:         "'%'",
	tokPlus:            "'+'",
	tokMinus:           "'-'",
	tokPlusEq:          "'+='",
	tokMinusEq:         "'-='",
	tokEq:              "'='",
	tokNeq:             "'!='",
	tokLt:              "'<'",
	tokLte:             "'<='",
	tokGt:              "'>'",
	tokGte:             "'>='",
}

// String returns the token name as ANTLR's generated Cassandra parser spells
// it in "expecting ..." messages (K_FROM, IDENT, ')', EOF, ...).
func (k tokenKind) String() string {
	if k < kwFirst {
		return tokenNames[k]
	}
	if k < kwLast {
		return "K_" + strings.ToUpper(keywordInfo[k-kwFirst].name)
	}
	return "<invalid token>"
}

// isKeyword reports whether k is a keyword kind.
func (k tokenKind) isKeyword() bool { return k >= kwFirst && k < kwLast }

// token is one lexical token, 32 bytes: a query is held as one token per
// few bytes of input, so a token keeps only what the parser needs often.
// Its position is computed from start when an error needs it (position).
// It holds no pointers besides its value string, which for most tokens is
// a substring of the query (no allocation).
type token struct {
	kind       tokenKind
	start, end int32  // byte offsets of the token's source text (queries are under 2 GiB, see run)
	val        string // processed value for names, strings and booleans; "" otherwise
}

// lexer turns a CQL string into tokens. It is a value type with no
// allocations of its own; see next.
type lexer struct {
	src  string
	pos  int // byte offset of the next unread byte
	line int // line of pos (1-based)
	col  int // column of pos (0-based, UTF-16 code units)
	mark int // byte offset up to which line/col are computed
}

func (l *lexer) init(src string) {
	*l = lexer{src: src, line: 1}
}

// sync brings line/col up to date with pos.
func (l *lexer) sync() {
	l.line, l.col = advance(l.src[l.mark:l.pos], l.line, l.col)
	l.mark = l.pos
}

// position is the line (1-based) and column (0-based, UTF-16 code units)
// of byte offset off of s.
func position(s string, off int) (line, col int) {
	return advance(s[:off], 1, 0)
}

// advance moves line and col past s.
func advance(s string, line, col int) (int, int) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			line++
			col = 0
		case c < 0x80 || c >= 0xC0 && c < 0xF0:
			// ASCII or the lead byte of a BMP rune: one UTF-16 unit.
			col++
		case c >= 0xF0:
			// Lead byte of a supplementary rune: a surrogate pair in Java.
			col += 2
		}
	}
	return line, col
}

// errorHere builds the lexer error for the character at l.pos.
func (l *lexer) errorHere(msgf func(ch string) string) *SyntaxError {
	l.sync()
	ch := charDisplay(l.src, l.pos)
	return &SyntaxError{Line: l.line, Col: l.col, Token: ch, Msg: msgf("'" + ch + "'")}
}

// mismatched reports "mismatched character 'x' expecting 'y'" at l.pos.
func (l *lexer) mismatched(expecting string) *SyntaxError {
	return l.errorHere(func(ch string) string {
		return "mismatched character " + ch + " expecting '" + expecting + "'"
	})
}

// charDisplay renders the character at offset i as ANTLR's getCharErrorDisplay does (without quotes).
func charDisplay(s string, i int) string {
	if i >= len(s) {
		return "<EOF>"
	}
	switch s[i] {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return s[i : i+n]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isHex(c byte) bool    { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
func isIdentChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}

// byteAt returns s[i], or 0 past the end.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// skipSpace skips whitespace and comments. It returns an error for an
// unterminated /* comment.
func (l *lexer) skipSpace() *SyntaxError {
	s := l.src
	for l.pos < len(s) {
		c := s[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.pos++
		case (c == '-' || c == '/') && byteAt(s, l.pos+1) == c:
			// -- or // line comment; a comment ending the input needs no newline.
			end := strings.IndexAny(s[l.pos:], "\n\r")
			if end < 0 {
				l.pos = len(s)
			} else {
				l.pos += end + 1
			}
		case c == '/' && byteAt(s, l.pos+1) == '*':
			end := strings.Index(s[l.pos+2:], "*/")
			if end < 0 {
				l.pos = len(s)
				return l.mismatched("*")
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

// next scans the next token into t. At the end of input it returns a tokEOF
// token positioned after the last character. Lexing errors are reported the
// way Cassandra's ANTLR lexer reports them.
func (l *lexer) next(t *token) *SyntaxError {
	if err := l.skipSpace(); err != nil {
		return err
	}
	*t = token{start: int32(l.pos)}
	s := l.src
	if l.pos >= len(s) {
		t.kind = tokEOF
		t.end = int32(l.pos)
		return nil
	}
	i := l.pos
	c := s[i]
	kind := tokEOF
	end := i + 1
	switch c {
	case '(':
		kind = tokLParen
	case ')':
		kind = tokRParen
	case '[':
		kind = tokLBracket
	case ']':
		kind = tokRBracket
	case '{':
		kind = tokLBrace
	case '}':
		kind = tokRBrace
	case ',':
		kind = tokComma
	case ';':
		kind = tokSemicolon
	case ':':
		kind = tokColon
	case '*':
		kind = tokStar
	case '/':
		kind = tokSlash
	case '%':
		kind = tokPercent
	case '?':
		kind = tokQMark
	case '=':
		kind = tokEq
	case '.':
		kind = tokDot
		if byteAt(s, i+1) == '.' {
			kind, end = tokRange, i+2
		}
	case '+':
		kind = tokPlus
		if byteAt(s, i+1) == '=' {
			kind, end = tokPlusEq, i+2
		}
	case '<':
		kind = tokLt
		if byteAt(s, i+1) == '=' {
			kind, end = tokLte, i+2
		}
	case '>':
		kind = tokGt
		if byteAt(s, i+1) == '=' {
			kind, end = tokGte, i+2
		}
	case '!':
		if byteAt(s, i+1) != '=' {
			l.pos = i + 1
			return l.mismatched("=")
		}
		kind, end = tokNeq, i+2
	case '-':
		kind = tokMinus
		switch d := byteAt(s, i+1); {
		case d == '=':
			kind, end = tokMinusEq, i+2
		case isDigit(d):
			kind, end = scanNumber(s, i+1)
		case d == 'P':
			if n := isoDurationLen(s, i+2); n > 0 {
				kind, end = tokDuration, i+2+n
			}
		case d|0x20 == 'n' || d|0x20 == 'i':
			if n := identLen(s, i+1); n > 0 {
				w := s[i+1 : i+1+n]
				if strings.EqualFold(w, "nan") {
					kind, end, t.val = tokFloat, i+1+n, "NaN" // Cassandra reads -NaN as NaN
				} else if strings.EqualFold(w, "infinity") {
					kind, end, t.val = tokFloat, i+1+n, "-Infinity"
				}
			}
		}
	case '\'':
		return l.scanString(t)
	case '$':
		if byteAt(s, i+1) != '$' {
			l.pos = i + 1
			return l.mismatched("$")
		}
		return l.scanDollarString(t)
	case '"':
		return l.scanQuotedName(t)
	default:
		switch {
		case isDigit(c):
			if isUUIDAt(s, i) {
				kind, end = tokUUID, i+36
			} else if c == '0' && byteAt(s, i+1)|0x20 == 'x' {
				end = i + 2
				for end < len(s) && isHex(s[end]) {
					end++
				}
				kind = tokHex
			} else {
				kind, end = scanNumber(s, i)
			}
		case isLetter(c):
			if isHex(c) && isUUIDAt(s, i) {
				kind, end = tokUUID, i+36
				break
			}
			n := identLen(s, i)
			if c == 'P' {
				if d := isoDurationLen(s, i+1); d > 0 && d+1 >= n {
					kind, end = tokDuration, i+1+d
					break
				}
			}
			end = i + n
			kind, t.val = classifyWord(s, i, end)
			if kind == tokExprOpen {
				end++ // the token includes its '('
			}
		default:
			l.pos = i
			return l.errorHere(func(ch string) string { return "no viable alternative at character " + ch })
		}
	}
	t.kind, t.end = kind, int32(end)
	l.pos = end
	return nil
}

// classifyWord classifies the identifier-like word s[i:end]: a keyword, a
// boolean, NaN/Infinity, the special "expr(" token, or an identifier (whose
// value is lower-cased).
func classifyWord(s string, i, end int) (tokenKind, string) {
	w := s[i:end]
	if k := lookupKeyword(w); k != tokEOF {
		return k, ""
	}
	switch len(w) {
	case 3:
		if strings.EqualFold(w, "nan") {
			return tokFloat, "NaN"
		}
	case 4:
		if strings.EqualFold(w, "true") {
			return tokBoolean, "true"
		}
		if w == "expr" && byteAt(s, end) == '(' {
			return tokExprOpen, ""
		}
	case 5:
		if strings.EqualFold(w, "false") {
			return tokBoolean, "false"
		}
	case 8:
		if strings.EqualFold(w, "infinity") {
			return tokFloat, "Infinity"
		}
	}
	return tokIdent, lowerASCII(w)
}

// identLen returns the length of the identifier starting at s[i] (0 if s[i] is not a letter).
func identLen(s string, i int) int {
	if i >= len(s) || !isLetter(s[i]) {
		return 0
	}
	j := i + 1
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	return j - i
}

// isUUIDAt reports whether s[i:] starts with an 8-4-4-4-12 hex UUID.
func isUUIDAt(s string, i int) bool {
	if len(s)-i < 36 {
		return false
	}
	for j := 0; j < 36; j++ {
		c := s[i+j]
		if j == 8 || j == 13 || j == 18 || j == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex(c) {
			return false
		}
	}
	return true
}

// scanNumber scans an integer, float or duration whose digits start at s[i]
// (a leading '-' has already been consumed by the caller).
func scanNumber(s string, i int) (tokenKind, int) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	c := byteAt(s, j)
	switch {
	case c == '.':
		if byteAt(s, j+1) == '.' { // 1..2 is INTEGER RANGE INTEGER
			return tokInteger, j
		}
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		return tokFloat, j + exponentLen(s, j)
	case c|0x20 == 'e':
		if n := exponentLen(s, j); n > 0 {
			return tokFloat, j + n
		}
	}
	if n := durationUnitLen(s, j); n > 0 {
		j += n
		for {
			k := j
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			if k == j {
				break
			}
			n := durationUnitLen(s, k)
			if n == 0 {
				break
			}
			j = k + n
		}
		return tokDuration, j
	}
	return tokInteger, j
}

// exponentLen returns the length of an exponent (e, optional sign, digits) at s[i], or 0.
func exponentLen(s string, i int) int {
	if byteAt(s, i)|0x20 != 'e' {
		return 0
	}
	j := i + 1
	if c := byteAt(s, j); c == '+' || c == '-' {
		j++
	}
	if !isDigit(byteAt(s, j)) {
		return 0
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j - i
}

// durationUnitLen returns the byte length of the duration unit at s[i]
// (y, mo, w, d, h, m, s, ms, us, µs, ns; case-insensitive), or 0.
func durationUnitLen(s string, i int) int {
	c := byteAt(s, i) | 0x20
	next := byteAt(s, i+1) | 0x20
	switch c {
	case 'y', 'w', 'd', 'h', 's':
		return 1
	case 'm':
		if next == 'o' || next == 's' {
			return 2
		}
		return 1
	case 'u', 'n':
		if next == 's' {
			return 2
		}
	}
	if byteAt(s, i) == 0xC2 && byteAt(s, i+1) == 0xB5 && byteAt(s, i+2)|0x20 == 's' { // µs (U+00B5 is C2 B5)
		return 3
	}
	return 0
}

// isoDurationLen returns the length of an ISO 8601 duration body starting
// just after its 'P' at s[i] (so the token is 'P' plus that many bytes), or 0.
// Accepted forms (designators are upper case, as in Cassandra's grammar):
// P1Y2M3D, P1M, P1D with optional T1H2M3S part, PT1H, P2W and the
// "alternative format" P0001-02-03T04:05:06.
func isoDurationLen(s string, i int) int {
	digits := func(j int) int {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		return k - j
	}
	// Alternative format: PYYYY-MM-DDThh:mm:ss.
	if digits(i) >= 4 && len(s)-i >= 19 {
		ok := true
		for j, want := range "0000-00-00T00:00:00" {
			c := s[i+j]
			if want == '0' && !isDigit(c) || want != '0' && c != byte(want) {
				ok = false
				break
			}
		}
		if ok {
			return 19
		}
	}
	// designators parses DIGIT+ X groups with X drawn in order from units.
	designators := func(j int, units string) int {
		k := j
		for len(units) > 0 {
			n := digits(k)
			if n == 0 {
				break
			}
			u := strings.IndexByte(units, byteAt(s, k+n))
			if u < 0 {
				break
			}
			k += n + 1
			units = units[u+1:]
		}
		return k - j
	}
	time := func(j int) int {
		if byteAt(s, j) != 'T' {
			return 0
		}
		if n := designators(j+1, "HMS"); n > 0 {
			return n + 1
		}
		return 0
	}
	if n := time(i); n > 0 {
		return n
	}
	if n := digits(i); n > 0 && byteAt(s, i+n) == 'W' {
		return n + 1
	}
	n := designators(i, "YMD")
	if n == 0 {
		return 0
	}
	return n + time(i+n)
}

// scanString scans a '...' literal (” is an escaped quote).
func (l *lexer) scanString(t *token) *SyntaxError {
	s := l.src
	start := l.pos + 1
	escaped := false
	j := start
	for {
		k := strings.IndexByte(s[j:], '\'')
		if k < 0 {
			l.pos = len(s)
			return l.mismatched("'")
		}
		j += k
		if byteAt(s, j+1) == '\'' {
			escaped = true
			j += 2
			continue
		}
		break
	}
	t.kind = tokString
	t.val = s[start:j]
	if escaped {
		t.val = strings.ReplaceAll(t.val, "''", "'")
	}
	t.end = int32(j + 1)
	l.pos = j + 1
	return nil
}

// scanDollarString scans a $$...$$ literal (no escapes).
func (l *lexer) scanDollarString(t *token) *SyntaxError {
	s := l.src
	start := l.pos + 2
	k := strings.Index(s[start:], "$$")
	if k < 0 {
		l.pos = len(s)
		return l.mismatched("$")
	}
	t.kind = tokString
	t.val = s[start : start+k]
	t.end = int32(start + k + 2)
	l.pos = start + k + 2
	return nil
}

// scanQuotedName scans a "..." identifier ("" is an escaped quote). The
// empty name "" is its own token kind.
func (l *lexer) scanQuotedName(t *token) *SyntaxError {
	s := l.src
	start := l.pos + 1
	if byteAt(s, start) == '"' && byteAt(s, start+1) != '"' {
		t.kind = tokEmptyQuotedName
		t.end = int32(start + 1)
		l.pos = start + 1
		return nil
	}
	escaped := false
	j := start
	for {
		k := strings.IndexByte(s[j:], '"')
		if k < 0 {
			l.pos = len(s)
			return l.mismatched(`"`)
		}
		j += k
		if byteAt(s, j+1) == '"' {
			escaped = true
			j += 2
			continue
		}
		break
	}
	t.kind = tokQuotedName
	t.val = s[start:j]
	if escaped {
		t.val = strings.ReplaceAll(t.val, `""`, `"`)
	}
	t.end = int32(j + 1)
	l.pos = j + 1
	return nil
}

// lowerASCII lower-cases ASCII letters, allocating only when s has upper-case letters.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + ('a' - 'A')
				}
			}
			return string(b)
		}
	}
	return s
}

// maxKeywordLen is the length of the longest keyword spelling (columnfamilies).
const maxKeywordLen = 14

// lookupKeyword returns the keyword kind of word (case-insensitive), or tokEOF.
func lookupKeyword(w string) tokenKind {
	if len(w) > maxKeywordLen || len(w) < 2 {
		return tokEOF
	}
	var buf [maxKeywordLen]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	if k, ok := keywordsByName[string(buf[:len(w)])]; ok { // no allocation: map index by converted bytes
		return k
	}
	return tokEOF
}

// kwName returns the keyword's canonical lower-case spelling.
func (k tokenKind) kwName() string { return keywordInfo[k-kwFirst].name }

// kwHas reports whether k is a keyword with any of the flags f.
func (k tokenKind) kwHas(f kwFlags) bool {
	return k.isKeyword() && keywordInfo[k-kwFirst].flags&f != 0
}

// Keyword kinds. Keywords are matched case-insensitively; see keywordInfo
// for which of them may also be used as identifiers.
const (
	kwAccess tokenKind = kwFirst + iota
	kwAdd
	kwAggregate
	kwAggregates
	kwAll
	kwAllow
	kwAlter
	kwAnd
	kwAnn
	kwApply
	kwAs
	kwAsc
	kwAscii
	kwAuthorize
	kwBatch
	kwBegin
	kwBetween
	kwBigint
	kwBlob
	kwBoolean
	kwBy
	kwCalled
	kwCast
	kwCheck
	kwCidrs
	kwCluster
	kwClustering
	kwColumnFamily
	kwCompact
	kwContains
	kwCount
	kwCounter
	kwCreate
	kwCustom
	kwDatacenters
	kwDate
	kwDecimal
	kwDefault
	kwDelete
	kwDesc
	kwDescribe
	kwDistinct
	kwDouble
	kwDrop
	kwDuration
	kwEntries
	kwExecute
	kwExists
	kwFiltering
	kwFinalfunc
	kwFloat
	kwFrom
	kwFrozen
	kwFull
	kwFunction
	kwFunctions
	kwGenerated
	kwGrant
	kwGroup
	kwHashed
	kwIdentity
	kwIf
	kwIn
	kwIndex
	kwIndexes
	kwInet
	kwInitcond
	kwInput
	kwInsert
	kwInt
	kwInternals
	kwInto
	kwIs
	kwJson
	kwKey
	kwKeys
	kwKeyspace
	kwKeyspaces
	kwLanguage
	kwLike
	kwLimit
	kwList
	kwLogin
	kwMap
	kwMasked
	kwMaterialized
	kwMaxwritetime
	kwMbean
	kwMbeans
	kwModify
	kwNologin
	kwNorecursive
	kwNosuperuser
	kwNot
	kwNull
	kwOf
	kwOn
	kwOnly
	kwOptions
	kwOr
	kwOrder
	kwPartition
	kwPassword
	kwPer
	kwPermission
	kwPermissions
	kwPrimary
	kwRename
	kwReplace
	kwReturns
	kwRevoke
	kwRole
	kwRoles
	kwSchema
	kwSelect
	kwSelectMasked
	kwSet
	kwSfunc
	kwSmallint
	kwStatic
	kwStorage
	kwStype
	kwSuperuser
	kwSuperusers
	kwTables
	kwText
	kwTime
	kwTimestamp
	kwTimeuuid
	kwTinyint
	kwTo
	kwToken
	kwTrigger
	kwTruncate
	kwTtl
	kwTuple
	kwType
	kwTypes
	kwUnlogged
	kwUnmask
	kwUnset
	kwUpdate
	kwUse
	kwUser
	kwUsers
	kwUsing
	kwUuid
	kwValues
	kwVarchar
	kwVarint
	kwVector
	kwView
	kwWhere
	kwWith
	kwWritetime

	kwLast // end of keywords
)

// kwFlags classify keywords by where Cassandra's grammar lets them appear as names.
type kwFlags uint8

const (
	// flagUnreserved: usable as a column, table, keyspace or property name
	// (Cassandra's unreserved_keyword).
	flagUnreserved kwFlags = 1 << iota
	// flagBasic: basic_unreserved_keyword; usable as a user-type name too.
	flagBasic
	// flagFunction: usable as a function name (unreserved_function_keyword, TOKEN, COUNT).
	flagFunction
	// flagNative: a native type name.
	flagNative
)

// keywordInfo is indexed by kind-kwFirst: the canonical lower-case spelling and flags.
var keywordInfo = [kwLast - kwFirst]struct {
	name  string
	flags kwFlags
}{
	kwAccess - kwFirst:       {"access", flagBasic | flagUnreserved | flagFunction},
	kwAdd - kwFirst:          {"add", 0},
	kwAggregate - kwFirst:    {"aggregate", flagBasic | flagUnreserved | flagFunction},
	kwAggregates - kwFirst:   {"aggregates", flagBasic | flagUnreserved | flagFunction},
	kwAll - kwFirst:          {"all", flagBasic | flagUnreserved | flagFunction},
	kwAllow - kwFirst:        {"allow", 0},
	kwAlter - kwFirst:        {"alter", 0},
	kwAnd - kwFirst:          {"and", 0},
	kwAnn - kwFirst:          {"ann", flagBasic | flagUnreserved | flagFunction},
	kwApply - kwFirst:        {"apply", 0},
	kwAs - kwFirst:           {"as", flagBasic | flagUnreserved | flagFunction},
	kwAsc - kwFirst:          {"asc", 0},
	kwAscii - kwFirst:        {"ascii", flagNative | flagUnreserved | flagFunction},
	kwAuthorize - kwFirst:    {"authorize", 0},
	kwBatch - kwFirst:        {"batch", 0},
	kwBegin - kwFirst:        {"begin", 0},
	kwBetween - kwFirst:      {"between", flagBasic | flagUnreserved | flagFunction},
	kwBigint - kwFirst:       {"bigint", flagNative | flagUnreserved | flagFunction},
	kwBlob - kwFirst:         {"blob", flagNative | flagUnreserved | flagFunction},
	kwBoolean - kwFirst:      {"boolean", flagNative | flagUnreserved | flagFunction},
	kwBy - kwFirst:           {"by", 0},
	kwCalled - kwFirst:       {"called", flagBasic | flagUnreserved | flagFunction},
	kwCast - kwFirst:         {"cast", flagUnreserved},
	kwCheck - kwFirst:        {"check", flagBasic | flagUnreserved | flagFunction},
	kwCidrs - kwFirst:        {"cidrs", flagBasic | flagUnreserved | flagFunction},
	kwCluster - kwFirst:      {"cluster", flagBasic | flagUnreserved | flagFunction},
	kwClustering - kwFirst:   {"clustering", flagBasic | flagUnreserved | flagFunction},
	kwColumnFamily - kwFirst: {"columnfamily", 0},
	kwCompact - kwFirst:      {"compact", flagBasic | flagUnreserved | flagFunction},
	kwContains - kwFirst:     {"contains", flagBasic | flagUnreserved | flagFunction},
	kwCount - kwFirst:        {"count", flagUnreserved | flagFunction},
	kwCounter - kwFirst:      {"counter", flagNative | flagUnreserved | flagFunction},
	kwCreate - kwFirst:       {"create", 0},
	kwCustom - kwFirst:       {"custom", flagBasic | flagUnreserved | flagFunction},
	kwDatacenters - kwFirst:  {"datacenters", flagBasic | flagUnreserved | flagFunction},
	kwDate - kwFirst:         {"date", flagNative | flagUnreserved | flagFunction},
	kwDecimal - kwFirst:      {"decimal", flagNative | flagUnreserved | flagFunction},
	kwDefault - kwFirst:      {"default", flagBasic | flagUnreserved | flagFunction},
	kwDelete - kwFirst:       {"delete", 0},
	kwDesc - kwFirst:         {"desc", 0},
	kwDescribe - kwFirst:     {"describe", 0},
	kwDistinct - kwFirst:     {"distinct", flagUnreserved},
	kwDouble - kwFirst:       {"double", flagNative | flagUnreserved | flagFunction},
	kwDrop - kwFirst:         {"drop", 0},
	kwDuration - kwFirst:     {"duration", flagNative | flagUnreserved | flagFunction},
	kwEntries - kwFirst:      {"entries", 0},
	kwExecute - kwFirst:      {"execute", 0},
	kwExists - kwFirst:       {"exists", flagBasic | flagUnreserved | flagFunction},
	kwFiltering - kwFirst:    {"filtering", flagBasic | flagUnreserved | flagFunction},
	kwFinalfunc - kwFirst:    {"finalfunc", flagBasic | flagUnreserved | flagFunction},
	kwFloat - kwFirst:        {"float", flagNative | flagUnreserved | flagFunction},
	kwFrom - kwFirst:         {"from", 0},
	kwFrozen - kwFirst:       {"frozen", flagBasic | flagUnreserved | flagFunction},
	kwFull - kwFirst:         {"full", 0},
	kwFunction - kwFirst:     {"function", flagBasic | flagUnreserved | flagFunction},
	kwFunctions - kwFirst:    {"functions", flagBasic | flagUnreserved | flagFunction},
	kwGenerated - kwFirst:    {"generated", flagBasic | flagUnreserved | flagFunction},
	kwGrant - kwFirst:        {"grant", 0},
	kwGroup - kwFirst:        {"group", flagBasic | flagUnreserved | flagFunction},
	kwHashed - kwFirst:       {"hashed", flagBasic | flagUnreserved | flagFunction},
	kwIdentity - kwFirst:     {"identity", flagBasic | flagUnreserved | flagFunction},
	kwIf - kwFirst:           {"if", 0},
	kwIn - kwFirst:           {"in", 0},
	kwIndex - kwFirst:        {"index", 0},
	kwIndexes - kwFirst:      {"indexes", flagBasic | flagUnreserved | flagFunction},
	kwInet - kwFirst:         {"inet", flagNative | flagUnreserved | flagFunction},
	kwInitcond - kwFirst:     {"initcond", flagBasic | flagUnreserved | flagFunction},
	kwInput - kwFirst:        {"input", flagBasic | flagUnreserved | flagFunction},
	kwInsert - kwFirst:       {"insert", 0},
	kwInt - kwFirst:          {"int", flagNative | flagUnreserved | flagFunction},
	kwInternals - kwFirst:    {"internals", flagBasic | flagUnreserved | flagFunction},
	kwInto - kwFirst:         {"into", 0},
	kwIs - kwFirst:           {"is", 0},
	kwJson - kwFirst:         {"json", flagUnreserved},
	kwKey - kwFirst:          {"key", flagUnreserved},
	kwKeys - kwFirst:         {"keys", flagBasic | flagUnreserved | flagFunction},
	kwKeyspace - kwFirst:     {"keyspace", 0},
	kwKeyspaces - kwFirst:    {"keyspaces", flagBasic | flagUnreserved | flagFunction},
	kwLanguage - kwFirst:     {"language", flagBasic | flagUnreserved | flagFunction},
	kwLike - kwFirst:         {"like", flagBasic | flagUnreserved | flagFunction},
	kwLimit - kwFirst:        {"limit", 0},
	kwList - kwFirst:         {"list", flagBasic | flagUnreserved | flagFunction},
	kwLogin - kwFirst:        {"login", flagBasic | flagUnreserved | flagFunction},
	kwMap - kwFirst:          {"map", flagBasic | flagUnreserved | flagFunction},
	kwMasked - kwFirst:       {"masked", flagBasic | flagUnreserved | flagFunction},
	kwMaterialized - kwFirst: {"materialized", 0},
	kwMaxwritetime - kwFirst: {"maxwritetime", flagUnreserved},
	kwMbean - kwFirst:        {"mbean", flagBasic | flagUnreserved | flagFunction},
	kwMbeans - kwFirst:       {"mbeans", flagBasic | flagUnreserved | flagFunction},
	kwModify - kwFirst:       {"modify", 0},
	kwNologin - kwFirst:      {"nologin", flagBasic | flagUnreserved | flagFunction},
	kwNorecursive - kwFirst:  {"norecursive", 0},
	kwNosuperuser - kwFirst:  {"nosuperuser", flagBasic | flagUnreserved | flagFunction},
	kwNot - kwFirst:          {"not", 0},
	kwNull - kwFirst:         {"null", 0},
	kwOf - kwFirst:           {"of", 0},
	kwOn - kwFirst:           {"on", 0},
	kwOnly - kwFirst:         {"only", flagBasic | flagUnreserved | flagFunction},
	kwOptions - kwFirst:      {"options", flagBasic | flagUnreserved | flagFunction},
	kwOr - kwFirst:           {"or", 0},
	kwOrder - kwFirst:        {"order", 0},
	kwPartition - kwFirst:    {"partition", flagBasic | flagUnreserved | flagFunction},
	kwPassword - kwFirst:     {"password", flagBasic | flagUnreserved | flagFunction},
	kwPer - kwFirst:          {"per", flagBasic | flagUnreserved | flagFunction},
	kwPermission - kwFirst:   {"permission", flagBasic | flagUnreserved | flagFunction},
	kwPermissions - kwFirst:  {"permissions", flagBasic | flagUnreserved | flagFunction},
	kwPrimary - kwFirst:      {"primary", 0},
	kwRename - kwFirst:       {"rename", 0},
	kwReplace - kwFirst:      {"replace", flagBasic | flagUnreserved | flagFunction},
	kwReturns - kwFirst:      {"returns", flagBasic | flagUnreserved | flagFunction},
	kwRevoke - kwFirst:       {"revoke", 0},
	kwRole - kwFirst:         {"role", flagBasic | flagUnreserved | flagFunction},
	kwRoles - kwFirst:        {"roles", flagBasic | flagUnreserved | flagFunction},
	kwSchema - kwFirst:       {"schema", 0},
	kwSelect - kwFirst:       {"select", 0},
	kwSelectMasked - kwFirst: {"select_masked", flagBasic | flagUnreserved | flagFunction},
	kwSet - kwFirst:          {"set", 0},
	kwSfunc - kwFirst:        {"sfunc", flagBasic | flagUnreserved | flagFunction},
	kwSmallint - kwFirst:     {"smallint", flagNative | flagUnreserved | flagFunction},
	kwStatic - kwFirst:       {"static", flagBasic | flagUnreserved | flagFunction},
	kwStorage - kwFirst:      {"storage", flagBasic | flagUnreserved | flagFunction},
	kwStype - kwFirst:        {"stype", flagBasic | flagUnreserved | flagFunction},
	kwSuperuser - kwFirst:    {"superuser", flagBasic | flagUnreserved | flagFunction},
	kwSuperusers - kwFirst:   {"superusers", flagBasic | flagUnreserved | flagFunction},
	kwTables - kwFirst:       {"tables", flagBasic | flagUnreserved | flagFunction},
	kwText - kwFirst:         {"text", flagNative | flagUnreserved | flagFunction},
	kwTime - kwFirst:         {"time", flagNative | flagUnreserved | flagFunction},
	kwTimestamp - kwFirst:    {"timestamp", flagNative | flagUnreserved | flagFunction},
	kwTimeuuid - kwFirst:     {"timeuuid", flagNative | flagUnreserved | flagFunction},
	kwTinyint - kwFirst:      {"tinyint", flagNative | flagUnreserved | flagFunction},
	kwTo - kwFirst:           {"to", 0},
	kwToken - kwFirst:        {"token", flagFunction},
	kwTrigger - kwFirst:      {"trigger", flagBasic | flagUnreserved | flagFunction},
	kwTruncate - kwFirst:     {"truncate", 0},
	kwTtl - kwFirst:          {"ttl", flagUnreserved},
	kwTuple - kwFirst:        {"tuple", flagBasic | flagUnreserved | flagFunction},
	kwType - kwFirst:         {"type", flagBasic | flagUnreserved | flagFunction},
	kwTypes - kwFirst:        {"types", flagBasic | flagUnreserved | flagFunction},
	kwUnlogged - kwFirst:     {"unlogged", 0},
	kwUnmask - kwFirst:       {"unmask", flagBasic | flagUnreserved | flagFunction},
	kwUnset - kwFirst:        {"unset", flagBasic | flagUnreserved | flagFunction},
	kwUpdate - kwFirst:       {"update", 0},
	kwUse - kwFirst:          {"use", 0},
	kwUser - kwFirst:         {"user", flagBasic | flagUnreserved | flagFunction},
	kwUsers - kwFirst:        {"users", flagBasic | flagUnreserved | flagFunction},
	kwUsing - kwFirst:        {"using", 0},
	kwUuid - kwFirst:         {"uuid", flagNative | flagUnreserved | flagFunction},
	kwValues - kwFirst:       {"values", flagBasic | flagUnreserved | flagFunction},
	kwVarchar - kwFirst:      {"varchar", flagNative | flagUnreserved | flagFunction},
	kwVarint - kwFirst:       {"varint", flagNative | flagUnreserved | flagFunction},
	kwVector - kwFirst:       {"vector", flagBasic | flagUnreserved | flagFunction},
	kwView - kwFirst:         {"view", 0},
	kwWhere - kwFirst:        {"where", 0},
	kwWith - kwFirst:         {"with", 0},
	kwWritetime - kwFirst:    {"writetime", flagUnreserved},
}

// keywordsByName maps lower-case spellings (including aliases such as
// table for columnfamily) to keyword kinds.
var keywordsByName = map[string]tokenKind{
	"access":         kwAccess,
	"add":            kwAdd,
	"aggregate":      kwAggregate,
	"aggregates":     kwAggregates,
	"all":            kwAll,
	"allow":          kwAllow,
	"alter":          kwAlter,
	"and":            kwAnd,
	"ann":            kwAnn,
	"apply":          kwApply,
	"as":             kwAs,
	"asc":            kwAsc,
	"ascii":          kwAscii,
	"authorize":      kwAuthorize,
	"batch":          kwBatch,
	"begin":          kwBegin,
	"between":        kwBetween,
	"bigint":         kwBigint,
	"blob":           kwBlob,
	"boolean":        kwBoolean,
	"by":             kwBy,
	"called":         kwCalled,
	"cast":           kwCast,
	"check":          kwCheck,
	"cidrs":          kwCidrs,
	"cluster":        kwCluster,
	"clustering":     kwClustering,
	"columnfamily":   kwColumnFamily,
	"table":          kwColumnFamily,
	"compact":        kwCompact,
	"contains":       kwContains,
	"count":          kwCount,
	"counter":        kwCounter,
	"create":         kwCreate,
	"custom":         kwCustom,
	"datacenters":    kwDatacenters,
	"date":           kwDate,
	"decimal":        kwDecimal,
	"default":        kwDefault,
	"delete":         kwDelete,
	"desc":           kwDesc,
	"describe":       kwDescribe,
	"distinct":       kwDistinct,
	"double":         kwDouble,
	"drop":           kwDrop,
	"duration":       kwDuration,
	"entries":        kwEntries,
	"execute":        kwExecute,
	"exists":         kwExists,
	"filtering":      kwFiltering,
	"finalfunc":      kwFinalfunc,
	"float":          kwFloat,
	"from":           kwFrom,
	"frozen":         kwFrozen,
	"full":           kwFull,
	"function":       kwFunction,
	"functions":      kwFunctions,
	"generated":      kwGenerated,
	"grant":          kwGrant,
	"group":          kwGroup,
	"hashed":         kwHashed,
	"identity":       kwIdentity,
	"if":             kwIf,
	"in":             kwIn,
	"index":          kwIndex,
	"indexes":        kwIndexes,
	"inet":           kwInet,
	"initcond":       kwInitcond,
	"input":          kwInput,
	"insert":         kwInsert,
	"int":            kwInt,
	"internals":      kwInternals,
	"into":           kwInto,
	"is":             kwIs,
	"json":           kwJson,
	"key":            kwKey,
	"keys":           kwKeys,
	"keyspace":       kwKeyspace,
	"keyspaces":      kwKeyspaces,
	"language":       kwLanguage,
	"like":           kwLike,
	"limit":          kwLimit,
	"list":           kwList,
	"login":          kwLogin,
	"map":            kwMap,
	"masked":         kwMasked,
	"materialized":   kwMaterialized,
	"maxwritetime":   kwMaxwritetime,
	"mbean":          kwMbean,
	"mbeans":         kwMbeans,
	"modify":         kwModify,
	"nologin":        kwNologin,
	"norecursive":    kwNorecursive,
	"nosuperuser":    kwNosuperuser,
	"not":            kwNot,
	"null":           kwNull,
	"of":             kwOf,
	"on":             kwOn,
	"only":           kwOnly,
	"options":        kwOptions,
	"or":             kwOr,
	"order":          kwOrder,
	"partition":      kwPartition,
	"password":       kwPassword,
	"per":            kwPer,
	"permission":     kwPermission,
	"permissions":    kwPermissions,
	"primary":        kwPrimary,
	"rename":         kwRename,
	"replace":        kwReplace,
	"returns":        kwReturns,
	"revoke":         kwRevoke,
	"role":           kwRole,
	"roles":          kwRoles,
	"schema":         kwSchema,
	"select":         kwSelect,
	"select_masked":  kwSelectMasked,
	"set":            kwSet,
	"sfunc":          kwSfunc,
	"smallint":       kwSmallint,
	"static":         kwStatic,
	"storage":        kwStorage,
	"stype":          kwStype,
	"superuser":      kwSuperuser,
	"superusers":     kwSuperusers,
	"tables":         kwTables,
	"columnfamilies": kwTables,
	"text":           kwText,
	"time":           kwTime,
	"timestamp":      kwTimestamp,
	"timeuuid":       kwTimeuuid,
	"tinyint":        kwTinyint,
	"to":             kwTo,
	"token":          kwToken,
	"trigger":        kwTrigger,
	"truncate":       kwTruncate,
	"ttl":            kwTtl,
	"tuple":          kwTuple,
	"type":           kwType,
	"types":          kwTypes,
	"unlogged":       kwUnlogged,
	"unmask":         kwUnmask,
	"unset":          kwUnset,
	"update":         kwUpdate,
	"use":            kwUse,
	"user":           kwUser,
	"users":          kwUsers,
	"using":          kwUsing,
	"uuid":           kwUuid,
	"values":         kwValues,
	"varchar":        kwVarchar,
	"varint":         kwVarint,
	"vector":         kwVector,
	"view":           kwView,
	"where":          kwWhere,
	"with":           kwWith,
	"writetime":      kwWritetime,
}
