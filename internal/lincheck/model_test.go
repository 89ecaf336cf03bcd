package lincheck

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// op is a history entry for the tables below.
func op(client int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func read(k int) Input            { return Input{Key: k, Kind: Read} }
func insert(k int, v int64) Input { return Input{Key: k, Kind: Insert, New: v} }
func cas(k int, old, v int64) Input {
	return Input{Key: k, Kind: CAS, Old: old, New: v}
}
func del(k int, old int64) Input { return Input{Key: k, Kind: Delete, Old: old} }

var (
	applied = Output{Applied: true}
	unknown = Output{Unknown: true}
)

func saw(v Value) Output        { return Output{Current: v} }
func notApplied(v Value) Output { return Output{Current: v} }

func TestModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"sequential", true, []porcupine.Operation{
			op(0, 0, 1, read(1), saw(Absent)),
			op(0, 2, 3, insert(1, 10), applied),
			op(0, 4, 5, insert(1, 11), notApplied(Some(10))),
			op(0, 6, 7, cas(1, 10, 12), applied),
			op(0, 8, 9, cas(1, 10, 13), notApplied(Some(12))),
			op(0, 10, 11, read(1), saw(Some(12))),
			op(0, 12, 13, del(1, 10), notApplied(Some(12))),
			op(0, 14, 15, del(1, 12), applied),
			op(0, 16, 17, cas(1, 12, 14), notApplied(Absent)),
			op(0, 18, 19, read(1), saw(Absent)),
		}},
		{"stale read after an applied write", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(0, 2, 3, cas(1, 10, 11), applied),
			op(1, 4, 5, read(1), saw(Some(10))),
		}},
		{"a read concurrent with a write sees either", true, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(0, 2, 10, cas(1, 10, 11), applied),
			op(1, 3, 4, read(1), saw(Some(10))),
			op(2, 5, 6, read(1), saw(Some(11))),
		}},
		{"but not back again", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(0, 2, 10, cas(1, 10, 11), applied),
			op(1, 3, 4, read(1), saw(Some(11))),
			op(2, 5, 6, read(1), saw(Some(10))),
		}},
		{"two writes applied on one old value", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 5, cas(1, 10, 11), applied),
			op(2, 2, 5, cas(1, 10, 12), applied),
		}},
		{"one of two concurrent writes applies", true, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 5, cas(1, 10, 11), applied),
			op(2, 2, 5, cas(1, 10, 12), notApplied(Some(11))),
		}},
		{"not applied with a wrong current value", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 3, cas(1, 9, 11), notApplied(Some(9))),
		}},
		{"not applied though the condition held", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 3, cas(1, 10, 11), notApplied(Some(10))),
		}},
		{"an unknown write seen", true, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 100, cas(1, 10, 11), unknown),
			op(2, 5, 6, read(1), saw(Some(11))),
		}},
		{"an unknown write never seen", true, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 100, cas(1, 10, 11), unknown),
			op(2, 5, 6, read(1), saw(Some(10))),
			op(2, 7, 8, cas(1, 10, 12), applied),
		}},
		{"an unknown write seen, then undone", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 100, cas(1, 10, 11), unknown),
			op(2, 5, 6, read(1), saw(Some(11))),
			op(2, 7, 8, read(1), saw(Some(10))),
		}},
		{"an unknown write cannot take effect before its call", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(2, 2, 3, read(1), saw(Some(11))),
			op(1, 4, 100, cas(1, 10, 11), unknown),
		}},
		{"keys are independent", true, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 3, insert(2, 20), applied),
			op(0, 4, 5, read(1), saw(Some(10))),
			op(1, 6, 7, read(2), saw(Some(20))),
		}},
		{"a value of another key", false, []porcupine.Operation{
			op(0, 0, 1, insert(1, 10), applied),
			op(1, 2, 3, insert(2, 20), applied),
			op(0, 4, 5, read(1), saw(Some(20))),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(Model, tc.h); got != tc.ok {
				t.Errorf("linearizable = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestDescribeOperation(t *testing.T) {
	for _, tc := range []struct {
		in   Input
		out  Output
		want string
	}{
		{read(1), saw(Some(3)), "k1: read → 3"},
		{read(1), saw(Absent), "k1: read → ∅"},
		{Input{Key: 2, Kind: CAS, Old: 3, New: 4, Level: "ANY"}, applied, "k2: 3→4 @ANY → applied"},
		{insert(2, 4), notApplied(Some(3)), "k2: insert 4 if absent → not applied, 3"},
		{del(2, 4), unknown, "k2: delete if 4 → ?"},
	} {
		if got := describeOperation(tc.in, tc.out); got != tc.want {
			t.Errorf("%+v %+v: %q, want %q", tc.in, tc.out, got, tc.want)
		}
	}
}
