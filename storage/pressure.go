package storage

import (
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// pressureEvery is how often the engine looks at how close pebble is to
// stalling writes.
const pressureEvery = 25 * time.Millisecond

// pressure says whether pebble stalls writes, or is one memtable or a few
// L0 sublevels from it. A pebble write stall blocks the goroutine that
// applies, and ApplyAsync's callers are event loops, each serving many
// connections: an event loop that applied the write that stalled would
// answer none of its connections (reads included) until the stall ended,
// seconds under a sustained ingest. Under pressure ApplyAsync applies on
// a goroutine of its own instead, and the frontend's in-flight bounds
// hold the writes that wait.
type pressure struct {
	near atomic.Bool
	// memtableBytes and sublevels are the sampled levels that count as
	// near: pebble stalls at MemTableStopWritesThreshold memtables' bytes,
	// or L0StopWritesThreshold sublevels.
	memtableBytes uint64
	sublevels     int32
}

func newPressure(po *pebble.Options) *pressure {
	return &pressure{
		memtableBytes: uint64(po.MemTableStopWritesThreshold-1) * po.MemTableSize,
		sublevels:     int32(max(1, po.L0StopWritesThreshold-4)),
	}
}

// listen marks a stall as pressure the moment pebble reports it.
func (p *pressure) listen(l *pebble.EventListener) {
	begin := l.WriteStallBegin
	l.WriteStallBegin = func(info pebble.WriteStallBeginInfo) {
		p.near.Store(true)
		if begin != nil {
			begin(info)
		}
	}
}

// sample sets near from the LSM's state; stalled says a stall is on.
func (p *pressure) sample(m *pebble.Metrics, stalled bool) {
	p.near.Store(stalled || m.MemTable.Size >= p.memtableBytes || m.Levels[0].Sublevels >= p.sublevels)
}

// pressureLoop samples pebble's state until Close.
func (e *Engine) pressureLoop() {
	defer e.bg.Done()
	t := time.NewTicker(pressureEvery)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.pressure.sample(e.db.Metrics(), e.stalls.on())
		}
	}
}
