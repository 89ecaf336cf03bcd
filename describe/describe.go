package describe

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

// Schema is what a DESCRIBE reads: every keyspace of the node, the user's
// and its own, with their definitions as system_schema shows them.
type Schema struct {
	// Keyspaces are the keyspaces, in any order.
	Keyspaces []*storage.KeyspaceDef
	// Virtual names the virtual keyspaces among them (system_views,
	// system_virtual_schema), whose elements cannot be recreated.
	Virtual map[string]bool
	// Version is the schema version (system.local's schema_version): a
	// DESCRIBE's pages continue only on the schema its first page read.
	Version [16]byte
}

// Cluster is what DESCRIBE CLUSTER shows.
type Cluster struct {
	Name, Partitioner, Snitch string
	// Ownership returns the token ranges of the ring with the addresses
	// of keyspace ks's replicas, for the session's keyspace.
	Ownership func(ks string) ([]Range, error)
}

// Range is the token range (Start, End] and its replicas' internode
// addresses.
type Range struct {
	Start, End int64
	Endpoints  []netip.AddrPort
}

// Request is one execution of a DESCRIBE statement.
type Request struct {
	Statement *statements.Describe
	// Session is the session's keyspace, "" when none.
	Session string
	Schema  Schema
	Cluster Cluster
	// ReleaseVersion is the version the node reports; a paging state
	// from another version is refused.
	ReleaseVersion string
	// PageSize is the most rows a page has; <= 0 is no paging.
	PageSize int32
	// PagingState is the previous page's, nil for the first page.
	PagingState []byte
	Version     primitive.ProtocolVersion
}

// Column is a result column.
type Column struct {
	Name string
	Type datatype.DataType
}

// Result is one page of a DESCRIBE's answer.
type Result struct {
	Columns []Column
	// Rows are the values, serialized as the columns' types.
	Rows [][][]byte
	// PagingState is set when another page may follow, as Cassandra sets
	// it: whenever the page is full.
	PagingState []byte
}

var (
	listColumns = []Column{{"keyspace_name", datatype.Varchar}, {"type", datatype.Varchar}, {"name", datatype.Varchar}}
	// elementColumns add the CREATE statement to the listing's.
	elementColumns = append(append([]Column(nil), listColumns...), Column{"create_statement", datatype.Varchar})
	clusterColumns = []Column{{"cluster", datatype.Varchar}, {"partitioner", datatype.Varchar}, {"snitch", datatype.Varchar}}
	ownershipType  = datatype.NewMap(datatype.Varchar, datatype.NewList(datatype.Varchar))
)

// element is one row of the answer: a schema element and how to print
// it, or for CLUSTER, its one row of values.
type element struct {
	keyspace, kind, name string
	cql                  func() string
	values               [][]byte
}

// Describe answers one page of r. Errors are cqlerr errors, with
// Cassandra's words.
func Describe(r *Request) (*Result, error) {
	offset, err := decodePagingState(r.PagingState, r.Version, r.ReleaseVersion, r.Schema.Version)
	if err != nil {
		return nil, err
	}
	d := describer{r: r, ks: map[string]*storage.KeyspaceDef{}}
	for _, k := range r.Schema.Keyspaces {
		d.ks[k.Name] = k
	}
	cols, elems, err := d.describe()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: cols}
	if offset > int64(len(elems)) {
		offset = int64(len(elems))
	}
	elems = elems[offset:]
	if r.PageSize > 0 && len(elems) > int(r.PageSize) {
		elems = elems[:r.PageSize]
	}
	for _, e := range elems {
		if e.values != nil {
			res.Rows = append(res.Rows, e.values)
			continue
		}
		row := [][]byte{[]byte(statements.MaybeQuote(e.keyspace)), []byte(e.kind), []byte(quotedElementName(e))}
		if len(cols) == len(elementColumns) {
			row = append(row, []byte(e.cql()))
		}
		res.Rows = append(res.Rows, row)
	}
	if r.PageSize > 0 && len(elems) == int(r.PageSize) {
		res.PagingState = encodePagingState(offset+int64(len(elems)), r.Version, r.ReleaseVersion, r.Schema.Version)
	}
	return res, nil
}

// quotedElementName is SchemaElement.elementNameQuotedIfNeeded: a
// function's or aggregate's name quoted, its argument types not.
func quotedElementName(e element) string {
	if e.kind == "function" || e.kind == "aggregate" {
		if i := strings.IndexByte(e.name, '('); i >= 0 {
			return statements.MaybeQuote(e.name[:i]) + e.name[i:]
		}
	}
	return statements.MaybeQuote(e.name)
}

