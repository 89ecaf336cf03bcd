package lincheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Client is one client's connection to the system under test. Do is
// called by one goroutine at a time.
type Client interface {
	// Do runs in and returns its answer and what the answer proves. err
	// is an answer the test does not expect (a bug, not a fault), which
	// ends the run.
	Do(ctx context.Context, in Input) (Output, Outcome, error)
}

// Workload is what the clients of a run do.
type Workload struct {
	// Keys are the registers the clients share.
	Keys []int
	// Levels are the commit consistency levels writes choose from, at
	// random (Input.Level); none leaves Level empty.
	Levels []string
	// Seed draws every choice: client c uses the stream (Seed, c).
	Seed uint64
	// Backoff is how long a client waits after an operation that did
	// not end definitely, so that a node down is not asked in a loop.
	Backoff time.Duration
}

// Run runs each client in a goroutine of its own, one operation after
// the other, recording them in h, until ctx is done; operations in
// flight then finish (with the contexts Do gets, which ctx's end does not
// cancel). It returns the first error a client's Do returned, having
// stopped the others.
func (w Workload) Run(ctx context.Context, clients []Client, h *History) error {
	if len(w.Keys) == 0 {
		return fmt.Errorf("lincheck: a workload needs keys")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.client(ctx, i, len(clients), c, h); err != nil {
				once.Do(func() { first = err })
				cancel()
			}
		}()
	}
	wg.Wait()
	return first
}

// client is client i's loop. It keeps what it last saw of each register,
// so that most of its conditions name the current value and apply.
func (w Workload) client(ctx context.Context, i, n int, c Client, h *History) error {
	rnd := rand.New(rand.NewPCG(w.Seed, uint64(i)))
	known := map[int]Value{}
	process := i
	var seq int64
	opCtx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		key := w.Keys[rnd.IntN(len(w.Keys))]
		seq++
		in := w.choose(rnd, key, known[key], int64(i+1)<<32|seq)
		op := h.Call(process, in)
		out, o, err := c.Do(opCtx, in)
		if err != nil {
			op.End(Output{}, Refused)
			return fmt.Errorf("lincheck: client %d: %s: %w", i, describeOperation(in, Output{Unknown: true}), err)
		}
		op.End(out, o)
		if o != Definite && w.Backoff > 0 {
			_ = Sleep(ctx, w.Backoff)
		}
		switch {
		case o == Indefinite:
			// The operation may still be running: a new process
			// continues.
			process += n
		case o == Definite && in.Kind != Read && out.Applied:
			_, known[key] = holds(known[key], in)
		case o == Definite:
			known[key] = out.Current
		}
	}
	return nil
}

// choose draws the next operation on key, which the client last saw
// holding v; next is a value never written before.
func (w Workload) choose(rnd *rand.Rand, key int, v Value, next int64) Input {
	in := Input{Key: key, New: next}
	if len(w.Levels) > 0 {
		in.Level = w.Levels[rnd.IntN(len(w.Levels))]
	}
	switch x := rnd.IntN(100); {
	case x < 30:
		in.Kind, in.Level = Read, ""
	case !v.Exists && x < 90, v.Exists && x < 35:
		in.Kind = Insert
	case v.Exists && x < 42:
		in.Kind, in.Old = Delete, v.V
	default:
		in.Kind, in.Old = CAS, v.V
	}
	if in.Kind == Delete || in.Kind == Read {
		in.New = 0
	}
	return in
}
