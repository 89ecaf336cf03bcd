package test

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/server"
)

// newAuthNode starts a node with authenticator: PasswordAuthenticator and
// a fresh data directory, so it has the default superuser
// cassandra/cassandra.
func newAuthNode(t *testing.T) *server.Node {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.Authorizer = "CassandraAuthorizer"
	return startNodeWith(t, cfg, authOptions)
}

// authOptions make bcrypt cheap: every login checks a hash, which at
// Cassandra's cost takes seconds under the race detector.
var authOptions = server.Options{BcryptCost: bcrypt.MinCost}

// Each driver logs in with its PlainTextAuthProvider (gocql:
// PasswordAuthenticator) as cassandra/cassandra, and is refused with a
// wrong password with Cassandra's BAD_CREDENTIALS message.
func TestPasswordAuthenticatorDrivers(t *testing.T) {
	node := newAuthNode(t)
	host, port := hostPort(node.Addr())

	t.Run("gocql", func(t *testing.T) {
		c := gocqlCluster(node.Addr())
		checkGocqlLogin(t, func(user, password string) (func() error, func(), error) {
			c.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
			if user == "" {
				c.Authenticator = nil
			}
			s, err := c.CreateSession()
			if err != nil {
				return nil, nil, err
			}
			return func() error { return s.Query(localQuery).Scan(new(string)) }, s.Close, nil
		})
	})

	// gocql v2 logs in over v5 segments: the framing starts after
	// AUTHENTICATE, as in Cassandra.
	t.Run("gocqlv2", func(t *testing.T) {
		c := gocql2.NewCluster(host)
		c.Port = port
		c.Timeout = 5 * time.Second
		c.ConnectTimeout = 5 * time.Second
		c.Logger = &logSink{}
		checkGocqlLogin(t, func(user, password string) (func() error, func(), error) {
			c.Authenticator = gocql2.PasswordAuthenticator{Username: user, Password: password}
			if user == "" {
				c.Authenticator = nil
			}
			s, err := c.CreateSession()
			if err != nil {
				return nil, nil, err
			}
			return func() error { return s.Query(localQuery).Scan(new(string)) }, s.Close, nil
		})
	})

	t.Run("python", func(t *testing.T) {
		needPythonDriver(t)
		runDriverScript(t, "drivers/python", debianPython, "auth.py", host, strconv.Itoa(port))
	})

	t.Run("nodejs", func(t *testing.T) {
		needNodejsDriver(t)
		runDriverScript(t, nodejsDriverDir, "node", "auth.js", host, strconv.Itoa(port))
	})

	// Every refusal is counted; the drivers' few failed attempts stay
	// under the per-address limit (10 a minute) that would refuse the
	// good logins too.
	failed := metricValue(t, node.Registry, "cqld_native_requests_total", map[string]string{"opcode": "AUTH_RESPONSE", "outcome": "bad_credentials"})
	t.Logf("%v failed logins", failed)
	if failed < 2 {
		t.Errorf("%v failed logins counted", failed)
	}
}

const localQuery = `SELECT release_version FROM system.local WHERE key='local'`

// checkGocqlLogin checks a gocql major's login: connect opens a session
// as user (none when "") and returns a read and the session's close.
func checkGocqlLogin(t *testing.T, connect func(user, password string) (read func() error, close func(), err error)) {
	t.Helper()
	read, closeSession, err := connect("cassandra", "cassandra")
	if err != nil {
		t.Fatalf("connect as cassandra: %v", err)
	}
	if err := read(); err != nil {
		t.Fatalf("query after login: %v", err)
	}
	closeSession()
	if _, _, err := connect("cassandra", "wrong"); err == nil || !strings.Contains(err.Error(), "Provided username cassandra and/or password are incorrect") {
		t.Fatalf("wrong password: %v", err)
	}
	if _, _, err := connect("", ""); err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Fatalf("no credentials: %v", err)
	}
}

func authResponseBody(token string) []byte {
	return append(binaryLen(len(token)), token...)
}

func binaryLen(n int) []byte { return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)} }

