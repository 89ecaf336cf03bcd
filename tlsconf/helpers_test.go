package tlsconf

import (
	"context"
	"crypto/x509"

	"github.com/cqld/cqld/internal/testpki"
)

type x509Pool = x509.CertPool

func newPool(ca *testpki.CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
