package tlsconf

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
)

// Options are one side's encryption options, the keys cassandra.yaml's
// client_encryption_options and server_encryption_options share.
type Options struct {
	// Keystore is a PEM file with the private key and the certificate
	// chain; KeystorePassword decrypts an encrypted key.
	Keystore         string
	KeystorePassword string
	// OutboundKeystore and OutboundKeystorePassword, when set, are the
	// key and chain presented when this node dials (internode); Keystore
	// otherwise.
	OutboundKeystore         string
	OutboundKeystorePassword string
	// Truststore is a PEM bundle of the CAs whose certificates are
	// trusted: clients' under RequireClientAuth, and peers' when dialing.
	Truststore string
	// RequireClientAuth makes the server side ask for and verify a client
	// certificate (mutual TLS).
	RequireClientAuth bool
	// RequireEndpointVerification makes the dialing side check that the
	// peer's certificate names the address dialed.
	RequireEndpointVerification bool
	// Protocol and AcceptedProtocols are Java's protocol names: TLS,
	// TLSv1.2, TLSv1.3.
	Protocol          string
	AcceptedProtocols []string
	// CipherSuites are Java (IANA) cipher suite names; empty means Go's
	// defaults.
	CipherSuites []string
}

var protocolVersions = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// versions returns the minimum and maximum TLS version the protocol
// options accept, as Cassandra reads them: accepted_protocols if set (with
// protocol added when it names a version), else protocol alone unless it
// is the generic TLS.
func (o Options) versions() (lo, hi uint16, err error) {
	names := slices.Clone(o.AcceptedProtocols)
	p := strings.TrimSpace(o.Protocol)
	if p != "" && !strings.EqualFold(p, "TLS") && !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, p) }) {
		names = append(names, p)
	}
	if len(names) == 0 {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	var vs []uint16
	for _, n := range names {
		v, ok := protocolVersions[n]
		if !ok {
			for k, kv := range protocolVersions {
				if strings.EqualFold(k, n) {
					v, ok = kv, true
				}
			}
		}
		if !ok {
			return 0, 0, fmt.Errorf("protocol %q is not supported; use TLSv1.2 or TLSv1.3 (or TLS for both)", n)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[i-1]+1 {
			return 0, 0, fmt.Errorf("accepted protocols %s are not a contiguous range of versions, which Go cannot offer", strings.Join(names, ", "))
		}
	}
	return vs[0], vs[len(vs)-1], nil
}

// cipherSuites maps Java cipher suite names to Go's ids.
func (o Options) cipherSuites() ([]uint16, error) {
	if len(o.CipherSuites) == 0 {
		return nil, nil
	}
	secure := map[string]uint16{}
	for _, c := range tls.CipherSuites() {
		secure[c.Name] = c.ID
	}
	insecure := map[string]bool{}
	for _, c := range tls.InsecureCipherSuites() {
		insecure[c.Name] = true
	}
	var ids []uint16
	for _, name := range o.CipherSuites {
		n := strings.TrimSpace(name)
		if strings.HasPrefix(n, "SSL_") {
			n = "TLS_" + strings.TrimPrefix(n, "SSL_")
		}
		id, ok := secure[n]
		switch {
		case ok:
			ids = append(ids, id)
		case insecure[n]:
			return nil, fmt.Errorf("cipher suite %s is insecure and not offered; choose among %s", name, strings.Join(secureNames(), ", "))
		default:
			return nil, fmt.Errorf("unknown cipher suite %s; choose among %s", name, strings.Join(secureNames(), ", "))
		}
	}
	return ids, nil
}

func secureNames() []string {
	var out []string
	for _, c := range tls.CipherSuites() {
		out = append(out, c.Name)
	}
	return out
}

// Check validates the options that need no file: protocols and cipher
// suites. Config validation calls it so a typo stops the node at start-up.
func (o Options) Check() error {
	if _, _, err := o.versions(); err != nil {
		return err
	}
	_, err := o.cipherSuites()
	return err
}
