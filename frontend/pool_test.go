package frontend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cqld/cqld/protocol"
)

// stepHandler runs "step TAG" queries one step at a time: each records
// TAG in the order the workers started them, then waits for a step.
type stepHandler struct {
	*fakeHandler
	steps chan struct{}
	mu    sync.Mutex
	order []string
}

func newStepHandler() *stepHandler {
	return &stepHandler{fakeHandler: newFakeHandler(), steps: make(chan struct{}, 1<<16)}
}

func (h *stepHandler) Handle(ctx context.Context, req *protocol.Request) *protocol.Response {
	q, ok := req.Message.(*message.Query)
	if tag, step := strings.CutPrefix(q.Query, "step "); ok && step {
		h.mu.Lock()
		h.order = append(h.order, tag)
		h.mu.Unlock()
		select {
		case <-h.steps:
		case <-ctx.Done():
		}
		return rowOf([]byte(tag))
	}
	return h.fakeHandler.Handle(ctx, req)
}

func (h *stepHandler) started() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.order)
}

// unblock lets every step run (startServer's cleanup calls it).
func (h *stepHandler) unblock() {
	for range cap(h.steps) - len(h.steps) {
		h.steps <- struct{}{}
	}
}

// Workers go round-robin across connections: a request on a connection
// with nothing queued runs after at most one request of each connection
// ahead of it, however many those have queued. Checked on the order the
// workers start requests, not on timings.
func TestWorkersTakeConnectionsInTurn(t *testing.T) {
	const (
		workers = 2
		greedy  = 1000
	)
	h := newStepHandler()
	s := startServer(t, h, func(o *Options) { o.Workers = workers })
	g := s.ready(t)
	var frames []byte
	for i := range greedy {
		frames = append(frames, g.frame(int16(i+1), &message.Query{Query: fmt.Sprint("step greedy-", i), Options: &message.QueryOptions{}})...)
	}
	g.write(frames)
	queued := func(n int) func() bool {
		return func() bool { return int(testutil.ToFloat64(s.m.QueueDepth)) == n }
	}
	eventually(t, "the greedy connection's requests queued", queued(greedy-workers))

	c := s.ready(t)
	c.query(1, "step good")
	eventually(t, "the good request queued", queued(greedy-workers+1))
	h.unblock()
	if rows := expect[*message.RowsResult](c, 1); string(rows.Data[0][0]) != "good" {
		t.Fatalf("good request answered %q", rows.Data[0][0])
	}
	order := h.started()
	at := slices.Index(order, "good")
	t.Logf("the good request ran %dth, %d greedy ones queued before it", at+1, greedy-workers)
	// The workers were busy with greedy ones when it came; then the
	// greedy connection's turn was first in line, and the good one next.
	if at < 0 || at > workers+1 {
		t.Fatalf("the good request ran %dth of %d started: %v", at+1, len(order), order[:min(len(order), 10)])
	}
	streams := make([]int16, greedy)
	for i := range streams {
		streams[i] = int16(i + 1)
	}
	expectAll[*message.RowsResult](g, streams...)
}
