package gossip

import (
	"bytes"
	"context"
	"log"
	"log/slog"
)

// memberlistLogger turns memberlist's log lines ("[WARN] memberlist: …")
// into records of l. memberlist's errors are mostly a peer being away,
// which this package reports itself (Down events, seeds unreachable), so
// its levels are lowered by one: ERR is a warning, WARN information, the
// rest debug.
func memberlistLogger(l *slog.Logger) *log.Logger {
	return log.New(levelWriter{l}, "", 0)
}

type levelWriter struct{ l *slog.Logger }

func (w levelWriter) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	level := slog.LevelDebug
	for _, pre := range [...]struct {
		tag   string
		level slog.Level
	}{{"[ERR]", slog.LevelWarn}, {"[ERROR]", slog.LevelWarn}, {"[WARN]", slog.LevelInfo}, {"[INFO]", slog.LevelDebug}, {"[DEBUG]", slog.LevelDebug}} {
		if bytes.HasPrefix(line, []byte(pre.tag)) {
			level = pre.level
			line = bytes.TrimSpace(line[len(pre.tag):])
			break
		}
	}
	for _, quiet := range quietLines {
		if bytes.Contains(line, []byte(quiet)) {
			level = slog.LevelDebug
		}
	}
	if w.l.Enabled(context.Background(), level) {
		w.l.Log(context.Background(), level, string(line), "component", "memberlist")
	}
	return len(p), nil
}

// quietLines are memberlist's lines repeated for as long as a peer is down
// or refused (each probe, each gossip round), which gossip reports once
// itself: Down events, "node refused". They are logged at debug level.
var quietLines = [...]string{
	"ignoring alive message",
	"Failed to send gossip to",
	"Failed to send UDP ping",
	"Failed to send indirect UDP ping",
	"Failed to send UDP compound ping",
	"Push/Pull with",
}
