package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// GossipingPropertyFileSnitch is the snitch that reads the node's data
// center and rack from RackDCFile.
const GossipingPropertyFileSnitch = "GossipingPropertyFileSnitch"

// RackDCFile is the snitch properties file, read beside the configuration
// file as Cassandra reads it from its conf directory.
const RackDCFile = "cassandra-rackdc.properties"

// maxRackDCFile bounds the properties file read.
const maxRackDCFile = 64 << 10

// ReadSnitchProperties sets DataCenter and Rack from dir's RackDCFile when
// the snitch is GossipingPropertyFileSnitch, as Cassandra's does: dc and
// rack are required, dc_suffix is appended to dc, and prefer_local is
// accepted (cqld gives each node one address, so it changes nothing).
// data_center or rack set to something else as well is an error naming
// both, rather than one of them silently winning. Under SimpleSnitch it
// does nothing.
func (c *Config) ReadSnitchProperties(dir string) error {
	if c.EndpointSnitch != GossipingPropertyFileSnitch {
		return nil
	}
	path := filepath.Join(dir, RackDCFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: endpoint_snitch GossipingPropertyFileSnitch reads dc and rack from %s, which does not exist", path)
	}
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if len(data) > maxRackDCFile {
		return fmt.Errorf("config: %s is %d bytes, more than a snitch properties file holds", path, len(data))
	}
	props, err := parseProperties(data)
	if err != nil {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	dc, rack := props["dc"], props["rack"]
	if dc == "" || rack == "" {
		return fmt.Errorf("config: DC or rack not found in snitch properties, check your configuration in: %s", path)
	}
	dc += props["dc_suffix"]
	def := Default()
	if c.DataCenter != def.DataCenter && c.DataCenter != dc {
		return fmt.Errorf("config: data_center is %q but %s says dc=%s; under GossipingPropertyFileSnitch set it there only", c.DataCenter, path, dc)
	}
	if c.Rack != def.Rack && c.Rack != rack {
		return fmt.Errorf("config: rack is %q but %s says rack=%s; under GossipingPropertyFileSnitch set it there only", c.Rack, path, rack)
	}
	c.DataCenter, c.Rack = dc, rack
	return nil
}

// parseProperties reads a Java properties file's key and value lines:
// '#' and '!' start comments, a key ends at the first '=', ':' or blank,
// a line ending in a backslash continues on the next, and both key and
// value are trimmed (Cassandra trims what it reads).
func parseProperties(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var line string
	n := 0
	for sc.Scan() {
		n++
		part := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" && (part == "" || part[0] == '#' || part[0] == '!') {
			continue
		}
		if strings.HasSuffix(part, `\`) && !strings.HasSuffix(part, `\\`) {
			line += strings.TrimSuffix(part, `\`)
			continue
		}
		line += part
		key, value := line, ""
		if i := strings.IndexAny(line, "=: \t\f"); i >= 0 {
			key, value = line[:i], strings.TrimLeft(line[i:], " \t\f")
			if value != "" && (value[0] == '=' || value[0] == ':') {
				value = value[1:]
			}
		}
		line = ""
		if key == "" {
			return nil, fmt.Errorf("line %d has no key", n)
		}
		out[key] = strings.TrimSpace(value)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
