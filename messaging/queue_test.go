package messaging

import (
	"errors"
	"testing"
	"time"
)

func TestOutQueueOrder(t *testing.T) {
	q := newOutQueue()
	t0 := time.Unix(0, 0)
	push := func(name string, due time.Duration) {
		if err := q.push(&outMsg{env: []byte(name), due: t0.Add(due)}); err != nil {
			t.Fatal(err)
		}
	}
	take := func(now time.Duration) (names []string, next time.Duration) {
		msgs, n := q.take(t0.Add(now), maxBatchBytes, nil)
		for _, m := range msgs {
			names = append(names, string(m.env))
		}
		if !n.IsZero() {
			next = n.Sub(t0)
		}
		return names, next
	}
	push("a", 5)
	push("b", 5)
	push("c", 1) // a shorter delay overtakes
	push("d", 9)
	push("e", 5)
	if got, next := take(0); len(got) != 0 || next != 1 {
		t.Fatalf("take(0) = %q, next %v; want nothing, next 1", got, next)
	}
	if got, next := take(5); !equal(got, "c", "a", "b", "e") || next != 9 {
		t.Fatalf("take(5) = %q, next %v; want c a b e, next 9", got, next)
	}
	push("f", 2)
	if got, next := take(100); !equal(got, "f", "d") || next != 0 {
		t.Fatalf("take(100) = %q, next %v; want f d", got, next)
	}
	push("g", 0)
	closed := errors.New("closed")
	if left := q.close(closed); len(left) != 1 || string(left[0].env) != "g" {
		t.Fatalf("close left %d messages, want g", len(left))
	}
	if err := q.push(&outMsg{}); err != closed {
		t.Fatalf("push after close: %v", err)
	}
}

func TestOutQueueBatchBytes(t *testing.T) {
	q := newOutQueue()
	for range 10 {
		q.push(&outMsg{env: make([]byte, 100)})
	}
	msgs, _ := q.take(time.Now(), 250, nil)
	if len(msgs) != 3 {
		t.Fatalf("took %d messages of 100 bytes for 250, want 3 (the last one crosses it)", len(msgs))
	}
}

func equal(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// A call is delivered once, whoever takes it out of a table: here a
// failing connection, then a response.
func TestCallDeliveredOnce(t *testing.T) {
	got := 0
	cl := &call{id: 7, then: func(result) { got++ }}
	var first, second callTable
	if err := first.add(cl); err != nil {
		t.Fatal(err)
	}
	first.failAll(ErrConnectionLost, true)
	if err := second.add(cl); err != nil {
		t.Fatal(err)
	}
	if !second.finish(7, result{payload: []byte("late")}) {
		t.Fatal("the second table lost the call")
	}
	if got != 1 {
		t.Fatalf("delivered %d times", got)
	}
}
