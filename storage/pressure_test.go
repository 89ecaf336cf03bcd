package storage

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/cqld/cqld/commitlog"
)

// A pebble write stall never holds ApplyAsync's caller (an event loop):
// with every table write held, the memtables fill until pebble stalls
// writes, and ApplyAsync still returns for every write, the later ones
// pending; once tables can be written again, every write completes.
func TestApplyAsyncNeverWaitsForAStall(t *testing.T) {
	gate := make(chan struct{})
	var held atomic.Int64
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if isTable(op.Path) && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync) {
			select {
			case <-gate:
			default:
				held.Add(1)
				<-gate
			}
		}
		return nil
	}))
	const memtable = 256 << 10
	e := openEngineWith(t, EngineOptions{FS: fs, Dir: "data", MemTableSize: memtable,
		Log: commitlog.Options{Dir: "commitlog", Sync: commitlog.SyncPeriodic}})
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	wrote := make(chan struct{})
	defer func() {
		release()
		<-wrote // the writer ends once tables can be written
		e.Close()
	}()
	tbl := testTable(t, false)
	value := bytes.Repeat([]byte{'x'}, 4<<10)

	// Six memtables' worth: pebble stalls at four. A write every
	// millisecond, so the sampler sees each memtable fill.
	const writes = 6 * memtable / (4 << 10)
	var done, failed, pending atomic.Int64
	issued := make(chan int, writes)
	go func() {
		defer close(wrote)
		for i := range writes {
			m := e.NewMutation()
			if err := m.WriteCell(tbl, i32(i), CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, live(1, string(value))); err != nil {
				t.Error(err)
				return
			}
			p, err := e.ApplyAsync(m, nil, func(err error) {
				if err != nil {
					failed.Add(1)
				}
				done.Add(1)
			})
			switch {
			case err != nil:
				t.Errorf("write %d: %v", i, err)
				return
			case p:
				pending.Add(1)
			default:
				done.Add(1)
			}
			issued <- i
			time.Sleep(time.Millisecond)
		}
		close(issued)
	}()
	n := 0
	for {
		select {
		case _, ok := <-issued:
			if !ok {
				goto all
			}
			n++
		case <-time.After(20 * time.Second):
			count, stalled := e.stalls.read()
			t.Fatalf("ApplyAsync blocked: %d of %d writes returned (stalls %d, %v; %d table writes held)", n, writes, count, stalled, held.Load())
		}
	}
all:
	if count, _ := e.stalls.read(); count == 0 || held.Load() == 0 {
		t.Fatalf("pebble never stalled (stalls %d, %d table writes held): the test proves nothing", count, held.Load())
	}
	if pending.Load() == 0 {
		t.Fatal("no write was handed off during the stall")
	}
	release()
	deadline := time.Now().Add(20 * time.Second)
	for done.Load() < writes {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes completed after the tables were released", done.Load(), writes)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if failed.Load() != 0 {
		t.Fatalf("%d writes failed", failed.Load())
	}
	t.Logf("%d writes, %d handed off; pebble stalled", writes, pending.Load())
}
