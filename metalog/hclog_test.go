package metalog

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Raft's error about a down peer, repeated every 200 ms, is logged once
// per window with the count of the repetitions left out; another peer's,
// and info lines, are not held back by it.
func TestHcloggerRepeats(t *testing.T) {
	var out strings.Builder
	now := time.Unix(1000, 0)
	h := newHclogger(slog.New(slog.NewTextHandler(&out, nil)))
	h.repeats = newRepeats(10*time.Second, func() time.Time { return now })
	raft := h.Named("raft")
	for i := range 50 {
		raft.Error("failed to heartbeat to", "peer", "127.0.0.2:7000", "backoff time", time.Duration(i)*time.Millisecond, "error", errors.New("dial refused"))
		raft.Error("failed to heartbeat to", "peer", "127.0.0.3:7000", "error", errors.New("dial refused"))
		raft.Info("entering candidate state")
		now = now.Add(200 * time.Millisecond)
	}
	raft.With("x", 1).Error("failed to heartbeat to", "peer", "127.0.0.2:7000", "error", errors.New("dial refused"))

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	count := func(s string) (n int) {
		for _, l := range lines {
			if strings.Contains(l, s) {
				n++
			}
		}
		return n
	}
	if n := count("peer=127.0.0.2:7000"); n != 2 {
		t.Errorf("%d lines about 127.0.0.2 in 10 s and once after, want 2:\n%s", n, out.String())
	}
	if n := count("peer=127.0.0.3:7000"); n != 1 {
		t.Errorf("%d lines about 127.0.0.3 within 10 s, want 1:\n%s", n, out.String())
	}
	if n := count("entering candidate state"); n != 50 {
		t.Errorf("%d info lines, want 50", n)
	}
	if n := count("suppressed=49"); n != 1 {
		t.Errorf("the line after the window does not count the 49 left out:\n%s", out.String())
	}
}

// A value given as hclog.Fmt is rendered, as hclog renders it.
func TestHcloggerFmt(t *testing.T) {
	var out strings.Builder
	h := newHclogger(slog.New(slog.NewTextHandler(&out, nil)))
	h.Info("initial configuration", "servers", hclog.Fmt("%+v", []struct{ ID string }{{"a"}}))
	if got := out.String(); !strings.Contains(got, `servers=[{ID:a}]`) {
		t.Errorf("logged %q, want servers=[{ID:a}]", got)
	}
}
