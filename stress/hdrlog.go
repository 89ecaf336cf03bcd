package stress

import (
	"bufio"
	"fmt"
	"os"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// hdrLog writes HdrHistogram interval logs (format 1.3, readable by
// HistogramLogReader, HdrHistogram's Java and Python tools, and
// HdrHistogramVisualizer). Each interval has one entry per operation kind,
// tagged with the kind's name; in an open loop the service time follows,
// tagged KIND-service. Values are nanoseconds; timestamps are seconds since
// the run's start. Not safe for concurrent use.
type hdrLog struct {
	f    *os.File
	bw   *bufio.Writer
	w    *hdr.HistogramLogWriter
	err  error
	path string
}

func openHDRLog(path string, start time.Time, comment string) (*hdrLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("stress: hdr log: %w", err)
	}
	l := &hdrLog{f: f, bw: bufio.NewWriter(f), path: path}
	l.w = hdr.NewHistogramLogWriter(l.bw)
	ms := start.UnixMilli()
	l.w.SetBaseTime(ms)
	l.check(l.w.OutputComment("cqlstress " + comment + "; values in nanoseconds"))
	l.check(l.w.OutputLogFormatVersion())
	l.check(l.w.OutputStartTime(ms))
	l.check(l.w.OutputBaseTime(ms))
	l.check(l.w.OutputLegend())
	return l, nil
}

func (l *hdrLog) check(err error) {
	if err != nil && l.err == nil {
		l.err = err
	}
}

// write logs k's interval histograms for [from, to].
func (l *hdrLog) write(tag string, k *kindStats, from, to time.Time) {
	out := func(h *hdr.Histogram, tag string) {
		h.SetTag(tag)
		h.SetStartTimeMs(from.UnixMilli())
		h.SetEndTimeMs(to.UnixMilli())
		l.check(l.w.OutputIntervalHistogram(h))
	}
	out(k.lat, tag)
	if k.svc != nil {
		out(k.svc, tag+"-service")
	}
}

// Close flushes the log and reports the first write error.
func (l *hdrLog) Close() error {
	l.check(l.bw.Flush())
	l.check(l.f.Close())
	if l.err != nil {
		return fmt.Errorf("stress: hdr log %s: %w", l.path, l.err)
	}
	return nil
}
