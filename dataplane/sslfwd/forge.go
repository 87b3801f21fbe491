// Package sslfwd is BIG-IP's SSL forward proxy: a client-ssl and a
// server-ssl profile with ssl-forward-proxy enabled make a virtual
// terminate TLS for origins it does not own. The client's hello names
// the origin (SNI); the virtual connects to it, checks its certificate as
// the server-ssl profile says, and answers the client with a certificate
// of the same subject and names issued by the client-ssl profile's
// proxy-ca-cert, so that clients trusting that CA see the origin's names
// and the virtual sees the plaintext. Bypass lists let chosen clients,
// destinations or names through untouched.
package sslfwd

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"
)

// Extension names of client-ssl's cert-extension-includes: which of the
// origin certificate's extensions the forged certificate carries.
const (
	ExtBasicConstraints  = "basic-constraints"
	ExtSubjectAltName    = "subject-alternative-name"
	ExtKeyUsage          = "key-usage"
	ExtExtendedKeyUsage  = "extended-key-usage"
	ExtAuthorityKeyID    = "authority-key-identifier"
	ExtSubjectKeyID      = "subject-key-identifier"
	ExtCertificatePolicy = "certificate-policies"
	ExtCRLDistribution   = "crl-distribution-points"
	ExtAuthorityInfo     = "authority-information-access"
)

// KnownExtensions are the words cert-extension-includes takes.
var KnownExtensions = []string{ExtAuthorityInfo, ExtAuthorityKeyID, ExtBasicConstraints, ExtCertificatePolicy,
	ExtCRLDistribution, ExtExtendedKeyUsage, ExtKeyUsage, ExtSubjectAltName, ExtSubjectKeyID}

// DefaultExtensions is BIG-IP's cert-extension-includes default.
var DefaultExtensions = []string{ExtBasicConstraints, ExtSubjectAltName}

// Config is a forward proxy's settings, read from its two profiles.
type Config struct {
	// Name names the client-ssl profile in errors.
	Name string
	// CA (proxy-ca-cert, its first certificate issues) and CAKey
	// (proxy-ca-key) sign the forged certificates; CAChain are the
	// certificates sent after the forged one (the CA file's, in order).
	CA      *x509.Certificate
	CAChain []*x509.Certificate
	CAKey   crypto.Signer
	// Lifespan is cert-lifespan: how long a forged certificate is valid
	// from its making (capped by the CA's own end); 0: 30 days.
	Lifespan time.Duration
	// Extensions is cert-extension-includes (nil: DefaultExtensions).
	Extensions []string
	// Client is the client-ssl profile's configuration (versions,
	// ciphers, client certificates); a forged certificate replaces its
	// own.
	Client *tls.Config
	// Bypass decides which hellos pass through untouched
	// (ssl-forward-proxy-bypass); nil: every hello is intercepted.
	Bypass *Bypass
	// BypassOnAlert is server-ssl's bypass-on-handshake-alert: an origin
	// that ends the handshake with an alert gets the client's own hello
	// instead, and the connection passes through.
	BypassOnAlert bool
}

// maxForged bounds the forged certificates kept per proxy; past it, the
// cache starts again [M: BIG-IP's cert cache size is a db variable].
const maxForged = 4096

// Proxy forges certificates for one virtual's forward proxy and keeps
// them, per origin certificate, while they are valid.
type Proxy struct {
	cfg  Config
	exts uint16 // bit i: KnownExtensions[i]

	keyOnce sync.Once
	key     crypto.Signer // the forged certificates' key, one per CA [M]
	keyErr  error

	mu     sync.Mutex
	forged map[[32]byte]*forgedCert
}

// forgedCert is a forged certificate and the client configuration that
// offers it.
type forgedCert struct {
	cfg      *tls.Config
	notAfter time.Time
}

// New checks c and makes its proxy: the CA must be a CA whose key is
// CAKey.
func New(c Config) (*Proxy, error) {
	what := "profile client-ssl " + c.Name
	if c.CA == nil || c.CAKey == nil {
		return nil, fmt.Errorf("%s: ssl-forward-proxy enabled needs proxy-ca-cert and proxy-ca-key", what)
	}
	if !samePublic(c.CA.PublicKey, c.CAKey.Public()) {
		return nil, fmt.Errorf("%s: proxy-ca-key is not the key of proxy-ca-cert %q", what, c.CA.Subject.String())
	}
	if !c.CA.IsCA || c.CA.KeyUsage != 0 && c.CA.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s: proxy-ca-cert %q is not a CA certificate (basicConstraints CA:TRUE, keyCertSign), so clients would not trust what it signs", what, c.CA.Subject.String())
	}
	if c.Client == nil {
		return nil, fmt.Errorf("%s: no client configuration", what)
	}
	if c.Lifespan <= 0 {
		c.Lifespan = 30 * 24 * time.Hour
	}
	if c.Extensions == nil {
		c.Extensions = DefaultExtensions
	}
	p := &Proxy{cfg: c, forged: map[[32]byte]*forgedCert{}}
	for _, e := range c.Extensions {
		i := slices.Index(KnownExtensions, e)
		if i < 0 {
			return nil, fmt.Errorf("%s: cert-extension-includes: unknown extension %q (valid: %v)", what, e, KnownExtensions)
		}
		p.exts |= 1 << i
	}
	return p, nil
}

