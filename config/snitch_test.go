package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	got, err := parseProperties([]byte("# comment\n! also\n\n  dc = east \nrack:r1\nprefer_local true\nlong=a\\\n  b\nempty=\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"dc": "east", "rack": "r1", "prefer_local": "true", "long": "ab", "empty": ""}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestReadSnitchProperties(t *testing.T) {
	for _, tc := range []struct {
		name       string
		file       string // "" means no file
		dc, rack   string // set in cassandra.yaml, "" for the defaults
		wantDC     string
		wantRack   string
		wantErrHas string
	}{
		{name: "dc and rack", file: "dc=dc2\nrack=rack7\n", wantDC: "dc2", wantRack: "rack7"},
		{name: "suffix", file: "dc=dc2\nrack=rack7\ndc_suffix=_analytics\nprefer_local=true\n", wantDC: "dc2_analytics", wantRack: "rack7"},
		{name: "same in both", file: "dc=dc2\nrack=r\n", dc: "dc2", rack: "r", wantDC: "dc2", wantRack: "r"},
		{name: "no file", wantErrHas: "does not exist"},
		{name: "no rack", file: "dc=dc2\n", wantErrHas: "DC or rack not found in snitch properties"},
		{name: "conflicting data_center", file: "dc=dc2\nrack=r\n", dc: "dc9", wantErrHas: `data_center is "dc9"`},
		{name: "conflicting rack", file: "dc=dc2\nrack=r\n", rack: "r9", wantErrHas: `rack is "r9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, RackDCFile), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := Default()
			c.EndpointSnitch = GossipingPropertyFileSnitch
			if tc.dc != "" {
				c.DataCenter = tc.dc
			}
			if tc.rack != "" {
				c.Rack = tc.rack
			}
			err := c.ReadSnitchProperties(dir)
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.DataCenter != tc.wantDC || c.Rack != tc.wantRack {
				t.Fatalf("dc %q rack %q, want %q %q", c.DataCenter, c.Rack, tc.wantDC, tc.wantRack)
			}
		})
	}
	// SimpleSnitch reads nothing.
	c := Default()
	if err := c.ReadSnitchProperties(t.TempDir()); err != nil || c.DataCenter != "datacenter1" {
		t.Fatalf("SimpleSnitch: %v, dc %q", err, c.DataCenter)
	}
}

func TestUnknownSnitchRefused(t *testing.T) {
	c := Default()
	c.EndpointSnitch = "org.apache.cassandra.locator.PropertyFileSnitch"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `"PropertyFileSnitch" is not supported`) {
		t.Fatalf("got %v", err)
	}
}
