package storage

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/cqld/cqld/metrics"
)

// stalls counts pebble's write stalls from its events. It is safe for
// concurrent use.
type stalls struct {
	now func() time.Time

	mu    sync.Mutex
	count uint64
	total time.Duration
	began time.Time // zero when no stall is on
}

func (s *stalls) listen(l *pebble.EventListener) {
	l.WriteStallBegin = func(pebble.WriteStallBeginInfo) {
		s.mu.Lock()
		s.count++
		s.began = s.now()
		s.mu.Unlock()
	}
	l.WriteStallEnd = func() {
		s.mu.Lock()
		if !s.began.IsZero() {
			s.total += s.now().Sub(s.began)
			s.began = time.Time{}
		}
		s.mu.Unlock()
	}
}

// on says whether a stall is on.
func (s *stalls) on() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.began.IsZero()
}

// read returns the stalls so far and their time, a stall still on
// included.
func (s *stalls) read() (uint64, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := s.total
	if !s.began.IsZero() {
		total += s.now().Sub(s.began)
	}
	return s.count, total
}

// LSMStats reports the LSM's state for metrics.NewLSM. It is safe for
// concurrent use, until Close.
func (e *Engine) LSMStats() metrics.LSMStats {
	m := e.db.Metrics()
	st := metrics.LSMStats{
		CompactionDebtBytes:   m.Compact.EstimatedDebt,
		Sublevels:             m.Levels[0].Sublevels,
		ReadAmplification:     m.ReadAmp(),
		Memtables:             m.MemTable.Count,
		MemtableBytes:         m.MemTable.Size,
		Flushes:               m.Flush.Count,
		Compactions:           m.Compact.Count,
		CompactionsInProgress: m.Compact.NumInProgress,
		FlushFailing:          e.flushes.refusal() != nil,
	}
	for l := range min(len(m.Levels), metrics.LSMLevels) {
		lm := &m.Levels[l]
		st.LevelFiles[l] = lm.TablesCount
		st.LevelBytes[l] = lm.TablesSize
		st.FlushBytes += lm.TableBytesFlushed + lm.BlobBytesFlushed
		st.CompactionBytesRead += lm.TableBytesRead
		st.CompactionBytesWritten += lm.TableBytesCompacted + lm.BlobBytesCompacted
	}
	n, d := e.stalls.read()
	st.WriteStalls, st.WriteStallSeconds = n, d.Seconds()
	return st
}
