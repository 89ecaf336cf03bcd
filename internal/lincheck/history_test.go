package lincheck

import (
	"testing"
)

// ticks is a clock that advances by one at each reading.
func ticks() func() int64 {
	var t int64
	return func() int64 { t++; return t }
}

func TestHistoryOperations(t *testing.T) {
	h := NewHistory(ticks())
	w := h.Call(0, insert(1, 10))        // 1
	r := h.Call(1, read(1))              // 2
	u := h.Call(2, cas(1, 10, 11))       // 3
	lost := h.Call(3, read(1))           // 4
	refused := h.Call(4, cas(1, 10, 12)) // 5
	if _, err := h.Operations(); err == nil {
		t.Fatal("Operations with operations open: no error")
	}
	w.End(applied, Definite)                 // 6
	r.End(saw(Some(10)), Definite)           // 7
	u.End(Output{Applied: true}, Indefinite) // 8
	lost.End(saw(Some(3)), Indefinite)       // 9
	refused.End(Output{}, Refused)           // 10

	ops, err := h.Operations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 {
		t.Fatalf("%d operations, want 3 (the indefinite read and the refused write dropped): %+v", len(ops), ops)
	}
	if ops[0].Call != 1 || ops[0].Return != 6 || ops[1].Call != 2 || ops[1].Return != 7 {
		t.Errorf("definite operations keep their times: %+v", ops[:2])
	}
	if ops[2].Call != 3 || ops[2].Return != 9 || !ops[2].Output.(Output).Unknown {
		t.Errorf("the indefinite write returns after every other operation, output unknown: %+v", ops[2])
	}
	c := h.Counts()
	if c[Read] != [3]int{1, 1, 0} || c[CAS] != [3]int{0, 1, 1} || c[Insert] != [3]int{1, 0, 0} || c.Total() != 5 {
		t.Errorf("counts %v", c)
	}
}
