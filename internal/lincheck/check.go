package lincheck

import (
	"encoding/json"
	"fmt"
	"io"
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
	// not linearizable, in the order they were called, and History holds
	// them all (WriteOperations) to be checked again.
	Visualization, Listing, History string
	// Keys are the registers whose operations are not linearizable.
	Keys []int
	// Took is the checker's time.
	Took time.Duration
}

// diagnoseTimeout bounds the search for which registers of a history
// found not linearizable are; one not decided in time is left out of the
// visualization and the listing.
const diagnoseTimeout = 20 * time.Second

// Check checks ops against Model, giving up after timeout (0: never).
// When the history is not linearizable it finds the registers that are
// not, writes porcupine's visualization of their operations (each one's
// longest partial linearization and the operations that could not follow
// it) to visualization, if not empty, and beside it a listing and the
// whole history.
func Check(ops []porcupine.Operation, timeout time.Duration, visualization string) (Result, error) {
	r := Result{Ops: len(ops)}
	for _, op := range ops {
		if op.Output.(Output).Unknown {
			r.Unknown++
		}
	}
	start := time.Now()
	// Without the visualization's data the search ends at the first
	// register found not linearizable.
	r.Verdict = porcupine.CheckOperationsTimeout(Model, ops, timeout)
	r.Took = time.Since(start)
	if r.Verdict != porcupine.Illegal {
		return r, nil
	}
	var bad []porcupine.Operation
	var listing strings.Builder
	for _, p := range partition(ops) {
		if porcupine.CheckOperationsTimeout(Model, p, diagnoseTimeout) != porcupine.Illegal {
			continue
		}
		key := p[0].Input.(Input).Key
		r.Keys = append(r.Keys, key)
		_, info := porcupine.CheckOperationsVerbose(Model, p, diagnoseTimeout)
		var longest []porcupine.Operation
		if partial := info.PartialLinearizationsOperations(); len(partial) == 1 {
			for _, l := range partial[0] {
				if len(l) > len(longest) {
					longest = l
				}
			}
		}
		writeListing(&listing, key, p, longest)
		bad = append(bad, p...)
	}
	if visualization == "" {
		return r, nil
	}
	_, info := porcupine.CheckOperationsVerbose(Model, bad, diagnoseTimeout)
	if err := porcupine.VisualizePath(Model, info, visualization); err != nil {
		return r, fmt.Errorf("lincheck: write the visualization: %w", err)
	}
	r.Visualization = visualization
	base := strings.TrimSuffix(visualization, filepath.Ext(visualization))
	r.Listing, r.History = base+".txt", base+".json"
	if err := os.WriteFile(r.Listing, []byte(listing.String()), 0o644); err != nil {
		return r, fmt.Errorf("lincheck: write the listing: %w", err)
	}
	return r, WriteOperations(r.History, ops)
}

// opID names an operation of a history: no client calls two at once.
type opID struct {
	client int
	call   int64
}

// writeListing lists register key's operations p in the order they were
// called, each with its place in the longest partial linearization the
// checker found, and first the operations around where it got stuck:
// the earliest-returning operation it could not linearize.
func writeListing(w *strings.Builder, key int, p, longest []porcupine.Operation) {
	place := map[opID]int{}
	state := Absent
	states := map[opID]Value{}
	for n, op := range longest {
		id := opID{op.ClientId, op.Call}
		place[id] = n + 1
		_, next := step(state, op.Input, op.Output)
		state = next.(Value)
		states[id] = state
	}
	sort.SliceStable(p, func(i, j int) bool { return p[i].Call < p[j].Call })
	line := func(op porcupine.Operation) {
		id := opID{op.ClientId, op.Call}
		mark := "      -"
		if n, ok := place[id]; ok {
			mark = fmt.Sprintf("%7d", n)
		}
		fmt.Fprintf(w, "%s %10.3f %10.3f  client %3d  %s", mark, float64(op.Call)/1e6, float64(op.Return)/1e6, op.ClientId, describeOperation(op.Input, op.Output))
		if s, ok := states[id]; ok {
			fmt.Fprintf(w, "   [now %s]", s)
		}
		w.WriteString("\n")
	}
	fmt.Fprintf(w, "register %d: %d operations; the longest linearization found takes %d of them (its order in the first column); times in ms since the history began\n", key, len(p), len(longest))
	stuck := -1
	for i, op := range p {
		if _, ok := place[opID{op.ClientId, op.Call}]; !ok && (stuck < 0 || op.Return < p[stuck].Return) {
			stuck = i
		}
	}
	if stuck >= 0 {
		fmt.Fprintf(w, "\nstuck at: the earliest-returning operation not linearized, and those called around it:\n")
		for _, op := range p[max(0, stuck-15):min(len(p), stuck+10)] {
			line(op)
		}
	}
	fmt.Fprintf(w, "\nall of them:\n")
	for _, op := range p {
		line(op)
	}
	w.WriteString("\n")
}

// record is an operation as WriteOperations stores it.
type record struct {
	Client int    `json:"client"`
	Call   int64  `json:"call"`
	Return int64  `json:"return"`
	Input  Input  `json:"input"`
	Output Output `json:"output"`
}

// WriteOperations writes a history to path, one JSON operation a line,
// so that it can be checked again (ReadOperations).
func WriteOperations(path string, ops []porcupine.Operation) error {
	var b []byte
	for _, op := range ops {
		line, err := json.Marshal(record{op.ClientId, op.Call, op.Return, op.Input.(Input), op.Output.(Output)})
		if err != nil {
			return fmt.Errorf("lincheck: encode an operation: %w", err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("lincheck: write the history: %w", err)
	}
	return nil
}

// ReadOperations reads a history written by WriteOperations.
func ReadOperations(path string) ([]porcupine.Operation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lincheck: read a history: %w", err)
	}
	defer f.Close()
	var ops []porcupine.Operation
	dec := json.NewDecoder(f)
	for {
		var r record
		if err := dec.Decode(&r); err == io.EOF {
			return ops, nil
		} else if err != nil {
			return nil, fmt.Errorf("lincheck: %s, operation %d: %w", path, len(ops)+1, err)
		}
		ops = append(ops, porcupine.Operation{ClientId: r.Client, Call: r.Call, Return: r.Return, Input: r.Input, Output: r.Output})
	}
}
