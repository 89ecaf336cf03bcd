package stress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/yaml.v3"
)

// Profile is a user workload in the shape of a cassandra-stress profile:
//
//	keyspace: ks
//	keyspace_definition: CREATE KEYSPACE ks WITH replication = {...}
//	table: t
//	table_definition: CREATE TABLE t (...)
//	columnspec:
//	  - name: k
//	    size: uniform(5..10)        # text and blob lengths
//	    population: uniform(1..1M)  # the partition key's: the key population
//	  - name: c
//	    cluster: fixed(10)          # clustering rows per partition
//	queries:
//	  byk:
//	    cql: SELECT * FROM t WHERE k = ?
//
// The operation "insert" writes one row with every column; each named query
// is an operation too. ops(insert=1,byk=3) weighs them. Bind markers are
// filled by column name from the same generator the insert uses, so a query
// on a key finds what insert wrote for it.
type Profile struct {
	Keyspace    string                  `yaml:"keyspace"`
	KeyspaceDef string                  `yaml:"keyspace_definition"`
	Table       string                  `yaml:"table"`
	TableDef    string                  `yaml:"table_definition"`
	ColumnSpec  []ColumnSpec            `yaml:"columnspec"`
	Queries     map[string]ProfileQuery `yaml:"queries"`
	Insert      map[string]any          `yaml:"insert"` // accepted, not used
}

// ColumnSpec is how one column's values are drawn.
type ColumnSpec struct {
	Name       string `yaml:"name"`
	Size       string `yaml:"size"`
	Population string `yaml:"population"`
	Cluster    string `yaml:"cluster"`
}

// ProfileQuery is a named query of a profile.
type ProfileQuery struct {
	CQL    string `yaml:"cql"`
	Fields string `yaml:"fields"` // accepted, not used: values always come from one generated row
}

// LoadProfile reads and checks a profile file.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("stress: profile: %w", err)
	}
	var p Profile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("stress: profile %s: %w", path, err)
	}
	if p.Keyspace == "" || p.Table == "" {
		return nil, fmt.Errorf("stress: profile %s: keyspace and table are required", path)
	}
	return &p, nil
}

// workload is what a run executes: its operation kinds, what populates
// its tables, and how to create its schema.
type workload struct {
	kinds        []kindDef
	populate     []kindDef
	keyspace     string // the session's keyspace (user profiles)
	schema       func(s *gocql.Session) error
	tables       func(s *gocql.Session) error // after the keyspace exists, on the keyspace's session
	maxValueSize int64
}

