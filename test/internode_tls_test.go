package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/internal/testpki"
)

// TestInternodeTLS runs three cqld processes with
// server_encryption_options internode_encryption: all and mutual TLS:
// they form a cluster, replicate at QUORUM and read back through another
// node. Then a node without TLS and a node whose certificate another CA
// signed try to join: the seed refuses both, logging their address and
// why, and the ring stays three nodes.
func TestInternodeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cqld processes")
	}
	f := newTLSFiles(t)
	rogue := rogueFiles(t, f)
	secure := func(keystore string) config.ServerEncryptionOptions {
		return config.ServerEncryptionOptions{EncryptionOptions: config.EncryptionOptions{
			InternodeEncryption: "all", SSLContextFactory: config.PEMFactory,
			Keystore: keystore, Truststore: f.NodeFiles.Truststore,
			RequireClientAuth: true, RequireEndpointVerification: true,
		}}
	}
	tc := newTestCluster(t, 0)
	for i := 1; i <= 5; i++ {
		for _, p := range []int{tc.native, tc.storage, tc.metrics} {
			if !portFreeOn(fmt.Sprintf("127.0.0.%d", i), p) {
				t.Fatalf("port %d is taken on 127.0.0.%d", p, i)
			}
		}
	}
	node := func(i int) *clusterNode {
		nd := tc.newNode(i, fmt.Sprint("node", i), func(c *config.Config) {
			switch i {
			case 4: // plaintext
			case 5:
				c.ServerEncryptionOptions = secure(rogue.Keystore)
			default:
				c.ServerEncryptionOptions = secure(f.NodeFiles.Keystore)
			}
		})
		tc.nodes = append(tc.nodes, nd)
		return nd
	}
	for i := 1; i <= 3; i++ {
		tc.start(node(i))
	}

	s := tc.session(0, gocql.Quorum)
	if err := s.Query(`CREATE KEYSPACE tls_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := s.Query(`CREATE TABLE tls_ks.t (k int PRIMARY KEY, v text)`).Exec(); err != nil {
		t.Fatal(err)
	}
	for k := range 20 {
		if err := s.Query(`INSERT INTO tls_ks.t (k, v) VALUES (?, ?)`, k, fmt.Sprint("v", k)).Exec(); err != nil {
			t.Fatalf("QUORUM write %d over internode TLS: %v", k, err)
		}
	}
	third := tc.single(2, gocql.Quorum)
	var n int
	if err := third.Query(`SELECT count(*) FROM tls_ks.t`).Scan(&n); err != nil || n != 20 {
		t.Fatalf("QUORUM count through node3: %d, %v", n, err)
	}

	for _, bad := range []struct {
		i    int
		want string
	}{
		{4, "refusing a plaintext connection on the TLS storage port"},
		{5, "refusing a connection on the storage port: TLS handshake failed"},
	} {
		nd := node(bad.i)
		tc.spawn(nd)
		eventually(t, 30*time.Second, fmt.Sprintf("node1 refusing node%d", bad.i), func() error {
			for _, line := range strings.Split(tc.nodes[0].log.String(), "\n") {
				if strings.Contains(line, bad.want) && strings.Contains(line, nd.addr) {
					return nil
				}
			}
			select {
			case <-nd.done:
				return fmt.Errorf("node%d exited:\n%s", bad.i, nd.log)
			default:
			}
			return fmt.Errorf("no line with %q and %s in node1's log", bad.want, nd.addr)
		})
	}
	if st := tc.nodetool(0); strings.Count(st, "UN ") != 3 || strings.Contains(st, "127.0.0.4") || strings.Contains(st, "127.0.0.5") {
		t.Fatalf("the ring after the refused nodes:\n%s", st)
	}
	if strings.Contains(tc.nodes[0].log.String(), "PRIVATE KEY") {
		t.Fatal("key material in node1's log")
	}
}

// TestInternodeTLSByDataCenter runs internode_encryption: dc with
// GossipingPropertyFileSnitch: two nodes in dc1 and one in dc2 form a
// cluster (TLS between the data centers, plaintext within dc1) and a write
// at ALL reaches both data centers. A dc2 node whose certificate another
// CA signed dials the seed with TLS (a peer of another data center) and
// is refused; the ring stays three nodes.
func TestInternodeTLSByDataCenter(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cqld processes")
	}
	f := newTLSFiles(t)
	rogue := rogueFiles(t, f)
	tc := newTestCluster(t, 0)
	for i := 1; i <= 4; i++ {
		for _, p := range []int{tc.native, tc.storage, tc.metrics} {
			if !portFreeOn(fmt.Sprintf("127.0.0.%d", i), p) {
				t.Fatalf("port %d is taken on 127.0.0.%d", p, i)
			}
		}
	}
	node := func(i int, dc, keystore string) *clusterNode {
		name := fmt.Sprint("node", i)
		nd := tc.newNode(i, name, func(c *config.Config) {
			c.EndpointSnitch = "org.apache.cassandra.locator.GossipingPropertyFileSnitch"
			c.ServerEncryptionOptions = config.ServerEncryptionOptions{EncryptionOptions: config.EncryptionOptions{
				InternodeEncryption: "dc", SSLContextFactory: config.PEMFactory,
				Keystore: keystore, Truststore: f.NodeFiles.Truststore, RequireClientAuth: true,
			}}
		})
		props := fmt.Sprintf("dc=%s\nrack=r1\n", dc)
		if err := os.WriteFile(filepath.Join(filepath.Dir(nd.config), config.RackDCFile), []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		tc.nodes = append(tc.nodes, nd)
		return nd
	}
	tc.start(node(1, "dc1", f.NodeFiles.Keystore))
	tc.start(node(2, "dc1", f.NodeFiles.Keystore))
	tc.start(node(3, "dc2", f.NodeFiles.Keystore))

	s := tc.session(0, gocql.All)
	for _, q := range []string{
		`CREATE KEYSPACE dc_ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}`,
		`CREATE TABLE dc_ks.t (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for k := range 10 {
		if err := s.Query(`INSERT INTO dc_ks.t (k, v) VALUES (?, ?)`, k, fmt.Sprint("v", k)).Exec(); err != nil {
			t.Fatalf("write %d at ALL across the data centers: %v", k, err)
		}
	}
	var n int
	if err := tc.single(2, gocql.One).Query(`SELECT count(*) FROM dc_ks.t`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("node3 (dc2) holds %d rows, %v", n, err)
	}

	bad := node(4, "dc2", rogue.Keystore)
	tc.spawn(bad)
	const want = "refusing a connection on the storage port: TLS handshake failed"
	eventually(t, 30*time.Second, "node1 refusing node4", func() error {
		for _, line := range strings.Split(tc.nodes[0].log.String(), "\n") {
			if strings.Contains(line, want) && strings.Contains(line, bad.addr) {
				return nil
			}
		}
		return fmt.Errorf("no line with %q and %s in node1's log", want, bad.addr)
	})
	if st := tc.nodetool(0); strings.Count(st, "UN ") != 3 || strings.Contains(st, bad.addr) {
		t.Fatalf("the ring after the refused node:\n%s", st)
	}
}

// rogueFiles writes the files of a node whose certificate another CA
// signed: it trusts the cluster's CA, the cluster does not trust it.
func rogueFiles(t *testing.T, f *tlsFiles) testpki.Files {
	t.Helper()
	leaf, err := f.Other.Issue("rogue", testpki.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := leaf.Write(f.Dir, "rogue", f.CA)
	if err != nil {
		t.Fatal(err)
	}
	return files
}
