// Package trust is a device trust domain: a certificate authority (ECDSA
// P-256) that issues each device its identity certificate, as BIG-IP's
// `cm trust-domain Root` does with dtca.crt and dtdi.crt. The etcd cluster
// behind a device group trusts only certificates from the domain's CA, so a
// device that was never added to the trust domain cannot reach the group's
// configuration at all.
//
// Adding a device follows the key-stays-home rule: the new device makes its
// own key and a certificate request (NewKey, Request), the device that holds
// the CA signs the request (Domain.Sign), and only the certificate and the
// CA certificate travel back. Domain.Issue does both halves at once for the
// device that holds the CA itself.
//
// How ltmd keeps them: the device's key, certificate and the domain's CA
// certificate are files in the daemon's state directory (device.key mode
// 0600, device.crt, ca.crt, see Identity.WriteFiles); the CA key (ca.key,
// mode 0600) lives only on the devices that may add others. They are never
// part of the synced configuration, as on BIG-IP, where certificates and
// keys are not synced.
package trust

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Validity is how long issued certificates last; device identities are
// long-lived, as BIG-IP's are, and renewed by adding the device again.
const Validity = 10 * 365 * 24 * time.Hour

// Domain is a trust domain with its CA. Only a Domain loaded with its CA key
// can add devices.
type Domain struct {
	Name   string
	cert   *x509.Certificate
	certPE []byte
	key    *ecdsa.PrivateKey
}

// NewDomain creates a trust domain with a fresh CA.
func NewDomain(name string) (*Domain, error) {
	if name == "" {
		return nil, errors.New("trust domain name is empty")
	}
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "openltm trust domain " + name, Organization: []string{"openltm"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Domain{Name: name, cert: cert, certPE: pemBlock("CERTIFICATE", der), key: key}, nil
}

// LoadDomain reads a domain saved with CertPEM and KeyPEM.
func LoadDomain(name string, certPEM, keyPEM []byte) (*Domain, error) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("trust domain %s CA certificate: %w", name, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("trust domain %s: certificate %q is not a CA", name, cert.Subject.CommonName)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("trust domain %s CA key: %w", name, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("trust domain %s: the CA key does not match the CA certificate", name)
	}
	return &Domain{Name: name, cert: cert, certPE: certPEM, key: key}, nil
}

// CertPEM is the CA certificate every member of the domain and the etcd
// cluster trust.
func (d *Domain) CertPEM() []byte { return d.certPE }

// Cert is the CA certificate, parsed.
func (d *Domain) Cert() *x509.Certificate { return d.cert }

// EncodeKey gives a key's PEM form, to store it with the device's files.
func EncodeKey(k *ecdsa.PrivateKey) ([]byte, error) { return keyPEM(k) }

// KeyPEM is the CA key; keep it on the devices that may add others.
func (d *Domain) KeyPEM() ([]byte, error) { return keyPEM(d.key) }

// Sign issues a device certificate for a request made with Request. The
// device name is the request's common name; hosts (IP addresses or DNS
// names) become the certificate's subject alternative names so the same
// certificate can serve etcd's peer or client port on that device.
func (d *Domain) Sign(csrPEM []byte) ([]byte, error) {
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("certificate request: not a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("certificate request of %q: %w", csr.Subject.CommonName, err)
	}
	if err := ValidDeviceName(csr.Subject.CommonName); err != nil {
		return nil, err
	}
	if _, ok := csr.PublicKey.(*ecdsa.PublicKey); !ok {
		return nil, fmt.Errorf("certificate request of %s: key is %T, want ECDSA", csr.Subject.CommonName, csr.PublicKey)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName:         csr.Subject.CommonName,
			Organization:       []string{"openltm"},
			OrganizationalUnit: []string{"trust domain " + d.Name},
		},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(Validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		IPAddresses: csr.IPAddresses,
		DNSNames:    csr.DNSNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, d.cert, csr.PublicKey, d.key)
	if err != nil {
		return nil, err
	}
	return pemBlock("CERTIFICATE", der), nil
}

// Issue makes a key and a certificate for a device in one step, for the
// device that holds the CA (its own identity) and for etcd's server
// certificate.
func (d *Domain) Issue(device string, hosts ...string) (*Identity, error) {
	key, err := NewKey()
	if err != nil {
		return nil, err
	}
	csr, err := Request(device, key, hosts...)
	if err != nil {
		return nil, err
	}
	cert, err := d.Sign(csr)
	if err != nil {
		return nil, err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, err
	}
	return LoadIdentity(cert, kp, d.certPE)
}

// ValidDeviceName accepts the names BIG-IP accepts for cm device objects:
// letters, digits, '.', '-' and '_' (a host name, typically).
func ValidDeviceName(name string) error {
	if name == "" {
		return errors.New("device name is empty")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("device name %q: %q is not allowed (use letters, digits, '.', '-' or '_')", name, r)
		}
	}
	return nil
}

