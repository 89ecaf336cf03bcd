package stress

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args  string
		check func(c *Config) bool
	}{
		{"write n=1M", func(c *Config) bool {
			return c.N == 1e6 && c.Pop.Kind == "seq" && c.Pop.Max == 1e6 && c.Threads == 8 && c.Prepared && c.CL == gocql.LocalOne
		}},
		{"read duration=30s cl=QUORUM -rate threads>=1 threads<=256", func(c *Config) bool {
			s := c.Steps()
			return c.Duration == 30*time.Second && c.CL == gocql.Quorum && len(s) == 9 && s[0] == 1 && s[8] == 256 && c.Pop.Kind == "gaussian"
		}},
		{"write n=10 -rate threads=3..12", func(c *Config) bool {
			s := c.Steps()
			return len(s) == 3 && s[0] == 3 && s[1] == 6 && s[2] == 12
		}},
		{"mixed ratio(write=1,read=3) n=10 -rate fixed=5000/s threads=64", func(c *Config) bool {
			return c.FixedRate == 5000 && c.Threads == 64 && len(c.Ratio) == 2 && c.Ratio[1] == Weighted{"read", 3}
		}},
		{"write n=5 -pop dist=zipf(1..100,1.5) -col size=uniform(10..100) -serial-cl LOCAL_SERIAL", func(c *Config) bool {
			return c.Pop.Kind == "zipf" && c.Pop.Param == 1.5 && c.ColSize.Max == 100 && c.SerialCL == gocql.LocalSerial
		}},
		{"write n=5 -mode simple protocolVersion=3 compression=lz4 connections=4 pageSize=100 -node a:9043,b", func(c *Config) bool {
			return !c.Prepared && c.ProtoVersion == 3 && c.Compression == "lz4" && c.Connections == 4 && c.PageSize == 100 && len(c.Nodes) == 2
		}},
		{"write n=5 -schema replication(strategy=NetworkTopologyStrategy,dc1=3) keyspace=ks2", func(c *Config) bool {
			return c.Keyspace == "ks2" && c.Replication == "{'class': 'NetworkTopologyStrategy', 'dc1': 3}"
		}},
		{"write n=5 -rate throttle=100/s threads=2", func(c *Config) bool { return c.Throttle && c.FixedRate == 100 }},
		{"write n=5 warmup=30s -errors retries=3 -node datacenter=dc2 h1 h2", func(c *Config) bool {
			return c.WarmupDuration == 30*time.Second && c.Retries == 3 && c.DataCenter == "dc2" && len(c.Nodes) == 2
		}},
		{"write n=5 warmup=10k", func(c *Config) bool { return c.WarmupN == 10000 }},
		{"cas n=10k cl=ANY -serial-cl LOCAL_SERIAL -pop dist=uniform(1..5)", func(c *Config) bool {
			return c.N == 10000 && c.CL == gocql.Any && c.SerialCL == gocql.LocalSerial && c.Pop.Kind == "uniform" && c.Pop.Max == 5
		}},
		{"serial_read n=5", func(c *Config) bool { return c.SerialCL == gocql.Serial && c.Ratio[0].Name == "serial_read" }},
		{"update n=5 -mode lean protocolVersion=5", func(c *Config) bool {
			return c.Lean && c.ProtoVersion == 5 && len(c.Ratio) == 1 && c.Ratio[0].Name == "update"
		}},
		{"mixed ratio(update=1,read=1,counter_write=1) n=5 -mode native lean cql3", func(c *Config) bool { return c.Lean && len(c.Ratio) == 3 }},
		{"write n=5 -mode lean gocql", func(c *Config) bool { return !c.Lean }},
		{"read n=5 -pop seq=1..500 -populate", func(c *Config) bool { return c.Populate == 500 }},
		{"write n=5 -json a.json -hdrfile a.hdr -chart a.svg -max-errors 3 -log interval=5s", func(c *Config) bool {
			return c.JSONFile == "a.json" && c.HDRFile == "a.hdr" && c.ChartFile == "a.svg" && c.MaxErrors == 3 && c.Interval == 5*time.Second
		}},
	} {
		c, err := Parse(strings.Fields(tc.args))
		if err != nil {
			t.Errorf("%s: %v", tc.args, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%s: parsed as %+v", tc.args, c)
		}
	}
	for _, bad := range []string{
		"", "nope n=1", "write", "write n=1 duration=1s", "write n=1 -rate threads>=4",
		"write n=1 -rate threads>=8 threads<=4", "write n=1 -pop dist=zipf(1..10,1)", "write n=1 -bogus x",
		"mixed ratio(write=1,scan=1) n=1", "user n=1 ops(insert=1)", "write n=1 -col size=seq(1..3)",
		"write n=1 -rate threads>=1 threads<=4 fixed=10/s", "write n=1 -mode compression=zstd", "write n=1 -mode protocolVersion=5", "write n=1 warmup=soon",
		"write n=1 -mode lean protocolVersion=3", "write n=1 -mode lean connections=4", "cas n=1 -mode lean", "serial_read n=1 -mode lean", "serial_read n=1 -serial-cl QUORUM",
		"mixed ratio(write=1,cas=1) n=1 -mode lean", "write n=1 -mode lean compression=lz4", "write n=1 -mode lean user=u",
		"write n=1 -mode lean -errors retries=1", "write n=1 -mode lean -node datacenter=dc1 h1", "user profile=p.yaml ops(insert=1) n=1 -mode lean",
	} {
		if _, err := Parse(strings.Fields(bad)); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: err %v, want a usage error", bad, err)
		}
	}
}
