package stress

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/gocql/gocql"
)

// errValidation marks a read that returned other values than were written.
var errValidation = errors.New("stress: read returned values that differ from the ones written")

// opFunc runs one operation on key seed.
type opFunc func(seed int64) (opOutcome, error)

// kindDef is an operation kind of a workload; bind makes a worker's own
// instance (with its own buffers).
type kindDef struct {
	name   string
	weight int
	// stmts lists the statements the kind runs (known once the schema
	// exists), for preparing them ahead in one batch.
	stmts func() []string
	// pop overrides the run's key population (user profiles).
	pop  *Dist
	bind func(w *worker) opFunc
}

var builtinKinds = map[string]bool{
	"write": true, "update": true, "read": true, "counter_write": true, "counter_read": true, "cas": true,
	"serial_read": true,
}

const columns = 5 // C0..C4, as cassandra-stress

// builtinTable is the table a built-in kind works on. cas has a table of
// its own, so that the values it changes never fail a read's check;
// serial_read reads it (cas_populate writes it, for -populate).
func builtinTable(kind string) string {
	switch kind {
	case "write", "update", "read":
		return "standard1"
	case "cas", "serial_read", "cas_populate":
		return "cas1"
	case "counter_write", "counter_read":
		return "counter1"
	}
	return ""
}

// builtin returns the kind name for the default schema.
func builtin(name string, weight int, c *Config) kindDef {
	ks := c.Keyspace
	cols := `"C0", "C1", "C2", "C3", "C4"`
	k := kindDef{name: name, weight: weight}
	switch name {
	case "write", "cas_populate":
		// cas_populate is -populate for serial_read: plain writes of
		// cas1's rows.
		stmt := "INSERT INTO " + ks + "." + builtinTable(name) + " (key, " + cols + ") VALUES (?, ?, ?, ?, ?, ?)"
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := make([]any, 1+columns)
			return func(seed int64) (opOutcome, error) {
				vals[0] = w.key(seed)
				w.fillValues(seed, vals[1:])
				return opOutcome{partitions: 1, rows: 1}, w.exec(stmt, vals)
			}
		}
	case "update":
		// One column of one row, as a key-value store's SET: C0 gets the
		// value write gives it, so reads still find what write stored.
		stmt := "UPDATE " + ks + `.standard1 SET "C0" = ? WHERE key = ?`
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := make([]any, 2)
			return func(seed int64) (opOutcome, error) {
				w.fillValues(seed, vals[:1])
				vals[1] = w.key(seed)
				return opOutcome{partitions: 1, rows: 1}, w.exec(stmt, vals)
			}
		}
	case "read":
		stmt := "SELECT key, " + cols + " FROM " + ks + ".standard1 WHERE key = ?"
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := make([]any, 1)
			want := make([]any, columns)
			got, dest := scanInto[[]byte](1 + columns)
			return func(seed int64) (opOutcome, error) {
				vals[0] = w.key(seed)
				w.fillValues(seed, want)
				rows := 0
				err := w.iterate(stmt, vals, dest, func() error {
					rows++
					for i, v := range want {
						if !bytes.Equal(v.([]byte), got[1+i]) {
							return fmt.Errorf("%w: key %d column C%d", errValidation, seed, i)
						}
					}
					return nil
				})
				return opOutcome{partitions: 1, rows: rows, notFound: rows == 0}, err
			}
		}
	case "counter_write":
		stmt := "UPDATE " + ks + `.counter1 SET "C0" = "C0" + ?, "C1" = "C1" + ?, "C2" = "C2" + ?, "C3" = "C3" + ?, "C4" = "C4" + ? WHERE key = ?`
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := []any{int64(1), int64(1), int64(1), int64(1), int64(1), nil}
			return func(seed int64) (opOutcome, error) {
				vals[columns] = w.key(seed)
				return opOutcome{partitions: 1, rows: 1}, w.exec(stmt, vals)
			}
		}
	case "counter_read":
		stmt := "SELECT " + cols + " FROM " + ks + ".counter1 WHERE key = ?"
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := make([]any, 1)
			_, dest := scanInto[int64](columns)
			return func(seed int64) (opOutcome, error) {
				vals[0] = w.key(seed)
				rows := 0
				err := w.iterate(stmt, vals, dest, func() error { rows++; return nil })
				return opOutcome{partitions: 1, rows: rows, notFound: rows == 0}, err
			}
		}
	case "serial_read":
		// A lightweight transaction's read alone: the consistency level is
		// the run's serial level.
		stmt := "SELECT key, \"C0\" FROM " + ks + ".cas1 WHERE key = ?"
		cl := gocql.Consistency(c.SerialCL)
		k.stmts = func() []string { return []string{stmt} }
		k.bind = func(w *worker) opFunc {
			vals := make([]any, 1)
			_, dest := scanInto[[]byte](2)
			return func(seed int64) (opOutcome, error) {
				vals[0] = w.key(seed)
				rows := 0
				err := w.iterateAt(cl, stmt, vals, dest, func() error { rows++; return nil })
				return opOutcome{partitions: 1, rows: rows, notFound: rows == 0}, err
			}
		}
	case "cas":
		known := &casKnown{}
		insert, update := casStatements(ks, cols)
		k.stmts = func() []string { return []string{insert, update} }
		k.bind = func(w *worker) opFunc { return w.casOp(ks, cols, known) }
	}
	return k
}