type describer struct {
	r  *Request
	ks map[string]*storage.KeyspaceDef
}

func (d *describer) describe() ([]Column, []element, error) {
	st := d.r.Statement
	switch st.Kind {
	case statements.DescribeCluster:
		return d.cluster()
	case statements.DescribeKeyspaces:
		var out []element
		for _, k := range d.sortedKeyspaces() {
			out = append(out, d.keyspaceElement(k))
		}
		return listColumns, out, nil
	case statements.DescribeSchema, statements.DescribeFullSchema:
		var out []element
		for _, k := range d.sortedKeyspaces() {
			if st.Kind == statements.DescribeSchema && isSystemKeyspace(k.Name) {
				continue
			}
			out = append(out, d.keyspaceElements(k, false)...)
		}
		return elementColumns, out, nil
	case statements.DescribeTables, statements.DescribeTypes, statements.DescribeFunctions, statements.DescribeAggregates:
		out, err := d.listing(st.Kind)
		return listColumns, out, err
	case statements.DescribeGeneric:
		return d.generic(st.Keyspace, st.Name)
	}
	out, err := d.element(st.Kind, st.Keyspace, st.Name)
	return elementColumns, out, err
}

// element describes one named element of keyspace ks (the session's when
// "").
func (d *describer) element(kind statements.DescribeKind, ks, name string) ([]element, error) {
	if ks == "" {
		if ks = d.r.Session; ks == "" {
			return nil, cqlerr.Invalidf("No keyspace specified and no current keyspace")
		}
	}
	k, err := d.keyspace(ks)
	if err != nil {
		return nil, err
	}
	switch kind {
	case statements.DescribeKeyspace:
		return d.keyspaceElements(k, d.r.Statement.Only), nil
	case statements.DescribeTable:
		t := k.Tables[name]
		if t == nil {
			return nil, cqlerr.Invalidf("Table '%s' not found in keyspace '%s'", name, k.Name)
		}
		return d.tableElements(k, t), nil
	case statements.DescribeIndex:
		t, ix := indexNamed(k, name)
		if t == nil {
			return nil, cqlerr.Invalidf("Table for existing index '%s' not found in '%s'", name, k.Name)
		}
		return []element{indexElement(t, ix)}, nil
	case statements.DescribeView:
		return nil, cqlerr.Invalidf("Materialized view '%s' not found in '%s'", name, k.Name)
	case statements.DescribeType:
		u := k.Types[name]
		if u == nil {
			return nil, cqlerr.Invalidf("User defined type '%s' not found in '%s'", name, k.Name)
		}
		return []element{typeElement(u)}, nil
	case statements.DescribeFunction:
		out := functionElements(k.FunctionsNamed(name))
		if len(out) == 0 {
			return nil, cqlerr.Invalidf("User defined function '%s' not found in '%s'", name, k.Name)
		}
		return out, nil
	case statements.DescribeAggregate:
		out := aggregateElements(k.AggregatesNamed(name))
		if len(out) == 0 {
			return nil, cqlerr.Invalidf("User defined aggregate '%s' not found in '%s'", name, k.Name)
		}
		return out, nil
	}
	return nil, fmt.Errorf("describe: unknown kind %d", kind)
}

// generic is DESCRIBE [ks.]name: a keyspace, or else a table, an index or
// a materialized view of keyspace ks (the session's, or name's when there
// is none), in that order.
func (d *describer) generic(ks, name string) ([]Column, []element, error) {
	if ks == "" {
		if k := d.ks[name]; k != nil {
			return elementColumns, d.keyspaceElements(k, false), nil
		}
		if ks = d.r.Session; ks == "" {
			ks = name
		}
	}
	k, err := d.keyspace(ks)
	if err != nil {
		return nil, nil, err
	}
	if t := k.Tables[name]; t != nil {
		return elementColumns, d.tableElements(k, t), nil
	}
	if t, ix := indexNamed(k, name); t != nil {
		return elementColumns, []element{indexElement(t, ix)}, nil
	}
	return nil, nil, cqlerr.Invalidf("'%s' not found in keyspace '%s'", name, ks)
}

