package messaging

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqld/cqld/internal/testpki"
	"github.com/cqld/cqld/tlsconf"
)

// nodeTLS is the TLS of a node whose certificate ca signed, trusting
// trusted, with mutual TLS.
func nodeTLS(t *testing.T, ca, trusted *testpki.CA, optional bool) *TLS {
	t.Helper()
	dir := t.TempDir()
	leaf, err := ca.Issue("node", testpki.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := leaf.Write(dir, "node", trusted)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tlsconf.Load(tlsconf.Options{Keystore: files.Keystore, Truststore: files.Truststore, RequireClientAuth: true, RequireEndpointVerification: true},
		tlsconf.StoreOptions{Name: "server_encryption_options"})
	if err != nil {
		t.Fatal(err)
	}
	return &TLS{Server: st.ServerConfig(), Optional: optional, Client: func(p netip.AddrPort) *tls.Config { return st.ClientConfig(p.Addr().String()) }}
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Nodes with certificates of the CA they trust talk over mutual TLS; a
// node whose certificate another CA signed, or that has none, is refused
// on both sides' storage ports and logged with its address and the
// reason; an optional port takes plaintext peers too.
func TestTCPTLS(t *testing.T) {
	ca, _ := testpki.NewCA("cluster CA")
	rogueCA, _ := testpki.NewCA("rogue CA")
	var logs logBuffer
	withTLS := func(tl *TLS) func(*Options) {
		return func(o *Options) { o.TLS = tl; o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }
	}
	a := listenTCP(t, "127.0.0.1:0", withTLS(nodeTLS(t, ca, ca, false)))
	b := listenTCP(t, "127.0.0.2:0", withTLS(nodeTLS(t, ca, ca, false)))
	a.Handle(VerbEcho, echo)
	b.Handle(VerbEcho, echo)
	for _, size := range []int{10, 200 << 10, 2 << 20} {
		payload := bytes.Repeat([]byte("x"), size)
		if resp, err := a.Request(ctxTimeout(t, 10*time.Second), b.Addr(), VerbEcho, payload); err != nil || !bytes.Equal(resp, payload) {
			t.Fatalf("%d bytes over TLS: %d bytes back, %v", size, len(resp), err)
		}
	}

	rogue := listenTCP(t, "127.0.0.3:0", withTLS(nodeTLS(t, rogueCA, ca, false)))
	if _, err := rogue.Request(ctxTimeout(t, 10*time.Second), a.Addr(), VerbEcho, []byte("hi")); err == nil {
		t.Fatal("a node with a certificate of an untrusted CA reached a peer")
	}
	if _, err := a.Request(ctxTimeout(t, 10*time.Second), rogue.Addr(), VerbEcho, []byte("hi")); err == nil {
		t.Fatal("a peer with a certificate of an untrusted CA was accepted when dialed")
	}
	plain := listenTCP(t, "127.0.0.4:0", nil)
	_, err := plain.Request(ctxTimeout(t, 10*time.Second), a.Addr(), VerbEcho, []byte("hi"))
	if err == nil || !strings.Contains(err.Error(), "requires TLS on its storage port") {
		t.Fatalf("a plaintext node: %v, want the refusal saying TLS is required", err)
	}
	waitFor(t, "the refusals logged", func() bool {
		l := logs.String()
		return strings.Contains(l, "refusing a connection on the storage port: TLS handshake failed") &&
			strings.Contains(l, "remote=127.0.0.3") && strings.Contains(l, "refusing a plaintext connection") && strings.Contains(l, "remote=127.0.0.4")
	})

	opt := listenTCP(t, "127.0.0.5:0", withTLS(nodeTLS(t, ca, ca, true)))
	opt.Handle(VerbEcho, echo)
	for _, from := range []*TCPTransport{plain, a} {
		if _, err := from.Request(ctxTimeout(t, 10*time.Second), opt.Addr(), VerbEcho, []byte("hi")); err != nil {
			t.Fatalf("%s to an optional port: %v", from.Addr(), err)
		}
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") {
		t.Fatal("key material in the log")
	}
}
