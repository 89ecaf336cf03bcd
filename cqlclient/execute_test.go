package cqlclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func values(vs ...[]byte) []*primitive.Value {
	out := make([]*primitive.Value, len(vs))
	for i, v := range vs {
		out[i] = primitive.NewValue(v)
	}
	return out
}

// TestQueryAndExecute: on v4 and v5, multiplexed and Serial, a QUERY
// creates the schema and writes with bound values, an EXECUTE of a
// prepared INSERT writes and one of a prepared SELECT reads them back (with
// and without result metadata), an EXECUTE of an id the server never
// prepared answers UNPREPARED, and after Close requests fail with
// ErrClosed.
func TestQueryAndExecute(t *testing.T) {
	n := startNode(t)
	cases := 0
	for _, v := range []primitive.ProtocolVersion{4, 5} {
		for _, serial := range []bool{false, true} {
			cases++
			t.Run(fmt.Sprintf("v%d serial=%v", v, serial), func(t *testing.T) { queryAndExecute(t, n.Addr(), v, serial) })
		}
	}
	// The server counts a request after answering it: wait (bounded)
	// for the last ones.
	want := float64(cases * (3 + 4 + 1))
	e := requests(t, n, "EXECUTE")
	for i := 0; i < 200 && e < want; i++ {
		time.Sleep(10 * time.Millisecond)
		e = requests(t, n, "EXECUTE")
	}
	if e != want {
		t.Errorf("server counted %v EXECUTE requests, want %v", e, want)
	}
}

func queryAndExecute(t *testing.T, addr string, v primitive.ProtocolVersion, serial bool) {
	ctx := context.Background()
	c, err := Dial(ctx, addr, Options{Version: v, Serial: serial})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ks := fmt.Sprintf("ks%d_%v", v, serial)
	for _, q := range []string{
		"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE " + ks + ".kv (k blob PRIMARY KEY, v blob)",
	} {
		r, err := c.Query(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, ok := r.(*message.SchemaChangeResult); !ok {
			t.Fatalf("%s answered %v", q, r)
		}
	}
	one := &QueryOptions{Consistency: primitive.ConsistencyLevelOne, PositionalValues: values([]byte("q"), []byte("by query"))}
	if r, err := c.Query(ctx, "INSERT INTO "+ks+".kv (k, v) VALUES (?, ?)", one); err != nil {
		t.Fatal(err)
	} else if _, ok := r.(*message.VoidResult); !ok {
		t.Fatalf("INSERT answered %v", r)
	}
	ins, err := c.Prepare(ctx, Statement{Query: "INSERT INTO " + ks + ".kv (k, v) VALUES (?, ?)"})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := c.Prepare(ctx, Statement{Query: "SELECT v FROM " + ks + ".kv WHERE k = ?"})
	if err != nil {
		t.Fatal(err)
	}
	opts := &QueryOptions{Consistency: primitive.ConsistencyLevelOne}
	for i := range 3 {
		opts.PositionalValues = values([]byte{byte(i)}, []byte{byte(i), 'v'})
		if r, err := c.Execute(ctx, ins, opts); err != nil {
			t.Fatal(err)
		} else if _, ok := r.(*message.VoidResult); !ok {
			t.Fatalf("EXECUTE INSERT answered %v", r)
		}
	}
	for _, skip := range []bool{false, true} {
		for k, want := range map[string][]byte{"\x01": {1, 'v'}, "q": []byte("by query")} {
			opts := &QueryOptions{Consistency: primitive.ConsistencyLevelOne, SkipMetadata: skip, PositionalValues: values([]byte(k))}
			r, err := c.Execute(ctx, sel, opts)
			if err != nil {
				t.Fatal(err)
			}
			rows, ok := r.(*message.RowsResult)
			if !ok || len(rows.Data) != 1 || !bytes.Equal(rows.Data[0][0], want) {
				t.Fatalf("SELECT %q (skip metadata %v) answered %v", k, skip, r)
			}
			if hasCols := rows.Metadata != nil && len(rows.Metadata.Columns) > 0; hasCols == skip {
				t.Errorf("skip metadata %v: columns %v", skip, rows.Metadata)
			}
		}
	}
	bogus := &Prepared{ID: []byte("no such statement"), ResultMetadataID: ins.ResultMetadataID}
	_, err = c.Execute(ctx, bogus, nil)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != primitive.ErrorCodeUnprepared {
		t.Fatalf("EXECUTE of an unknown id: %v", err)
	}
	if u, ok := se.Msg.(*message.Unprepared); !ok || !bytes.Equal(u.Id, bogus.ID) {
		t.Errorf("UNPREPARED carries %v", se.Msg)
	}
	if _, err := c.Query(ctx, "SELECT nope FROM "+ks+".kv", nil); !errors.As(err, &se) || se.Code != primitive.ErrorCodeInvalid {
		t.Errorf("QUERY of an unknown column: %v", err)
	}
	c.Close()
	if _, err := c.Execute(ctx, ins, opts); !errors.Is(err, ErrClosed) {
		t.Errorf("EXECUTE after Close: %v", err)
	}
}
