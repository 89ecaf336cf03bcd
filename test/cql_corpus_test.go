package test

// TestCQLCorpus runs the CQL scripts under testdata/cql over the wire with
// gocql and compares cqld's answers with the expected ones written in the
// files (datadriven, in the manner of cockroach's datadriven package).
//
// File format. Each file testdata/cql/NAME.cql is a sequence of blocks:
//
//	> CQL statement (it may span lines, up to a line ending with ';';
//	  a statement starting with BEGIN ends at a line ending with
//	  'APPLY BATCH;')
//	expected output lines
//	(blank line)
//
// Lines starting with '#' between blocks are comments. The statement is
// sent as a simple QUERY (not prepared, so literals go through the parser),
// without its final ';'. The expected output is:
//
//   - "ok" for a statement answering no rows (writes, DDL, USE, ...);
//   - for a result with columns (SELECT, LWT [applied] results), the column
//     names on one line separated by " | ", then one line per row with the
//     values rendered as CQL literals separated by " | ": text 'quoted'
//     (quotes doubled), null, blobs 0x.., numbers as digits, booleans,
//     uuids bare, timestamps '2020-01-02T03:04:05.006Z', dates
//     '2020-01-02', times '03:04:05.000000006', inets '127.0.0.1',
//     durations 1mo2d3h, lists [..], sets {..}, maps {k: v}, tuples (..),
//     in the order the server sends them;
//   - for an error, "error <CODE NAME>: <message>", where <message> only
//     has to be a substring of the server's message (for example
//     "error Invalid: Undefined column name x").
//
// Every file runs in a fresh keyspace named after the file (created with
// SimpleStrategy, replication_factor 1, and made current) on one node
// shared by all files.
//
// known_differences.cql is not run: it records, with Cassandra 4.0's
// answers, the cases where cqld answers differently.
//
// To regenerate every expected output from cqld's actual answers:
//
//	go test ./test -run CQLCorpus -args -rewrite
//
// Then read the diff: the expectations must be what Cassandra 4.0 answers.

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

var corpusRewrite = flag.Bool("rewrite", false, "TestCQLCorpus: rewrite the expected outputs of testdata/cql/*.cql from cqld's answers")

// corpusSkipped are the files the runner does not run.
var corpusSkipped = map[string]bool{"known_differences.cql": true}

func TestCQLCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/cql/*.cql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no testdata/cql/*.cql files")
	}
	node, _ := newNode(t)
	for _, file := range files {
		file := file
		if corpusSkipped[filepath.Base(file)] {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".cql")
		t.Run(name, func(t *testing.T) {
			s := tableSession(t, node.Addr(), name)
			runCorpusFile(t, s, file)
		})
	}
}

// corpusBlock is one statement of a file and what follows it.
type corpusBlock struct {
	comments []string // comment and blank lines before the statement
	stmt     []string // the statement's lines, '>' included
	line     int      // line of the statement's first line
	expected []string
}

func parseCorpusFile(t *testing.T, path string) (blocks []corpusBlock, trailer []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var pending []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if !strings.HasPrefix(l, ">") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
				t.Fatalf("%s:%d: expected a statement ('> ...'), a comment or a blank line, got %q", path, i+1, l)
			}
			pending = append(pending, l)
			i++
			continue
		}
		b := corpusBlock{comments: pending, line: i + 1}
		pending = nil
		batch := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(l, ">"))), "BEGIN")
		ends := func(l string) bool {
			l = strings.ToUpper(strings.TrimSpace(l))
			if batch {
				return strings.HasSuffix(l, "APPLY BATCH;")
			}
			return strings.HasSuffix(l, ";")
		}
		done := false
		for ; i < len(lines) && !done; i++ {
			b.stmt = append(b.stmt, lines[i])
			done = ends(lines[i])
		}
		if !done {
			t.Fatalf("%s:%d: statement does not end with ';'", path, b.line)
		}
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			b.expected = append(b.expected, lines[i])
		}
		blocks = append(blocks, b)
	}
	return blocks, pending
}

func (b corpusBlock) query() string {
	q := strings.Join(b.stmt, "\n")
	q = strings.TrimSpace(strings.TrimPrefix(q, ">"))
	return strings.TrimSpace(strings.TrimSuffix(q, ";"))
}

func runCorpusFile(t *testing.T, s *gocql.Session, path string) {
	blocks, trailer := parseCorpusFile(t, path)
	var out strings.Builder
	for _, b := range blocks {
		actual := corpusRun(s, b.query())
		if *corpusRewrite {
			for _, c := range b.comments {
				out.WriteString(c + "\n")
			}
			for _, l := range b.stmt {
				out.WriteString(l + "\n")
			}
			for _, l := range actual {
				out.WriteString(l + "\n")
			}
			continue
		}
		if !corpusMatch(b.expected, actual) {
			t.Errorf("%s:%d: %s\nexpected:\n%s\nactual:\n%s", path, b.line, b.query(),
				strings.Join(b.expected, "\n"), strings.Join(actual, "\n"))
		}
	}
	if *corpusRewrite {
		// Blank lines end blocks: keep exactly one after the last one.
		for _, c := range trailer {
			if strings.TrimSpace(c) != "" {
				out.WriteString(c + "\n")
			}
		}
		text := strings.TrimRight(out.String(), "\n") + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// corpusMatch compares outputs; an expected error line matches an actual one
// with the same code whose message contains the expected message.
func corpusMatch(expected, actual []string) bool {
	if len(expected) != len(actual) {
		return false
	}
	for i := range expected {
		e, a := expected[i], actual[i]
		if e == a {
			continue
		}
		if !strings.HasPrefix(e, "error ") || !strings.HasPrefix(a, "error ") {
			return false
		}
		ec, em, _ := strings.Cut(e, ": ")
		ac, am, _ := strings.Cut(a, ": ")
		if ec != ac || !strings.Contains(am, em) {
			return false
		}
	}
	return true
}

// corpusCell receives a column's raw value.
type corpusCell struct {
	info gocql.TypeInfo
	data []byte
	null bool
}

func (c *corpusCell) UnmarshalCQL(info gocql.TypeInfo, data []byte) error {
	c.info = info
	c.null = data == nil
	c.data = append([]byte(nil), data...)
	return nil
}

// corpusRun runs one statement and renders its answer.
func corpusRun(s *gocql.Session, q string) []string {
	// gocql PREPAREs every statement whose first word is SELECT, INSERT,
	// UPDATE, DELETE or BATCH; a leading comment keeps it a simple QUERY
	// (corpusError takes its length back out of syntax error positions).
	iter := s.Query(corpusPrefix + q).PageSize(5000).Iter()
	cols := iter.Columns()
	var out []string
	if len(cols) > 0 {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		out = append(out, strings.Join(names, " | "))
		// gocql scans a tuple column into one destination per element.
		var dest []any
		widths := make([]int, len(cols))
		for i, c := range cols {
			widths[i] = 1
			if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
				widths[i] = len(tt.Elems)
			}
			for j := 0; j < widths[i]; j++ {
				dest = append(dest, &corpusCell{})
			}
		}
		for iter.Scan(dest...) {
			vals := make([]string, len(cols))
			next := 0
			for i := range cols {
				var parts []string
				for j := 0; j < widths[i]; j++ {
					c := dest[next].(*corpusCell)
					next++
					if c.null {
						parts = append(parts, "null")
					} else {
						parts = append(parts, renderCQL(c.info, c.data))
					}
				}
				if _, ok := cols[i].TypeInfo.(gocql.TupleTypeInfo); ok {
					vals[i] = "(" + strings.Join(parts, ", ") + ")"
				} else {
					vals[i] = parts[0]
				}
			}
			out = append(out, strings.Join(vals, " | "))
		}
	}
	if err := iter.Close(); err != nil {
		return []string{corpusUnshift(corpusError(err))}
	}
	if len(cols) == 0 {
		return []string{"ok"}
	}
	return out
}

const corpusPrefix = "/* corpus */ "

var corpusLine1 = regexp.MustCompile(`line 1:(\d+)`)

// corpusUnshift takes corpusPrefix out of the positions on the first line.
func corpusUnshift(msg string) string {
	return corpusLine1.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line 1:"))
		return "line 1:" + strconv.Itoa(n-len(corpusPrefix))
	})
}

var corpusErrorNames = map[int]string{
	0x0000: "ServerError", 0x000A: "ProtocolError", 0x0100: "BadCredentials",
	0x1000: "Unavailable", 0x1001: "Overloaded", 0x1002: "IsBootstrapping",
	0x1003: "Truncate", 0x1100: "WriteTimeout", 0x1200: "ReadTimeout",
	0x1300: "ReadFailure", 0x1400: "FunctionFailure", 0x1500: "WriteFailure",
	0x2000: "SyntaxError", 0x2100: "Unauthorized", 0x2200: "Invalid",
	0x2300: "ConfigError", 0x2400: "AlreadyExists", 0x2500: "Unprepared",
}

