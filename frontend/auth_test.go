package frontend

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/auth"
)

func passwordAuthenticator(t *testing.T) *auth.Authenticator {
	t.Helper()
	st, err := auth.OpenStore(auth.StoreOptions{FS: vfs.NewMem(), Dir: "/system_auth", Cost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func plainToken(user, password string) []byte { return []byte("\x00" + user + "\x00" + password) }

// The SASL PLAIN flow with PasswordAuthenticator, and every request the
// connection may not send before it has logged in, each refused as
// Cassandra refuses it without closing the connection.
func TestPasswordAuthentication(t *testing.T) {
	for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion4, primitive.ProtocolVersion5} {
		t.Run(v.String(), func(t *testing.T) {
			s := startServer(t, newFakeHandler(), func(o *Options) { o.Authenticator = passwordAuthenticator(t) })
			c := dialClient(t, s.Addr())
			c.v = v
			c.send(1, &message.AuthResponse{Token: plainToken("cassandra", "cassandra")})
			if e := expect[*message.ProtocolError](c, 1); e.ErrorMessage != "Unexpected message AUTH_RESPONSE, expecting STARTUP or OPTIONS" {
				t.Errorf("AUTH_RESPONSE before STARTUP: %q", e.ErrorMessage)
			}
			a, ok := c.startupAnswer(v, nil).(*message.Authenticate)
			if !ok || a.Authenticator != "org.apache.cassandra.auth.PasswordAuthenticator" {
				t.Fatalf("STARTUP answered %v, want AUTHENTICATE", a)
			}
			c.query(2, "role")
			if e := expect[*message.ProtocolError](c, 2); e.ErrorMessage != "Unexpected message QUERY, expecting SASL_RESPONSE" {
				t.Errorf("QUERY before login: %q", e.ErrorMessage)
			}
			c.send(3, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
			if e := expect[*message.ProtocolError](c, 3); e.ErrorMessage != "Unexpected message REGISTER, expecting SASL_RESPONSE" {
				t.Errorf("REGISTER before login: %q", e.ErrorMessage)
			}
			c.send(4, &message.Prepare{Query: "role"})
			expect[*message.ProtocolError](c, 4)
			c.send(5, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
			if e := expect[*message.ProtocolError](c, 5); e.ErrorMessage != "Unexpected message STARTUP, expecting SASL_RESPONSE" {
				t.Errorf("STARTUP again: %q", e.ErrorMessage)
			}
			c.send(6, &message.Options{})
			expect[*message.Supported](c, 6)

			for i, tc := range []struct {
				token []byte
				msg   string
			}{
				{plainToken("cassandra", "wrong"), "Provided username cassandra and/or password are incorrect"},
				{plainToken("nobody", "cassandra"), "Provided username nobody and/or password are incorrect"},
				{[]byte("cassandra"), "Password must not be null"},
				{nil, "Password must not be null"},
			} {
				stream := int16(10 + i)
				c.send(stream, &message.AuthResponse{Token: tc.token})
				if e := expect[*message.AuthenticationError](c, stream); e.ErrorMessage != tc.msg {
					t.Errorf("token %q: %q, want %q", tc.token, e.ErrorMessage, tc.msg)
				}
			}
			c.query(20, "role")
			expect[*message.ProtocolError](c, 20)

			c.send(21, &message.AuthResponse{Token: plainToken("cassandra", "cassandra")})
			expect[*message.AuthSuccess](c, 21)
			c.query(22, "role")
			if rows := expect[*message.RowsResult](c, 22); string(rows.Data[0][0]) != "cassandra" {
				t.Errorf("role handed to the handler: %q", rows.Data[0][0])
			}
			c.send(23, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})
			expect[*message.Ready](c, 23)
			c.send(24, &message.AuthResponse{Token: plainToken("cassandra", "cassandra")})
			if e := expect[*message.ProtocolError](c, 24); !strings.Contains(e.ErrorMessage, "already authenticated") {
				t.Errorf("AUTH_RESPONSE after login: %q", e.ErrorMessage)
			}
			if n := counter(t, s.m.Requests, "AUTH_RESPONSE", "bad_credentials"); n != 4 {
				t.Errorf("bad_credentials counted %v times, want 4", n)
			}
		})
	}
}

// blockingAuthenticator waits in Authenticate until released.
type blockingAuthenticator struct {
	entered, release chan struct{}
}

var _ Authenticator = (*blockingAuthenticator)(nil)

func (b *blockingAuthenticator) ClassName() string { return auth.ClassName }

func (b *blockingAuthenticator) Authenticate(netip.Addr, []byte) (string, error) {
	b.entered <- struct{}{}
	<-b.release
	return "someone", nil
}

// A password check (slow: bcrypt) runs on a worker: while one waits, the
// event loop it came from goes on serving the other connections.
func TestAuthenticationOffTheEventLoop(t *testing.T) {
	b := &blockingAuthenticator{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := startServer(t, newFakeHandler(), func(o *Options) { o.Authenticator = b; o.EventLoops = 1 })
	c := dialClient(t, s.Addr())
	c.startupAnswer(primitive.ProtocolVersion4, nil)
	c.send(1, &message.AuthResponse{Token: plainToken("a", "b")})
	<-b.entered
	other := dialClient(t, s.Addr())
	other.send(1, &message.Options{})
	expect[*message.Supported](other, 1)
	close(b.release)
	expect[*message.AuthSuccess](c, 1)
	c.query(2, "role")
	if rows := expect[*message.RowsResult](c, 2); string(rows.Data[0][0]) != "someone" {
		t.Errorf("role: %q", rows.Data[0][0])
	}
}

// Logging in is part of the handshake: a connection that sent STARTUP and
// never authenticates is closed at HandshakeTimeout; one that logged in
// stays.
func TestHandshakeTimeoutCoversLogin(t *testing.T) {
	clock := newFakeClock()
	s := startServer(t, newFakeHandler(), func(o *Options) {
		o.Authenticator = passwordAuthenticator(t)
		o.HandshakeTimeout = 10 * time.Second
		o.Now = clock.Now
	})
	stalled := dialClient(t, s.Addr())
	stalled.startupAnswer(primitive.ProtocolVersion4, nil)
	in := dialClient(t, s.Addr())
	in.startupAnswer(primitive.ProtocolVersion4, nil)
	in.send(1, &message.AuthResponse{Token: plainToken("cassandra", "cassandra")})
	expect[*message.AuthSuccess](in, 1)
	clock.advance(11 * time.Second)
	s.expectClosedFor(t, stalled, reasonHandshake, 1)
	in.query(2, "void")
	expect[*message.VoidResult](in, 2)
}
