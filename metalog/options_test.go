package metalog

import (
	"strings"
	"testing"
	"time"
)

func TestOpenRefusesBadOptions(t *testing.T) {
	c := newCluster(t, 1, testTiming)
	nd := c.nodes[0]
	good := Options{Dir: t.TempDir(), Transport: nd.trans, HostID: nd.host, FSM: nd.fsm, Timing: testTiming}
	for _, tc := range []struct {
		want string
		edit func(*Options)
	}{
		{"Dir", func(o *Options) { o.Dir = "" }},
		{"Transport", func(o *Options) { o.Transport = nil }},
		{"HostID", func(o *Options) { o.HostID = [16]byte{} }},
		{"FSM", func(o *Options) { o.FSM = nil }},
		{"MaxMessageSize", func(o *Options) { o.MaxMessageSize = 4096 }},
		{"LeaderLeaseTimeout", func(o *Options) { o.Timing.LeaderLeaseTimeout = time.Second }},
	} {
		o := good
		tc.edit(&o)
		l, err := Open(o)
		if err == nil {
			l.Close()
			t.Errorf("%s: Open succeeded", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming it", tc.want, err)
		}
	}
}