// The bad input of issue 15 on the wire: each gets Cassandra's error on its
// stream, the connection stays usable, and a good login afterwards works.
func TestPasswordAuthenticatorBadInput(t *testing.T) {
	node := newAuthNode(t)
	w := dial(t, node.Addr())
	expectErr := func(stream int16, code primitive.ErrorCode, want string) {
		t.Helper()
		r := w.mustRead()
		got, msg := r.errorCode()
		if r.stream != stream || got != code || msg != want {
			t.Fatalf("got %s, want stream %d code 0x%04x %q", fmtReply(r), stream, uint32(code), want)
		}
	}
	w.send(4, 1, primitive.OpCodeAuthResponse, authResponseBody("\x00cassandra\x00cassandra"))
	expectErr(1, primitive.ErrorCodeProtocolError, "Unexpected message AUTH_RESPONSE, expecting STARTUP or OPTIONS")
	w.send(4, 2, primitive.OpCodeStartup, startupBody())
	if r := w.mustRead(); r.op != primitive.OpCodeAuthenticate {
		t.Fatalf("STARTUP answered %s", fmtReply(r))
	}
	w.send(4, 3, primitive.OpCodeQuery, queryBody("SELECT * FROM system.local"))
	expectErr(3, primitive.ErrorCodeProtocolError, "Unexpected message QUERY, expecting SASL_RESPONSE")

	for i, tc := range []struct {
		token, msg string
	}{
		{"\x00cassandra\x00wrong", "Provided username cassandra and/or password are incorrect"},
		{"\x00nobody\x00cassandra", "Provided username nobody and/or password are incorrect"},
		{"\x00cassandra\x00", "Password must not be null"},
		{"cassandra:cassandra", "Password must not be null"},
		{"\x00\x00cassandra", "Authentication ID must not be null"},
	} {
		stream := int16(10 + i)
		w.send(4, stream, primitive.OpCodeAuthResponse, authResponseBody(tc.token))
		expectErr(stream, primitive.ErrorCodeAuthenticationError, tc.msg)
	}
	// A 1 MB username: refused like any unknown user, the echo of it cut
	// to what an ERROR can carry.
	w.send(4, 20, primitive.OpCodeAuthResponse, authResponseBody("\x00"+strings.Repeat("u", 1<<20)+"\x00x"))
	r := w.mustRead()
	if code, msg := r.errorCode(); code != primitive.ErrorCodeAuthenticationError || !strings.HasPrefix(msg, "Provided username uuu") || !strings.HasSuffix(msg, "(truncated)") {
		t.Fatalf("1 MB username: code 0x%04x, %d-byte message %.60q", uint32(code), len(msg), msg)
	}

	w.send(4, 21, primitive.OpCodeAuthResponse, authResponseBody("\x00cassandra\x00cassandra"))
	if r := w.mustRead(); r.op != primitive.OpCodeAuthSuccess || r.stream != 21 {
		t.Fatalf("good login answered %s", fmtReply(r))
	}
	w.send(4, 22, primitive.OpCodeQuery, queryBody("SELECT release_version FROM system.local"))
	if r := w.mustRead(); r.op != primitive.OpCodeResult || r.stream != 22 {
		t.Fatalf("QUERY after login answered %s", fmtReply(r))
	}
}

// dialFrom is dial from a local address of the test's own loopback range,
// so that a node tells its connections from the tests' others.
func dialFrom(t *testing.T, local, addr string) *wire {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wire{t: t, c: c, br: bufio.NewReader(c)}
}

// Failed logins are limited per client address: past ten in a minute from
// one address, even the right password is refused from it, with
// BAD_CREDENTIALS saying so, on its connections old and new; another
// address logs in as usual. Neither the passwords tried nor the right one
// is in the node's log or in an answer.
func TestFailedLoginsLimitedPerAddress(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	node, log := startLogged(t, cfg)
	t.Cleanup(func() { stopNode(node) })
	const guessed = "Guess3d-Secret"

	login := func(w *wire, stream int16, password string) reply {
		w.send(4, stream, primitive.OpCodeAuthResponse, authResponseBody("\x00cassandra\x00"+password))
		return w.mustRead()
	}
	started := func(w *wire) *wire {
		w.send(4, 0, primitive.OpCodeStartup, startupBody())
		if r := w.mustRead(); r.op != primitive.OpCodeAuthenticate {
			t.Fatalf("STARTUP answered %s", fmtReply(r))
		}
		return w
	}
	attacker := started(dialFrom(t, "127.0.23.2", node.Addr()))
	var answers []string
	for i := range 10 {
		r := login(attacker, int16(1+i), fmt.Sprint(guessed, i))
		code, msg := r.errorCode()
		if code != primitive.ErrorCodeAuthenticationError || msg != "Provided username cassandra and/or password are incorrect" {
			t.Fatalf("wrong password %d answered %s", i, fmtReply(r))
		}
		answers = append(answers, msg)
	}
	for _, w := range []*wire{attacker, started(dialFrom(t, "127.0.23.2", node.Addr()))} {
		r := login(w, 20, "cassandra")
		code, msg := r.errorCode()
		if code != primitive.ErrorCodeAuthenticationError || !strings.HasPrefix(msg, "Too many failed login attempts from 127.0.23.2; try again in ") {
			t.Fatalf("the right password past the limit answered %s", fmtReply(r))
		}
		answers = append(answers, msg)
	}
	other := started(dialFrom(t, "127.0.23.3", node.Addr()))
	if r := login(other, 1, "cassandra"); r.op != primitive.OpCodeAuthSuccess {
		t.Fatalf("another address's login answered %s", fmtReply(r))
	}
	for _, secret := range []string{guessed, "$2a$"} {
		if strings.Contains(log.String()+strings.Join(answers, "\n"), secret) {
			t.Fatalf("%q is in the log or an answer", secret)
		}
	}
}

// A fresh node under PasswordAuthenticator has the default superuser
// cassandra/cassandra and warns at start-up while its password is
// unchanged; once changed, a restart does not warn.
func TestDefaultSuperuserWarning(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Authenticator = "PasswordAuthenticator"
	const warning = "the default superuser cassandra still has the password cassandra"
	node, log := startLogged(t, cfg)
	admin := loginAs(t, node.Addr(), "cassandra", "cassandra")
	mustExec(t, admin, "ALTER ROLE cassandra WITH PASSWORD = 'n3w-Secret'")
	admin.Close()
	if err := stopNode(node); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), warning) {
		t.Fatalf("a fresh node did not warn of the default password:\n%s", log)
	}
	node, log = startLogged(t, cfg)
	t.Cleanup(func() { stopNode(node) })
	loginAs(t, node.Addr(), "cassandra", "n3w-Secret")
	if strings.Contains(log.String(), warning) || strings.Contains(log.String(), "n3w-Secret") {
		t.Fatalf("after the password changed the node warned, or logged it:\n%s", log)
	}
}
