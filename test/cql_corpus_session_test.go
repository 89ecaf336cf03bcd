package test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/frontend"
	"github.com/cqld/cqld/protocol"
)

// corpusSession runs one corpus statement as a simple QUERY (never
// prepared, so literals go through the parser) at QUORUM, in the keyspace
// its file runs in, reading every page of the answer. A node over gocql and
// a coordinator in process satisfy it; a cluster will.
type corpusSession interface {
	query(q string) corpusAnswer
}

var (
	_ corpusSession = gocqlCorpusSession{}
	_ corpusSession = (*inProcessCorpusSession)(nil)
)

// corpusPageSize is the page size both sessions ask for; answers longer
// than it are read page by page.
const corpusPageSize = 5000

// corpusMaxPages bounds the pages an in-process answer is read through,
// so a paging state that never ends fails the file instead of hanging it.
const corpusMaxPages = 1000

// gocqlCorpusSession runs statements over the wire through gocql, the way
// a driver's user does.
type gocqlCorpusSession struct{ s *gocql.Session }

// corpusCell receives a column's raw value: gocql hands an Unmarshaler the
// bytes of the frame, nil for null.
type corpusCell struct{ data []byte }

func (c *corpusCell) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	c.data = nil
	if data != nil {
		c.data = append([]byte{}, data...)
	}
	return nil
}

func (g gocqlCorpusSession) query(q string) corpusAnswer {
	// gocql PREPAREs every statement whose first word is SELECT, INSERT,
	// UPDATE, DELETE or BATCH; a leading comment keeps it a simple QUERY
	// (corpusUnshift takes its length back out of syntax error positions).
	iter := g.s.Query(corpusPrefix + q).PageSize(corpusPageSize).Iter()
	infos := iter.Columns()
	var a corpusAnswer
	// gocql scans a tuple column into one destination per element, never
	// the whole value: the elements are put back together as the tuple's
	// bytes. (So a null tuple reads here as a tuple of nulls.)
	var dest []any
	widths := make([]int, len(infos))
	for i, c := range infos {
		a.cols = append(a.cols, corpusColumn{name: c.Name, typ: gocqlDataType(c.TypeInfo)})
		widths[i] = 1
		if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			widths[i] = len(tt.Elems)
		}
		for j := 0; j < widths[i]; j++ {
			dest = append(dest, &corpusCell{})
		}
	}
	for iter.Scan(dest...) {
		row := make([][]byte, len(infos))
		next := 0
		for i := range infos {
			if _, ok := infos[i].TypeInfo.(gocql.TupleTypeInfo); !ok {
				row[i] = dest[next].(*corpusCell).data
				next++
				continue
			}
			tuple := []byte{}
			for j := 0; j < widths[i]; j++ {
				tuple = appendCorpusElem(tuple, dest[next].(*corpusCell).data)
				next++
			}
			row[i] = tuple
		}
		a.rows = append(a.rows, row)
	}
	if err := iter.Close(); err != nil {
		line := "error client: " + strings.ReplaceAll(err.Error(), "\n", " ")
		if re, ok := err.(gocql.RequestError); ok {
			line = corpusError(primitive.ErrorCode(re.Code()), re.Message())
		}
		return corpusAnswer{error: corpusUnshift(line)}
	}
	return a
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

// corpusPrimitives are the protocol's scalar types by code.
var corpusPrimitives = func() map[primitive.DataTypeCode]datatype.DataType {
	m := map[primitive.DataTypeCode]datatype.DataType{}
	for _, t := range []datatype.DataType{
		datatype.Ascii, datatype.Bigint, datatype.Blob, datatype.Boolean, datatype.Counter,
		datatype.Date, datatype.Decimal, datatype.Double, datatype.Duration, datatype.Float,
		datatype.Inet, datatype.Int, datatype.Smallint, datatype.Time, datatype.Timestamp,
		datatype.Timeuuid, datatype.Tinyint, datatype.Uuid, datatype.Varchar, datatype.Varint,
	} {
		m[t.Code()] = t
	}
	return m
}()

// gocqlDataType is gocql's description of a type as the protocol's; nil
// for a type it does not know.
func gocqlDataType(info gocql.TypeInfo) datatype.DataType {
	switch t := info.(type) {
	case gocql.CollectionType:
		switch t.Type() {
		case gocql.TypeList:
			return datatype.NewList(gocqlDataType(t.Elem))
		case gocql.TypeSet:
			return datatype.NewSet(gocqlDataType(t.Elem))
		case gocql.TypeMap:
			return datatype.NewMap(gocqlDataType(t.Key), gocqlDataType(t.Elem))
		}
		return nil
	case gocql.TupleTypeInfo:
		elems := make([]datatype.DataType, len(t.Elems))
		for i, e := range t.Elems {
			elems[i] = gocqlDataType(e)
		}
		return datatype.NewTuple(elems...)
	case gocql.UDTTypeInfo:
		u := &datatype.UserDefined{Keyspace: t.KeySpace, Name: t.Name}
		for _, f := range t.Elements {
			u.FieldNames = append(u.FieldNames, f.Name)
			u.FieldTypes = append(u.FieldTypes, gocqlDataType(f.Type))
		}
		return u
	}
	switch info.Type() {
	case gocql.TypeCustom:
		return datatype.NewCustom(info.Custom())
	case gocql.TypeText: // protocol v1's text, varchar since
		return datatype.Varchar
	}
	return corpusPrimitives[primitive.DataTypeCode(info.Type())]
}

// inProcessCorpusSession hands statements to a Handler as the frontend
// would after decoding their frames, with no sockets, and keeps the
// keyspace the way a connection does.
type inProcessCorpusSession struct {
	h        frontend.Handler
	keyspace string
}

// newInProcessCorpusSession is a session on h in keyspace ks, which it
// creates.
func newInProcessCorpusSession(t *testing.T, h frontend.Handler, ks string) *inProcessCorpusSession {
	t.Helper()
	s := &inProcessCorpusSession{h: h}
	create := fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, ks)
	if a := s.query(create); a.error != "" {
		t.Fatalf("%s: %s", create, a.error)
	}
	s.keyspace = ks
	return s
}

func (s *inProcessCorpusSession) query(q string) corpusAnswer {
	opts := message.QueryOptions{Consistency: primitive.ConsistencyLevelQuorum, PageSize: corpusPageSize}
	var a corpusAnswer
	for page := 0; page < corpusMaxPages; page++ {
		req := &protocol.Request{
			Version:  primitive.ProtocolVersion4,
			Message:  &message.Query{Query: q, Options: &opts},
			Keyspace: s.keyspace,
		}
		switch m := s.h.Handle(context.Background(), req).Message.(type) {
		case message.Error:
			return corpusAnswer{error: corpusError(m.GetErrorCode(), m.GetErrorMessage())}
		case *message.RowsResult:
			if a.cols == nil {
				for _, c := range m.Metadata.Columns {
					a.cols = append(a.cols, corpusColumn{name: c.Name, typ: c.Type})
				}
			}
			a.rows = append(a.rows, m.Data...)
			if m.Metadata.PagingState == nil {
				return a
			}
			opts.PagingState = m.Metadata.PagingState
		case *message.SetKeyspaceResult:
			s.keyspace = m.Keyspace
			return a
		default: // VOID, SCHEMA_CHANGE
			return a
		}
	}
	return corpusAnswer{error: fmt.Sprintf("error client: more than %d pages", corpusMaxPages)}
}
