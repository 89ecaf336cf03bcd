package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a span of time written the way cassandra.yaml 4.1 writes one:
// a non-negative whole number and a unit, with no space: "500us", "15ms",
// "10000ms", "10s", "2m", "1h", "1d". The unit is required, because a bare
// number is exactly the ambiguity 4.1's units were introduced to remove.
type Duration struct{ time.Duration }

// String formats d in the largest unit that holds it exactly, so that the
// result parses back to the same value ("2m", not Go's "2m0s").
func (d Duration) String() string {
	v := d.Duration
	if v == 0 {
		return "0s"
	}
	if v == math.MinInt64 { // cannot be negated
		return v.String()
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	for _, u := range []struct {
		name string
		size time.Duration
	}{{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}} {
		if v%u.size == 0 {
			return sign + strconv.FormatInt(int64(v/u.size), 10) + u.name
		}
	}
	return sign + strconv.FormatInt(int64(v), 10) + "ns"
}

// MarshalYAML writes d in the form UnmarshalYAML reads.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a Duration from a scalar; a null leaves d unchanged.
// Errors do not name the key: the caller knows it and adds it.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, null, err := scalarText(n)
	if err != nil || null {
		return err
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// parseDuration parses Cassandra 4.1's duration grammar.
func parseDuration(s string) (time.Duration, error) {
	const want = "want a whole number and a unit (ns, us, ms, s, m, h or d), e.g. 10s"
	q, unit, err := splitQuantity(s, "duration", want)
	if err != nil {
		return 0, err
	}
	var size time.Duration
	switch unit {
	case "ns":
		size = time.Nanosecond
	case "us", "µs":
		size = time.Microsecond
	case "ms":
		size = time.Millisecond
	case "s":
		size = time.Second
	case "m":
		size = time.Minute
	case "h":
		size = time.Hour
	case "d":
		size = 24 * time.Hour
	case "":
		return 0, fmt.Errorf("duration %q has no unit; write e.g. %sms or %ss", s, s, s)
	default:
		return 0, fmt.Errorf("cannot parse %q as a duration: unknown unit %q; %s", s, unit, want)
	}
	if q > math.MaxInt64/int64(size) {
		return 0, fmt.Errorf("duration %q is too large", s)
	}
	return time.Duration(q) * size, nil
}

// DataSize is a number of bytes, written the way cassandra.yaml 4.1 writes
// one: a non-negative whole number and a unit, with no space: "100B",
// "512KiB", "32MiB", "1GiB". KB, MB and GB are accepted too and mean KiB,
// MiB and GiB, as the old *_in_mb keys always meant. A bare number is an error except under
// the legacy *_in_mb / *_mb keys, whose unit is in the name.
type DataSize int64

// Binary units, so that code reads 16 * MiB rather than 16 << 20.
const (
	KiB DataSize = 1 << 10
	MiB DataSize = 1 << 20
	GiB DataSize = 1 << 30
)

// String formats s in the largest binary unit that holds it exactly.
func (s DataSize) String() string {
	if s == 0 {
		return "0B"
	}
	for _, u := range []struct {
		name string
		size DataSize
	}{{"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
		if s%u.size == 0 {
			return strconv.FormatInt(int64(s/u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// MarshalYAML writes s in the form UnmarshalYAML reads.
func (s DataSize) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalYAML reads a DataSize from a scalar; a null leaves s unchanged.
// Errors do not name the key: the caller knows it and adds it.
func (s *DataSize) UnmarshalYAML(n *yaml.Node) error {
	text, null, err := scalarText(n)
	if err != nil || null {
		return err
	}
	v, err := parseDataSize(text)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// parseDataSize parses Cassandra 4.1's data storage grammar, plus the
// KB/MB/GB spellings.
func parseDataSize(s string) (DataSize, error) {
	const want = "want a whole number and a unit (B, KiB, MiB or GiB), e.g. 32MiB"
	q, unit, err := splitQuantity(s, "data size", want)
	if err != nil {
		return 0, err
	}
	var size DataSize
	switch unit {
	case "B":
		size = 1
	case "KiB", "KB":
		size = KiB
	case "MiB", "MB":
		size = MiB
	case "GiB", "GB":
		size = GiB
	case "":
		return 0, fmt.Errorf("data size %q has no unit; write e.g. %sMiB or %sB", s, s, s)
	default:
		return 0, fmt.Errorf("cannot parse %q as a data size: unknown unit %q; %s", s, unit, want)
	}
	if q > math.MaxInt64/int64(size) {
		return 0, fmt.Errorf("data size %q is too large", s)
	}
	return DataSize(q) * size, nil
}

// splitQuantity splits "10ms" into 10 and "ms". what and want only shape the
// error messages.
func splitQuantity(s, what, want string) (int64, string, error) {
	if strings.HasPrefix(s, "-") {
		return 0, "", fmt.Errorf("%s %q is negative; it must be zero or more", what, s)
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("cannot parse %q as a %s; %s", s, what, want)
	}
	q, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%s %q is too large", what, s)
	}
	unit := s[i:]
	if strings.HasPrefix(unit, ".") {
		return 0, "", fmt.Errorf("%s %q has a fraction; use a whole number of a smaller unit", what, s)
	}
	return q, unit, nil
}

// scalarText returns a scalar node's text, whether the node is a YAML null
// (which leaves a setting at its default), or an error for a list or mapping.
func scalarText(n *yaml.Node) (text string, null bool, err error) {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value, n.ShortTag() == "!!null", nil
	case yaml.MappingNode:
		return "", false, errors.New("expected a single value, got a mapping")
	case yaml.SequenceNode:
		return "", false, errors.New("expected a single value, got a list")
	}
	return "", false, fmt.Errorf("expected a single value, got YAML node kind %d", n.Kind)
}

// deref follows a YAML alias (*name) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
