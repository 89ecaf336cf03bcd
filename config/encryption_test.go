package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A cassandra.yaml 4.1 encryption section reads as written.
func TestEncryptionOptions(t *testing.T) {
	c, err := loadYAML(t, `
client_encryption_options:
  enabled: true
  optional: false
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
  keystore: /etc/cassandra/keystore.pem
  keystore_password: "secret"
  truststore: /etc/cassandra/truststore.pem
  require_client_auth: true
  protocol: TLS
  accepted_protocols: [TLSv1.2, TLSv1.3]
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]
native_transport_port_ssl: 9142
server_encryption_options:
  internode_encryption: all
  keystore: /etc/cassandra/node.pem
  truststore: /etc/cassandra/truststore.pem
  require_client_auth: true
  require_endpoint_verification: true
`)
	if err != nil {
		t.Fatal(err)
	}
	ce := c.ClientEncryptionOptions
	if tls, optional := ce.ClientTLS(); !tls || optional || ce.KeystorePassword != "secret" || !ce.RequireClientAuth ||
		!slices.Equal(ce.AcceptedProtocols, []string{"TLSv1.2", "TLSv1.3"}) || c.NativeTransportPortSSL != 9142 {
		t.Fatalf("client_encryption_options read as %+v", ce)
	}
	if tls, optional := c.ServerEncryptionOptions.InternodeTLS(); !tls || optional {
		t.Fatalf("server_encryption_options: tls %v optional %v", tls, optional)
	}
	if tls, _ := Default().ClientEncryptionOptions.ClientTLS(); tls {
		t.Fatal("TLS on by default")
	}
}

// optional, unset, is true when TLS is not enabled and the keystore
// exists (Cassandra's rule); dc and rack internode encryption accept
// plaintext peers too.
func TestEncryptionOptional(t *testing.T) {
	ks := filepath.Join(t.TempDir(), "ks.pem")
	if err := os.WriteFile(ks, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o             EncryptionOptions
		tls, optional bool
	}{
		{EncryptionOptions{Keystore: ks}, true, true},
		{EncryptionOptions{Keystore: ks + ".missing"}, false, false},
		{EncryptionOptions{Enabled: true, Keystore: ks}, true, false},
		{EncryptionOptions{Enabled: true, Keystore: ks, Optional: ptr(true)}, true, true},
		{EncryptionOptions{Keystore: ks, Optional: ptr(false)}, false, false},
	} {
		if tls, optional := (ClientEncryptionOptions{tc.o}).ClientTLS(); tls != tc.tls || optional != tc.optional {
			t.Errorf("%+v: tls %v optional %v, want %v %v", tc.o, tls, optional, tc.tls, tc.optional)
		}
	}
	for mode, want := range map[string][2]bool{"none": {false, false}, "all": {true, false}, "dc": {true, true}, "rack": {true, true}} {
		o := ServerEncryptionOptions{EncryptionOptions{InternodeEncryption: mode, Keystore: ks + ".missing"}}
		if tls, optional := o.InternodeTLS(); tls != want[0] || optional != want[1] {
			t.Errorf("internode_encryption %s: tls %v optional %v, want %v", mode, tls, optional, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestEncryptionOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"jks factory", "client_encryption_options:\n  enabled: true\n  keystore: k\n  ssl_context_factory:\n    class_name: org.apache.cassandra.security.DefaultSslContextFactory\n",
			[]string{"client_encryption_options", "DefaultSslContextFactory is not supported", "PEM"}},
		{"jks store type", "client_encryption_options:\n  enabled: true\n  keystore: k\n  store_type: JKS\n", []string{"store_type JKS is not supported", "convert"}},
		{"no keystore", "client_encryption_options:\n  enabled: true\n", []string{"client_encryption_options", "keystore must name a PEM file"}},
		{"client auth without truststore", "client_encryption_options:\n  enabled: true\n  keystore: k\n  require_client_auth: true\n", []string{"require_client_auth needs a truststore"}},
		{"unknown key", "client_encryption_options:\n  enabld: true\n", []string{"client_encryption_options (line 1)", "enabld (line 2): unknown key"}},
		{"enabled between nodes", "server_encryption_options:\n  enabled: true\n", []string{"enabled (line 2): has no effect between nodes; use internode_encryption"}},
		{"internode key on the client side", "client_encryption_options:\n  internode_encryption: all\n", []string{"internode_encryption (line 2): is a key of server_encryption_options only"}},
		{"inline PEM", "client_encryption_options:\n  ssl_context_factory:\n    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory\n    parameters:\n      private_key: x\n", []string{"parameters", "not supported"}},
		{"unknown cipher", "client_encryption_options:\n  enabled: true\n  keystore: k\n  cipher_suites: [TLS_NOPE]\n", []string{"unknown cipher suite TLS_NOPE"}},
		{"bad protocol", "client_encryption_options:\n  enabled: true\n  keystore: k\n  protocol: SSLv3\n", []string{`protocol "SSLv3" is not supported`}},
		{"ssl port without TLS", "native_transport_port_ssl: 9142\n", []string{"native_transport_port_ssl (line 1)", "client_encryption_options is not enabled"}},
		{"internode mode", "server_encryption_options:\n  internode_encryption: some\n", []string{`"some" is not one of none, all, dc, rack`}},
		{"internode without truststore", "server_encryption_options:\n  internode_encryption: all\n  keystore: k\n", []string{"internode encryption needs a truststore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadYAML(t, tc.yaml)
			wantError(t, err, tc.want...)
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("a password in an error: %v", err)
			}
		})
	}
}
