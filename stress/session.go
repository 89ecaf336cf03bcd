package stress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/gocql/gocql"
	"github.com/pierrec/lz4/v4"
)

// Cluster is the gocql configuration for c: no driver retries unless
// -errors retries=N (every failure is counted), token-aware routing (within
// -node datacenter=DC when given), the connection, paging,
// timeout and compression settings of -mode.
func Cluster(c *Config, logTo io.Writer) *gocql.ClusterConfig {
	cl := gocql.NewCluster(c.Nodes...)
	cl.ProtoVersion = c.ProtoVersion
	if c.Lean {
		// gocql only makes the lean mode's schema, over v4 at most.
		cl.ProtoVersion = min(c.ProtoVersion, 4)
	}
	cl.NumConns = c.Connections
	cl.Consistency = c.CL
	cl.SerialConsistency = c.SerialCL
	cl.PageSize = c.PageSize
	cl.Timeout = c.Timeout
	if c.Lean {
		// The lean mode's timeout= is its own connections'; the schema
		// waits for its syncs, and a short timeout meant for the load
		// would fail the run before it starts.
		cl.Timeout = max(c.Timeout, defaultTimeout)
	}
	cl.ConnectTimeout = min(cl.Timeout, 10e9)
	cl.WriteCoalesceWaitTime = c.Coalesce
	cl.RetryPolicy = nil
	if c.Retries > 0 {
		cl.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: c.Retries}
	}
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	if c.DataCenter != "" {
		cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy(c.DataCenter))
	}
	cl.Logger = log.New(logTo, "gocql: ", 0)
	switch c.Compression {
	case "snappy":
		cl.Compressor = gocql.SnappyCompressor{}
	case "lz4":
		cl.Compressor = LZ4{}
	}
	if c.User != "" {
		cl.Authenticator = gocql.PasswordAuthenticator{Username: c.User, Password: c.Password}
	}
	return cl
}

// LZ4 is the protocol v3/v4 LZ4 body compression (a 4-byte big-endian
// uncompressed length, then an LZ4 block) for gocql, which ships only
// Snappy. Safe for concurrent use.
type LZ4 struct{}

// Name is the name put in STARTUP.
func (LZ4) Name() string { return "lz4" }

// Encode compresses data; the result does not alias it.
func (LZ4) Encode(data []byte) ([]byte, error) {
	out := make([]byte, 4+lz4.CompressBlockBound(len(data)))
	binary.BigEndian.PutUint32(out, uint32(len(data)))
	n, err := lz4.CompressBlock(data, out[4:], nil)
	if err != nil {
		return nil, fmt.Errorf("stress: lz4: %w", err)
	}
	if n == 0 && len(data) > 0 { // incompressible: send it as one literal run
		return appendLiterals(out[:4], data), nil
	}
	return out[:4+n], nil
}

// appendLiterals appends an LZ4 block made of one literal run.
func appendLiterals(b, data []byte) []byte {
	n := len(data)
	if n < 15 {
		b = append(b, byte(n<<4))
	} else {
		b = append(b, 0xF0)
		for n -= 15; n >= 255; n -= 255 {
			b = append(b, 255)
		}
		b = append(b, byte(n))
	}
	return append(b, data...)
}

// Decode decompresses data; the result does not alias it.
func (LZ4) Decode(data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, errors.New("stress: lz4: body shorter than its length prefix")
	}
	n := binary.BigEndian.Uint32(data)
	if n > 256<<20 {
		return nil, fmt.Errorf("stress: lz4: uncompressed length %d is too large", n)
	}
	out := make([]byte, n)
	m, err := lz4.UncompressBlock(data[4:], out)
	if err != nil {
		return nil, fmt.Errorf("stress: lz4: %w", err)
	}
	return out[:m], nil
}

// createSchema creates the keyspace and the tables the kinds use, when
// missing.
func createSchema(s *gocql.Session, c *Config, kinds []kindDef) error {
	var stmts []string
	stmts = append(stmts, fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s", c.Keyspace, c.Replication))
	blobs := `"C0" blob, "C1" blob, "C2" blob, "C3" blob, "C4" blob`
	tables := map[string]string{
		"standard1": blobs,
		"cas1":      blobs,
		"counter1":  `"C0" counter, "C1" counter, "C2" counter, "C3" counter, "C4" counter`,
	}
	made := map[string]bool{}
	for _, k := range kinds {
		t := builtinTable(k.name)
		if t == "" || made[t] {
			continue
		}
		made[t] = true
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (key blob PRIMARY KEY, %s)", c.Keyspace, t, tables[t]))
	}
	for _, st := range stmts {
		if err := s.Query(st).Exec(); err != nil {
			return fmt.Errorf("stress: schema: %s: %w", st, err)
		}
	}
	return nil
}
