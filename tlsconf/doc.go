// Package tlsconf turns cassandra.yaml's encryption options
// (client_encryption_options, server_encryption_options) into crypto/tls
// configurations, as Cassandra 4.1's PEMBasedSslContextFactory reads
// them: the keystore is a PEM file holding a private key (PKCS#8, PKCS#1
// or SEC 1; an "ENCRYPTED PRIVATE KEY" is decrypted with
// keystore_password) and its certificate chain, the truststore a PEM
// bundle of CA certificates. A JKS or PKCS#12 keystore is refused with a
// message saying to convert it to PEM: Go reads neither.
//
// cipher_suites takes Java's names, which are the IANA names Go uses too
// (the SSL_ prefix of Java's oldest names is read as TLS_); a name Go does
// not know, or knows only as insecure, is refused. protocol and
// accepted_protocols (TLSv1.2, TLSv1.3; TLS meaning every version Go
// offers a server, 1.2 and 1.3) become the minimum and maximum version, so
// the versions accepted must be a contiguous range. Go's TLS 1.3 suites
// are not configurable: cipher_suites limits TLS 1.2 only.
//
// # Reloading
//
// A Store holds the current key material. Every handshake takes it anew
// (tls.Config.GetConfigForClient on the server side, GetClientCertificate
// and VerifyConnection on the client side), so Reload changes what new
// connections get and leaves those open alone. Reload looks at the files'
// size and modification time and reads them again only when either
// changed; new files that do not load (a key that does not match its
// certificate, a truncated file) are logged and the old material kept,
// and they are not read again until they change once more. Watch polls on
// an injected clock's ticker, so tests drive it without sleeping.
//
// Nothing secret is ever logged or put in an error: errors name files and
// say what is wrong with them, never a password or key bytes.
package tlsconf