func corpusError(err error) string {
	if re, ok := err.(gocql.RequestError); ok {
		name, ok := corpusErrorNames[re.Code()]
		if !ok {
			name = fmt.Sprintf("0x%04x", re.Code())
		}
		return fmt.Sprintf("error %s: %s", name, strings.ReplaceAll(re.Message(), "\n", " "))
	}
	return "error client: " + strings.ReplaceAll(err.Error(), "\n", " ")
}

// renderCQL renders a non-null value of type info as a CQL literal.
func renderCQL(info gocql.TypeInfo, b []byte) string {
	switch info.Type() {
	case gocql.TypeAscii, gocql.TypeVarchar, gocql.TypeText:
		return "'" + strings.ReplaceAll(string(b), "'", "''") + "'"
	case gocql.TypeBlob, gocql.TypeCustom:
		return "0x" + hex.EncodeToString(b)
	case gocql.TypeBoolean:
		if len(b) == 1 {
			return strconv.FormatBool(b[0] != 0)
		}
	case gocql.TypeTinyInt:
		if len(b) == 1 {
			return strconv.Itoa(int(int8(b[0])))
		}
	case gocql.TypeSmallInt:
		if len(b) == 2 {
			return strconv.Itoa(int(int16(binary.BigEndian.Uint16(b))))
		}
	case gocql.TypeInt:
		if len(b) == 4 {
			return strconv.Itoa(int(int32(binary.BigEndian.Uint32(b))))
		}
	case gocql.TypeBigInt, gocql.TypeCounter:
		if len(b) == 8 {
			return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10)
		}
	case gocql.TypeVarint:
		return corpusVarint(b).String()
	case gocql.TypeDecimal:
		if len(b) >= 4 {
			return corpusDecimal(int32(binary.BigEndian.Uint32(b)), corpusVarint(b[4:]))
		}
	case gocql.TypeFloat:
		if len(b) == 4 {
			return corpusFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32)
		}
	case gocql.TypeDouble:
		if len(b) == 8 {
			return corpusFloat(math.Float64frombits(binary.BigEndian.Uint64(b)), 64)
		}
	case gocql.TypeTimestamp:
		if len(b) == 8 {
			ms := int64(binary.BigEndian.Uint64(b))
			return "'" + time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") + "'"
		}
	case gocql.TypeDate:
		if len(b) == 4 {
			days := int64(binary.BigEndian.Uint32(b)) - 1<<31
			return "'" + time.Unix(days*86400, 0).UTC().Format("2006-01-02") + "'"
		}
	case gocql.TypeTime:
		if len(b) == 8 {
			ns := int64(binary.BigEndian.Uint64(b))
			return fmt.Sprintf("'%02d:%02d:%02d.%09d'", ns/3600e9, ns/60e9%60, ns/1e9%60, ns%1e9)
		}
	case gocql.TypeUUID, gocql.TypeTimeUUID:
		if u, err := gocql.UUIDFromBytes(b); err == nil {
			return u.String()
		}
	case gocql.TypeInet:
		if len(b) == 4 || len(b) == 16 {
			return "'" + net.IP(b).String() + "'"
		}
	case gocql.TypeDuration:
		if d, ok := corpusDuration(b); ok {
			return d
		}
	case gocql.TypeList, gocql.TypeSet, gocql.TypeMap:
		if s, ok := corpusCollection(info.(gocql.CollectionType), b); ok {
			return s
		}
	case gocql.TypeTuple:
		if s, ok := corpusTuple(info.(gocql.TupleTypeInfo), b); ok {
			return s
		}
	case gocql.TypeUDT:
		if s, ok := corpusUDT(info.(gocql.UDTTypeInfo), b); ok {
			return s
		}
	}
	return fmt.Sprintf("<bad %s 0x%x>", info, b)
}

