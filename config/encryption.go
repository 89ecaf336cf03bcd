package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cqld/cqld/tlsconf"
)

// PEMFactory is the only ssl_context_factory cqld has: Go reads PEM, not
// Java keystores.
const PEMFactory = "org.apache.cassandra.security.PEMBasedSslContextFactory"

// EncryptionOptions are the keys client_encryption_options and
// server_encryption_options share, as Cassandra 4.1 spells them.
type EncryptionOptions struct {
	// Enabled turns TLS on for clients (client_encryption_options only:
	// between nodes internode_encryption decides).
	Enabled bool `yaml:"enabled,omitempty"`
	// Optional accepts TLS and plaintext on one port. Unset, it is true
	// when Enabled is false and Keystore names a file that exists, as in
	// Cassandra.
	Optional *bool `yaml:"optional,omitempty"`
	// SSLContextFactory is ssl_context_factory's class_name.
	SSLContextFactory        string   `yaml:"-"`
	Keystore                 string   `yaml:"keystore,omitempty"`
	KeystorePassword         string   `yaml:"keystore_password,omitempty"`
	OutboundKeystore         string   `yaml:"outbound_keystore,omitempty"`
	OutboundKeystorePassword string   `yaml:"outbound_keystore_password,omitempty"`
	Truststore               string   `yaml:"truststore,omitempty"`
	TruststorePassword       string   `yaml:"truststore_password,omitempty"`
	CipherSuites             []string `yaml:"cipher_suites,omitempty"`
	Protocol                 string   `yaml:"protocol,omitempty"`
	AcceptedProtocols        []string `yaml:"accepted_protocols,omitempty"`
	Algorithm                string   `yaml:"algorithm,omitempty"`
	StoreType                string   `yaml:"store_type,omitempty"`
	RequireClientAuth        bool     `yaml:"require_client_auth,omitempty"`
	// RequireEndpointVerification makes a node check that a peer's
	// certificate names the address it dialed (internode).
	RequireEndpointVerification bool `yaml:"require_endpoint_verification,omitempty"`
	// InternodeEncryption is none, all, dc or rack
	// (server_encryption_options only).
	InternodeEncryption string `yaml:"internode_encryption,omitempty"`
}

// ClientEncryptionOptions is client_encryption_options.
type ClientEncryptionOptions struct{ EncryptionOptions }

// ServerEncryptionOptions is server_encryption_options.
type ServerEncryptionOptions struct{ EncryptionOptions }

// encryptionKeys are the keys each side takes.
var (
	sharedEncryptionKeys = []string{"optional", "ssl_context_factory", "keystore", "keystore_password",
		"truststore", "truststore_password", "cipher_suites", "protocol", "accepted_protocols", "algorithm",
		"store_type", "require_client_auth", "require_endpoint_verification"}
	clientEncryptionKeys = append([]string{"enabled"}, sharedEncryptionKeys...)
	serverEncryptionKeys = append([]string{"internode_encryption", "outbound_keystore", "outbound_keystore_password"}, sharedEncryptionKeys...)
)

// UnmarshalYAML reads client_encryption_options.
func (o *ClientEncryptionOptions) UnmarshalYAML(n *yaml.Node) error {
	return o.read(n, clientEncryptionKeys)
}

// UnmarshalYAML reads server_encryption_options.
func (o *ServerEncryptionOptions) UnmarshalYAML(n *yaml.Node) error {
	return o.read(n, serverEncryptionKeys)
}

// MarshalYAML writes the options as cassandra.yaml has them.
func (o EncryptionOptions) MarshalYAML() (any, error) {
	type plain EncryptionOptions // without this method
	type withFactory struct {
		plain             `yaml:",inline"`
		SSLContextFactory map[string]string `yaml:"ssl_context_factory,omitempty"`
	}
	w := withFactory{plain: plain(o)}
	if o.SSLContextFactory != "" {
		w.SSLContextFactory = map[string]string{"class_name": o.SSLContextFactory}
	}
	return w, nil
}

// read is as strict as the top level: unknown or repeated keys are errors,
// and so is a key of the other side.
func (o *EncryptionOptions) read(n *yaml.Node, allowed []string) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return errors.New("expected a mapping of encryption options, e.g. enabled: true, keystore: conf/keystore.pem")
	}
	var out EncryptionOptions
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], deref(n.Content[i+1])
		if seen[kn.Value] {
			return fmt.Errorf("%s (line %d): set twice", kn.Value, kn.Line)
		}
		seen[kn.Value] = true
		if !slices.Contains(allowed, kn.Value) {
			msg := "unknown key"
			switch kn.Value {
			case "enabled":
				msg = "has no effect between nodes; use internode_encryption"
			case "internode_encryption", "outbound_keystore", "outbound_keystore_password":
				msg = "is a key of server_encryption_options only"
			}
			return fmt.Errorf("%s (line %d): %s", kn.Value, kn.Line, msg)
		}
		if vn.Kind == yaml.ScalarNode && vn.ShortTag() == "!!null" {
			continue
		}
		if err := out.set(kn.Value, vn); err != nil {
			return fmt.Errorf("%s (line %d): %w", kn.Value, kn.Line, err)
		}
	}
	*o = out
	return nil
}

