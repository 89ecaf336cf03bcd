package hints

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// diskFull fails the operations it is set to fail, under the hints
// directory, with ENOSPC while it is on.
type diskFull struct {
	on    atomic.Bool
	kinds map[errorfs.OpKind]bool
}

func (d *diskFull) MaybeError(op errorfs.Op) error {
	if d.on.Load() && d.kinds[op.Kind] && strings.Contains(op.Path, "hints") {
		return fmt.Errorf("injected: %w", syscall.ENOSPC)
	}
	return nil
}

func (d *diskFull) String() string { return "disk full" }

var _ errorfs.Injector = (*diskFull)(nil)

// A full disk makes Write fail with the error once its buffer cannot be
// written, and Flush fail; nothing written is corrupt, and once the disk
// has room every hint whose Write succeeded is delivered, in order, once.
func TestDiskFull(t *testing.T) {
	for _, c := range []struct {
		name  string
		kinds []errorfs.OpKind
		after int // hints written once the disk has room again
	}{
		{"writes", []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpCreate}, 50},
		{"syncs", []errorfs.OpKind{errorfs.OpFileSyncData, errorfs.OpFileSync}, 50},
		// Close alone writes what stayed buffered.
		{"writes then none", []errorfs.OpKind{errorfs.OpFileWrite}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			inj := &diskFull{kinds: map[errorfs.OpKind]bool{}}
			for _, k := range c.kinds {
				inj.kinds[k] = true
			}
			e := newEnv(t)
			e.fs = errorfs.Wrap(vfs.NewMem(), inj)
			e.opts = func(o *Options) { o.BufferSize = 512 }
			s := e.open()
			e.live.setDown(host(1), e.clock.Now())
			var accepted []int
			write := func(i int) error {
				err := s.Write(host(1), []byte(hint(1, i)), e.clock.Now())
				if err == nil {
					accepted = append(accepted, i)
				}
				return err
			}
			i := 0
			for ; i < 30; i++ {
				if err := write(i); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}

			inj.on.Store(true)
			failed := 0
			for ; i < 200; i++ {
				if err := write(i); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("Write on a full disk: %v, want ENOSPC", err)
					}
					failed++
				}
			}
			if err := s.Flush(); !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("Flush on a full disk = %v, want ENOSPC", err)
			}
			if c.kinds[0] == errorfs.OpFileWrite && failed == 0 {
				t.Fatalf("no Write failed on a full disk")
			}
			if c.kinds[0] == errorfs.OpFileSyncData && failed != 0 {
				t.Fatalf("%d Writes failed while only syncs fail (Write does not sync)", failed)
			}

			inj.on.Store(false)
			for end := i + c.after; i < end; i++ {
				if err := write(i); err != nil {
					t.Fatal(err)
				}
			}
			closeStore(t, s)
			e.live.setUp(host(1))
			s = e.open()
			defer closeStore(t, s)
			s.dispatchRound(s.ctx)
			got := e.rec.delivered(host(1))
			if len(got) != len(accepted) {
				t.Fatalf("delivered %d hints, want the %d accepted (%d refused)", len(got), len(accepted), failed)
			}
			for k, g := range got {
				if want := hint(1, accepted[k]); g != want {
					t.Fatalf("hint %d is %q, want %q", k, g, want)
				}
			}
			if q := e.files(corruptSuffix); len(q) != 0 {
				t.Errorf("quarantined %v after a full disk", q)
			}
			if got := counter(e.m.QuarantinedFiles) + counter(e.m.TornBytes); got != 0 {
				t.Errorf("quarantined files + torn bytes = %v, want 0", got)
			}
		})
	}
}