// NewKey makes a device or CA key (ECDSA P-256).
func NewKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// Request makes the certificate request a device sends to the domain when
// it is added; its key never leaves the device.
func Request(device string, key *ecdsa.PrivateKey, hosts ...string) ([]byte, error) {
	if err := ValidDeviceName(device); err != nil {
		return nil, err
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: device}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, err
	}
	return pemBlock("CERTIFICATE REQUEST", der), nil
}

// Identity is one device's certificate, key and the CA it chains to.
type Identity struct {
	Device string
	Cert   *x509.Certificate
	Key    *ecdsa.PrivateKey
	CA     *x509.Certificate

	certPEM, keyPEM, caPEM []byte
}

// LoadIdentity parses a device's PEM files and checks that the certificate
// chains to the CA and matches the key.
func LoadIdentity(certPEM, keyPEM, caPEM []byte) (*Identity, error) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("device certificate: %w", err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("device key: %w", err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("device %s: the key does not match the certificate", cert.Subject.CommonName)
	}
	ca, err := parseCert(caPEM)
	if err != nil {
		return nil, fmt.Errorf("trust domain CA certificate: %w", err)
	}
	id := &Identity{Device: cert.Subject.CommonName, Cert: cert, Key: key, CA: ca,
		certPEM: certPEM, keyPEM: keyPEM, caPEM: caPEM}
	if err := id.Verify(caPEM); err != nil {
		return nil, err
	}
	return id, nil
}

// Verify reports whether the identity's certificate was issued by the trust
// domain whose CA certificate is caPEM and is valid now: the check a device
// makes before it tries to join a group of that domain.
func (id *Identity) Verify(caPEM []byte) error {
	ca, err := parseCert(caPEM)
	if err != nil {
		return fmt.Errorf("trust domain CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err = id.Cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return fmt.Errorf("Device %s is not in the trust domain of %q: %v", id.Device, ca.Subject.CommonName, err)
	}
	return nil
}

// Fingerprint is the SHA-256 of the device certificate, as
// `show cm sha1-fingerprint`-style listings print it: upper-case hex pairs.
func (id *Identity) Fingerprint() string { return Fingerprint(id.Cert.Raw) }

// Fingerprint formats the SHA-256 of a DER certificate.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// CertPEM, KeyPEM and CAPEM are the identity's files.
func (id *Identity) CertPEM() []byte { return id.certPEM }

// KeyPEM is the device's private key.
func (id *Identity) KeyPEM() []byte { return id.keyPEM }

// CAPEM is the trust domain's CA certificate.
func (id *Identity) CAPEM() []byte { return id.caPEM }

// ClientTLS is the configuration of the device's etcd client: it presents
// the device certificate and trusts only the domain's CA.
func (id *Identity) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(id.CA)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
		Certificates: []tls.Certificate{{
			Certificate: [][]byte{id.Cert.Raw},
			PrivateKey:  id.Key,
			Leaf:        id.Cert,
		}},
	}
}

// Files names the identity's files on disk.
type Files struct {
	CertFile, KeyFile, CAFile string
}

// WriteFiles stores the identity in dir as device.crt, device.key (0600) and
// ca.crt, the layout ltmd keeps in its state directory.
func (id *Identity) WriteFiles(dir string) (Files, error) {
	f := Files{
		CertFile: filepath.Join(dir, "device.crt"),
		KeyFile:  filepath.Join(dir, "device.key"),
		CAFile:   filepath.Join(dir, "ca.crt"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.KeyFile, id.keyPEM, 0o600); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.CertFile, id.certPEM, 0o644); err != nil {
		return f, err
	}
	return f, os.WriteFile(f.CAFile, id.caPEM, 0o644)
}

// ReadFiles loads an identity written by WriteFiles.
func ReadFiles(f Files) (*Identity, error) {
	c, err := os.ReadFile(f.CertFile)
	if err != nil {
		return nil, err
	}
	k, err := os.ReadFile(f.KeyFile)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(f.CAFile)
	if err != nil {
		return nil, err
	}
	return LoadIdentity(c, k, ca)
}

func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func parseCert(p []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(bytes.TrimSpace(p))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM CERTIFICATE")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(p []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(bytes.TrimSpace(p))
	if block == nil {
		return nil, errors.New("not a PEM key")
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		ek, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("key is %T, want ECDSA", k)
		}
		return ek, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
}