func (o *EncryptionOptions) set(key string, n *yaml.Node) error {
	str := func(p *string) error {
		s, _, err := scalarText(n)
		*p = s
		return err
	}
	boolean := func(p *bool) error {
		s, _, err := scalarText(n)
		if err != nil {
			return err
		}
		switch strings.ToLower(s) {
		case "true":
			*p = true
		case "false":
			*p = false
		default:
			return fmt.Errorf("%q is not true or false", s)
		}
		return nil
	}
	list := func(p *[]string) error {
		v, err := parseStrings(n)
		*p = v
		return err
	}
	switch key {
	case "enabled":
		return boolean(&o.Enabled)
	case "optional":
		var b bool
		if err := boolean(&b); err != nil {
			return err
		}
		o.Optional = &b
	case "ssl_context_factory":
		return o.setFactory(n)
	case "keystore":
		return str(&o.Keystore)
	case "keystore_password":
		return str(&o.KeystorePassword)
	case "outbound_keystore":
		return str(&o.OutboundKeystore)
	case "outbound_keystore_password":
		return str(&o.OutboundKeystorePassword)
	case "truststore":
		return str(&o.Truststore)
	case "truststore_password":
		return str(&o.TruststorePassword)
	case "cipher_suites":
		return list(&o.CipherSuites)
	case "protocol":
		return str(&o.Protocol)
	case "accepted_protocols":
		return list(&o.AcceptedProtocols)
	case "algorithm":
		return str(&o.Algorithm)
	case "store_type":
		return str(&o.StoreType)
	case "require_client_auth":
		return boolean(&o.RequireClientAuth)
	case "require_endpoint_verification":
		return boolean(&o.RequireEndpointVerification)
	case "internode_encryption":
		return str(&o.InternodeEncryption)
	}
	return nil
}

// setFactory reads ssl_context_factory: {class_name: ..., parameters: ...}.
func (o *EncryptionOptions) setFactory(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("expected a mapping, e.g. class_name: " + PEMFactory)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], deref(n.Content[i+1])
		switch kn.Value {
		case "class_name":
			s, _, err := scalarText(vn)
			if err != nil {
				return fmt.Errorf("class_name: %w", err)
			}
			o.SSLContextFactory = s
		case "parameters":
			if vn.Kind == yaml.ScalarNode && vn.ShortTag() == "!!null" {
				continue
			}
			return errors.New("parameters (PEM inline as private_key and trusted_certificates) are not supported; " +
				"put the PEM in files named by keystore and truststore, which cqld reloads when they change")
		default:
			return fmt.Errorf("%s: unknown key; want class_name", kn.Value)
		}
	}
	return nil
}

// IsOptional is whether the listener takes plaintext and TLS alike:
// optional as set, or, unset, when TLS is not enabled but a keystore file
// exists (Cassandra's rule, so a node can move to TLS without a window in
// which it refuses either kind of client).
func (o EncryptionOptions) IsOptional(enabled bool) bool {
	if o.Optional != nil {
		return *o.Optional
	}
	if enabled || o.Keystore == "" {
		return false
	}
	_, err := os.Stat(o.Keystore)
	return err == nil
}

// ClientTLS reports whether clients may speak TLS, and whether they may
// still speak plaintext on the same port.
func (o ClientEncryptionOptions) ClientTLS() (tls, optional bool) {
	optional = o.IsOptional(o.Enabled)
	return o.Enabled || optional, optional
}

// InternodeTLS reports whether nodes speak TLS to some peers, and whether
// a node accepts plaintext peers too: under dc and rack only peers in
// other data centers or racks are encrypted, so both kinds arrive.
func (o ServerEncryptionOptions) InternodeTLS() (tls, optional bool) {
	on := o.InternodeEncryption != "" && o.InternodeEncryption != "none"
	optional = o.IsOptional(on) || o.InternodeEncryption == "dc" || o.InternodeEncryption == "rack"
	return on || optional, optional
}

// TLSOptions are the options for tlsconf.
func (o EncryptionOptions) TLSOptions() tlsconf.Options {
	return tlsconf.Options{
		Keystore:                    o.Keystore,
		KeystorePassword:            o.KeystorePassword,
		OutboundKeystore:            o.OutboundKeystore,
		OutboundKeystorePassword:    o.OutboundKeystorePassword,
		Truststore:                  o.Truststore,
		RequireClientAuth:           o.RequireClientAuth,
		RequireEndpointVerification: o.RequireEndpointVerification,
		Protocol:                    o.Protocol,
		AcceptedProtocols:           o.AcceptedProtocols,
		CipherSuites:                o.CipherSuites,
	}
}

// problems checks one side's options; on is whether that side uses TLS.
func (o *EncryptionOptions) problems(key string, on bool, bad func(key, format string, args ...any)) {
	if f := o.SSLContextFactory; f != "" && f != PEMFactory && f != "PEMBasedSslContextFactory" {
		bad(key, "ssl_context_factory %s is not supported: cqld reads PEM files only; use %s", f, PEMFactory)
	} else if f != "" {
		o.SSLContextFactory = PEMFactory
	}
	if t := strings.ToUpper(o.StoreType); t != "" && t != "PEM" {
		bad(key, "store_type %s is not supported: cqld reads PEM keystores only (convert a JKS or PKCS12 keystore "+
			"to PEM, e.g. keytool -importkeystore -deststoretype PKCS12, then openssl pkcs12 -nodes)", o.StoreType)
	}
	if err := o.TLSOptions().Check(); err != nil {
		bad(key, "%v", err)
	}
	if !on {
		return
	}
	if o.Keystore == "" {
		bad(key, "keystore must name a PEM file with the private key and its certificate chain")
	}
	if o.RequireClientAuth && o.Truststore == "" {
		bad(key, "require_client_auth needs a truststore: a PEM file of the CAs that sign client certificates")
	}
}
