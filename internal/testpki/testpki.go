package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// CA is a certificate authority that issues certificates.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

var serial atomic.Int64

// NewCA returns a self-signed CA named name, valid from an hour ago for a
// day.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"cqld tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	Cert  *x509.Certificate
	Key   *ecdsa.PrivateKey
	Chain []*x509.Certificate // the leaf, then its issuer
}

// LeafOptions say what a leaf certificate is for.
type LeafOptions struct {
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
	// IPs are its IP SANs; by default 127.0.0.1-9 and 127.0.k.1-3.
	IPs []net.IP
}

// Issue returns a certificate for name, good for both server and client
// authentication, signed by ca.
func (ca *CA) Issue(name string, o LeafOptions) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	if o.IPs == nil {
		for h := 1; h <= 9; h++ {
			o.IPs = append(o.IPs, net.IPv4(127, 0, 0, byte(h)))
		}
		for k := 1; k < 32; k++ { // the helpers' loopback ranges
			for h := 1; h <= 3; h++ {
				o.IPs = append(o.IPs, net.IPv4(127, 0, byte(k), byte(h)))
			}
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"cqld tests"}},
		NotBefore:    o.NotBefore,
		NotAfter:     o.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost", name},
		IPAddresses:  o.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, Key: key, Chain: []*x509.Certificate{cert, ca.Cert}}, nil
}

// CertPEM is a certificate in PEM.
func CertPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// KeyPEM is the leaf's key as an unencrypted PKCS#8 PEM block.
func (l *Leaf) KeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		panic(fmt.Sprintf("testpki: marshal key: %v", err)) // cannot fail for ECDSA
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// ChainPEM is the leaf's certificate chain in PEM.
func (l *Leaf) ChainPEM() []byte {
	var out []byte
	for _, c := range l.Chain {
		out = append(out, CertPEM(c)...)
	}
	return out
}

// KeystorePEM is a PEM keystore as PEMBasedSslContextFactory reads it:
// the private key, then the certificate chain.
func (l *Leaf) KeystorePEM() []byte { return append(l.KeyPEM(), l.ChainPEM()...) }

// Files are a leaf's PEM files written to a directory.
type Files struct {
	Keystore   string // key and chain
	Key        string // the key alone
	Cert       string // the chain alone
	Truststore string // the CA certificate
}

// Write writes the leaf's keystore, key, chain and its CA's truststore
// into dir, named after prefix.
func (l *Leaf) Write(dir, prefix string, ca *CA) (Files, error) {
	f := Files{
		Keystore:   filepath.Join(dir, prefix+"-keystore.pem"),
		Key:        filepath.Join(dir, prefix+"-key.pem"),
		Cert:       filepath.Join(dir, prefix+"-cert.pem"),
		Truststore: filepath.Join(dir, prefix+"-truststore.pem"),
	}
	for path, data := range map[string][]byte{
		f.Keystore: l.KeystorePEM(), f.Key: l.KeyPEM(), f.Cert: l.ChainPEM(), f.Truststore: CertPEM(ca.Cert),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}

// EncryptedKeyPEM is the leaf's key as an "ENCRYPTED PRIVATE KEY" PEM
// block: PKCS#8 under PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC, as
// openssl pkcs8 -topk8 -v2 aes256 writes it.
func (l *Leaf) EncryptedKeyPEM(password string) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		panic(fmt.Sprintf("testpki: marshal key: %v", err))
	}
	enc, err := encryptPKCS8(der, password)
	if err != nil {
		panic(fmt.Sprintf("testpki: encrypt key: %v", err))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: enc})
}

// Set is what most TLS tests need, written in Dir: a CA, another CA that
// nothing trusts, a node certificate the CA signed (its keystore, key,
// chain and the CA's truststore) and a client certificate (likewise).
type Set struct {
	CA, Other   *CA
	Node        *Leaf
	NodeFiles   Files
	Client      *Leaf
	ClientFiles Files
	Dir         string
}

// NewSet makes a Set in dir.
func NewSet(dir string) (*Set, error) {
	s := &Set{Dir: dir}
	var err error
	if s.CA, err = NewCA("cqld test CA"); err != nil {
		return nil, err
	}
	if s.Other, err = NewCA("untrusted CA"); err != nil {
		return nil, err
	}
	if s.Node, err = s.CA.Issue("cqld node", LeafOptions{}); err != nil {
		return nil, err
	}
	if s.NodeFiles, err = s.Node.Write(dir, "node", s.CA); err != nil {
		return nil, err
	}
	if s.Client, err = s.CA.Issue("client", LeafOptions{}); err != nil {
		return nil, err
	}
	if s.ClientFiles, err = s.Client.Write(dir, "client", s.CA); err != nil {
		return nil, err
	}
	return s, nil
}
