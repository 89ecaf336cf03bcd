package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// maxFileSize bounds a keystore or truststore read: a PEM bundle of a few
// hundred CAs is well under a megabyte.
const maxFileSize = 4 << 20

// ErrNotPEM is a keystore or truststore that is not PEM.
var ErrNotPEM = errors.New("tlsconf: not a PEM file")

// readFile reads a key material file, bounded.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %w", err)
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("tlsconf: %s is %d bytes, more than the %d a PEM keystore or truststore may be", path, st.Size(), maxFileSize)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("tlsconf: read %s: %w", path, err)
	}
	return data, nil
}

// notPEM explains a file that is not PEM, naming the format it looks like.
func notPEM(path string, data []byte) error {
	what := "it holds no PEM block"
	switch {
	case len(data) >= 4 && bytes.Equal(data[:4], []byte{0xfe, 0xed, 0xfe, 0xed}):
		what = "it is a JKS keystore"
	case len(data) >= 4 && bytes.Equal(data[:4], []byte{0xce, 0xce, 0xce, 0xce}):
		what = "it is a JCEKS keystore"
	case len(data) > 0 && data[0] == 0x30:
		what = "it looks like a DER or PKCS#12 file"
	}
	return fmt.Errorf("%w: %s: %s; cqld reads PEM only (ssl_context_factory "+
		"org.apache.cassandra.security.PEMBasedSslContextFactory): convert it, e.g. keytool -importkeystore "+
		"-deststoretype PKCS12, then openssl pkcs12 -nodes", ErrNotPEM, path, what)
}

// parseKeystore reads a PEM keystore: one private key, decrypted with
// password if it is encrypted, and the certificate chain, leaf first.
func parseKeystore(path string, data []byte, password string) (tls.Certificate, error) {
	blocks, err := pemBlocks(path, data)
	if err != nil {
		return tls.Certificate{}, err
	}
	var (
		key   crypto.PrivateKey
		chain [][]byte
	)
	for _, b := range blocks {
		switch b.Type {
		case "CERTIFICATE":
			chain = append(chain, b.Bytes)
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
			if key != nil {
				return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s holds more than one private key", path)
			}
			k, err := parseKey(b, password)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s: %w", path, err)
			}
			key = k
		}
	}
	if key == nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s holds no private key (PEM: the key, then its certificate chain)", path)
	}
	if len(chain) == 0 {
		return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s holds no certificate for its private key", path)
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s: first certificate: %w", path, err)
	}
	if !publicKeyMatches(leaf.PublicKey, key) {
		return tls.Certificate{}, fmt.Errorf("tlsconf: keystore %s: the private key does not match the first certificate (%s)", path, leaf.Subject)
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// pemBlocks decodes the PEM blocks of data, the file at path; a file
// without any is an error.
func pemBlocks(path string, data []byte) ([]*pem.Block, error) {
	var out []*pem.Block
	for b, rest := pem.Decode(data); b != nil; b, rest = pem.Decode(rest) {
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, notPEM(path, data)
	}
	return out, nil
}

// parseKey decodes one private key block. Errors never carry the
// password.
func parseKey(b *pem.Block, password string) (crypto.PrivateKey, error) {
	der := b.Bytes
	//lint:ignore SA1019 the legacy OpenSSL encryption is what older PEM keys use
	if x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck
		if password == "" {
			return nil, errors.New("the private key is encrypted and keystore_password is not set")
		}
		d, err := x509.DecryptPEMBlock(b, []byte(password)) //nolint:staticcheck
		if err != nil {
			return nil, errors.New("cannot decrypt the private key: wrong keystore_password, or a damaged key")
		}
		der = d
	}
	switch b.Type {
	case "ENCRYPTED PRIVATE KEY":
		if password == "" {
			return nil, errors.New("the private key is encrypted and keystore_password is not set")
		}
		d, err := decryptPKCS8(der, password)
		if err != nil {
			return nil, err
		}
		k, err := x509.ParsePKCS8PrivateKey(d)
		if err != nil {
			return nil, errDecrypt // padding that checked out by chance
		}
		return k, nil
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(der)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	return k, nil
}

func publicKeyMatches(pub crypto.PublicKey, key crypto.PrivateKey) bool {
	type publicKeyer interface{ Public() crypto.PublicKey }
	k, ok := key.(publicKeyer)
	if !ok {
		return false
	}
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return p.Equal(k.Public())
	case *ecdsa.PublicKey:
		return p.Equal(k.Public())
	case ed25519.PublicKey:
		return p.Equal(k.Public())
	}
	return false
}

// parseTruststore reads a PEM bundle of CA certificates.
func parseTruststore(path string, data []byte) (*x509.CertPool, error) {
	blocks, err := pemBlocks(path, data)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for _, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("tlsconf: truststore %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("tlsconf: truststore %s holds no certificate", path)
	}
	return pool, nil
}

// expired says which certificates of a chain are outside their validity
// at now, for a warning: Cassandra warns of an expired keystore too.
func expired(c tls.Certificate, now time.Time) []string {
	var out []string
	for i, der := range c.Certificate {
		x, err := x509.ParseCertificate(der)
		if err != nil {
			continue
		}
		if now.After(x.NotAfter) || now.Before(x.NotBefore) {
			out = append(out, fmt.Sprintf("certificate %d (%s) valid %s to %s", i+1, x.Subject, x.NotBefore.Format(time.RFC3339), x.NotAfter.Format(time.RFC3339)))
		}
	}
	return out
}
