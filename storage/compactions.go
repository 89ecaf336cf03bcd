package storage

import (
	"sort"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Compaction is a compaction of the LSM under way, as
// system_views.sstable_tasks shows it. The LSM holds every table, so a
// compaction is no one table's.
type Compaction struct {
	JobID int
	// Reason is pebble's ("default", "move", "delete-only", ...).
	Reason     string
	InputBytes uint64
	Started    time.Time
}

// compactions are the compactions running, from pebble's events.
type compactions struct {
	now     func() time.Time
	mu      sync.Mutex
	running map[int]Compaction
}

func (c *compactions) listen(l *pebble.EventListener) {
	c.running = map[int]Compaction{}
	l.CompactionBegin = func(info pebble.CompactionInfo) {
		var in uint64
		for _, lv := range info.Input {
			for _, t := range lv.Tables {
				in += t.Size
			}
		}
		c.mu.Lock()
		c.running[info.JobID] = Compaction{JobID: info.JobID, Reason: info.Reason, InputBytes: in, Started: c.now()}
		c.mu.Unlock()
	}
	l.CompactionEnd = func(info pebble.CompactionInfo) {
		c.mu.Lock()
		delete(c.running, info.JobID)
		c.mu.Unlock()
	}
}

// Compactions returns the compactions running, by job. It is safe for
// concurrent use.
func (e *Engine) Compactions() []Compaction {
	e.compacting.mu.Lock()
	out := make([]Compaction, 0, len(e.compacting.running))
	for _, c := range e.compacting.running {
		out = append(out, c)
	}
	e.compacting.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].JobID < out[j].JobID })
	return out
}
