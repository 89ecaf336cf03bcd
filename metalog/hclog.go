package metalog

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// hclogger is raft's logger (an hclog.Logger) writing to slog, so raft's
// lines land where the node's others do. Raft's Info lines (elections,
// leadership, snapshots) become Info; its Debug and Trace lines Debug.
// Its warnings and errors about one peer repeat while the peer is down
// (a failed heartbeat every few hundred milliseconds): each is logged
// once per repeatWindow, with the count of those left out since.
type hclogger struct {
	l       *slog.Logger
	name    string
	args    []any
	repeats *repeats
}

var _ hclog.Logger = (*hclogger)(nil)

func newHclogger(l *slog.Logger) *hclogger {
	return &hclogger{l: l, repeats: newRepeats(repeatWindow, time.Now)}
}

func (h *hclogger) Log(level hclog.Level, msg string, args ...any) {
	lv := slogLevel(level)
	if !h.l.Enabled(context.Background(), lv) {
		return
	}
	if h.name != "" {
		msg = h.name + ": " + msg
	}
	args = append(h.args[:len(h.args):len(h.args)], args...)
	for i, a := range args {
		// hclog.Fmt's values are a format and its arguments, which
		// hclog renders and slog would print as a slice.
		if f, ok := a.(hclog.Format); ok && len(f) > 0 {
			if format, ok := f[0].(string); ok {
				args[i] = fmt.Sprintf(format, f[1:]...)
			}
		}
	}
	if lv >= slog.LevelWarn {
		n, ok := h.repeats.admit(repeatKey(lv, msg, args))
		if !ok {
			return
		}
		if n > 0 {
			args = append(args, "suppressed", n)
		}
	}
	h.l.Log(context.Background(), lv, msg, args...)
}

// repeatWindow is how often one repeated warning or error is logged.
const repeatWindow = 10 * time.Second

// repeatKeys are the arguments that tell one peer's lines from another's
// in raft's messages; the others (the error, a back-off time) change from
// one repetition to the next.
var repeatKeys = map[string]bool{"peer": true, "server-id": true, "id": true, "address": true}

// repeatKey is what makes two lines the same line for repeats.
func repeatKey(lv slog.Level, msg string, args []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", lv, msg)
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && repeatKeys[k] {
			fmt.Fprintf(&b, " %s=%v", k, args[i+1])
		}
	}
	return b.String()
}

// repeats rate-limits log lines by key, shared by a logger and those
// derived from it (With, Named).
type repeats struct {
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	lines map[string]*repeated
}

type repeated struct {
	logged     time.Time // when the line was last logged
	suppressed int       // lines left out since
}

// maxRepeatKeys bounds the lines remembered: past it, those not logged
// within the window are forgotten (their counts with them).
const maxRepeatKeys = 1024

func newRepeats(window time.Duration, now func() time.Time) *repeats {
	return &repeats{window: window, now: now, lines: map[string]*repeated{}}
}

// admit reports whether the line with key is logged now and, if so, how
// many lines of the same key were left out before it.
func (r *repeats) admit(key string) (suppressed int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	l := r.lines[key]
	if l != nil && now.Sub(l.logged) < r.window {
		l.suppressed++
		return 0, false
	}
	if l == nil {
		if len(r.lines) >= maxRepeatKeys {
			for k, o := range r.lines {
				if now.Sub(o.logged) >= r.window {
					delete(r.lines, k)
				}
			}
		}
		l = &repeated{}
		r.lines[key] = l
	}
	suppressed, l.suppressed, l.logged = l.suppressed, 0, now
	return suppressed, true
}

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (h *hclogger) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogger) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogger) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogger) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogger) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogger) enabled(l hclog.Level) bool {
	return h.l.Enabled(context.Background(), slogLevel(l))
}

func (h *hclogger) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogger) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogger) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogger) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogger) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogger) ImpliedArgs() []any { return h.args }

func (h *hclogger) With(args ...any) hclog.Logger {
	return &hclogger{l: h.l, name: h.name, args: append(h.args[:len(h.args):len(h.args)], args...), repeats: h.repeats}
}

func (h *hclogger) Name() string { return h.name }

func (h *hclogger) Named(name string) hclog.Logger {
	if h.name != "" {
		name = h.name + "." + name
	}
	return &hclogger{l: h.l, name: name, args: h.args, repeats: h.repeats}
}

func (h *hclogger) ResetNamed(name string) hclog.Logger {
	return &hclogger{l: h.l, name: name, args: h.args, repeats: h.repeats}
}

// SetLevel does nothing: the slog handler chooses the level.
func (h *hclogger) SetLevel(hclog.Level) {}

func (h *hclogger) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if h.enabled(l) {
			return l
		}
	}
	return hclog.Off
}

func (h *hclogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hclogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer { return stdWriter{h} }

type stdWriter struct{ h *hclogger }

func (w stdWriter) Write(p []byte) (int, error) {
	w.h.Info(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
