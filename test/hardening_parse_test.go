package test

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// TestHardeningDeepQuery sends queries of 10 MB built to nest without end
// (the 10 MB of '(' once took the node 2 GB): each is answered
// with SYNTAX_ERROR at the nesting bound, on its stream, and the
// connection and the node go on serving.
func TestHardeningDeepQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 10 MB queries")
	}
	node, _ := newNode(t)
	w := dial(t, node.Addr())
	w.handshake()
	const n = 10 << 20
	for i, q := range []string{
		"SELECT * FROM system.local WHERE key = " + strings.Repeat("(", n),
		"SELECT * FROM system.local WHERE key = " + strings.Repeat("1+", n/2) + "1",
		"SELECT " + strings.Repeat("(int)", n/5) + "key FROM system.local",
	} {
		stream := int16(10 + i)
		w.send(4, stream, primitive.OpCodeQuery, queryBody(q))
		r := w.mustRead()
		if code, msg := r.errorCode(); code != primitive.ErrorCodeSyntaxError || r.stream != stream || !strings.HasSuffix(msg, "expression nesting too deep") {
			t.Fatalf("query %d: got %s", i, fmtReply(r))
		}
		w.send(4, 30, primitive.OpCodeOptions, nil)
		if r := w.mustRead(); r.op != primitive.OpCodeSupported {
			t.Fatalf("after query %d the connection answered %s", i, fmtReply(r))
		}
	}
	alive(t, node.Addr())
}
