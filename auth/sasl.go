package auth

import (
	"bytes"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

// DecodePlain reads a SASL PLAIN token, [authzid] NUL authcid NUL passwd,
// as Cassandra's PasswordAuthenticator does: from the end, so the
// authorization identity is ignored. Its refusals are BAD_CREDENTIALS with
// Cassandra's messages.
func DecodePlain(token []byte) (user, password string, err error) {
	parts := bytes.Split(token, []byte{0})
	switch {
	case len(parts) > 3:
		return "", "", badCredentials("Credential format error: username or password is empty or contains NUL(\\0) character")
	case len(parts) < 2 || len(parts[len(parts)-1]) == 0:
		return "", "", badCredentials("Password must not be null")
	case len(parts[len(parts)-2]) == 0:
		return "", "", badCredentials("Authentication ID must not be null")
	}
	return string(parts[len(parts)-2]), string(parts[len(parts)-1]), nil
}

func badCredentials(msg string) error {
	return &cqlerr.Error{Code: primitive.ErrorCodeAuthenticationError, Msg: cqlerr.Truncate(msg)}
}
