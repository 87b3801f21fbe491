// Package sslfwd is BIG-IP's SSL forward proxy: a client-ssl and a
// server-ssl profile with ssl-forward-proxy enabled make a virtual
// terminate TLS for origins it does not own. The client's hello names
// the origin (SNI); the virtual connects to it, checks its certificate as
// the server-ssl profile says, and answers the client with a certificate
// of the same subject and names issued by the client-ssl profile's
// proxy-ca-cert, so that clients trusting that CA see the origin's names
// and the virtual sees the plaintext. Bypass lists let chosen clients,
// destinations or names through untouched. The same forging serves
// client certificate constrained delegation (c3d.go): a member shown a
// certificate forged from the client's.
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
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
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
	// BypassOnCertRequest is server-ssl's bypass-on-client-cert-fail: an
	// origin that asks for a client certificate the server-ssl profile has
	// none to give gets the client's own hello instead (the client can
	// answer it; the proxy cannot).
	BypassOnCertRequest bool
	// LookupByAddr is client-ssl's cert-lookup-by-ipaddr-port: a hello
	// without a server name may be answered with the certificate last
	// forged for the origin's address and port (Lookup), sparing an
	// http virtual the handshake that fetches the origin's certificate.
	LookupByAddr bool
	// Shared, when set, keeps the forged key and certificates of these
	// forging settings across configurations; nil: the proxy's own.
	Shared *Forgers
}

// maxForged bounds the forged certificates kept per CA; past it, the
// cache starts again [M: BIG-IP's cert cache size is a db variable].
const maxForged = 4096

// Proxy is one virtual's forward proxy: its forger, the client-ssl
// configuration a forged certificate is offered in, and its bypass
// decision.
type Proxy struct {
	cfg Config
	f   *forger

	mu     sync.Mutex
	cfgs   map[*forged]*tls.Config    // the client configuration of each forged certificate
	byAddr map[netip.AddrPort]*forged // LookupByAddr: the last forged per origin address and port
}

// forger forges certificates with one CA, key, lifespan and set of
// extensions, and keeps them per origin certificate while they are
// valid; proxies with the same settings share one (Forgers).
type forger struct {
	ca       *x509.Certificate
	chain    []*x509.Certificate
	caKey    crypto.Signer
	lifespan time.Duration
	exts     uint16 // bit i: KnownExtensions[i]
	// oids are extensions copied as they are, whatever their kind
	// (server-ssl's c3d-cert-extension-custom-oids).
	oids []asn1.ObjectIdentifier

	keyOnce sync.Once
	key     crypto.Signer // the forged certificates' key, one per CA [M]
	keyErr  error

	mu     sync.Mutex
	forged map[[32]byte]*forged
}

// forged is a forged certificate.
type forged struct {
	cert     tls.Certificate
	notAfter time.Time
}

// Forgers keeps forgers across configurations, so that a commit that
// leaves a proxy's CA and forging settings as they were keeps its forged
// key and certificates.
type Forgers struct {
	mu sync.Mutex
	m  map[string]*forger
}

// maxForgers bounds the forgers Forgers keeps; past it, it starts again.
const maxForgers = 64

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
	var exts uint16
	for _, e := range c.Extensions {
		i := slices.Index(KnownExtensions, e)
		if i < 0 {
			return nil, fmt.Errorf("%s: cert-extension-includes: unknown extension %q (valid: %v)", what, e, KnownExtensions)
		}
		exts |= 1 << i
	}
	p := &Proxy{cfg: c, cfgs: map[*forged]*tls.Config{}}
	p.f = c.Shared.forger(&forger{ca: c.CA, chain: c.CAChain, caKey: c.CAKey, lifespan: c.Lifespan, exts: exts})
	return p, nil
}

// forger is the forger of f's settings kept in fs (f itself when fs is
// nil or keeps none yet), so that configurations with the same CA and
// forging settings share one key and one cache.
func (fs *Forgers) forger(f *forger) *forger {
	f.forged = map[[32]byte]*forged{}
	if fs == nil {
		return f
	}
	pub, _ := x509.MarshalPKIXPublicKey(f.caKey.Public())
	sum := sha256.New()
	sum.Write(f.ca.Raw)
	for _, c := range f.chain {
		sum.Write(c.Raw)
	}
	sum.Write(pub)
	key := fmt.Sprintf("%x\x00%d\x00%d\x00%v", sum.Sum(nil), f.lifespan, f.exts, f.oids)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if kept := fs.m[key]; kept != nil {
		return kept
	}
	if fs.m == nil || len(fs.m) >= maxForgers {
		fs.m = map[string]*forger{}
	}
	fs.m[key] = f
	return f
}

