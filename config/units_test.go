package config

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string // substring; empty means success
	}{
		{"10ms", 10 * time.Millisecond, ""},
		{"10s", 10 * time.Second, ""},
		{"2m", 2 * time.Minute, ""},
		{"1h", time.Hour, ""},
		{"1d", 24 * time.Hour, ""},
		{"500us", 500 * time.Microsecond, ""},
		{"500µs", 500 * time.Microsecond, ""},
		{"7ns", 7, ""},
		{"10000ms", 10 * time.Second, ""},
		{"0ms", 0, ""},
		{"0", 0, "no unit"},
		{"10", 0, "no unit"},
		{"-10ms", 0, "negative"},
		{"+10ms", 0, "cannot parse"},
		{"", 0, "cannot parse"},
		{"ms", 0, "cannot parse"},
		{"abc", 0, "cannot parse"},
		{"10 ms", 0, "unknown unit"},
		{"10MS", 0, "unknown unit"},
		{"1h30m", 0, "unknown unit"},
		{"1.5s", 0, "fraction"},
		{"9223372036854775807s", 0, "too large"},
		{"99999999999999999999ns", 0, "too large"},
	} {
		got, err := parseDuration(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("parseDuration(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseDuration(%q) error = %v, want one mentioning %q", tc.in, err, tc.err)
		case got != tc.want:
			t.Errorf("parseDuration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseDataSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want DataSize
		err  string
	}{
		{"100B", 100, ""},
		{"512KiB", 512 << 10, ""},
		{"32MiB", 32 << 20, ""},
		{"16MiB", 16 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"1KB", 1 << 10, ""},
		{"32MB", 32 << 20, ""},
		{"2GB", 2 << 30, ""},
		{"0B", 0, ""},
		{"32", 0, "no unit"},
		{"-1MiB", 0, "negative"},
		{"32mib", 0, "unknown unit"},
		{"1TiB", 0, "unknown unit"},
		{"1.5GiB", 0, "fraction"},
		{"big", 0, "cannot parse"},
		{"9999999999GiB", 0, "too large"},
	} {
		got, err := parseDataSize(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("parseDataSize(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseDataSize(%q) error = %v, want one mentioning %q", tc.in, err, tc.err)
		case got != tc.want:
			t.Errorf("parseDataSize(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestUnitStrings(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{10 * time.Second, "10s"},
		{2 * time.Minute, "2m"},
		{90 * time.Second, "90s"},
		{24 * time.Hour, "24h"},
		{15 * time.Millisecond, "15ms"},
		{1500 * time.Microsecond, "1500us"},
		{1001, "1001ns"},
		{-time.Second, "-1s"},
	} {
		if got := (Duration{tc.d}).String(); got != tc.want {
			t.Errorf("Duration(%d).String() = %q, want %q", tc.d, got, tc.want)
		}
		if tc.d >= 0 {
			if back, err := parseDuration(tc.want); err != nil || back != tc.d {
				t.Errorf("%q parses back as %v, %v", tc.want, back, err)
			}
		}
	}
	for _, tc := range []struct {
		s    DataSize
		want string
	}{
		{0, "0B"},
		{100, "100B"},
		{KiB, "1KiB"},
		{1536, "1536B"},
		{32 * MiB, "32MiB"},
		{8192 * MiB, "8GiB"},
		{MiB + KiB, "1025KiB"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("DataSize(%d).String() = %q, want %q", tc.s, got, tc.want)
		}
		if back, err := parseDataSize(tc.want); err != nil || back != tc.s {
			t.Errorf("%q parses back as %v, %v", tc.want, back, err)
		}
	}
}

// TestUnitsWithPlainYAML checks the types also work with yaml.Unmarshal
// directly, outside Load.
func TestUnitsWithPlainYAML(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
		S DataSize `yaml:"s"`
	}
	if err := yaml.Unmarshal([]byte("d: 250ms\ns: 4KiB\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.D.Duration != 250*time.Millisecond || v.S != 4*KiB {
		t.Errorf("got %v %v", v.D, v.S)
	}
	if err := yaml.Unmarshal([]byte("d: [1]\n"), &v); err == nil {
		t.Error("a list parsed as a duration")
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "d: 250ms\ns: 4KiB\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}
