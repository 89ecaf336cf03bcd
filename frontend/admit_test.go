package frontend

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// A greedy connection that pipelines more requests than the node takes
// gets OVERLOADED before connections that ask for one at a time.
func TestFairShare(t *testing.T) {
	h := newFakeHandler()
	s := startServer(t, h, func(o *Options) { o.MaxQueued = 8; o.MaxRequestsPerConn = 100 })
	greedy := s.ready(t)
	const burst = 20
	var frames []byte
	for i := int16(1); i <= burst; i++ {
		frames = append(frames, greedy.frame(i, &message.Query{Query: "block", Options: &message.QueryOptions{}})...)
	}
	greedy.write(frames)
	// Alone, it gets half the node: 4 run, 16 are refused.
	h.waitBlocked(t, 4)
	refused := 0
	for refused < burst-4 {
		h, msg := greedy.mustRecv()
		e, ok := msg.(*message.Overloaded)
		if !ok || !strings.Contains(e.ErrorMessage, "fair share") {
			t.Fatalf("greedy connection, stream %d: got %v", h.Stream, msg)
		}
		refused++
	}

	// Each newcomer is under its share and gets in, while the greedy one
	// stays refused.
	var innocents []*client
	for i := range 4 {
		c := s.ready(t)
		c.query(1, "block")
		h.waitBlocked(t, 1)
		innocents = append(innocents, c)
		if i == 2 {
			greedy.query(100, "void")
			expect[*message.Overloaded](greedy, 100)
		}
	}
	if got := counter(t, s.m.Overloaded, "fair_share"); got != burst-4+1 {
		t.Errorf("overloaded{limit=fair_share} = %v, want %d", got, burst-4+1)
	}
	h.unblock()
	for _, c := range innocents {
		expect[*message.VoidResult](c, 1)
	}
	expectAll[*message.VoidResult](greedy, 1, 2, 3, 4)
}
