package lincheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Result is a checked history.
type Result struct {
	// Verdict is porcupine's: Ok, Illegal, or Unknown when the search
	// ran out of time.
	Verdict porcupine.CheckResult
	// Ops is the number of operations checked; Unknown of them are
	// indefinite writes.
	Ops, Unknown int
	// Visualization is the HTML file written for an Illegal history;
	// Listing, beside it, lists the operations on each register that is
	// not linearizable, in the order they were called.
	Visualization, Listing string
	// Keys are the registers whose operations are not linearizable.
	Keys []int
	// Took is the checker's time.
	Took time.Duration
}

// Check checks ops against Model, giving up after timeout (0: never).
// When the history is not linearizable it writes porcupine's
// visualization (every register's longest partial linearization and the
// operations that could not follow it) to visualization, if not empty.
func Check(ops []porcupine.Operation, timeout time.Duration, visualization string) (Result, error) {
	r := Result{Ops: len(ops)}
	for _, op := range ops {
		if op.Output.(Output).Unknown {
			r.Unknown++
		}
	}
	start := time.Now()
	verdict, info := porcupine.CheckOperationsVerbose(Model, ops, timeout)
	r.Verdict, r.Took = verdict, time.Since(start)
	if verdict != porcupine.Illegal {
		return r, nil
	}
	var listing strings.Builder
	for _, p := range partition(ops) {
		if porcupine.CheckOperationsTimeout(Model, p, timeout) != porcupine.Illegal {
			continue
		}
		key := p[0].Input.(Input).Key
		r.Keys = append(r.Keys, key)
		fmt.Fprintf(&listing, "register %d: %d operations, times in ms since the history began\n", key, len(p))
		sort.SliceStable(p, func(i, j int) bool { return p[i].Call < p[j].Call })
		for _, op := range p {
			fmt.Fprintf(&listing, "%10.3f %10.3f  client %3d  %s\n", float64(op.Call)/1e6, float64(op.Return)/1e6, op.ClientId, describeOperation(op.Input, op.Output))
		}
	}
	if visualization == "" {
		return r, nil
	}
	if err := porcupine.VisualizePath(Model, info, visualization); err != nil {
		return r, fmt.Errorf("lincheck: write the visualization: %w", err)
	}
	r.Visualization = visualization
	r.Listing = strings.TrimSuffix(visualization, filepath.Ext(visualization)) + ".txt"
	if err := os.WriteFile(r.Listing, []byte(listing.String()), 0o644); err != nil {
		return r, fmt.Errorf("lincheck: write the listing: %w", err)
	}
	return r, nil
}
