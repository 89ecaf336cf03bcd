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
	stmts := workloadStatements(wl)
	if len(stmts) == 0 {
		return nil
	}
	var out []PrepareAhead
	for _, addr := range nodeAddrs(c) {
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
		pa, _, err := r.prepareOn(ctx, cl, addr, stmts)
		cl.Close()
		if err == nil {
			out = append(out, pa)
		}
	}
	return out
}

// prepareOn prepares stmts on cl (in one CQLD_PREPARE_BATCH request when
// cl turned the extension on, else one PREPARE each), prints what it did
// and returns it with the statements prepared, by query. The error is for
// the requests as a whole; a statement that failed is printed and left out.
func (r *runner) prepareOn(ctx context.Context, cl *cqlclient.Conn, addr string, stmts []cqlclient.Statement) (PrepareAhead, map[string]*cqlclient.Prepared, error) {
	pa := PrepareAhead{Node: addr, Statements: len(stmts), Batched: cl.CanPrepareBatch()}
	start := time.Now()
	res, err := cl.PrepareBatch(ctx, stmts)
	pa.Millis = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		fmt.Fprintf(r.errOut, "cqlstress: prepare on %s: %v\n", addr, err)
		return pa, nil, err
	}
	prepared := map[string]*cqlclient.Prepared{}
	for i, x := range res {
		if x.Err != nil {
			pa.Failed++
			fmt.Fprintf(r.errOut, "cqlstress: prepare %q on %s: %v\n", stmts[i].Query, addr, x.Err)
			continue
		}
		prepared[stmts[i].Query] = x.Prepared
	}
	how := "in one CQLD_PREPARE_BATCH request"
	if !pa.Batched {
		how = fmt.Sprintf("with %d PREPARE requests", len(stmts))
	}
	fmt.Fprintf(r.out, "Prepared %d statements on %s %s in %.2f ms (%d failed)\n",
		pa.Statements, addr, how, pa.Millis, pa.Failed)
	return pa, prepared, nil
}

// workloadStatements lists the distinct statements of the workload's kinds
// and of what populates it.
func workloadStatements(wl *workload) []cqlclient.Statement {
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
	return stmts
}

// nodeAddrs is -node's hosts with the default port where none is given.
func nodeAddrs(c *Config) []string {
	addrs := make([]string, len(c.Nodes))
	for i, node := range c.Nodes {
		addrs[i] = node
		if _, _, err := net.SplitHostPort(node); err != nil {
			addrs[i] = net.JoinHostPort(node, "9042")
		}
	}
	return addrs
}

// PrepareAhead is what preparing ahead did on one node.
type PrepareAhead struct {
	Node       string  `json:"node"`
	Statements int     `json:"statements"`
	Batched    bool    `json:"batched"`
	Failed     int     `json:"failed"`
	Millis     float64 `json:"millis"`
}
