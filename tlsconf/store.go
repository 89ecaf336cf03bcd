package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// material is one loading of the files: what handshakes use.
type material struct {
	cert     *tls.Certificate // presented when serving
	outbound *tls.Certificate // presented when dialing
	roots    *x509.CertPool   // nil without a truststore
}

// stamp is what Reload compares to see whether a file changed.
type stamp struct {
	size  int64
	mtime time.Time
}

// Store is the key material of one set of encryption options, reloaded
// when its files change. Its methods are safe for concurrent use.
type Store struct {
	o          Options
	name       string // the options' key, for messages: client_encryption_options
	log        *slog.Logger
	now        func() time.Time
	minV, maxV uint16
	ciphers    []uint16

	cur atomic.Pointer[material]

	mu     sync.Mutex // serialises Reload
	stamps map[string]stamp
	// failed is why the files as they are now do not load, nil when
	// the material in use is theirs.
	failed error
}

// StoreOptions configure a Store beyond the encryption options.
type StoreOptions struct {
	// Name is the configuration key the options came from, for messages.
	Name   string
	Logger *slog.Logger
	// Now is the clock certificate expiry is judged by; nil means
	// time.Now.
	Now func() time.Time
}

// Load reads the options' files and returns a Store over them.
func Load(o Options, so StoreOptions) (*Store, error) {
	if so.Logger == nil {
		so.Logger = slog.New(slog.DiscardHandler)
	}
	if so.Now == nil {
		so.Now = time.Now
	}
	if so.Name == "" {
		so.Name = "encryption options"
	}
	s := &Store{o: o, name: so.Name, log: so.Logger, now: so.Now, stamps: map[string]stamp{}}
	var err error
	if s.minV, s.maxV, err = o.versions(); err != nil {
		return nil, fmt.Errorf("tlsconf: %s: %w", s.name, err)
	}
	if s.ciphers, err = o.cipherSuites(); err != nil {
		return nil, fmt.Errorf("tlsconf: %s: %w", s.name, err)
	}
	if o.Keystore == "" {
		return nil, fmt.Errorf("tlsconf: %s: keystore is not set; it must name a PEM file with the private key and its certificate chain", s.name)
	}
	if o.RequireClientAuth && o.Truststore == "" {
		return nil, fmt.Errorf("tlsconf: %s: require_client_auth needs a truststore of the CAs client certificates are signed by", s.name)
	}
	m, stamps, err := s.load()
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %s: %w", s.name, err)
	}
	s.cur.Store(m)
	s.stamps = stamps
	s.warnExpired(m)
	return s, nil
}

func (s *Store) files() []string {
	fs := []string{s.o.Keystore}
	if s.o.OutboundKeystore != "" {
		fs = append(fs, s.o.OutboundKeystore)
	}
	if s.o.Truststore != "" {
		fs = append(fs, s.o.Truststore)
	}
	return fs
}

// load reads every file, with their stamps taken before the reads: a file
// replaced during the read is read again at the next Reload.
func (s *Store) load() (*material, map[string]stamp, error) {
	stamps := map[string]stamp{}
	for _, f := range s.files() {
		st, err := os.Stat(f)
		if err != nil {
			return nil, nil, fmt.Errorf("tlsconf: %w", err)
		}
		stamps[f] = stamp{st.Size(), st.ModTime()}
	}
	m := &material{}
	cert, err := loadKeystore(s.o.Keystore, s.o.KeystorePassword)
	if err != nil {
		return nil, nil, err
	}
	m.cert, m.outbound = &cert, &cert
	if s.o.OutboundKeystore != "" {
		pw := s.o.OutboundKeystorePassword
		if pw == "" {
			pw = s.o.KeystorePassword
		}
		out, err := loadKeystore(s.o.OutboundKeystore, pw)
		if err != nil {
			return nil, nil, err
		}
		m.outbound = &out
	}
	if s.o.Truststore != "" {
		data, err := readFile(s.o.Truststore)
		if err != nil {
			return nil, nil, err
		}
		if m.roots, err = parseTruststore(s.o.Truststore, data); err != nil {
			return nil, nil, err
		}
	}
	return m, stamps, nil
}

func loadKeystore(path, password string) (tls.Certificate, error) {
	data, err := readFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	return parseKeystore(path, data, password)
}

