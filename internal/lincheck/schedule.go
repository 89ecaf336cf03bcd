package lincheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// FaultKind is a kind of fault a schedule injects.
type FaultKind uint8

const (
	// Kill kills a node (kill -9) and restarts it on its data.
	Kill FaultKind = iota
	// Pause stops a node (SIGSTOP) and resumes it (SIGCONT).
	Pause
	// Isolate cuts a node off from the others (the internode fault seam)
	// and heals it; clients still reach it.
	Isolate
)

var faultNames = [...]string{Kill: "kill", Pause: "pause", Isolate: "isolate"}

func (k FaultKind) String() string {
	if int(k) < len(faultNames) {
		return faultNames[k]
	}
	return "fault?"
}

// Injector applies faults to the nodes of the system under test,
// numbered from 0. Its methods are called from one goroutine.
type Injector interface {
	Kill(node int) error
	Restart(node int) error
	Pause(node int) error
	Resume(node int) error
	Isolate(node int) error
	Heal(node int) error
}

// Fault is one fault of a schedule: Kind on Node, After the previous
// fault ended, lasting For.
type Fault struct {
	Kind  FaultKind
	Node  int
	After time.Duration
	For   time.Duration
}

func (f Fault) String() string {
	return fmt.Sprintf("+%s %s node%d for %s", f.After, f.Kind, f.Node+1, f.For)
}

// Schedule is a sequence of faults, one at a time, so that a majority of
// the nodes is up between them and during each.
type Schedule []Fault

// ScheduleOptions bound the schedule NewSchedule draws.
type ScheduleOptions struct {
	Nodes int
	Kinds []FaultKind
	// Quiet and Fault bound the pause between faults and a fault's
	// length: each is drawn uniformly in [d/2, d*3/2].
	Quiet, Fault time.Duration
}

// NewSchedule draws, from seed, as many faults as fit in total.
func NewSchedule(seed uint64, total time.Duration, o ScheduleOptions) Schedule {
	if o.Nodes < 1 || len(o.Kinds) == 0 {
		return nil
	}
	rnd := rand.New(rand.NewPCG(seed, 0x5c4ed))
	around := func(d time.Duration) time.Duration {
		return d/2 + time.Duration(rnd.Int64N(int64(d)+1))
	}
	var s Schedule
	for used := time.Duration(0); ; {
		f := Fault{Kind: o.Kinds[rnd.IntN(len(o.Kinds))], Node: rnd.IntN(o.Nodes), After: around(o.Quiet), For: around(o.Fault)}
		if used += f.After + f.For; used > total {
			return s
		}
		s = append(s, f)
	}
}

func (s Schedule) String() string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

// Run injects the faults in order through inj, waiting with sleep
// (which returns ctx's error when ctx ends first). A fault begun is
// always undone, even when ctx ends during it; Run returns at ctx's end
// or at the first error of inj.
func (s Schedule) Run(ctx context.Context, inj Injector, sleep func(context.Context, time.Duration) error, logf func(format string, args ...any)) error {
	for _, f := range s {
		if err := sleep(ctx, f.After); err != nil {
			return nil
		}
		do, undo := f.actions(inj)
		logf("fault: %s node%d", f.Kind, f.Node+1)
		if err := do(f.Node); err != nil {
			return fmt.Errorf("lincheck: %s node%d: %w", f.Kind, f.Node+1, err)
		}
		waited := sleep(ctx, f.For)
		logf("fault: %s node%d over", f.Kind, f.Node+1)
		if err := undo(f.Node); err != nil {
			return fmt.Errorf("lincheck: undo %s node%d: %w", f.Kind, f.Node+1, err)
		}
		if waited != nil {
			return nil
		}
	}
	return nil
}

func (f Fault) actions(inj Injector) (do, undo func(int) error) {
	switch f.Kind {
	case Kill:
		return inj.Kill, inj.Restart
	case Pause:
		return inj.Pause, inj.Resume
	}
	return inj.Isolate, inj.Heal
}

// Sleep waits d or until ctx ends (then returning its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
