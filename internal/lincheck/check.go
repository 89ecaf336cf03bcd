package lincheck

import (
	"fmt"
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
	// Visualization is the HTML file written for an Illegal history.
	Visualization string
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
	if verdict == porcupine.Illegal && visualization != "" {
		if err := porcupine.VisualizePath(Model, info, visualization); err != nil {
			return r, fmt.Errorf("lincheck: write the visualization: %w", err)
		}
		r.Visualization = visualization
	}
	return r, nil
}