// scanInto returns n values and pointers to them, for Iter.Scan.
func scanInto[T any](n int) ([]T, []any) {
	v := make([]T, n)
	p := make([]any, n)
	for i := range v {
		p[i] = &v[i]
	}
	return v, p
}

// casKnown is, per key, the C0 the tool last knew in cas1, shared by the
// workers so that a failed condition means real contention. Safe for
// concurrent use; each stripe is bounded.
type casKnown struct {
	mu [64]sync.Mutex
	m  [64]map[int64][]byte
}

func (k *casKnown) get(seed int64) ([]byte, bool) {
	i := uint64(seed) % 64
	k.mu[i].Lock()
	defer k.mu[i].Unlock()
	v, ok := k.m[i][seed]
	return v, ok
}

func (k *casKnown) set(seed int64, v []byte) {
	i := uint64(seed) % 64
	k.mu[i].Lock()
	defer k.mu[i].Unlock()
	if k.m[i] == nil || len(k.m[i]) > 1<<16 {
		k.m[i] = map[int64][]byte{}
	}
	if v == nil {
		delete(k.m[i], seed)
	} else {
		k.m[i][seed] = v
	}
}

// casOp inserts a row of cas1 with IF NOT EXISTS while the tool knows no
// value for its key, and otherwise replaces C0 with UPDATE ... IF "C0" =
// <the known value>. A condition that fails (another worker or client
// changed the row first) is not an error: the server's current value
// becomes the known one and the operation counts as not applied.
func (w *worker) casOp(ks, cols string, known *casKnown) opFunc {
	insert, update := casStatements(ks, cols)
	vals := make([]any, 1+columns)
	cur := map[string]any{}
	return func(seed int64) (opOutcome, error) {
		key := w.key(seed)
		var stmt string
		var args []any
		var next []byte
		if old, ok := known.get(seed); ok {
			next = binary.BigEndian.AppendUint64(nil, w.rnd.Uint64())
			stmt, args = update, []any{next, key, old}
		} else {
			vals[0] = key
			w.fillValues(seed, vals[1:])
			next = append([]byte(nil), vals[1].([]byte)...)
			stmt, args = insert, vals
		}
		clear(cur)
		applied, err := w.cas(stmt, args, cur)
		if err != nil {
			return opOutcome{}, err
		}
		if applied {
			known.set(seed, next)
		} else if v, ok := cur["C0"].([]byte); ok {
			known.set(seed, v)
		} else {
			known.set(seed, nil)
		}
		return opOutcome{partitions: 1, rows: 1, notApplied: !applied}, nil
	}
}

// casStatements are the cas kind's INSERT ... IF NOT EXISTS and
// UPDATE ... IF.
func casStatements(ks, cols string) (insert, update string) {
	return "INSERT INTO " + ks + ".cas1 (key, " + cols + ") VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS",
		"UPDATE " + ks + `.cas1 SET "C0" = ? WHERE key = ? IF "C0" = ?`
}

// worker is one load-generating goroutine's state. Not safe for concurrent
// use. It sends its requests through the run's gocql session s or, in the
// lean mode, over its own connection lean.
type worker struct {
	id      int
	s       *gocql.Session
	lean    *leanConn
	cfg     *Config
	rnd     *rand.Rand // choices: kind, key
	vpcg    *rand.PCG  // values: reseeded per (key, column) so a read knows what was written
	vrnd    *rand.Rand
	size    Sampler
	pool    []byte
	keyBuf  [8]byte
	textBuf []byte
}

