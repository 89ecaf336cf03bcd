package test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocql/gocql"
)

// BenchmarkTLSPreparedRead measures prepared single-row SELECTs through
// gocql over plain TCP and over TLS to one node, which serves plaintext on
// native_transport_port and TLS on native_transport_port_ssl, at 16 and
// 64 connections with one client per connection, gocql's write coalescing
// off for both. The plain and TLS steps
// of each connection count run one after the other on the same data, so
// their ratio is taken from figures measured seconds apart.
func BenchmarkTLSPreparedRead(b *testing.B) {
	f := newTLSFiles(b)
	cfg := testConfig(b, b.TempDir())
	cfg.CommitlogSync = "periodic"
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	cfg.NativeTransportPortSSL = freePort(b)
	node := startNode(b, cfg)

	setup, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		b.Fatal(err)
	}
	value := bytes.Repeat([]byte{'v'}, benchValueLen)
	for _, q := range []string{
		`CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE bench.kv (k int PRIMARY KEY, v blob)`,
	} {
		if err := setup.Query(q).Exec(); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	if err := benchFill(setup, benchInsert, 64, benchKeys, func(k int) []any { return []any{k, value} }); err != nil {
		b.Fatal(err)
	}
	setup.Close()

	rates := map[string]float64{}
	for _, conns := range []int{16, 64} {
		for _, tls := range []bool{false, true} {
			name := fmt.Sprintf("conns=%d/tls=%v", conns, tls)
			b.Run(name, func(b *testing.B) {
				c := gocqlCluster(node.Addr())
				if tls {
					c = gocqlCluster(node.TLSAddr())
					c.SslOpts = f.gocqlTLS(false)
				}
				c.NumConns = conns
				// NB: gocql never coalesces writes on a TLS connection
				// (it cannot writev through one), so it does not for the
				// plain steps either: the comparison is of the transports.
				c.WriteCoalesceWaitTime = 0
				s, err := c.CreateSession()
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				qs := make([]*gocql.Query, conns)
				rngs := make([]*rand.Rand, conns)
				vals := make([][]byte, conns)
				for i := range qs {
					qs[i] = s.Query(benchSelect)
					rngs[i] = rand.New(rand.NewPCG(uint64(i), 0x5eed))
				}
				if err := qs[0].Bind(0).Scan(&vals[0]); err != nil || !bytes.Equal(vals[0], value) {
					b.Fatalf("populated k=0: %q, %v", vals[0], err)
				}
				lats := benchClients(b, conns, func(i, _ int) error {
					k := rngs[i].IntN(benchKeys)
					if err := qs[i].Bind(k).Scan(&vals[i]); err != nil {
						return fmt.Errorf("k=%d: %w", k, err)
					}
					if len(vals[i]) != benchValueLen {
						return fmt.Errorf("k=%d: %d-byte value", k, len(vals[i]))
					}
					return nil
				})
				rates[name] = benchReport(b, lats)
				if tls {
					if plain := rates[fmt.Sprintf("conns=%d/tls=false", conns)]; plain > 0 {
						b.ReportMetric(rates[name]/plain, "x-plain")
					}
				}
			})
		}
	}
}
