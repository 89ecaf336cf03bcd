package gossip

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestMemberlistLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := memberlistLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for line, want := range map[string]string{
		"[ERR] memberlist: Failed to receive: EOF":                          "level=WARN",
		"[WARN] memberlist: Refuting a suspect message (from: x)":           "level=INFO",
		"[DEBUG] memberlist: Stream connection":                             "level=DEBUG",
		"[ERR] memberlist: Failed to send gossip to 127.0.0.1:7000: closed": "level=DEBUG",
		"no level at all": "level=DEBUG",
	} {
		buf.Reset()
		l.Println(line)
		if got := buf.String(); !strings.Contains(got, want) || !strings.Contains(got, "component=memberlist") || strings.Contains(got, "[") {
			t.Errorf("%q logged as %q, want %s without its tag", line, got, want)
		}
	}
}