func (s *Store) warnExpired(m *material) {
	now := s.now()
	for _, c := range []*tls.Certificate{m.cert, m.outbound} {
		if bad := expired(*c, now); len(bad) > 0 {
			s.log.Warn("keystore certificate is not valid now: peers will refuse it", "options", s.name, "certificates", bad)
		}
		if m.outbound == m.cert {
			break
		}
	}
}

// Reload reads the files again if any changed size or modification time
// since they were last read, and reports whether new material is in use.
// New files that do not load are logged and the old material kept; they
// are not tried again until they change, and until then Reload returns
// the error that kept them out, without logging it again.
func (s *Store) Reload() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, f := range s.files() {
		st, err := os.Stat(f)
		if err != nil {
			changed = true // gone or unreadable: load reports it, once
			break
		}
		if old, ok := s.stamps[f]; !ok || old.size != st.Size() || !old.mtime.Equal(st.ModTime()) {
			changed = true
			break
		}
	}
	if !changed {
		return false, s.failed
	}
	m, stamps, err := s.load()
	if err != nil {
		// Remember what failed, so the same bad files are not read (and
		// logged) at every poll.
		for _, f := range s.files() {
			if st, e := os.Stat(f); e == nil {
				s.stamps[f] = stamp{st.Size(), st.ModTime()}
			} else {
				s.stamps[f] = stamp{size: -1}
			}
		}
		err = fmt.Errorf("tlsconf: %s: reloading: %w", s.name, err)
		s.failed = err
		s.log.Error("cannot reload the certificates; keeping the ones in use", "options", s.name, "err", err)
		return false, err
	}
	s.cur.Store(m)
	s.stamps = stamps
	s.failed = nil
	s.log.Info("certificates reloaded; new connections use them", "options", s.name, "files", s.files())
	s.warnExpired(m)
	return true, nil
}

// Ticker is the clock Watch polls on.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// NewTicker is a Ticker on the system clock.
func NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// Watch calls Reload at every tick until ctx ends.
func (s *Store) Watch(ctx context.Context, t Ticker) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			_, _ = s.Reload() // logged
		}
	}
}

// base is the configuration both sides share.
func (s *Store) base() *tls.Config {
	return &tls.Config{MinVersion: s.minV, MaxVersion: s.maxV, CipherSuites: s.ciphers}
}

// ServerConfig is the configuration of the accepting side: each handshake
// takes the current certificate and, under RequireClientAuth, verifies
// the client's against the current truststore.
func (s *Store) ServerConfig() *tls.Config {
	c := s.base()
	c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		m := s.cur.Load()
		cc := s.base()
		cc.Certificates = []tls.Certificate{*m.cert}
		if s.o.RequireClientAuth {
			cc.ClientAuth = tls.RequireAndVerifyClientCert
			cc.ClientCAs = m.roots
		}
		return cc, nil
	}
	return c
}

// ClientConfig is the configuration of the dialing side (internode): it
// presents the current outbound certificate and verifies the peer's chain
// against the current truststore; under RequireEndpointVerification the
// certificate must also name host, the address dialed.
func (s *Store) ClientConfig(host string) *tls.Config {
	c := s.base()
	// NB: verification is done in VerifyConnection, against the roots of
	// the moment, rather than by crypto/tls against fixed RootCAs.
	c.InsecureSkipVerify = true
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return s.cur.Load().outbound, nil
	}
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		return s.verifyPeer(cs, host)
	}
	return c
}

// ErrNoTruststore is a dialing side with no truststore to verify its
// peer with.
var ErrNoTruststore = errors.New("tlsconf: no truststore to verify the peer's certificate with")

func (s *Store) verifyPeer(cs tls.ConnectionState, host string) error {
	m := s.cur.Load()
	if m.roots == nil {
		return ErrNoTruststore
	}
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tlsconf: the peer sent no certificate")
	}
	opts := x509.VerifyOptions{
		Roots:         m.roots,
		Intermediates: x509.NewCertPool(),
		CurrentTime:   s.now(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if s.o.RequireEndpointVerification {
		opts.DNSName = host
		if ip := net.ParseIP(host); ip != nil {
			opts.DNSName = ""
			if err := cs.PeerCertificates[0].VerifyHostname(host); err != nil {
				return err
			}
		}
	}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(opts)
	return err
}
