package hints

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/ring"
)

func TestOptionsRefused(t *testing.T) {
	live := LivenessFunc(func(ring.HostID) (time.Time, bool) { return time.Time{}, false })
	deliver := func(context.Context, ring.HostID, time.Time, []byte) error { return nil }
	for _, c := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"no dir", func(o *Options) { o.Dir = "" }, "no directory"},
		{"no liveness", func(o *Options) { o.Liveness = nil }, "required"},
		{"no deliver", func(o *Options) { o.Deliver = nil }, "required"},
		{"small file", func(o *Options) { o.MaxFileSize = MinFileSize - 1 }, "max_hints_file_size"},
		{"huge file", func(o *Options) { o.MaxFileSize = 1 << 32 }, "max_hints_file_size"},
		{"negative period", func(o *Options) { o.FlushPeriod = -1 }, "negative"},
		{"retry bounds", func(o *Options) { o.MinRetry, o.MaxRetry = time.Minute, time.Second }, "negative"},
		{"negative buffer", func(o *Options) { o.BufferSize = -1 }, "negative buffer"},
		{"negative window", func(o *Options) { o.MaxInFlight = -1 }, "in-flight"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Dir: "hints", Liveness: live, Deliver: deliver}
			c.set(&o)
			_, err := o.withDefaults()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("withDefaults() = %v, want an error with %q", err, c.want)
			}
		})
	}
	o, err := Options{Dir: "hints", Liveness: live, Deliver: deliver}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxFileSize != DefaultMaxFileSize || o.FlushPeriod != DefaultFlushPeriod || o.MaxWindow != DefaultMaxWindow ||
		o.Throttle != DefaultThrottle || o.MaxInFlight != DefaultMaxInFlight {
		t.Errorf("defaults not applied: %+v", o)
	}
}
