package frontend

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/panjf2000/gnet/v2/pkg/logging"
)

// gnetLogger sends gnet's own log lines to the server's logger, one level
// down: gnet's INFO (start-up chatter) becomes DEBUG.
type gnetLogger struct{ l *slog.Logger }

var _ logging.Logger = gnetLogger{}

func (g gnetLogger) log(level slog.Level, format string, args ...any) {
	if g.l.Enabled(context.Background(), level) {
		g.l.Log(context.Background(), level, "gnet: "+fmt.Sprintf(format, args...))
	}
}

func (g gnetLogger) Debugf(format string, args ...any) { g.log(slog.LevelDebug-4, format, args...) }
func (g gnetLogger) Infof(format string, args ...any)  { g.log(slog.LevelDebug, format, args...) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.log(slog.LevelWarn, format, args...) }
func (g gnetLogger) Errorf(format string, args ...any) { g.log(slog.LevelError, format, args...) }
func (g gnetLogger) Fatalf(format string, args ...any) { g.log(slog.LevelError, format, args...) }
