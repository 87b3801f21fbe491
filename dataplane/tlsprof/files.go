package tlsprof

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Cert is a `sys file ssl-cert`: one certificate or a bundle (a chain or a
// CA file), parsed once when the object is created.
type Cert struct {
	Name  string
	Path  string
	Certs []*x509.Certificate
}

// Key is a `sys file ssl-key`.
type Key struct {
	Name   string
	Path   string
	Signer crypto.Signer
}

// LoadCert reads a PEM certificate file for the ssl-cert object name.
func LoadCert(name, path string) (*Cert, error) {
	data, err := readFile("ssl-cert", name, path)
	if err != nil {
		return nil, err
	}
	c, err := ParseCert(name, data)
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// ParseCert reads PEM certificates (one or a bundle); anything else in the
// data is refused.
func ParseCert(name string, data []byte) (*Cert, error) {
	c := &Cert{Name: name}
	rest := data
	for n := 1; ; n++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" && b.Type != "TRUSTED CERTIFICATE" {
			return nil, fmt.Errorf("sys file ssl-cert %s: PEM block %d is %q, not a CERTIFICATE", name, n, b.Type)
		}
		x, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("sys file ssl-cert %s: certificate %d: %v", name, n, err)
		}
		c.Certs = append(c.Certs, x)
	}
	if len(c.Certs) == 0 {
		return nil, fmt.Errorf("sys file ssl-cert %s: no PEM certificate found (the file must hold -----BEGIN CERTIFICATE----- blocks)", name)
	}
	return c, nil
}

// LoadKey reads a PEM private key file; passphrase decrypts a legacy
// encrypted PEM key ("Proc-Type: 4,ENCRYPTED").
func LoadKey(name, path, passphrase string) (*Key, error) {
	data, err := readFile("ssl-key", name, path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(name, data, passphrase)
	if err != nil {
		return nil, err
	}
	k.Path = path
	return k, nil
}

// ParseKey reads one PEM private key (PKCS#1, PKCS#8 or SEC 1).
func ParseKey(name string, data []byte, passphrase string) (*Key, error) {
	var b *pem.Block
	rest := data
	for {
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("sys file ssl-key %s: no PEM private key found (the file must hold a -----BEGIN ... PRIVATE KEY----- block)", name)
		}
		if b.Type == "PRIVATE KEY" || b.Type == "RSA PRIVATE KEY" || b.Type == "EC PRIVATE KEY" || b.Type == "ENCRYPTED PRIVATE KEY" {
			break
		}
	}
	der := b.Bytes
	if b.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, fmt.Errorf("sys file ssl-key %s: encrypted PKCS#8 keys are not supported; decrypt the key or use a PEM-encrypted (Proc-Type) key", name)
	}
	//lint:ignore SA1019 BIG-IP keys with a passphrase are legacy PEM-encrypted keys; there is no replacement format to read them.
	if x509.IsEncryptedPEMBlock(b) {
		if passphrase == "" {
			return nil, fmt.Errorf("sys file ssl-key %s: the key is encrypted and no passphrase is given", name)
		}
		var err error
		//lint:ignore SA1019 see above.
		der, err = x509.DecryptPEMBlock(b, []byte(passphrase))
		if err != nil {
			return nil, fmt.Errorf("sys file ssl-key %s: wrong passphrase (%v)", name, err)
		}
	}
	var key any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(der)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(der)
	default:
		key, err = x509.ParsePKCS8PrivateKey(der)
	}
	if err != nil {
		return nil, fmt.Errorf("sys file ssl-key %s: %v", name, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("sys file ssl-key %s: unsupported key type %T", name, key)
	}
	return &Key{Name: name, Signer: signer}, nil
}

// ErrKeyMismatch is wrapped by Pair's error when a key is not the
// certificate's.
var ErrKeyMismatch = errors.New("key values mismatch")

// Pair joins a certificate, its key and an optional chain for a profile,
// refusing a key that does not belong to the certificate with the message
// tmsh gives.
func Pair(profile string, cert *Cert, key *Key, chain *Cert) (tls.Certificate, error) {
	if cert == nil || key == nil {
		return tls.Certificate{}, fmt.Errorf("profile %s: a cert-key-chain entry needs both cert and key", profile)
	}
	leaf := cert.Certs[0]
	if !samePublic(leaf.PublicKey, key.Signer.Public()) {
		path := key.Path
		if path == "" {
			path = key.Name
		}
		return tls.Certificate{}, fmt.Errorf("01070313:3: Error reading key PEM file %s for profile %s: error:0B080074:x509 certificate routines:X509_check_private_key:%w", path, profile, ErrKeyMismatch)
	}
	out := tls.Certificate{PrivateKey: key.Signer, Leaf: leaf}
	for _, c := range cert.Certs {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	if chain != nil {
		for _, c := range chain.Certs {
			out.Certificate = append(out.Certificate, c.Raw)
		}
	}
	return out, nil
}

func samePublic(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch a.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return a.(equaler).Equal(b)
	}
	return false
}

// Pool is a certificate pool of the bundle's certificates (ca-file).
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	for _, x := range c.Certs {
		p.AddCert(x)
	}
	return p
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readFile reads the file of a sys file object (ssl-cert, ssl-key,
// ssl-crl), saying which object it is for when it cannot.
func readFile(kind, name, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sys file %s %s: cannot read %s: %v", kind, name, path, unwrapPath(err))
	}
	return data, nil
}
