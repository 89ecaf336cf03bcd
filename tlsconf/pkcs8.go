package tlsconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 keys (RFC 5958's EncryptedPrivateKeyInfo) under PBES2
// (RFC 8018), which is what openssl pkcs8 -topk8 -v2 and Java write: a
// key derived by PBKDF2 with an HMAC, then AES or 3DES in CBC mode. Go's
// standard library reads the unencrypted form only.

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// maxPBKDF2Iterations bounds the work a damaged or hostile key file can
// ask for; real files use a few thousand to a few hundred thousand.
const maxPBKDF2Iterations = 10_000_000

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF pkix.AlgorithmIdentifier
	Enc pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

var errDecrypt = errors.New("cannot decrypt the private key: wrong keystore_password, or a damaged key")

// decryptPKCS8 returns the PKCS#8 DER inside an EncryptedPrivateKeyInfo.
// It never panics on bad input, and its errors never hold the password.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, errors.New("encrypted private key: not a PKCS#8 EncryptedPrivateKeyInfo")
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encrypted private key: scheme %v is not supported; re-encrypt it with PBES2 (openssl pkcs8 -topk8 -v2 aes256)", info.Algo.Algorithm)
	}
	var params pbes2Params
	if rest, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil || len(rest) != 0 {
		return nil, errors.New("encrypted private key: bad PBES2 parameters")
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("encrypted private key: key derivation %v is not supported; PBKDF2 is", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if rest, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil || len(rest) != 0 {
		return nil, errors.New("encrypted private key: bad PBKDF2 parameters")
	}
	if kdf.Iterations < 1 || kdf.Iterations > maxPBKDF2Iterations {
		return nil, fmt.Errorf("encrypted private key: %d PBKDF2 iterations is out of range 1 to %d", kdf.Iterations, maxPBKDF2Iterations)
	}
	prf, err := prfHash(kdf.PRF.Algorithm)
	if err != nil {
		return nil, err
	}
	newCipher, keyLen, err := encScheme(params.Enc.Algorithm)
	if err != nil {
		return nil, err
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, fmt.Errorf("encrypted private key: key length %d does not fit its cipher", kdf.KeyLength)
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(params.Enc.Parameters.FullBytes, &iv); err != nil || len(rest) != 0 {
		return nil, errors.New("encrypted private key: bad cipher IV")
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, errDecrypt
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, errDecrypt
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.Data) == 0 || len(info.Data)%bs != 0 {
		return nil, errors.New("encrypted private key: ciphertext or IV of the wrong length")
	}
	out := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, info.Data)
	pad := int(out[len(out)-1])
	if pad < 1 || pad > bs {
		return nil, errDecrypt
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errDecrypt
		}
	}
	return out[:len(out)-pad], nil
}

func prfHash(oid asn1.ObjectIdentifier) (func() hash.Hash, error) {
	switch {
	case len(oid) == 0, oid.Equal(oidHMACSHA1): // RFC 8018's default
		return sha1.New, nil
	case oid.Equal(oidHMACSHA224):
		return sha256.New224, nil
	case oid.Equal(oidHMACSHA256):
		return sha256.New, nil
	case oid.Equal(oidHMACSHA384):
		return sha512.New384, nil
	case oid.Equal(oidHMACSHA512):
		return sha512.New, nil
	}
	return nil, fmt.Errorf("encrypted private key: PBKDF2 PRF %v is not supported", oid)
}

func encScheme(oid asn1.ObjectIdentifier) (func([]byte) (cipher.Block, error), int, error) {
	switch {
	case oid.Equal(oidAES128CBC):
		return aes.NewCipher, 16, nil
	case oid.Equal(oidAES192CBC):
		return aes.NewCipher, 24, nil
	case oid.Equal(oidAES256CBC):
		return aes.NewCipher, 32, nil
	case oid.Equal(oidDESEDE3CBC):
		return des.NewTripleDESCipher, 24, nil
	}
	return nil, 0, fmt.Errorf("encrypted private key: cipher %v is not supported; AES-CBC and DES-EDE3-CBC are", oid)
}
