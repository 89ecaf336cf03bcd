package auth

import (
	"fmt"
	"net/netip"

	"golang.org/x/crypto/bcrypt"
)

// Authenticator is PasswordAuthenticator: it checks SASL PLAIN credentials
// against the roles' bcrypt hashes. Its methods are safe for concurrent
// use, and slow (bcrypt): call them on a worker, never an event loop.
type Authenticator struct {
	state   func() *State
	limiter *Limiter
	// dummy is a hash of the store's cost that no password matches
	// (bcrypt cannot produce it), checked for an unknown user so that it
	// takes as long as a known one.
	dummy []byte
}

// ClassName is the authenticator's name in AUTHENTICATE, which drivers
// check against their allow-lists.
const ClassName = "org.apache.cassandra.auth.PasswordAuthenticator"

// NewAuthenticator checks credentials against state() with hashes of the
// given bcrypt cost; limiter (nil for none) bounds failures per address.
func NewAuthenticator(state func() *State, cost int, limiter *Limiter) (*Authenticator, error) {
	dummy, err := bcrypt.GenerateFromPassword([]byte("\x00unknown role\x00"), cost)
	if err != nil {
		return nil, fmt.Errorf("auth: dummy hash: %w", err)
	}
	return &Authenticator{state: state, limiter: limiter, dummy: dummy}, nil
}

// ClassName is the name AUTHENTICATE carries.
func (a *Authenticator) ClassName() string { return ClassName }

// Authenticate logs in with a SASL PLAIN token from a client at remote,
// returning the role. Errors are BAD_CREDENTIALS with Cassandra's
// messages; none tells an unknown user from a wrong password, and neither
// check is faster than the other.
func (a *Authenticator) Authenticate(remote netip.Addr, token []byte) (role string, err error) {
	if retry, ok := a.limiter.Begin(remote); !ok {
		return "", badCredentials(fmt.Sprintf("Too many failed login attempts from %s; try again in %d s", remote, int(retry.Seconds()+0.999)))
	}
	user, password, err := DecodePlain(token)
	if err == nil {
		err = a.CheckPassword(user, password)
	}
	if err != nil {
		return "", err
	}
	a.limiter.Succeeded(remote)
	return user, nil
}

// CheckPassword checks a user's password and that the role may log in.
func (a *Authenticator) CheckPassword(user, password string) error {
	st := a.state()
	r, ok := st.Role(user)
	hash := r.SaltedHash
	if !ok || hash == nil {
		hash = a.dummy
	}
	// bcrypt's comparison is constant-time in the hash it computes.
	if bcrypt.CompareHashAndPassword(hash, bcryptInput(password)) != nil || !ok || r.SaltedHash == nil {
		return badCredentials(fmt.Sprintf("Provided username %s and/or password are incorrect", user))
	}
	if !r.Login {
		return badCredentials(fmt.Sprintf("%s is not permitted to log in", user))
	}
	return nil
}