// listing lists the tables, types, functions or aggregates of the
// session's keyspace, or of every keyspace when there is none.
func (d *describer) listing(kind statements.DescribeKind) ([]element, error) {
	keyspaces := d.sortedKeyspaces()
	if d.r.Session != "" {
		k, err := d.keyspace(d.r.Session)
		if err != nil {
			return nil, err
		}
		keyspaces = []*storage.KeyspaceDef{k}
	}
	var out []element
	for _, k := range keyspaces {
		switch kind {
		case statements.DescribeTables:
			for _, t := range sortedTables(k) {
				out = append(out, d.tableElement(t))
			}
		case statements.DescribeTypes:
			var types []element
			for _, u := range k.Types {
				types = append(types, typeElement(u))
			}
			sortByName(types)
			out = append(out, types...)
		case statements.DescribeFunctions:
			out = append(out, functionElements(k.Functions)...)
		case statements.DescribeAggregates:
			out = append(out, aggregateElements(k.Aggregates)...)
		}
	}
	return out, nil
}

func (d *describer) keyspace(name string) (*storage.KeyspaceDef, error) {
	k := d.ks[name]
	if k == nil {
		return nil, cqlerr.Invalidf("'%s' not found in keyspaces", name)
	}
	return k, nil
}

func (d *describer) sortedKeyspaces() []*storage.KeyspaceDef {
	out := make([]*storage.KeyspaceDef, 0, len(d.ks))
	for _, k := range d.ks {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return nameLess(out[i].Name, out[j].Name) })
	return out
}

func (d *describer) keyspaceElement(k *storage.KeyspaceDef) element {
	virtual := d.r.Schema.Virtual[k.Name]
	return element{keyspace: k.Name, kind: "keyspace", name: k.Name, cql: func() string { return keyspaceCQL(k, virtual) }}
}

// keyspaceElements are k, then (unless only) its types in the order that
// creates them, its functions, its aggregates (whose state and final
// functions are then created) and its tables each with its indexes.
func (d *describer) keyspaceElements(k *storage.KeyspaceDef, only bool) []element {
	out := []element{d.keyspaceElement(k)}
	if only {
		return out
	}
	for _, u := range typesByDependency(k) {
		out = append(out, typeElement(u))
	}
	out = append(out, functionElements(k.Functions)...)
	out = append(out, aggregateElements(k.Aggregates)...)
	for _, t := range sortedTables(k) {
		out = append(out, d.tableElements(k, t)...)
	}
	return out
}

func (d *describer) tableElement(t *storage.TableDef) element {
	virtual := d.r.Schema.Virtual[t.Keyspace]
	internals := d.r.Statement.Internals
	return element{keyspace: t.Keyspace, kind: "table", name: t.Name, cql: func() string { return tableCQL(t, virtual, internals) }}
}

// tableElements are t and its indexes, by name.
func (d *describer) tableElements(k *storage.KeyspaceDef, t *storage.TableDef) []element {
	var indexes []element
	for i := range t.Indexes {
		indexes = append(indexes, indexElement(t, &t.Indexes[i]))
	}
	sortByName(indexes)
	return append([]element{d.tableElement(t)}, indexes...)
}

func indexElement(t *storage.TableDef, ix *storage.IndexDef) element {
	return element{keyspace: t.Keyspace, kind: "index", name: ix.Name, cql: func() string { return indexCQL(t, ix) }}
}

func typeElement(u *storage.TypeDef) element {
	return element{keyspace: u.Keyspace, kind: "type", name: u.Name, cql: func() string { return typeCQL(u) }}
}

// functionElements are fs by name and argument types
// (SchemaElement.NAME_COMPARATOR on elementName, name(types)).
func functionElements(fs []*storage.FunctionDef) []element {
	out := make([]element, len(fs))
	for i, f := range fs {
		out[i] = element{keyspace: f.Keyspace, kind: "function", name: f.Name + "(" + functionTypes(f.ArgTypes) + ")",
			cql: func() string { return functionCQL(f) }}
	}
	sortByName(out)
	return out
}

// aggregateElements are as by name and argument types.
func aggregateElements(as []*storage.AggregateDef) []element {
	out := make([]element, len(as))
	for i, a := range as {
		out[i] = element{keyspace: a.Keyspace, kind: "aggregate", name: a.Name + "(" + functionTypes(a.ArgTypes) + ")",
			cql: func() string { return aggregateCQL(a) }}
	}
	sortByName(out)
	return out
}

// indexNamed finds the table of k with an index of that name.
func indexNamed(k *storage.KeyspaceDef, name string) (*storage.TableDef, *storage.IndexDef) {
	for _, t := range sortedTables(k) {
		for i := range t.Indexes {
			if t.Indexes[i].Name == name {
				return t, &t.Indexes[i]
			}
		}
	}
	return nil, nil
}

