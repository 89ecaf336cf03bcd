package test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// A request over native_transport_max_frame_size (at its default, 16 MiB)
// gets the error, not a connection reset, and the session goes on: the
// node reads the body and throws it away, then answers INVALID on the
// request's stream, as Cassandra does.
func TestTooBigRequestGocql(t *testing.T) {
	node, cfg := newNode(t)
	limit := int(cfg.NativeTransportMaxFrameSize)
	c := gocqlCluster(node.Addr())
	c.ProtoVersion = 4
	c.NumConns = 1
	c.Keyspace = "system"
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustExec(t, s, `CREATE KEYSPACE toobig WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	mustExec(t, s, `CREATE TABLE toobig.blobs (k int PRIMARY KEY, v blob)`)
	err = s.Query(`INSERT INTO toobig.blobs (k, v) VALUES (?, ?)`, 1, make([]byte, limit+1)).Exec()
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid ||
		!strings.HasPrefix(re.Message(), "Request is too big: length ") ||
		!strings.HasSuffix(re.Message(), " exceeds maximum allowed length "+strconv.Itoa(limit)+".") {
		t.Fatalf("a value of %d bytes: %v, want INVALID Request is too big", limit+1, err)
	}
	mustExec(t, s, `INSERT INTO toobig.blobs (k, v) VALUES (?, ?)`, 2, []byte("small"))
	if n := len(rowsOf(t, s, `SELECT k FROM toobig.blobs`)); n != 1 {
		t.Fatalf("%d rows after the refusal, want 1", n)
	}
	if v := metricValue(t, node.Registry, "cqld_native_connections_closed_total", map[string]string{"reason": "protocol_error"}); v != 0 {
		t.Fatalf("%v connections closed for a protocol error", v)
	}
}

// The same through the Python driver on v5 (where the issue was seen: a
// bare ConnectionShutdown) and v4: see drivers/python/toobig.py.
func TestTooBigRequestPython(t *testing.T) {
	needPythonDriver(t)
	node, cfg := newNode(t)
	host, port := hostPort(node.Addr())
	for _, v := range []int{5, 4} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			runDriverScript(t, "drivers/python", debianPython, "toobig.py", host, strconv.Itoa(port),
				"toobig_v"+strconv.Itoa(v), strconv.Itoa(v), strconv.Itoa(int(cfg.NativeTransportMaxFrameSize)))
		})
	}
}
