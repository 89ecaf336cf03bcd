package lincheck

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNewSchedule(t *testing.T) {
	o := ScheduleOptions{Nodes: 3, Kinds: []FaultKind{Kill, Pause}, Quiet: time.Second, Fault: 2 * time.Second}
	a := NewSchedule(7, time.Minute, o)
	if !reflect.DeepEqual(a, NewSchedule(7, time.Minute, o)) {
		t.Fatal("one seed, two schedules")
	}
	if reflect.DeepEqual(a, NewSchedule(8, time.Minute, o)) {
		t.Fatal("two seeds, one schedule")
	}
	var total time.Duration
	kinds := map[FaultKind]bool{}
	nodes := map[int]bool{}
	for _, f := range a {
		total += f.After + f.For
		kinds[f.Kind], nodes[f.Node] = true, true
		if f.After < o.Quiet/2 || f.After > o.Quiet*3/2 || f.For < o.Fault/2 || f.For > o.Fault*3/2 {
			t.Errorf("%v out of bounds", f)
		}
	}
	if total > time.Minute || total < time.Minute-2*(o.Quiet+o.Fault)*3/2 {
		t.Errorf("faults take %s of a minute", total)
	}
	if len(kinds) != 2 || kinds[Isolate] || len(nodes) != 3 {
		t.Errorf("kinds %v, nodes %v in %v", kinds, nodes, a)
	}
	if NewSchedule(1, time.Minute, ScheduleOptions{Nodes: 3}) != nil {
		t.Error("no kinds, yet faults")
	}
}

// recorder is an Injector that notes its calls.
type recorder struct {
	calls []string
	fail  string
}

func (r *recorder) note(what string, node int) error {
	r.calls = append(r.calls, fmt.Sprintf("%s %d", what, node))
	if what == r.fail {
		return errors.New("boom")
	}
	return nil
}

func (r *recorder) Kill(n int) error    { return r.note("kill", n) }
func (r *recorder) Restart(n int) error { return r.note("restart", n) }
func (r *recorder) Pause(n int) error   { return r.note("pause", n) }
func (r *recorder) Resume(n int) error  { return r.note("resume", n) }
func (r *recorder) Isolate(n int) error { return r.note("isolate", n) }
func (r *recorder) Heal(n int) error    { return r.note("heal", n) }

func TestScheduleRun(t *testing.T) {
	s := Schedule{
		{Kind: Kill, Node: 0, After: 1, For: 2},
		{Kind: Pause, Node: 1, After: 3, For: 4},
		{Kind: Isolate, Node: 2, After: 5, For: 6},
	}
	logf := func(string, ...any) {}
	var slept []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		slept = append(slept, d)
		return ctx.Err()
	}
	r := &recorder{}
	if err := s.Run(context.Background(), r, sleep, logf); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.calls, ", "); got != "kill 0, restart 0, pause 1, resume 1, isolate 2, heal 2" {
		t.Errorf("calls: %s", got)
	}
	if !reflect.DeepEqual(slept, []time.Duration{1, 2, 3, 4, 5, 6}) {
		t.Errorf("slept %v", slept)
	}

	// The end of the run during a fault still undoes it.
	ctx, cancel := context.WithCancel(context.Background())
	r = &recorder{}
	n := 0
	sleep = func(context.Context, time.Duration) error {
		if n++; n == 4 {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	if err := s.Run(ctx, r, sleep, logf); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.calls, ", "); got != "kill 0, restart 0, pause 1, resume 1" {
		t.Errorf("calls when stopped during the second fault: %s", got)
	}

	r = &recorder{fail: "restart"}
	err := s.Run(context.Background(), r, func(context.Context, time.Duration) error { return nil }, logf)
	if err == nil || !strings.Contains(err.Error(), "undo kill node1") {
		t.Errorf("a failed restart: %v", err)
	}
}