func sortedTables(k *storage.KeyspaceDef) []*storage.TableDef {
	out := k.SortedTables()
	sort.SliceStable(out, func(i, j int) bool { return nameLess(out[i].Name, out[j].Name) })
	return out
}

func sortByName(es []element) {
	sort.SliceStable(es, func(i, j int) bool { return nameLess(es[i].name, es[j].name) })
}

// typesByDependency returns k's user types so that a type comes after
// the types it uses (Types.sortedStream): by name, each preceded by the
// types it uses that are not listed yet.
func typesByDependency(k *storage.KeyspaceDef) []*storage.TypeDef {
	var out []*storage.TypeDef
	seen := map[string]bool{}
	var add func(u *storage.TypeDef)
	add = func(u *storage.TypeDef) {
		if seen[u.Name] {
			return
		}
		for _, ft := range u.FieldTypes {
			sh, err := statements.ShapeOf(ft)
			if err != nil {
				continue
			}
			for _, name := range sh.UserTypes {
				if dep := k.Types[name]; dep != nil {
					add(dep)
				}
			}
		}
		if !seen[u.Name] {
			seen[u.Name] = true
			out = append(out, u)
		}
	}
	for _, u := range k.SortedTypes() {
		add(u)
	}
	return out
}

// nameLess is SchemaElement.NAME_COMPARATOR, String.compareToIgnoreCase;
// names equal but for case fall back to their bytes.
func nameLess(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		ca := unicode.ToLower(unicode.ToUpper(ra[i]))
		cb := unicode.ToLower(unicode.ToUpper(rb[i]))
		if ca != cb {
			return ca < cb
		}
	}
	if len(ra) != len(rb) {
		return len(ra) < len(rb)
	}
	return a < b
}

// systemKeyspaces are Cassandra's SchemaConstants.isSystemKeyspace:
// DESCRIBE SCHEMA leaves them out.
var systemKeyspaces = map[string]bool{
	"system": true, "system_schema": true, "system_auth": true, "system_traces": true,
	"system_distributed": true, "system_views": true, "system_virtual_schema": true,
}

func isSystemKeyspace(ks string) bool { return systemKeyspaces[strings.ToLower(ks)] }

// cluster is DESCRIBE CLUSTER's one row: the cluster's name, partitioner
// and snitch, and for a session in a keyspace of the user's, which
// replicas hold its token ranges.
func (d *describer) cluster() ([]Column, []element, error) {
	c := d.r.Cluster
	row := [][]byte{[]byte(c.Name), []byte(c.Partitioner), []byte(c.Snitch)}
	cols := clusterColumns
	if ks := d.r.Session; ks != "" && !isSystemKeyspace(ks) {
		if c.Ownership == nil {
			return nil, nil, fmt.Errorf("describe: no range ownership for keyspace %s", ks)
		}
		ranges, err := c.Ownership(ks)
		if err != nil {
			return nil, nil, err
		}
		cols = append(append([]Column(nil), clusterColumns...), Column{"range_ownership", ownershipType})
		row = append(row, ownershipMap(ranges))
	}
	return cols, []element{{values: row}}, nil
}

// ownershipMap serializes range_ownership, a map from each range's end
// token to its replicas, in the order Cassandra's HashMap of it iterates
// (filled in range order: the range that wraps around first, then by end
// token).
func ownershipMap(ranges []Range) []byte {
	rs := append([]Range(nil), ranges...)
	sort.SliceStable(rs, func(i, j int) bool {
		wi, wj := rs[i].Start >= rs[i].End, rs[j].Start >= rs[j].End
		if wi != wj {
			return wi
		}
		return rs[i].End < rs[j].End
	})
	keys := make([]string, len(rs))
	hashes := make([]int32, len(rs))
	for i, r := range rs {
		keys[i] = strconv.FormatInt(r.End, 10)
		hashes[i] = javaStringHash(keys[i])
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(len(rs)))
	for _, i := range javaHashOrder(hashes, javaGrownCapacity(len(rs))) {
		b = appendValue(b, []byte(keys[i]))
		list := binary.BigEndian.AppendUint32(nil, uint32(len(rs[i].Endpoints)))
		for _, e := range rs[i].Endpoints {
			list = appendValue(list, []byte(javaEndpoint(e)))
		}
		b = appendValue(b, list)
	}
	return b
}

func appendValue(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}
