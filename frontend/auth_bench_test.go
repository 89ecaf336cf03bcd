package frontend

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/internal/testpki"
	"github.com/cqld/cqld/tlsconf"
)

// BenchmarkHandshake is a connection's open to ready: TCP connect, with
// TLS its handshake (TLS 1.3, ECDSA P-256, no resumption), STARTUP and,
// with PasswordAuthenticator at bcrypt's default cost, the login; the
// four side by side in one run.
func BenchmarkHandshake(b *testing.B) {
	st, err := auth.OpenStore(auth.StoreOptions{FS: vfs.NewMem(), Dir: "/system_auth"})
	if err != nil {
		b.Fatal(err)
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		b.Fatal(err)
	}
	p := newTestPKI(b)
	for _, bc := range []struct {
		name string
		a    Authenticator
	}{{"AllowAll", nil}, {"Password", a}} {
		for _, tls := range []bool{false, true} {
			transport := map[bool]string{false: "plain", true: "TLS"}[tls]
			b.Run(bc.name+"/"+transport, func(b *testing.B) {
				s := startServer(b, newFakeHandler(), func(o *Options) {
					o.Authenticator = bc.a
					if tls {
						o.TLS = p.store(b, tlsconf.Options{}).ServerConfig()
					}
				})
				cfg := p.clientConfig(nil)
				for b.Loop() {
					var c *client
					if tls {
						c = mustDialTLS(b, s.Addr(), cfg)
					} else {
						c = dialClient(b, s.Addr())
					}
					if bc.a == nil {
						c.startup(primitive.ProtocolVersion4, nil)
					} else {
						c.startupAnswer(primitive.ProtocolVersion4, nil)
						c.send(1, &message.AuthResponse{Token: plainToken("cassandra", "cassandra")})
						expect[*message.AuthSuccess](c, 1)
					}
					c.nc.Close()
				}
			})
		}
	}
}

// BenchmarkTLSHandshake is a connection's open to ready with TLS (a full
// TLS 1.3 handshake with an ECDSA P-256 certificate, no resumption),
// beside plain TCP in the same run; mutual adds a client certificate the
// server verifies.
func BenchmarkTLSHandshake(b *testing.B) {
	p := newTestPKI(b)
	for _, bc := range []struct {
		name   string
		tls    bool
		mutual bool
	}{{"plain", false, false}, {"TLS", true, false}, {"mutualTLS", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			s := startServer(b, newFakeHandler(), func(o *Options) {
				if bc.tls {
					o.TLS = p.store(b, tlsconf.Options{RequireClientAuth: bc.mutual}).ServerConfig()
				}
			})
			var cert *testpki.Leaf
			if bc.mutual {
				cert = p.Client
			}
			cfg := p.clientConfig(cert)
			for b.Loop() {
				var c *client
				if bc.tls {
					c = mustDialTLS(b, s.Addr(), cfg)
				} else {
					c = dialClient(b, s.Addr())
				}
				c.startup(primitive.ProtocolVersion4, nil)
				c.nc.Close()
			}
		})
	}
}

// BenchmarkTLSRoundTrip is one connection's sequential round trips of a
// query answered on the event loop (or, for TLS, its sock's goroutine),
// plain and TLS in the same run: the transport's own cost per request.
func BenchmarkTLSRoundTrip(b *testing.B) {
	p := newTestPKI(b)
	for _, tls := range []bool{false, true} {
		b.Run(fmt.Sprintf("tls=%v", tls), func(b *testing.B) {
			h := &fakeInliner{fakeHandler: newFakeHandler()}
			s := startServer(b, h, func(o *Options) {
				if tls {
					o.TLS = p.store(b, tlsconf.Options{}).ServerConfig()
				}
			})
			var c *client
			if tls {
				c = mustDialTLS(b, s.Addr(), p.clientConfig(nil))
			} else {
				c = dialClient(b, s.Addr())
			}
			c.startup(primitive.ProtocolVersion4, nil)
			frame := c.frame(1, &message.Query{Query: "inline", Options: &message.QueryOptions{}})
			for b.Loop() {
				c.write(frame)
				c.mustRecv()
			}
		})
	}
}

// BenchmarkTLSRoundTripConns is BenchmarkTLSRoundTrip at 16 and 64
// connections, each with one request in flight, plain and TLS in turn:
// the transport's cost once every connection has a goroutine of its own.
func BenchmarkTLSRoundTripConns(b *testing.B) {
	p := newTestPKI(b)
	for _, conns := range []int{16, 64} {
		for _, tls := range []bool{false, true} {
			b.Run(fmt.Sprintf("conns=%d/tls=%v", conns, tls), func(b *testing.B) {
				h := &fakeInliner{fakeHandler: newFakeHandler()}
				s := startServer(b, h, func(o *Options) {
					if tls {
						o.TLS = p.store(b, tlsconf.Options{}).ServerConfig()
					}
				})
				cs := make([]*client, conns)
				for i := range cs {
					if tls {
						cs[i] = mustDialTLS(b, s.Addr(), p.clientConfig(nil))
					} else {
						cs[i] = dialClient(b, s.Addr())
					}
					cs[i].startup(primitive.ProtocolVersion4, nil)
				}
				frame := cs[0].frame(1, &message.Query{Query: "inline", Options: &message.QueryOptions{}})
				var next atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for _, c := range cs {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if _, err := c.nc.Write(frame); err != nil {
								b.Error(err)
								return
							}
							if _, _, err := c.recv(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}
