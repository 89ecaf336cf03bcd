package frontend

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/auth"
)

// BenchmarkHandshake is a connection's open to ready: TCP connect, STARTUP
// and, with PasswordAuthenticator at bcrypt's default cost, the login.
func BenchmarkHandshake(b *testing.B) {
	st, err := auth.OpenStore(auth.StoreOptions{FS: vfs.NewMem(), Dir: "/system_auth"})
	if err != nil {
		b.Fatal(err)
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		a    Authenticator
	}{{"AllowAll", nil}, {"Password", a}} {
		b.Run(bc.name, func(b *testing.B) {
			s := startServer(b, newFakeHandler(), func(o *Options) { o.Authenticator = bc.a })
			for b.Loop() {
				c := dialClient(b, s.Addr())
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