// Bypasses is the proxy's bypass decision (nil lists: none).
func (p *Proxy) Bypasses() *Bypass { return p.cfg.Bypass }

// BypassOnAlert is server-ssl's bypass-on-handshake-alert.
func (p *Proxy) BypassOnAlert() bool { return p.cfg.BypassOnAlert }

func (p *Proxy) has(ext string) bool {
	return p.exts&(1<<slices.Index(KnownExtensions, ext)) != 0
}

// ClientConfig is the client-side configuration that offers a
// certificate forged for the origin certificate leaf, forged now or
// kept from an earlier connection to the same certificate.
func (p *Proxy) ClientConfig(leaf *x509.Certificate, now time.Time) (*tls.Config, error) {
	if leaf == nil {
		return nil, errors.New("sslfwd: the origin sent no certificate")
	}
	fp := sha256.Sum256(leaf.Raw)
	p.mu.Lock()
	f := p.forged[fp]
	p.mu.Unlock()
	if f != nil && now.Before(f.notAfter.Add(-time.Hour)) {
		return f.cfg, nil
	}
	cert, notAfter, err := p.forge(leaf, now)
	if err != nil {
		return nil, err
	}
	cfg := p.cfg.Client.Clone()
	cfg.Certificates = []tls.Certificate{cert}
	cfg.GetCertificate = nil
	cfg.GetConfigForClient = nil
	f = &forgedCert{cfg: cfg, notAfter: notAfter}
	p.mu.Lock()
	if len(p.forged) >= maxForged {
		clear(p.forged)
	}
	p.forged[fp] = f
	p.mu.Unlock()
	return cfg, nil
}

// Cached is how many forged certificates the proxy keeps.
func (p *Proxy) Cached() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.forged)
}

// forgedKey is the key of every certificate the proxy forges, made on
// first use: ECDSA P-256 under an ECDSA CA, RSA 2048 under an RSA one.
func (p *Proxy) forgedKey() (crypto.Signer, error) {
	p.keyOnce.Do(func() {
		if _, ok := p.cfg.CAKey.Public().(*rsa.PublicKey); ok {
			p.key, p.keyErr = rsa.GenerateKey(rand.Reader, 2048)
			return
		}
		p.key, p.keyErr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	return p.key, p.keyErr
}

// forge makes the certificate for leaf: its subject, and the extensions
// cert-extension-includes names copied from it, issued by the CA.
func (p *Proxy) forge(leaf *x509.Certificate, now time.Time) (tls.Certificate, time.Time, error) {
	key, err := p.forgedKey()
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	ca := p.cfg.CA
	notBefore := now.Add(-time.Hour) // a client's clock a little behind [M]
	notAfter := now.Add(p.cfg.Lifespan)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		RawSubject:   leaf.RawSubject,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if _, ok := key.(*rsa.PrivateKey); ok {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	if p.has(ExtBasicConstraints) {
		tmpl.BasicConstraintsValid = true // CA:FALSE, whatever the origin's [M]
	}
	if p.has(ExtSubjectAltName) {
		tmpl.DNSNames = leaf.DNSNames
		tmpl.IPAddresses = leaf.IPAddresses
		tmpl.EmailAddresses = leaf.EmailAddresses
		tmpl.URIs = leaf.URIs
	}
	if p.has(ExtKeyUsage) && leaf.KeyUsage != 0 {
		tmpl.KeyUsage = leaf.KeyUsage &^ (x509.KeyUsageCertSign | x509.KeyUsageCRLSign)
		if _, ok := key.(*ecdsa.PrivateKey); ok {
			tmpl.KeyUsage &^= x509.KeyUsageKeyEncipherment
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		}
	}
	if p.has(ExtExtendedKeyUsage) {
		tmpl.ExtKeyUsage = leaf.ExtKeyUsage
		tmpl.UnknownExtKeyUsage = leaf.UnknownExtKeyUsage
	}
	if p.has(ExtCertificatePolicy) {
		tmpl.Policies = leaf.Policies
	}
	if p.has(ExtCRLDistribution) {
		tmpl.CRLDistributionPoints = leaf.CRLDistributionPoints
	}
	if p.has(ExtAuthorityInfo) {
		tmpl.OCSPServer = leaf.OCSPServer
		tmpl.IssuingCertificateURL = leaf.IssuingCertificateURL
	}
	// The authority key identifier is the CA's subject key identifier,
	// set by Go whenever the CA has one, whatever the includes say [M].
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), p.cfg.CAKey)
	if err != nil {
		return tls.Certificate{}, time.Time{}, fmt.Errorf("sslfwd: forging a certificate for %q: %v", leaf.Subject.String(), err)
	}
	forged, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	out := tls.Certificate{PrivateKey: key, Leaf: forged, Certificate: [][]byte{der}}
	for _, c := range p.cfg.CAChain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, notAfter, nil
}

func samePublic(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}