// valuePool is the bytes values are cut from; it is the same in every
// worker and every run, so a read can check what a write stored.
func valuePool(maxSize int64) []byte {
	n := max(1<<16, 2*int(maxSize))
	p := make([]byte, n)
	r := rand.New(rand.NewPCG(0x5eed, 0xc0ffee))
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(p[i:], r.Uint64())
	}
	return p
}

func newWorker(id int, s *gocql.Session, lean *leanConn, c *Config, pool []byte) *worker {
	w := &worker{id: id, s: s, lean: lean, cfg: c, pool: pool,
		rnd: rand.New(rand.NewPCG(c.Seed, uint64(id)+1)), vpcg: rand.NewPCG(0, 0)}
	w.vrnd = rand.New(w.vpcg)
	w.size = c.ColSize.Sampler(w.vrnd)
	return w
}

// key is cassandra-stress's partition key for seed: here its 8 bytes big
// endian. The slice is reused by the next call.
func (w *worker) key(seed int64) []byte {
	binary.BigEndian.PutUint64(w.keyBuf[:], uint64(seed))
	return w.keyBuf[:]
}

// fillValues sets dst to the values of key seed, sliced from the pool.
func (w *worker) fillValues(seed int64, dst []any) {
	for i := range dst {
		w.vpcg.Seed(uint64(seed), uint64(i))
		n := int(w.size.Next())
		off := w.vrnd.IntN(len(w.pool) - n + 1)
		dst[i] = w.pool[off : off+n]
	}
}

// stmtFor returns what to send: in simple mode the values are written into
// the text as literals (a leading comment keeps gocql from preparing it).
func (w *worker) stmtFor(stmt string, vals []any) (string, []any) {
	if w.cfg.Prepared {
		return stmt, vals
	}
	b := append(w.textBuf[:0], "/* cqlstress */ "...)
	b = appendInlined(b, stmt, vals)
	w.textBuf = b
	return string(b), nil
}

func (w *worker) exec(stmt string, vals []any) error {
	stmt, vals = w.stmtFor(stmt, vals)
	if w.lean != nil {
		return w.lean.run(stmt, w.cfg.Prepared, vals, nil, nil)
	}
	q := w.s.Query(stmt, vals...)
	err := q.Exec()
	q.Release()
	return err
}

// iterate runs a query and calls row after each row is scanned into dest.
func (w *worker) iterate(stmt string, vals []any, dest []any, row func() error) error {
	if w.lean != nil {
		stmt, vals = w.stmtFor(stmt, vals)
		return w.lean.run(stmt, w.cfg.Prepared, vals, dest, row)
	}
	return w.iterateAt(w.cfg.CL, stmt, vals, dest, row)
}

// iterateAt is iterate at consistency level cl, through gocql.
func (w *worker) iterateAt(cl gocql.Consistency, stmt string, vals []any, dest []any, row func() error) error {
	stmt, vals = w.stmtFor(stmt, vals)
	q := w.s.Query(stmt, vals...).Consistency(cl)
	it := q.Iter()
	var rowErr error
	for rowErr == nil && it.Scan(dest...) {
		rowErr = row()
	}
	err := it.Close()
	q.Release()
	if rowErr != nil {
		return rowErr
	}
	return err
}

func (w *worker) cas(stmt string, vals []any, cur map[string]any) (bool, error) {
	stmt, vals = w.stmtFor(stmt, vals)
	q := w.s.Query(stmt, vals...)
	applied, err := q.MapScanCAS(cur)
	q.Release()
	return applied, err
}

// appendInlined appends stmt with each ? replaced by the CQL literal of the
// next value. Question marks inside quoted strings are left alone.
func appendInlined(b []byte, stmt string, vals []any) []byte {
	quote := byte(0)
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?' && len(vals) > 0:
			b = appendLiteral(b, vals[0])
			vals = vals[1:]
			continue
		}
		b = append(b, c)
	}
	return b
}

func appendLiteral(b []byte, v any) []byte {
	switch v := v.(type) {
	case []byte:
		b = append(b, "0x"...)
		return hex.AppendEncode(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case string:
		b = append(b, '\'')
		b = append(b, strings.ReplaceAll(v, "'", "''")...)
		return append(b, '\'')
	case nil:
		return append(b, "null"...)
	}
	return fmt.Appendf(b, "%v", v)
}
