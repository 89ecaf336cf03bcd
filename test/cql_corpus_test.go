package test

// TestCQLCorpus runs the CQL scripts under testdata/cql twice, over the
// wire with gocql and in process through Coordinator.Handle, and compares
// cqld's answers with the expected ones written in the files (datadriven,
// in the manner of cockroach's datadriven package). The runner takes a
// corpusSession, so the same files can run against any node or cluster.
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
// shared by all files of a run; each run has a node of its own.
//
// known_differences.cql is not run: it records, with Cassandra 4.0's
// answers, the cases where cqld answers differently.
//
// To regenerate every expected output from cqld's actual answers (over
// gocql; the in-process run then checks itself against them):
//
//	go test ./test -run CQLCorpus -args -rewrite
//
// Then read the diff: the expectations must be what Cassandra 4.0 answers.

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cqld/cqld/config"
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
	t.Run("gocql", func(t *testing.T) {
		node := startNode(t, corpusConfig(t))
		runCorpus(t, files, *corpusRewrite, func(t *testing.T, ks string) corpusSession {
			return gocqlCorpusSession{tableSession(t, node.Addr(), ks)}
		})
	})
	t.Run("inprocess", func(t *testing.T) {
		node := startNode(t, corpusConfig(t))
		runCorpus(t, files, false, func(t *testing.T, ks string) corpusSession {
			return newInProcessCorpusSession(t, node.Coord, ks)
		})
	})
}

// corpusConfig is the configuration of a node the corpus runs on:
// user-defined functions enabled, for udf.cql.
func corpusConfig(t *testing.T) config.Config {
	cfg := testConfig(t, t.TempDir())
	cfg.UserDefinedFunctionsEnabled, cfg.ScriptedUserDefinedFunctionsEnabled = true, true
	return cfg
}

// runCorpus runs each file in a subtest, on a session open gives it in a
// fresh keyspace named after the file, rewriting the file's expected
// outputs instead of comparing when rewrite is set.
func runCorpus(t *testing.T, files []string, rewrite bool, open func(t *testing.T, keyspace string) corpusSession) {
	for _, file := range files {
		if corpusSkipped[filepath.Base(file)] {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".cql")
		t.Run(name, func(t *testing.T) {
			runCorpusFile(t, open(t, name), file, rewrite)
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

func runCorpusFile(t *testing.T, s corpusSession, path string, rewrite bool) {
	blocks, trailer := parseCorpusFile(t, path)
	var out strings.Builder
	for _, b := range blocks {
		actual := s.query(b.query()).lines()
		if rewrite {
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
	if rewrite {
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
