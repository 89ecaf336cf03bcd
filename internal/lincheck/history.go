package lincheck

import (
	"fmt"
	"sync"

	"github.com/anishathalye/porcupine"
)

// Outcome is what an answer proves about an operation.
type Outcome uint8

const (
	// Definite: the output is what happened.
	Definite Outcome = iota
	// Indefinite: the operation may or may not have taken effect (a
	// timeout, a lost connection).
	Indefinite
	// Refused: the operation did not take effect (UNAVAILABLE).
	Refused
)

var outcomeNames = [...]string{Definite: "definite", Indefinite: "indefinite", Refused: "refused"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome?"
}

// History records operations as they are called and return. Safe for
// concurrent use.
type History struct {
	now func() int64

	mu      sync.Mutex
	ops     []porcupine.Operation
	unknown []porcupine.Operation // return after every other operation
	open    int
	counts  map[Kind]*[3]int
}

// NewHistory returns an empty history whose times come from now, a
// monotonic clock (nanoseconds).
func NewHistory(now func() int64) *History {
	return &History{now: now, counts: map[Kind]*[3]int{}}
}

// Op is an operation called and not yet ended. End it exactly once.
type Op struct {
	h      *History
	client int
	in     Input
	call   int64
}

// Call records that client calls in, now.
func (h *History) Call(client int, in Input) *Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open++
	return &Op{h: h, client: client, in: in, call: h.now()}
}

// End records the operation's answer, now: out when o is Definite; an
// Indefinite write returns after every other operation (its output
// Unknown), and an Indefinite read and a Refused operation are dropped.
func (op *Op) End(out Output, o Outcome) {
	h := op.h
	h.mu.Lock()
	defer h.mu.Unlock()
	ret := h.now()
	h.open--
	c := h.counts[op.in.Kind]
	if c == nil {
		c = new([3]int)
		h.counts[op.in.Kind] = c
	}
	c[o]++
	rec := porcupine.Operation{ClientId: op.client, Input: op.in, Call: op.call, Output: out, Return: ret}
	switch {
	case o == Definite:
		h.ops = append(h.ops, rec)
	case o == Indefinite && op.in.Kind != Read:
		rec.Output = Output{Unknown: true}
		h.unknown = append(h.unknown, rec)
	}
}

// Operations returns the history for the checker: the operations that
// ended Definite as they were, and the Indefinite writes returning after
// every other operation. It is an error to call it before every
// operation has ended, since an open one would be silently left out.
func (h *History) Operations() ([]porcupine.Operation, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open != 0 {
		return nil, fmt.Errorf("lincheck: %d operations still open", h.open)
	}
	end := int64(0)
	for _, op := range h.ops {
		end = max(end, op.Return)
	}
	for _, op := range h.unknown {
		end = max(end, op.Return)
	}
	out := make([]porcupine.Operation, 0, len(h.ops)+len(h.unknown))
	out = append(out, h.ops...)
	for _, op := range h.unknown {
		op.Return = end + 1
		out = append(out, op)
	}
	return out, nil
}

// Counts is, per kind of operation, how many ended with each outcome.
type Counts map[Kind][3]int

// Counts returns how many operations ended with each outcome, by kind.
func (h *History) Counts() Counts {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := Counts{}
	for k, c := range h.counts {
		out[k] = *c
	}
	return out
}

// Total is the number of operations of every kind and outcome.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v[0] + v[1] + v[2]
	}
	return n
}
