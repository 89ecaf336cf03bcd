package lincheck

import (
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"
)

// Kind is what an operation does to its register.
type Kind uint8

const (
	// Read is a SERIAL read of the register.
	Read Kind = iota
	// Insert writes New if the register is absent (INSERT ... IF NOT
	// EXISTS).
	Insert
	// CAS writes New if the register holds Old (UPDATE ... IF v = Old).
	CAS
	// Delete removes the register if it holds Old (DELETE ... IF v = Old).
	Delete
)

var kindNames = [...]string{Read: "read", Insert: "insert", CAS: "cas", Delete: "delete"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Value is a register's content: absent, or a value.
type Value struct {
	Exists bool
	V      int64
}

// Absent is the content of a register never written or deleted.
var Absent = Value{}

// Some is a register holding v.
func Some(v int64) Value { return Value{Exists: true, V: v} }

func (v Value) String() string {
	if !v.Exists {
		return "∅"
	}
	return fmt.Sprint(v.V)
}

// Input is one operation as called.
type Input struct {
	Key  int
	Kind Kind
	Old  int64 // CAS, Delete: the value the condition expects
	New  int64 // Insert, CAS: the value written
	// Level is the commit consistency level of a write, shown in the
	// visualization; the model ignores it.
	Level string
}

// Output is what an operation answered.
type Output struct {
	// Unknown marks an operation that may or may not have taken effect.
	Unknown bool
	// Applied says whether a write's condition held.
	Applied bool
	// Current is the value a read returned, or the one a write that was
	// not applied reported.
	Current Value
}

// holds reports whether in's condition holds on s, and the register's
// content after in when it does.
func holds(s Value, in Input) (bool, Value) {
	switch in.Kind {
	case Insert:
		return !s.Exists, Some(in.New)
	case CAS:
		return s == Some(in.Old), Some(in.New)
	case Delete:
		return s == Some(in.Old), Absent
	}
	return true, s
}

// step is the sequential specification of one register.
func step(state, input, output any) (bool, any) {
	s, in, out := state.(Value), input.(Input), output.(Output)
	if in.Kind == Read {
		return out.Unknown || out.Current == s, s
	}
	ok, next := holds(s, in)
	switch {
	case out.Unknown:
		// Linearized here it took effect as its condition says; one that
		// did not take effect at all is linearized last.
		if ok {
			return true, next
		}
		return true, s
	case out.Applied != ok:
		return false, s
	case ok:
		return true, next
	}
	// Not applied: the answer carries the current value.
	return out.Current == s, s
}

// partition splits a history by register.
func partition(history []porcupine.Operation) [][]porcupine.Operation {
	by := map[int][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(Input).Key
		by[k] = append(by[k], op)
	}
	keys := make([]int, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, by[k])
	}
	return out
}

func describeOperation(input, output any) string {
	in, out := input.(Input), output.(Output)
	var call string
	switch in.Kind {
	case Read:
		call = fmt.Sprintf("k%d: read", in.Key)
	case Insert:
		call = fmt.Sprintf("k%d: insert %d if absent", in.Key, in.New)
	case CAS:
		call = fmt.Sprintf("k%d: %d→%d", in.Key, in.Old, in.New)
	case Delete:
		call = fmt.Sprintf("k%d: delete if %d", in.Key, in.Old)
	}
	if in.Level != "" {
		call += " @" + in.Level
	}
	switch {
	case out.Unknown:
		return call + " → ?"
	case in.Kind == Read:
		return call + " → " + out.Current.String()
	case out.Applied:
		return call + " → applied"
	}
	return call + " → not applied, " + out.Current.String()
}

// Model is the sequential specification of a set of registers, each
// checked on its own.
var Model = porcupine.Model{
	Partition: partition,
	Init:      func() any { return Absent },
	Step:      step,
	Hash: func(state any) uint64 {
		s := state.(Value)
		if !s.Exists {
			return 0
		}
		return uint64(s.V)*0x9e3779b97f4a7c15 + 1
	},
	DescribeOperation: describeOperation,
	DescribeState:     func(state any) string { return state.(Value).String() },
}
