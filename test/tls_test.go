package test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/internal/testpki"
	"github.com/cqld/cqld/server"
)

// tlsFiles are testpki's Set: a CA, the node certificate it signed
// (keystore and truststore files, as client_encryption_options names
// them) and a client certificate, all PEM files in one directory.
type tlsFiles struct{ *testpki.Set }

func newTLSFiles(t testing.TB) *tlsFiles {
	t.Helper()
	s, err := testpki.NewSet(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &tlsFiles{s}
}

// clientEncryption is client_encryption_options with these files.
func (f *tlsFiles) clientEncryption(requireClientAuth bool) config.ClientEncryptionOptions {
	return config.ClientEncryptionOptions{EncryptionOptions: config.EncryptionOptions{
		Enabled: true, SSLContextFactory: config.PEMFactory,
		Keystore: f.NodeFiles.Keystore, Truststore: f.NodeFiles.Truststore, RequireClientAuth: requireClientAuth,
	}}
}

// gocqlTLS is gocql's SslOptions trusting the test CA, presenting the
// client certificate if withCert.
func (f *tlsFiles) gocqlTLS(withCert bool) *gocql.SslOptions {
	o := &gocql.SslOptions{Config: &tls.Config{}, CaPath: f.NodeFiles.Truststore, EnableHostVerification: true}
	if withCert {
		o.CertPath, o.KeyPath = f.ClientFiles.Cert, f.ClientFiles.Key
	}
	return o
}

func readLocal(s *gocql.Session) error {
	return s.Query(localQuery).Scan(new(string))
}

// The drivers connect with TLS: to a node that wants TLS only, and to one
// that also wants a client certificate and a login (PasswordAuthenticator).
// Without TLS, or without the certificate, they cannot.
func TestClientTLSDrivers(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	tlsOnly := startNode(t, cfg)
	cfg = testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(true)
	cfg.Authenticator, cfg.Authorizer = "PasswordAuthenticator", "CassandraAuthorizer"
	mutual := startNode(t, cfg)

	t.Run("gocql", func(t *testing.T) {
		c := gocqlCluster(tlsOnly.Addr())
		c.SslOpts = f.gocqlTLS(false)
		s, err := c.CreateSession()
		if err != nil {
			t.Fatalf("TLS: %v", err)
		}
		if err := readLocal(s); err != nil {
			t.Fatal(err)
		}
		s.Close()

		c = gocqlCluster(mutual.Addr())
		c.SslOpts = f.gocqlTLS(true)
		c.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
		s, err = c.CreateSession()
		if err != nil {
			t.Fatalf("TLS, client certificate and login: %v", err)
		}
		if err := readLocal(s); err != nil {
			t.Fatal(err)
		}
		s.Close()

		c.SslOpts = f.gocqlTLS(false)
		c.ConnectTimeout, c.Timeout = 2*time.Second, 2*time.Second
		if s, err := c.CreateSession(); err == nil {
			s.Close()
			t.Fatal("connected without the client certificate the node requires")
		}
		plain := gocqlCluster(tlsOnly.Addr())
		plain.ConnectTimeout, plain.Timeout = 2*time.Second, 2*time.Second
		if s, err := plain.CreateSession(); err == nil {
			s.Close()
			t.Fatal("a plaintext driver connected to a TLS-only port")
		}
	})

	t.Run("gocqlv2", func(t *testing.T) {
		host, port := hostPort(mutual.Addr())
		c := gocql2.NewCluster(host)
		c.Port = port
		c.Timeout, c.ConnectTimeout = 5*time.Second, 5*time.Second
		c.Logger = &logSink{}
		c.SslOpts = &gocql2.SslOptions{Config: &tls.Config{}, CaPath: f.NodeFiles.Truststore, CertPath: f.ClientFiles.Cert, KeyPath: f.ClientFiles.Key, EnableHostVerification: true}
		c.Authenticator = gocql2.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
		s, err := c.CreateSession()
		if err != nil {
			t.Fatalf("v5 over TLS with a client certificate and a login: %v", err)
		}
		defer s.Close()
		if err := s.Query(localQuery).Scan(new(string)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("python", func(t *testing.T) {
		needPythonDriver(t)
		host, port := hostPort(tlsOnly.Addr())
		runDriverScript(t, "drivers/python", debianPython, "tls.py", host, strconv.Itoa(port), f.NodeFiles.Truststore)
		host, port = hostPort(mutual.Addr())
		runDriverScript(t, "drivers/python", debianPython, "tls.py", host, strconv.Itoa(port), f.NodeFiles.Truststore,
			f.ClientFiles.Cert, f.ClientFiles.Key, "cassandra", "cassandra")
	})

	t.Run("nodejs", func(t *testing.T) {
		needNodejsDriver(t)
		host, port := hostPort(tlsOnly.Addr())
		runDriverScript(t, nodejsDriverDir, "node", "tls.js", host, strconv.Itoa(port), f.NodeFiles.Truststore)
		host, port = hostPort(mutual.Addr())
		runDriverScript(t, nodejsDriverDir, "node", "tls.js", host, strconv.Itoa(port), f.NodeFiles.Truststore,
			f.ClientFiles.Cert, f.ClientFiles.Key, "cassandra", "cassandra")
	})

	refused := metricValue(t, mutual.Registry, "cqld_native_connections_closed_total", map[string]string{"reason": "tls_handshake"})
	if refused < 1 {
		t.Errorf("%v refused TLS handshakes counted", refused)
	}
}

// native_transport_port_ssl: TLS on its own port, plaintext on the main
// one, as Cassandra 4 serves them.
func TestNativeTransportPortSSL(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	cfg.NativeTransportPortSSL = freePort(t)
	node := startNode(t, cfg)

	plain, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatalf("plaintext on the main port: %v", err)
	}
	defer plain.Close()
	c := gocqlCluster(node.TLSAddr())
	c.SslOpts = f.gocqlTLS(false)
	secure, err := c.CreateSession()
	if err != nil {
		t.Fatalf("TLS on native_transport_port_ssl: %v", err)
	}
	defer secure.Close()
	for _, s := range []*gocql.Session{plain, secure} {
		if err := readLocal(s); err != nil {
			t.Fatal(err)
		}
	}
}

// client_encryption_options optional: true serves TLS and plaintext
// clients on the one native port, as Cassandra's optional mode does.
func TestClientTLSOptional(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	optional := true
	cfg.ClientEncryptionOptions.Optional = &optional
	node := startNode(t, cfg)

	plain, err := gocqlCluster(node.Addr()).CreateSession()
	if err != nil {
		t.Fatalf("plaintext on an optional TLS port: %v", err)
	}
	defer plain.Close()
	c := gocqlCluster(node.Addr())
	c.SslOpts = f.gocqlTLS(false)
	secure, err := c.CreateSession()
	if err != nil {
		t.Fatalf("TLS on an optional TLS port: %v", err)
	}
	defer secure.Close()
	for _, s := range []*gocql.Session{plain, secure} {
		if err := readLocal(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := presented(t, node.Addr(), f); got != f.Node.Cert.SerialNumber.String() {
		t.Fatalf("the optional port presents %s, want the node's certificate %s", got, f.Node.Cert.SerialNumber)
	}
}

// presented returns the serial of the certificate a node presents to a
// new TLS connection.
func presented(t *testing.T, addr string, f *tlsFiles) string {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(f.CA.Cert)
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// A node reloads its certificate when the keystore file changes: new
// connections get the new one, a session opened before goes on; a bad new
// file keeps the old certificate. `nodetool reloadssl` (POST
// /nodetool/reloadssl) reloads at once, and under PasswordAuthenticator
// takes a role's credentials, as every state-changing admin endpoint.
func TestCertificateReload(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	cfg.Authenticator = "PasswordAuthenticator"
	node := startNodeWith(t, cfg, server.Options{CertReloadInterval: 20 * time.Millisecond})

	c := gocqlCluster(node.Addr())
	c.SslOpts = f.gocqlTLS(false)
	c.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
	before, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	first := presented(t, node.Addr(), f)

	next, _ := f.CA.Issue("cqld node", testpki.LeafOptions{})
	replace(t, f.NodeFiles.Keystore, next.KeystorePEM())
	eventually(t, 10*time.Second, "the new certificate served", func() error {
		if got := presented(t, node.Addr(), f); got != next.Cert.SerialNumber.String() {
			return fmt.Errorf("serving %s, want %s (first %s)", got, next.Cert.SerialNumber, first)
		}
		return nil
	})
	if err := readLocal(before); err != nil {
		t.Fatalf("a session opened before the reload: %v", err)
	}

	reload := func(user, password string) (int, server.ReloadSSLResult) {
		code, body := postReloadSSL(t, node, user, password)
		var res server.ReloadSSLResult
		_ = json.Unmarshal(body, &res)
		return code, res
	}
	if code, _ := reload("", ""); code != http.StatusUnauthorized {
		t.Fatalf("reloadssl without credentials: %d", code)
	}
	if code, _ := reload("cassandra", "nope"); code != http.StatusUnauthorized {
		t.Fatalf("reloadssl with a wrong password: %d", code)
	}
	if code, res := reload("cassandra", "cassandra"); code != http.StatusOK || res["client_encryption_options"] != "unchanged" || res["server_encryption_options"] != "off" {
		t.Fatalf("reloadssl: %d %v", code, res)
	}

	replace(t, f.NodeFiles.Keystore, []byte("-----BEGIN PRIVATE KEY-----\ncut short"))
	code, res := reload("cassandra", "cassandra")
	if code != http.StatusInternalServerError || !strings.Contains(res["client_encryption_options"], f.NodeFiles.Keystore) {
		t.Fatalf("reloadssl of a bad keystore: %d %v", code, res)
	}
	if got := presented(t, node.Addr(), f); got != next.Cert.SerialNumber.String() {
		t.Fatalf("after a bad keystore the node serves %s, want the last good %s", got, next.Cert.SerialNumber)
	}
}

// `nodetool reloadssl` reloads at once: on a node that looks at its
// keystore file only hourly, a new keystore is served as soon as
// reloadssl answers "reloaded" (TestCertificateReload's node polls every
// 20 ms, so there reloadssl finds nothing left to reload).
func TestReloadSSLAtOnce(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(false)
	node := startNodeWith(t, cfg, server.Options{CertReloadInterval: time.Hour})
	first := presented(t, node.Addr(), f)
	next, err := f.CA.Issue("cqld node", testpki.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replace(t, f.NodeFiles.Keystore, next.KeystorePEM())
	if got := presented(t, node.Addr(), f); got != first {
		t.Fatalf("the new certificate %s is served before reloadssl: the test proves nothing", got)
	}
	code, body := postReloadSSL(t, node, "", "")
	var res server.ReloadSSLResult
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK || res["client_encryption_options"] != "reloaded" {
		t.Fatalf("reloadssl: %d %s", code, body)
	}
	if got := presented(t, node.Addr(), f); got != next.Cert.SerialNumber.String() {
		t.Fatalf("after reloadssl the node serves %s, want the new %s (first %s)", got, next.Cert.SerialNumber, first)
	}
}

// postReloadSSL posts `nodetool reloadssl` to node's admin endpoint, with
// a role's credentials unless user is "", and returns the answer's status
// and body.
func postReloadSSL(t *testing.T, node *server.Node, user, password string) (int, []byte) {
	t.Helper()
	return httpDo(t, http.MethodPost, "http://"+node.MetricsAddr()+"/nodetool/reloadssl", user, password)
}

// replace rewrites a file through a rename, as certificate tools do, with
// a modification time of its own so the change shows whatever the file
// system's timestamp granularity.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stampCounter.Lock()
	stampCounter.n++
	at := time.Now().Add(time.Duration(stampCounter.n) * time.Hour)
	stampCounter.Unlock()
	if err := os.Chtimes(tmp, at, at); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

var stampCounter struct {
	sync.Mutex
	n int
}

// A node does not start on a keystore it cannot use, and says why without
// the password: an encrypted key with the wrong keystore_password, a JKS
// keystore. One whose certificate has expired starts with a warning, as
// Cassandra's does.
func TestTLSStartErrors(t *testing.T) {
	f := newTLSFiles(t)
	leaf, _ := f.CA.Issue("cqld node", testpki.LeafOptions{})
	const password = "Key-Pa55word"
	encrypted := filepath.Join(f.Dir, "encrypted.pem")
	if err := os.WriteFile(encrypted, append(leaf.EncryptedKeyPEM(password), leaf.ChainPEM()...), 0o600); err != nil {
		t.Fatal(err)
	}
	jks := filepath.Join(f.Dir, "keystore.jks")
	if err := os.WriteFile(jks, append([]byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, make([]byte, 100)...), 0o600); err != nil {
		t.Fatal(err)
	}
	old, _ := f.CA.Issue("cqld node", testpki.LeafOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	expiredFiles, _ := old.Write(f.Dir, "expired", f.CA)

	start := func(keystore, pw string) (*server.Node, string, error) {
		cfg := testConfig(t, t.TempDir())
		cfg.ClientEncryptionOptions = f.clientEncryption(false)
		cfg.ClientEncryptionOptions.Keystore = keystore
		cfg.ClientEncryptionOptions.KeystorePassword = pw
		var logs syncBuffer
		n, err := server.StartWith(cfg, slog.New(slog.NewTextHandler(&logs, nil)), server.Options{})
		if n != nil {
			t.Cleanup(func() { stopNode(n) })
		}
		return n, logs.String(), err
	}
	if _, logs, err := start(encrypted, "not-"+password); err == nil || !strings.Contains(err.Error(), "wrong keystore_password") ||
		!strings.Contains(err.Error(), encrypted) || strings.Contains(err.Error()+logs, password) {
		t.Fatalf("wrong keystore_password: %v", err)
	}
	n, logs, err := start(encrypted, password)
	if err != nil {
		t.Fatalf("encrypted key, right password: %v", err)
	}
	if strings.Contains(logs, password) {
		t.Fatal("the key password is in the log")
	}
	c := gocqlCluster(n.Addr())
	c.SslOpts = f.gocqlTLS(false)
	s, err := c.CreateSession()
	if err != nil {
		t.Fatalf("connect to a node with an encrypted key: %v", err)
	}
	s.Close()
	if _, _, err := start(jks, ""); err == nil || !strings.Contains(err.Error(), "it is a JKS keystore; cqld reads PEM only") {
		t.Fatalf("JKS keystore: %v", err)
	}
	if _, logs, err := start(expiredFiles.Keystore, ""); err != nil || !strings.Contains(logs, "keystore certificate is not valid now") {
		t.Fatalf("expired keystore certificate: %v; log:\n%s", err, logs)
	}
}

// The bad input of issue 15 on a real node's TLS-only port, which also
// wants a client certificate and a login: a client certificate of a CA
// the truststore does not hold, an expired one, a plaintext client, a TLS
// handshake that stalls after one byte of its record. Each connection is
// closed (the refused handshakes counted), a session opened before reads
// on, and no key, password or key password is in the node's log.
func TestClientTLSBadInput(t *testing.T) {
	f := newTLSFiles(t)
	cfg := testConfig(t, t.TempDir())
	cfg.ClientEncryptionOptions = f.clientEncryption(true)
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.NativeTransportHandshakeTimeout = config.Duration{Duration: time.Second}
	node, log := startLogged(t, cfg)
	t.Cleanup(func() { stopNode(node) })

	connect := func(o *gocql.SslOptions) (*gocql.Session, error) {
		c := gocqlCluster(node.Addr())
		c.SslOpts = o
		c.Authenticator = gocql.PasswordAuthenticator{Username: "cassandra", Password: "cassandra"}
		c.ConnectTimeout, c.Timeout = 2*time.Second, 2*time.Second
		return c.CreateSession()
	}
	good, err := connect(f.gocqlTLS(true))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()

	untrusted, _ := f.Other.Issue("intruder", testpki.LeafOptions{})
	expired, _ := f.CA.Issue("old client", testpki.LeafOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	for _, tc := range []struct {
		name string
		leaf *testpki.Leaf
	}{{"untrusted", untrusted}, {"expired", expired}} {
		files, err := tc.leaf.Write(f.Dir, tc.name, f.CA)
		if err != nil {
			t.Fatal(err)
		}
		o := f.gocqlTLS(false)
		o.CertPath, o.KeyPath = files.Cert, files.Key
		before := metricValue(t, node.Registry, "cqld_native_connections_closed_total", map[string]string{"reason": "tls_handshake"})
		if s, err := connect(o); err == nil {
			s.Close()
			t.Fatalf("connected with a client certificate %s", tc.name)
		}
		eventually(t, 10*time.Second, "the refused handshake counted", func() error {
			if n := metricValue(t, node.Registry, "cqld_native_connections_closed_total", map[string]string{"reason": "tls_handshake"}); n <= before {
				return fmt.Errorf("%v refused handshakes, %v before the %s certificate", n, before, tc.name)
			}
			return nil
		})
	}

	plain := dial(t, node.Addr())
	plain.send(4, 0, primitive.OpCodeOptions, nil)
	plain.expectClosed()

	// A record header announcing 200 bytes, and one of them: the
	// handshake waits for the rest until the handshake timeout.
	stalled := dial(t, node.Addr())
	stalled.write([]byte{22, 3, 1, 0, 200, 1})
	stalled.expectClosed()

	if err := readLocal(good); err != nil {
		t.Fatalf("the session opened before the bad input: %v", err)
	}
	for _, secret := range []string{"PRIVATE KEY", "password=cassandra", "$2a$"} {
		if strings.Contains(log.String(), secret) {
			t.Fatalf("%q is in the node's log:\n%s", secret, log)
		}
	}
}