// Bypasses is the proxy's bypass decision (nil lists: none).
func (p *Proxy) Bypasses() *Bypass { return p.cfg.Bypass }

// BypassOnAlert is server-ssl's bypass-on-handshake-alert.
func (p *Proxy) BypassOnAlert() bool { return p.cfg.BypassOnAlert }

// Bypassable reports whether err, an origin handshake's, is one the
// profiles answer by passing the client's hello through: an alert under
// bypass-on-handshake-alert, a client certificate request (ServerSide's
// ErrCertRequested) under bypass-on-client-cert-fail.
func (p *Proxy) Bypassable(err error) bool {
	return (p.cfg.BypassOnAlert && IsAlert(err)) || (p.cfg.BypassOnCertRequest && errors.Is(err, ErrCertRequested))
}

func (f *forger) has(ext string) bool {
	return f.exts&(1<<slices.Index(KnownExtensions, ext)) != 0
}

// ClientConfig is the client-side configuration that offers a
// certificate forged for the origin certificate leaf, forged now or
// kept from an earlier connection to the same certificate.
func (p *Proxy) ClientConfig(leaf *x509.Certificate, now time.Time) (*tls.Config, error) {
	cfg, _, err := p.clientConfig(leaf, now)
	return cfg, err
}

// ClientConfigAt is ClientConfig for an origin at dst, which it also
// remembers for Lookup under cert-lookup-by-ipaddr-port.
func (p *Proxy) ClientConfigAt(dst netip.AddrPort, leaf *x509.Certificate, now time.Time) (*tls.Config, error) {
	cfg, fc, err := p.clientConfig(leaf, now)
	if err != nil || !p.cfg.LookupByAddr {
		return cfg, err
	}
	p.mu.Lock()
	if p.byAddr == nil || len(p.byAddr) >= maxForged {
		p.byAddr = map[netip.AddrPort]*forged{}
	}
	p.byAddr[dst] = fc
	p.mu.Unlock()
	return cfg, nil
}

