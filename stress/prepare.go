package stress

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/cqld/cqld/cqlclient"
)

// prepareAhead prepares the workload's statements on every node in one
// CQLD_PREPARE_BATCH request (docs/prepare_batch.spec) when the node
// offers the extension, so that gocql's own PREPAREs, one per statement and
// connection, find them in the server's cache. A node without it (Apache
// Cassandra, ScyllaDB) is left to gocql. It returns what it did per node.
func (r *runner) prepareAhead(ctx context.Context, wl *workload) []PrepareAhead {
	c := r.cfg
	if !c.Prepared || !c.PrepareBatch {
		return nil
	}
	var stmts []cqlclient.Statement
	seen := map[string]bool{}
	for _, k := range append(append([]kindDef(nil), wl.kinds...), wl.populate...) {
		if k.stmts == nil {
			continue
		}
		for _, q := range k.stmts() {
			if q != "" && !seen[q] {
				seen[q] = true
				stmts = append(stmts, cqlclient.Statement{Query: q, Keyspace: wl.keyspace})
			}
		}
	}
	if len(stmts) == 0 {
		return nil
	}
	var out []PrepareAhead
	for _, node := range c.Nodes {
		addr := node
		if _, _, err := net.SplitHostPort(node); err != nil {
			addr = net.JoinHostPort(node, "9042")
		}
		pa := PrepareAhead{Node: addr, Statements: len(stmts)}
		cl, err := cqlclient.Dial(ctx, addr, cqlclient.Options{Version: 4})
		if err != nil {
			fmt.Fprintf(r.errOut, "cqlstress: prepare ahead on %s: %v\n", addr, err)
			continue
		}
		if !cl.CanPrepareBatch() {
			cl.Close()
			fmt.Fprintf(r.out, "%s does not offer CQLD_PREPARE_BATCH: gocql prepares each statement\n", addr)
			continue
		}
		start := time.Now()
		res, err := cl.PrepareBatch(ctx, stmts)
		pa.Millis = float64(time.Since(start).Microseconds()) / 1000
		cl.Close()
		if err != nil {
			fmt.Fprintf(r.errOut, "cqlstress: prepare ahead on %s: %v\n", addr, err)
			continue
		}
		for i, x := range res {
			if x.Err != nil {
				pa.Failed++
				fmt.Fprintf(r.errOut, "cqlstress: prepare %q on %s: %v\n", stmts[i].Query, addr, x.Err)
			}
		}
		pa.Batched = true
		fmt.Fprintf(r.out, "Prepared %d statements on %s in one CQLD_PREPARE_BATCH request in %.2f ms (%d failed)\n",
			pa.Statements, addr, pa.Millis, pa.Failed)
		out = append(out, pa)
	}
	return out
}

// PrepareAhead is what preparing ahead did on one node.
type PrepareAhead struct {
	Node       string  `json:"node"`
	Statements int     `json:"statements"`
	Batched    bool    `json:"batched"`
	Failed     int     `json:"failed"`
	Millis     float64 `json:"millis"`
}