func loadWorkload(c *Config) (*workload, error) {
	if c.Command != "user" {
		wl := &workload{}
		std, ctr, cas := false, false, false
		for _, w := range c.Ratio {
			wl.kinds = append(wl.kinds, builtin(w.Name, w.Weight, c))
			std = std || w.Name == "write" || w.Name == "read"
			ctr = ctr || strings.HasPrefix(w.Name, "counter_")
			cas = cas || w.Name == "serial_read"
		}
		if cas {
			wl.populate = append(wl.populate, builtin("cas_populate", 1, c))
		}
		if std {
			wl.populate = append(wl.populate, builtin("write", 1, c))
		}
		if ctr {
			wl.populate = append(wl.populate, builtin("counter_write", 1, c))
		}
		wl.schema = func(s *gocql.Session) error { return createSchema(s, c, wl.kinds) }
		return wl, nil
	}
	p, err := LoadProfile(c.Profile)
	if err != nil {
		return nil, err
	}
	if !c.Prepared {
		return nil, fmt.Errorf("%w: user profiles run prepared statements (their values are typed by the server's bind metadata)", ErrUsage)
	}
	g := &rowGen{specs: map[string]colGen{}}
	for _, cs := range p.ColumnSpec {
		cg := colGen{size: Dist{Kind: "uniform", Min: 4, Max: 8}, cluster: Fixed(1)}
		if cs.Size != "" {
			if cg.size, err = ParseDist(cs.Size); err != nil {
				return nil, err
			}
		}
		if cs.Cluster != "" {
			if cg.cluster, err = ParseDist(cs.Cluster); err != nil {
				return nil, err
			}
		}
		if cs.Population != "" && !c.PopGiven {
			// The partition key's population is the run's key population
			// (profiles name it on the first partition key column).
			d, err := ParseDist(cs.Population)
			if err != nil {
				return nil, err
			}
			cg.population = &d
		}
		g.specs[strings.ToLower(cs.Name)] = cg
	}
	wl := &workload{keyspace: p.Keyspace, maxValueSize: 1 << 16}
	wl.schema = func(s *gocql.Session) error {
		if p.KeyspaceDef == "" {
			return nil
		}
		return execIgnoringExists(s, p.KeyspaceDef)
	}
	var insertStmt string
	wl.tables = func(s *gocql.Session) error {
		if p.TableDef != "" {
			if err := execIgnoringExists(s, p.TableDef); err != nil {
				return err
			}
		}
		cols, err := tableColumns(s, p.Keyspace, p.Table, g)
		if err != nil {
			return err
		}
		if len(g.pk) > 0 {
			if cg := g.specs[g.pk[0]]; cg.population != nil {
				c.Pop = *cg.population
			}
		}
		quoted := make([]string, len(cols))
		for i, n := range cols {
			quoted[i] = `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
		}
		insertStmt = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", p.Table, strings.Join(quoted, ", "),
			strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
		return nil
	}
	insert := func(weight int) kindDef {
		return kindDef{name: "insert", weight: weight, stmts: func() []string { return []string{insertStmt} }, bind: func(w *worker) opFunc {
			return g.op(w, func() string { return insertStmt }, false)
		}}
	}
	for _, op := range c.Ratio {
		if op.Name == "insert" {
			wl.kinds = append(wl.kinds, insert(op.Weight))
			continue
		}
		q, ok := p.Queries[op.Name]
		if !ok {
			return nil, fmt.Errorf("%w: ops: %q is neither insert nor a query of %s", ErrUsage, op.Name, c.Profile)
		}
		stmt := q.CQL
		wl.kinds = append(wl.kinds, kindDef{name: op.Name, weight: op.Weight, stmts: func() []string { return []string{stmt} }, bind: func(w *worker) opFunc {
			return g.op(w, func() string { return stmt }, true)
		}})
	}
	wl.populate = []kindDef{insert(1)}
	return wl, nil
}

// tableColumns reads a table's columns from system_schema (gocql's own
// metadata cache lags behind a table created a moment ago): partition key
// and clustering columns in key order, then the others by name. It records
// the key columns in g.
func tableColumns(s *gocql.Session, ks, table string, g *rowGen) ([]string, error) {
	q := appendInlined([]byte("/* cqlstress */ "), `SELECT column_name, kind, position FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`, []any{ks, table})
	it := s.Query(string(q)).Iter()
	type col struct {
		name, kind string
		pos        int
	}
	var all []col
	var c col
	for it.Scan(&c.name, &c.kind, &c.pos) {
		all = append(all, c)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("stress: profile: columns of %s.%s: %w", ks, table, err)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("stress: profile: table %s.%s not found", ks, table)
	}
	rank := map[string]int{"partition_key": 0, "clustering": 1}
	sort.Slice(all, func(i, j int) bool {
		ri, oki := rank[all[i].kind]
		rj, okj := rank[all[j].kind]
		if !oki {
			ri = 2
		}
		if !okj {
			rj = 2
		}
		if ri != rj {
			return ri < rj
		}
		if ri < 2 {
			return all[i].pos < all[j].pos
		}
		return all[i].name < all[j].name
	})
	var names []string
	for _, c := range all {
		names = append(names, c.name)
		switch c.kind {
		case "partition_key":
			g.pk = append(g.pk, strings.ToLower(c.name))
		case "clustering":
			g.ck = append(g.ck, strings.ToLower(c.name))
		}
	}
	return names, nil
}

// execIgnoringExists runs a CREATE statement, accepting "already exists".
func execIgnoringExists(s *gocql.Session, stmt string) error {
	err := s.Query(stmt).Exec()
	var re gocql.RequestError
	if err != nil && !(errors.As(err, &re) && re.Code() == gocql.ErrCodeAlreadyExists) {
		return fmt.Errorf("stress: profile: %s: %w", strings.TrimSpace(stmt), err)
	}
	return nil
}

// rowGen makes a profile's column values. A row is identified by its
// partition seed and its clustering index; every column value is a pure
// function of (column, partition seed, clustering index), so queries find
// the rows inserts wrote.
type rowGen struct {
	specs map[string]colGen
	pk    []string
	ck    []string
}

type colGen struct {
	size       Dist
	cluster    Dist
	population *Dist
}

// op makes one worker's operation for a statement; read says whether to
// count the rows it returns.
func (g *rowGen) op(w *worker, stmt func() string, read bool) opFunc {
	var seed, row int64
	bind := func(qi *gocql.QueryInfo) ([]any, error) {
		vals := make([]any, len(qi.Args))
		for i, a := range qi.Args {
			v, err := g.value(w, strings.ToLower(a.Name), a.TypeInfo, seed, row)
			if err != nil {
				return nil, fmt.Errorf("stress: bind %s: %w", a.Name, err)
			}
			vals[i] = v
		}
		return vals, nil
	}
	return func(s int64) (opOutcome, error) {
		seed, row = s, g.rowIndex(w, s)
		q := w.s.Bind(stmt(), bind)
		defer q.Release()
		if !read {
			return opOutcome{partitions: 1, rows: 1}, q.Exec()
		}
		it := q.Iter()
		sc := it.Scanner()
		rows := 0
		for sc.Next() {
			rows++
		}
		err := sc.Err()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		return opOutcome{partitions: 1, rows: rows, notFound: rows == 0}, err
	}
}

// rowIndex draws a clustering row of partition seed: the partition's row
// count is drawn (deterministically per partition) from the first
// clustering column's cluster distribution.
func (g *rowGen) rowIndex(w *worker, seed int64) int64 {
	if len(g.ck) == 0 {
		return 0
	}
	cg := g.specs[g.ck[0]]
	w.vpcg.Seed(uint64(seed), 0xc1)
	n := max(cg.cluster.Sampler(w.vrnd).Next(), 1)
	return w.rnd.Int64N(n)
}

// value is column name's value for (seed, row), typed for t. Partition key
// columns depend on seed only.
func (g *rowGen) value(w *worker, name string, t gocql.TypeInfo, seed, row int64) (any, error) {
	h := fnv.New64a()
	h.Write([]byte(name))
	isPK := false
	for _, p := range g.pk {
		isPK = isPK || p == name
	}
	if isPK {
		row = 0
	}
	w.vpcg.Seed(uint64(seed)^h.Sum64(), uint64(row))
	r := w.vrnd
	cg, ok := g.specs[name]
	if !ok {
		cg = colGen{size: Dist{Kind: "uniform", Min: 4, Max: 8}}
	}
	size := func() int { return int(cg.size.Sampler(r).Next()) }
	switch t.Type() {
	case gocql.TypeVarchar, gocql.TypeText, gocql.TypeAscii:
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		b := make([]byte, size())
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b), nil
	case gocql.TypeBlob:
		n := min(size(), len(w.pool))
		off := r.IntN(len(w.pool) - n + 1)
		return w.pool[off : off+n], nil
	case gocql.TypeInt:
		if name == "[limit]" {
			return int32(100), nil
		}
		return int32(r.Uint32()), nil
	case gocql.TypeBigInt, gocql.TypeCounter, gocql.TypeVarint:
		return int64(r.Uint64()), nil
	case gocql.TypeSmallInt:
		return int16(r.Uint32()), nil
	case gocql.TypeTinyInt:
		return int8(r.Uint32()), nil
	case gocql.TypeFloat:
		return float32(r.Float64() * 1e6), nil
	case gocql.TypeDouble:
		return r.Float64() * 1e6, nil
	case gocql.TypeBoolean:
		return r.IntN(2) == 1, nil
	case gocql.TypeUUID, gocql.TypeTimeUUID:
		var u gocql.UUID
		binary.BigEndian.PutUint64(u[:8], r.Uint64())
		binary.BigEndian.PutUint64(u[8:], r.Uint64())
		version := byte(4)
		if t.Type() == gocql.TypeTimeUUID {
			version = 1
		}
		u[6] = u[6]&0x0f | version<<4
		u[8] = u[8]&0x3f | 0x80
		return u, nil
	case gocql.TypeTimestamp, gocql.TypeDate:
		return time.UnixMilli(int64(r.Uint64N(math.MaxInt32) * 1000)).UTC(), nil
	case gocql.TypeInet:
		return net.IPv4(10, byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())), nil
	}
	return nil, fmt.Errorf("column type %s is not generated by cqlstress yet", t.Type())
}
