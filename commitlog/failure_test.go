package commitlog

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// failing wraps fs so that, while on is set, operations of kind on segment
// files fail with errorfs.ErrInjected.
func failing(fs vfs.FS, kind errorfs.OpKind, on *atomic.Bool) vfs.FS {
	return errorfs.Wrap(fs, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && op.Kind == kind && isSegment(op.Path) {
			return errorfs.ErrInjected
		}
		return nil
	}))
}

type policyProbe struct {
	failed chan error
	died   chan error
}

func probePolicy(opts *Options, policy string) *policyProbe {
	p := &policyProbe{failed: make(chan error, 4), died: make(chan error, 4)}
	opts.FailurePolicy = policy
	opts.OnFailure = func(err error) { p.failed <- err }
	opts.Die = func(err error) { p.died <- err }
	return p
}

// checkPolicy checks what the node sees after the error hit: whether the log
// still takes writes, and which hooks ran.
func checkPolicy(t *testing.T, l *Log, policy string, p *policyProbe) (acceptsWrites bool) {
	t.Helper()
	_, err := l.Append([]byte("c"))
	if policy == PolicyIgnore {
		mustf(t, err, "Append after an ignored error")
		if l.Err() != nil {
			t.Fatalf("Err() = %v under ignore", l.Err())
		}
		select {
		case err := <-p.failed:
			t.Fatalf("OnFailure(%v) under ignore", err)
		default:
		}
		return true
	}
	if !errors.Is(err, ErrStopped) || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Append after the error = %v, want ErrStopped wrapping the cause", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "commit_failure_policy "+policy) {
		t.Fatalf("error does not say why: %s", msg)
	}
	if !errors.Is(l.Err(), ErrStopped) {
		t.Fatalf("Err() = %v", l.Err())
	}
	if err := <-p.failed; !errors.Is(err, ErrStopped) {
		t.Fatalf("OnFailure(%v)", err)
	}
	if policy == PolicyDie {
		if err := <-p.died; !errors.Is(err, ErrStopped) {
			t.Fatalf("Die(%v)", err)
		}
	} else {
		select {
		case err := <-p.died:
			t.Fatalf("Die(%v) under %s", err, policy)
		default:
		}
	}
	return false
}

var policies = []string{PolicyStop, PolicyStopCommit, PolicyDie, PolicyIgnore}

func TestFailurePolicyOnSyncError(t *testing.T) {
	for _, policy := range policies {
		t.Run(policy, func(t *testing.T) {
			mem := vfs.NewMem()
			var on atomic.Bool
			opts := testOptions(failing(mem, errorfs.OpFileSyncData, &on))
			probe := probePolicy(&opts, policy)
			l := mustOpen(t, opts)
			_, err := l.Append([]byte("a"))
			mustf(t, err, "Append")
			waitReady(l)

			on.Store(true)
			if _, err := l.Append([]byte("b")); err == nil {
				t.Fatal("Append acknowledged a record whose fsync failed")
			}
			on.Store(false)
			ok := checkPolicy(t, l, policy, probe)
			if err := l.Close(); ok != (err == nil) {
				t.Fatalf("Close = %v", err)
			}

			opts.FS = mem
			got, _, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			ps := slices.DeleteFunc(payloads(got), func(p string) bool { return p == "b" }) // written, never acknowledged
			want := []string{"a"}
			if ok {
				want = append(want, "c")
			}
			if !slices.Equal(ps, want) {
				t.Fatalf("replayed %q, want %q (and maybe b)", payloads(got), want)
			}
		})
	}
}

func TestFailurePolicyOnShortWrite(t *testing.T) {
	for _, policy := range policies {
		t.Run(policy, func(t *testing.T) {
			mem := vfs.NewMem()
			ffs := newFaultFS(mem)
			opts := testOptions(ffs)
			probe := probePolicy(&opts, policy)
			l := mustOpen(t, opts)
			_, err := l.Append([]byte("a"))
			mustf(t, err, "Append")
			waitReady(l)

			ffs.shortWrite.Store(true)
			b := strings.Repeat("b", 100)
			if _, err := l.Append([]byte(b)); err == nil {
				t.Fatal("Append acknowledged a short write")
			}
			ok := checkPolicyShort(t, l, policy, probe)
			_ = l.Close()

			opts.FS = mem
			got, st, err := replayAll(t, opts)
			mustf(t, err, "Replay")
			want := []string{"a"}
			if ok {
				want = append(want, "c")
			}
			if !slices.Equal(payloads(got), want) {
				t.Fatalf("replayed %q, want %q", payloads(got), want)
			}
			if half := recordSize(len(b)) / 2; st.TruncatedBytes != half {
				t.Fatalf("truncated %d bytes, want the %d written of the torn record", st.TruncatedBytes, half)
			}
		})
	}
}

// checkPolicyShort is checkPolicy for an error that is not errorfs's.
func checkPolicyShort(t *testing.T, l *Log, policy string, p *policyProbe) bool {
	t.Helper()
	_, err := l.Append([]byte("c"))
	if policy == PolicyIgnore {
		mustf(t, err, "Append after an ignored error")
		return true
	}
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Append after the error = %v, want ErrStopped", err)
	}
	if err := <-p.failed; !errors.Is(err, ErrStopped) {
		t.Fatalf("OnFailure(%v)", err)
	}
	if policy == PolicyDie {
		<-p.died
	}
	return false
}

// TestFailurePolicyOnPrepareError: a segment that cannot be created fails
// the appends that need it; under ignore, a later append retries.
func TestFailurePolicyOnPrepareError(t *testing.T) {
	for _, policy := range []string{PolicyStop, PolicyIgnore} {
		t.Run(policy, func(t *testing.T) {
			var on atomic.Bool
			on.Store(true)
			opts := testOptions(failing(vfs.NewMem(), errorfs.OpOpen, &on))
			probePolicy(&opts, policy)
			l := mustOpen(t, opts)
			defer l.Close()
			if _, err := l.Append([]byte("a")); err == nil || !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("Append without a segment = %v", err)
			}
			on.Store(false)
			_, err := l.Append([]byte("b"))
			if policy == PolicyIgnore {
				if err != nil {
					// A preparation that started before the fault cleared
					// may still have failed; the next one cannot.
					_, err = l.Append([]byte("b"))
				}
				mustf(t, err, "Append once segments can be made again")
			} else if !errors.Is(err, ErrStopped) {
				t.Fatalf("Append after a stop = %v", err)
			}
		})
	}
}

// TestPeriodicSyncError: periodic mode acknowledges at write, so a failing
// sync is seen by Sync and stops later appends.
func TestPeriodicSyncError(t *testing.T) {
	var on atomic.Bool
	opts := testOptions(failing(vfs.NewMem(), errorfs.OpFileSyncData, &on))
	opts.Sync = SyncPeriodic
	opts.SyncPeriod = time.Hour
	probePolicy(&opts, PolicyStop)
	l := mustOpen(t, opts)
	defer l.Close()
	_, err := l.Append([]byte("a"))
	mustf(t, err, "Append")
	waitReady(l)
	on.Store(true)
	if err := l.Sync(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Sync = %v", err)
	}
	if _, err := l.Append([]byte("b")); !errors.Is(err, ErrStopped) {
		t.Fatalf("Append after a failed sync = %v", err)
	}
}
