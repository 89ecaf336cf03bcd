package test

import (
	"fmt"
	"sync"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
)

// logSink records what a driver logs as a problem (gocql v1's StdLogger;
// warnings and errors of the v2 StructuredLogger), so a test can assert a
// session came up without a warning or a retry.
type logSink struct {
	mu  sync.Mutex
	got []string
}

func (l *logSink) add(s string) {
	l.mu.Lock()
	l.got = append(l.got, s)
	l.mu.Unlock()
}

func (l *logSink) n() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.got) }

func (l *logSink) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// gocql v1
func (l *logSink) Print(v ...any)                 { l.add(fmt.Sprint(v...)) }
func (l *logSink) Printf(format string, v ...any) { l.add(fmt.Sprintf(format, v...)) }
func (l *logSink) Println(v ...any)               { l.add(fmt.Sprintln(v...)) }

// gocql v2
func (l *logSink) Error(msg string, f ...gocql2.LogField)   { l.add(fmt.Sprint("ERROR ", msg, f)) }
func (l *logSink) Warning(msg string, f ...gocql2.LogField) { l.add(fmt.Sprint("WARN ", msg, f)) }
func (l *logSink) Info(string, ...gocql2.LogField)          {}
func (l *logSink) Debug(string, ...gocql2.LogField)         {}
