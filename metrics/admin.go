package metrics

import (
	"net"
	"net/http"
	"net/netip"
)

// Authenticator checks a SASL PLAIN token (\0user\0password) from a
// client address, as the native protocol's PasswordAuthenticator does:
// auth.Authenticator, with its constant-time check and its limit on
// failed logins per address, satisfies it. Its error's message is what
// the client may be told.
type Authenticator interface {
	Authenticate(remote netip.Addr, token []byte) (role string, err error)
}

// RequireLogin wraps an admin handler that changes state. With a nil
// Authenticator (AllowAllAuthenticator) it is next itself; otherwise a
// request must carry HTTP basic credentials of a role that may log in, the
// same as a CQL client's, or it is answered 401 with the reason. Failed
// attempts count against the client address's limit of failed logins, CQL
// and HTTP alike.
func RequireLogin(a Authenticator, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remote, token, ok := Login(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="cqld", charset="UTF-8"`)
			http.Error(w, "authentication required: this endpoint changes state and the node runs PasswordAuthenticator", http.StatusUnauthorized)
			return
		}
		if _, err := a.Authenticate(remote, token); err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="cqld", charset="UTF-8"`)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Login is r's HTTP basic credentials as the SASL PLAIN token an
// Authenticator checks, and the client address they count against; ok is
// false when r carries none.
func Login(r *http.Request) (remote netip.Addr, token []byte, ok bool) {
	user, password, ok := r.BasicAuth()
	if !ok {
		return netip.Addr{}, nil, false
	}
	token = make([]byte, 0, 2+len(user)+len(password))
	token = append(append(append(append(token, 0), user...), 0), password...)
	return addrOf(r.RemoteAddr), token, true
}

// addrOf is the address of a request's remote host:port (a bare address
// too), the zero Addr when it is neither.
func addrOf(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}
