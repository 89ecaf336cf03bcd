package tlsconf

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/cqld/cqld/internal/testpki"
)

// FuzzDecryptPKCS8 feeds the decrypter arbitrary DER: it must return an
// error, never panic or run away.
func FuzzDecryptPKCS8(f *testing.F) {
	ca, err := testpki.NewCA("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	leaf, err := ca.Issue("fuzz", testpki.LeafOptions{})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := pem.Decode(leaf.EncryptedKeyPEM("pw"))
	f.Add(b.Bytes, "pw")
	f.Add(b.Bytes[:len(b.Bytes)/2], "pw")
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01}, "")
	f.Fuzz(func(t *testing.T, der []byte, password string) {
		_, _ = decryptPKCS8(der, password)
	})
}

func TestDecryptPKCS8(t *testing.T) {
	ca, _ := testpki.NewCA("t")
	leaf, _ := ca.Issue("t", testpki.LeafOptions{})
	b, _ := pem.Decode(leaf.EncryptedKeyPEM("pw"))
	if _, err := decryptPKCS8(b.Bytes, "pw"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if d, err := decryptPKCS8(b.Bytes, "nope"); err == nil {
		if _, err := x509.ParsePKCS8PrivateKey(d); err == nil {
			t.Fatal("wrong password decrypted")
		}
	}
}
