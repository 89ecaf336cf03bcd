// Package testpki makes certificate authorities, certificates and keys for
// tests, with crypto/x509, written as the PEM files cassandra.yaml's
// encryption options point at: a keystore holding a private key and its
// certificate chain, and a truststore bundle of CA certificates. It is
// for tests only: keys are small ECDSA P-256 ones and nothing is kept
// secret.
package testpki