func corpusVarint(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// corpusDecimal renders unscaled × 10^-scale as Java's BigDecimal.toString.
func corpusDecimal(scale int32, unscaled *big.Int) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	adjusted := int64(len(digits)) - 1 - int64(scale)
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + digits
		}
		if int(scale) >= len(digits) {
			return sign + "0." + strings.Repeat("0", int(scale)-len(digits)) + digits
		}
		return sign + digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	exp := strconv.FormatInt(adjusted, 10)
	if adjusted >= 0 {
		exp = "+" + exp
	}
	return sign + m + "E" + exp
}

func corpusFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0" // as Java's Double.toString, to tell floats from integers
	}
	return s
}

func corpusVint(b []byte) (int64, []byte, bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	first := b[0]
	n := 0
	for n < 8 && first&(0x80>>n) != 0 {
		n++
	}
	if len(b) < n+1 {
		return 0, nil, false
	}
	v := uint64(first & (0xff >> (n + 1)))
	if n == 8 {
		v = 0
	}
	for i := 1; i <= n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return int64(v>>1) ^ -int64(v&1), b[n+1:], true
}

// corpusDuration renders a duration as Cassandra's Duration.toString.
func corpusDuration(b []byte) (string, bool) {
	months, b, ok1 := corpusVint(b)
	days, b, ok2 := corpusVint(b)
	nanos, b, ok3 := corpusVint(b)
	if !ok1 || !ok2 || !ok3 || len(b) != 0 {
		return "", false
	}
	var sb strings.Builder
	if months < 0 || days < 0 || nanos < 0 {
		sb.WriteString("-")
		months, days, nanos = -months, -days, -nanos
	}
	part := func(v int64, unit string) {
		if v != 0 {
			sb.WriteString(strconv.FormatInt(v, 10) + unit)
		}
	}
	part(months/12, "y")
	part(months%12, "mo")
	part(days, "d")
	part(nanos/3600e9, "h")
	part(nanos/60e9%60, "m")
	part(nanos/1e9%60, "s")
	part(nanos/1e6%1000, "ms")
	part(nanos/1e3%1000, "us")
	part(nanos%1000, "ns")
	if sb.Len() == 0 || sb.String() == "-" {
		return "0s", true
	}
	return sb.String(), true
}

// corpusElem reads one [int length][bytes] element.
func corpusElem(b []byte) (elem []byte, null bool, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, false, nil, false
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 {
		return nil, true, b, true
	}
	if int(n) > len(b) {
		return nil, false, nil, false
	}
	return b[:n], false, b[n:], true
}

func corpusValue(info gocql.TypeInfo, b []byte, null bool) string {
	if null {
		return "null"
	}
	return renderCQL(info, b)
}

func corpusCollection(info gocql.CollectionType, b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	var parts []string
	for i := 0; i < n; i++ {
		if info.Type() == gocql.TypeMap {
			k, kn, rest, ok := corpusElem(b)
			if !ok {
				return "", false
			}
			v, vn, rest, ok := corpusElem(rest)
			if !ok {
				return "", false
			}
			b = rest
			parts = append(parts, corpusValue(info.Key, k, kn)+": "+corpusValue(info.Elem, v, vn))
			continue
		}
		e, en, rest, ok := corpusElem(b)
		if !ok {
			return "", false
		}
		b = rest
		parts = append(parts, corpusValue(info.Elem, e, en))
	}
	if len(b) != 0 {
		return "", false
	}
	if info.Type() == gocql.TypeList {
		return "[" + strings.Join(parts, ", ") + "]", true
	}
	return "{" + strings.Join(parts, ", ") + "}", true
}

func corpusTuple(info gocql.TupleTypeInfo, b []byte) (string, bool) {
	var parts []string
	for _, et := range info.Elems {
		if len(b) == 0 {
			parts = append(parts, "null")
			continue
		}
		e, en, rest, ok := corpusElem(b)
		if !ok {
			return "", false
		}
		b = rest
		parts = append(parts, corpusValue(et, e, en))
	}
	return "(" + strings.Join(parts, ", ") + ")", len(b) == 0
}

func corpusUDT(info gocql.UDTTypeInfo, b []byte) (string, bool) {
	var parts []string
	for _, f := range info.Elements {
		if len(b) == 0 {
			parts = append(parts, f.Name+": null")
			continue
		}
		e, en, rest, ok := corpusElem(b)
		if !ok {
			return "", false
		}
		b = rest
		parts = append(parts, f.Name+": "+corpusValue(f.Type, e, en))
	}
	return "{" + strings.Join(parts, ", ") + "}", len(b) == 0
}
