package config

import (
	"bytes"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseFlags defines cqld's flags, plus an unrelated -config flag as main
// would, on a fresh FlagSet and parses args.
func parseFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	fs := flag.NewFlagSet("cqld", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("config", "", "config file")
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFlagsApply(t *testing.T) {
	const file = "cluster_name: From File\nnative_transport_port: 9043\nrpc_address: 10.0.0.1\nread_request_timeout: 5s\ncommitlog_segment_size_in_mb: 64\n"
	for _, tc := range []struct {
		name string
		args []string
		want func(c *Config) // applied to the file's config
	}{
		{"no flags", nil, func(c *Config) {}},
		{"unrelated flag", []string{"-config", "x.yaml"}, func(c *Config) {}},
		{"int overrides file", []string{"-native_transport_port=9050"}, func(c *Config) { c.NativeTransportPort = 9050 }},
		{"string overrides file", []string{"-listen_address", "10.9.9.9"}, func(c *Config) { c.ListenAddress = "10.9.9.9" }},
		{"enum", []string{"-commitlog_sync=batch"}, func(c *Config) { c.CommitlogSync = "batch" }},
		{"duration", []string{"-commitlog_sync_period=250ms"}, func(c *Config) { c.CommitlogSyncPeriod.Duration = 250 * time.Millisecond }},
		{"size", []string{"-native_transport_max_frame_size=256MiB", "-commitlog_total_space=64GiB"}, func(c *Config) {
			c.NativeTransportMaxFrameSize, c.CommitlogTotalSpace = 256*MiB, 64*GiB
		}},
		{"list", []string{"-data_file_directories", "a,b"}, func(c *Config) { c.DataFileDirectories = []string{"a", "b"} }},
		{"list with spaces", []string{"-data_file_directories= /x , /y"}, func(c *Config) { c.DataFileDirectories = []string{"/x", "/y"} }},
		{"literal null", []string{"-cluster_name=null"}, func(c *Config) { c.ClusterName = "null" }},
		{"empty broadcast", []string{"-broadcast_rpc_address="}, func(c *Config) {}},
		{"normalised", []string{"-authenticator=org.apache.cassandra.auth.PasswordAuthenticator"}, func(c *Config) { c.Authenticator = "PasswordAuthenticator" }},
		{"legacy flag overrides new key in file", []string{"-read_request_timeout_in_ms=7000"}, func(c *Config) { c.ReadRequestTimeout.Duration = 7 * time.Second }},
		{"new flag overrides legacy key in file", []string{"-commitlog_segment_size=16MiB"}, func(c *Config) { c.CommitlogSegmentSize = 16 * MiB }},
		{"fractional legacy flag", []string{"-commitlog_sync_group_window_in_ms=0.5"}, func(c *Config) { c.CommitlogSyncGroupWindow.Duration = 500 * time.Microsecond }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := loadYAML(t, file)
			if err != nil {
				t.Fatal(err)
			}
			if base.ClusterName != "From File" || base.CommitlogSegmentSize != 64*MiB {
				t.Fatalf("file not loaded: %+v", base)
			}
			got := base
			if err := parseFlags(t, tc.args...).Apply(&got); err != nil {
				t.Fatal(err)
			}
			want := base
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestFlagsApplyErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"int", []string{"-native_transport_port=abc"},
			[]string{`config: native_transport_port (flag -native_transport_port): cannot parse "abc" as an integer`}},
		{"empty int", []string{"-num_tokens="}, []string{`num_tokens (flag -num_tokens): cannot parse "" as an integer`}},
		{"duration without unit", []string{"-read_request_timeout=5000"}, []string{"read_request_timeout (flag -read_request_timeout)", "no unit"}},
		{"negative duration", []string{"-native_transport_idle_timeout=-1s"}, []string{"native_transport_idle_timeout (flag -native_transport_idle_timeout)", "negative"}},
		{"size without unit", []string{"-commitlog_segment_size=32"}, []string{"commitlog_segment_size (flag -commitlog_segment_size)", "no unit"}},
		{"legacy int", []string{"-commitlog_total_space_in_mb=lots"}, []string{`commitlog_total_space_in_mb (flag -commitlog_total_space_in_mb): cannot parse "lots" as an integer`}},
		{"enum", []string{"-commitlog_sync=fast"}, []string{`config: commitlog_sync (flag -commitlog_sync): "fast" is not one of periodic, batch, group, adaptive`}},
		{"range", []string{"-num_tokens=2000"}, []string{"num_tokens (flag -num_tokens)", "out of range"}},
		{"empty list", []string{"-data_file_directories="}, []string{"data_file_directories (flag -data_file_directories)", "at least one"}},
		{"empty list entry", []string{"-data_file_directories=a,,b"}, []string{"data_file_directories (flag -data_file_directories)", "entry 2 is empty"}},
		{"new and legacy", []string{"-request_timeout=1s", "-request_timeout_in_ms=1000"},
			[]string{"request_timeout_in_ms (flag -request_timeout_in_ms)", "conflicts with -request_timeout"}},
		{"several", []string{"-storage_port=x", "-rack=", "-num_tokens=y"}, []string{"storage_port", "num_tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			err := parseFlags(t, tc.args...).Apply(&c)
			wantError(t, err, tc.wants...)
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("Apply changed the config despite failing: %+v", c)
			}
		})
	}
}

func TestFlagsDefined(t *testing.T) {
	fs := flag.NewFlagSet("cqld", flag.ContinueOnError)
	AddFlags(fs)
	for _, k := range keys() {
		fl := fs.Lookup(k.name)
		if k.name == "seed_provider" || strings.HasSuffix(k.name, "_encryption_options") {
			if fl != nil {
				t.Errorf("%s has a flag", k.name)
			}
			continue
		}
		if fl == nil {
			t.Errorf("no flag -%s", k.name)
		}
	}

	// -help shows each current key's default, in the form the flag takes.
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	for _, want := range []string{
		"-native_transport_port value",
		"(default 9042)",
		"(default adaptive)",
		"(default 10s)",
		"(default 32MiB)",
		"(default data/data)",
		"deprecated: commitlog_sync_period in milliseconds",
	} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("-help lacks %q:\n%s", want, help.String())
		}
	}
}
