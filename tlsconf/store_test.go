package tlsconf

import (
	"bytes"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/internal/testpki"
)

type pki struct{ *testpki.Set }

func newPKI(t *testing.T) *pki {
	t.Helper()
	s, err := testpki.NewSet(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &pki{s}
}

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// handshake runs a TLS handshake between the store's server side and a
// client presenting cert (none when nil) and trusting the test CA; it
// returns the serial of the server's certificate.
func handshake(t *testing.T, s *Store, ca *testpki.CA, cert *testpki.Leaf) (serial string, err error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srvErr := make(chan error, 1)
	go func() {
		c := tls.Server(a, s.ServerConfig())
		err := c.Handshake()
		if err == nil {
			// TLS 1.3 clients learn of a refused certificate on their
			// first read: give them something to read.
			_, err = c.Write([]byte("x"))
		}
		srvErr <- err
		a.Close()
	}()
	cc := &tls.Config{ServerName: "localhost", RootCAs: certPool(ca)}
	if cert != nil {
		cc.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}}
	}
	c := tls.Client(b, cc)
	if err := c.Handshake(); err != nil {
		<-srvErr
		return "", err
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		<-srvErr
		return "", err
	}
	if err := <-srvErr; err != nil {
		return "", err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func certPool(ca *testpki.CA) *x509Pool { return newPool(ca) }

func TestLoadKeystoreForms(t *testing.T) {
	p := newPKI(t)
	leaf, err := p.CA.Issue("node", testpki.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const password = "s3cret-Pa55"
	for _, tc := range []struct {
		name, password string
		data           []byte
		want           string // an error's text; "" for success
	}{
		{"pkcs8", "", leaf.KeystorePEM(), ""},
		{"encrypted pkcs8", password, append(leaf.EncryptedKeyPEM(password), leaf.ChainPEM()...), ""},
		{"wrong password", "wrong", append(leaf.EncryptedKeyPEM(password), leaf.ChainPEM()...), "wrong keystore_password"},
		{"no password", "", append(leaf.EncryptedKeyPEM(password), leaf.ChainPEM()...), "keystore_password is not set"},
		{"no key", "", leaf.ChainPEM(), "holds no private key"},
		{"no certificate", "", leaf.KeyPEM(), "holds no certificate"},
		{"key of another certificate", "", append(leaf.KeyPEM(), testpki.CertPEM(p.CA.Cert)...), "does not match the first certificate"},
		{"jks", "", append([]byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, make([]byte, 64)...), "it is a JKS keystore; cqld reads PEM only"},
		{"pkcs12", "", append([]byte{0x30, 0x82, 0x0a, 0x00}, make([]byte, 64)...), "PKCS#12"},
		{"empty", "", nil, "holds no PEM block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks := write(t, filepath.Join(p.Dir, "ks-"+strings.ReplaceAll(tc.name, " ", "_")), tc.data)
			var logs bytes.Buffer
			_, err := Load(Options{Keystore: ks, KeystorePassword: tc.password}, StoreOptions{Name: "client_encryption_options", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Load: %v, want an error with %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), password) || strings.Contains(logs.String(), password)) {
				t.Fatalf("the password leaked: %v / %s", err, logs.String())
			}
			if tc.name == "jks" && !errors.Is(err, ErrNotPEM) {
				t.Fatalf("JKS: %v is not ErrNotPEM", err)
			}
		})
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		o      Options
		lo, hi uint16
		want   string
	}{
		{Options{}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{Options{Protocol: "TLS"}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{Options{Protocol: "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, ""},
		{Options{AcceptedProtocols: []string{"TLSv1.3"}}, tls.VersionTLS13, tls.VersionTLS13, ""},
		{Options{Protocol: "TLSv1.3", AcceptedProtocols: []string{"TLSv1.2"}}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{Options{AcceptedProtocols: []string{"TLSv1.1", "TLSv1.3"}}, 0, 0, "not a contiguous range"},
		{Options{Protocol: "SSLv3"}, 0, 0, `protocol "SSLv3" is not supported`},
		{Options{CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{Options{CipherSuites: []string{"TLS_RSA_WITH_RC4_128_SHA"}}, 0, 0, "cipher suite TLS_RSA_WITH_RC4_128_SHA is insecure"},
		{Options{CipherSuites: []string{"SSL_RSA_WITH_RC4_128_SHA"}}, 0, 0, "cipher suite SSL_RSA_WITH_RC4_128_SHA is insecure"},
		{Options{CipherSuites: []string{"TLS_MADE_UP"}}, 0, 0, "unknown cipher suite TLS_MADE_UP; choose among TLS_"},
	} {
		err := tc.o.Check()
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.o, err)
			continue
		}
		lo, hi, _ := tc.o.versions()
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%+v: versions %x-%x, want %x-%x", tc.o, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestRequireClientAuth(t *testing.T) {
	p := newPKI(t)
	s, err := Load(Options{Keystore: p.NodeFiles.Keystore, Truststore: p.NodeFiles.Truststore, RequireClientAuth: true}, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handshake(t, s, p.CA, p.Client); err != nil {
		t.Fatalf("trusted client certificate: %v", err)
	}
	if _, err := handshake(t, s, p.CA, nil); err == nil {
		t.Fatal("no client certificate: handshake succeeded")
	}
	untrusted, _ := p.Other.Issue("intruder", testpki.LeafOptions{})
	if _, err := handshake(t, s, p.CA, untrusted); err == nil {
		t.Fatal("client certificate of an untrusted CA: handshake succeeded")
	}
	old, _ := p.CA.Issue("old", testpki.LeafOptions{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if _, err := handshake(t, s, p.CA, old); err == nil {
		t.Fatal("expired client certificate: handshake succeeded")
	}
	if _, err := Load(Options{Keystore: p.NodeFiles.Keystore, RequireClientAuth: true}, StoreOptions{Name: "x"}); err == nil || !strings.Contains(err.Error(), "require_client_auth needs a truststore") {
		t.Fatalf("require_client_auth without truststore: %v", err)
	}
}

// Reload serves new files to new handshakes, keeps the old material when
// the new files are bad, and logs that once per change.
func TestReload(t *testing.T) {
	p := newPKI(t)
	var logs bytes.Buffer
	s, err := Load(Options{Keystore: p.NodeFiles.Keystore}, StoreOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	first, err := handshake(t, s, p.CA, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := s.Reload(); changed || err != nil {
		t.Fatalf("Reload with nothing changed: %v, %v", changed, err)
	}

	next, _ := p.CA.Issue("server", testpki.LeafOptions{})
	write(t, p.NodeFiles.Keystore, next.KeystorePEM())
	bump(t, p.NodeFiles.Keystore, 1)
	if changed, err := s.Reload(); !changed || err != nil {
		t.Fatalf("Reload of a new keystore: %v, %v", changed, err)
	}
	second, err := handshake(t, s, p.CA, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || second != next.Cert.SerialNumber.String() {
		t.Fatalf("after reload the server presents serial %s, want %s (before: %s)", second, next.Cert.SerialNumber, first)
	}

	write(t, p.NodeFiles.Keystore, []byte("-----BEGIN PRIVATE KEY-----\ntruncated"))
	bump(t, p.NodeFiles.Keystore, 2)
	if changed, err := s.Reload(); changed || err == nil {
		t.Fatalf("Reload of a bad keystore: %v, %v", changed, err)
	}
	if changed, err := s.Reload(); changed || err == nil {
		t.Fatalf("second Reload of the same bad keystore: %v, %v; want its error again", changed, err)
	}
	if n := strings.Count(logs.String(), "cannot reload"); n != 1 {
		t.Fatalf("the bad keystore was logged %d times:\n%s", n, logs.String())
	}
	if got, err := handshake(t, s, p.CA, nil); err != nil || got != second {
		t.Fatalf("after a bad reload: serial %s, %v; want the last good one %s", got, err, second)
	}
}

// bump moves a file's modification time, so a rewrite within the
// filesystem's timestamp granularity still shows.
func bump(t *testing.T, path string, s int) {
	t.Helper()
	at := time.Now().Add(time.Duration(s) * time.Hour)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

type fakeTicker struct{ c chan time.Time }

func (f fakeTicker) C() <-chan time.Time { return f.c }
func (f fakeTicker) Stop()               {}

// Watch reloads at each tick of its clock.
func TestWatch(t *testing.T) {
	p := newPKI(t)
	s, err := Load(Options{Keystore: p.NodeFiles.Keystore}, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tick := fakeTicker{make(chan time.Time)}
	done := make(chan struct{})
	ctx, cancel := contextWithCancel()
	go func() { defer close(done); s.Watch(ctx, tick) }()
	next, _ := p.CA.Issue("server", testpki.LeafOptions{})
	write(t, p.NodeFiles.Keystore, next.KeystorePEM())
	bump(t, p.NodeFiles.Keystore, 1)
	tick.c <- time.Now()
	tick.c <- time.Now() // the first tick's Reload has finished
	cancel()
	<-done
	if got := s.cur.Load().cert.Leaf.SerialNumber; got.Cmp(next.Cert.SerialNumber) != 0 {
		t.Fatalf("after a tick the store has serial %s, want %s", got, next.Cert.SerialNumber)
	}
}

// The dialing side verifies its peer against the truststore, and the
// address it dialed when endpoint verification is required.
func TestClientConfig(t *testing.T) {
	p := newPKI(t)
	s, err := Load(Options{Keystore: p.NodeFiles.Keystore, Truststore: p.NodeFiles.Truststore, RequireClientAuth: true, RequireEndpointVerification: true}, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(host string, server *Store) error {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go func() {
			c := tls.Server(a, server.ServerConfig())
			_ = c.Handshake()
			a.Close()
		}()
		return tls.Client(b, s.ClientConfig(host)).Handshake()
	}
	if err := dial("127.0.0.1", s); err != nil {
		t.Fatalf("dial a peer with a certificate of the truststore's CA: %v", err)
	}
	if err := dial("10.1.2.3", s); err == nil {
		t.Fatal("endpoint verification passed for an address the certificate does not name")
	}
	intruder, _ := p.Other.Issue("intruder", testpki.LeafOptions{})
	files, _ := intruder.Write(p.Dir, "intruder", p.Other)
	rogue, err := Load(Options{Keystore: files.Keystore}, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dial("127.0.0.1", rogue); err == nil {
		t.Fatal("dialing a peer whose certificate is of an untrusted CA succeeded")
	}
}