// Lookup is cert-lookup-by-ipaddr-port: the configuration of the
// certificate last forged for the origin at dst, while it is kept (not
// within an hour of its end); nil when there is none or the setting is
// disabled.
func (p *Proxy) Lookup(dst netip.AddrPort, now time.Time) *tls.Config {
	if !p.cfg.LookupByAddr {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fc := p.byAddr[dst]
	if fc == nil || !now.Before(fc.notAfter.Add(-time.Hour)) {
		return nil
	}
	return p.cfgs[fc]
}

func (p *Proxy) clientConfig(leaf *x509.Certificate, now time.Time) (*tls.Config, *forged, error) {
	if leaf == nil {
		return nil, nil, errors.New("sslfwd: the origin sent no certificate")
	}
	fc, err := p.f.get(leaf, now)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cfg := p.cfgs[fc]; cfg != nil {
		return cfg, fc, nil
	}
	cfg := p.cfg.Client.Clone()
	cfg.Certificates = []tls.Certificate{fc.cert}
	cfg.GetCertificate = nil
	cfg.GetConfigForClient = nil
	if len(p.cfgs) >= maxForged {
		clear(p.cfgs)
	}
	p.cfgs[fc] = cfg
	return cfg, fc, nil
}

// get is the certificate forged for leaf: kept, unless within an hour
// of its end, or forged now.
func (f *forger) get(leaf *x509.Certificate, now time.Time) (*forged, error) {
	return f.getKeyed(sha256.Sum256(leaf.Raw), leaf, now, nil)
}

// getKeyed is get with the cache key fp, which names leaf and the rule's
// choices r (nil: none).
func (f *forger) getKeyed(fp [32]byte, leaf *x509.Certificate, now time.Time, r *C3DRule) (*forged, error) {
	f.mu.Lock()
	fc := f.forged[fp]
	f.mu.Unlock()
	if fc != nil && now.Before(fc.notAfter.Add(-time.Hour)) {
		return fc, nil
	}
	cert, notAfter, err := f.forge(leaf, now, r)
	if err != nil {
		return nil, err
	}
	fc = &forged{cert: cert, notAfter: notAfter}
	f.mu.Lock()
	if len(f.forged) >= maxForged {
		clear(f.forged)
	}
	f.forged[fp] = fc
	f.mu.Unlock()
	return fc, nil
}

// Cached is how many forged certificates the proxy's forger keeps.
func (p *Proxy) Cached() int {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	return len(p.f.forged)
}

// forgedKey is the key of every certificate the proxy forges, made on
// first use: ECDSA P-256 under an ECDSA CA, RSA 2048 under an RSA one.
func (f *forger) forgedKey() (crypto.Signer, error) {
	f.keyOnce.Do(func() {
		if _, ok := f.caKey.Public().(*rsa.PublicKey); ok {
			f.key, f.keyErr = rsa.GenerateKey(rand.Reader, 2048)
			return
		}
		f.key, f.keyErr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	return f.key, f.keyErr
}

// forge makes the certificate for leaf: its subject, and the extensions
// cert-extension-includes names copied from it, issued by the CA; r, a
// C3D rule's choices (nil: none), adds extensions and sets the validity.
func (f *forger) forge(leaf *x509.Certificate, now time.Time, r *C3DRule) (tls.Certificate, time.Time, error) {
	key, err := f.forgedKey()
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	ca := f.ca
	notBefore := now.Add(-time.Hour) // a client's clock a little behind [M]
	notAfter := now.Add(f.lifespan)
	if r != nil && (r.Lifespan > 0 || !r.Start.IsZero()) {
		// SSL::c3d cert_start_date and cert_lifespan: the lifespan from
		// the start date, else from now [M].
		life, from := f.lifespan, now
		if r.Lifespan > 0 {
			life = r.Lifespan
		}
		if !r.Start.IsZero() {
			notBefore, from = r.Start, r.Start
		}
		notAfter = from.Add(life)
	}
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	if !notAfter.After(now) {
		return tls.Certificate{}, time.Time{}, fmt.Errorf("sslfwd: the certificate forged for %q would have ended at %s (SSL::c3d cert_start_date and cert_lifespan, or the CA's end)", leaf.Subject.String(), notAfter.UTC().Format(time.RFC3339))
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
	if f.has(ExtBasicConstraints) {
		tmpl.BasicConstraintsValid = true // CA:FALSE, whatever the origin's [M]
	}
	if f.has(ExtSubjectAltName) {
		tmpl.DNSNames = leaf.DNSNames
		tmpl.IPAddresses = leaf.IPAddresses
		tmpl.EmailAddresses = leaf.EmailAddresses
		tmpl.URIs = leaf.URIs
	}
	if f.has(ExtKeyUsage) && leaf.KeyUsage != 0 {
		tmpl.KeyUsage = leaf.KeyUsage &^ (x509.KeyUsageCertSign | x509.KeyUsageCRLSign)
		if _, ok := key.(*ecdsa.PrivateKey); ok {
			tmpl.KeyUsage &^= x509.KeyUsageKeyEncipherment
			tmpl.KeyUsage |= x509.KeyUsageDigitalSignature
		}
	}
	if f.has(ExtExtendedKeyUsage) {
		tmpl.ExtKeyUsage = leaf.ExtKeyUsage
		tmpl.UnknownExtKeyUsage = leaf.UnknownExtKeyUsage
	}
	if f.has(ExtCertificatePolicy) {
		tmpl.Policies = leaf.Policies
	}
	if f.has(ExtCRLDistribution) {
		tmpl.CRLDistributionPoints = leaf.CRLDistributionPoints
	}
	if f.has(ExtAuthorityInfo) {
		tmpl.OCSPServer = leaf.OCSPServer
		tmpl.IssuingCertificateURL = leaf.IssuingCertificateURL
	}
	for _, e := range leaf.Extensions {
		if slices.ContainsFunc(f.oids, e.Id.Equal) && !r.hasExtension(e.Id) {
			tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, e)
		}
	}
	if r != nil {
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, r.Extensions...) // SSL::c3d extension
	}
	// The authority key identifier is the CA's subject key identifier,
	// set by Go whenever the CA has one, whatever the includes say [M].
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), f.caKey)
	if err != nil {
		return tls.Certificate{}, time.Time{}, fmt.Errorf("sslfwd: forging a certificate for %q: %v", leaf.Subject.String(), err)
	}
	forged, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, time.Time{}, err
	}
	out := tls.Certificate{PrivateKey: key, Leaf: forged, Certificate: [][]byte{der}}
	for _, c := range f.chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, notAfter, nil
}

func samePublic(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}
