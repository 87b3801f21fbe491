package tlsprof

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CertKeyChain is one entry of a client-ssl profile's cert-key-chain.
type CertKeyChain struct {
	Name  string
	Cert  *Cert
	Key   *Key
	Chain *Cert // nil: none
	// OCSP is the certificate's ocsp cert-validator (its cert-validators
	// with cert-validation-options ocsp), or the ocsp-stapling-params
	// the entry names (Params set); with the profile's
	// OCSPStapling its status is stapled. Issuer is its issuer-cert
	// (nil: the chain's certificate that signed it).
	OCSP   *OCSP
	Issuer *Cert
	// TrustedCA is the trusted-ca of the entry's ocsp-stapling-params
	// (BIG-IP 11.6 to 13.0): without issuer-cert, the issuer is looked
	// for there too, after the certificate's bundle and the chain.
	TrustedCA *Cert
}

// ClientSSL is an `ltm profile client-ssl`, references resolved and
// defaults-from flattened: the TLS the virtual speaks to clients.
type ClientSSL struct {
	Name         string
	CertKeyChain []CertKeyChain
	// Ciphers is the cipher string ("" = DEFAULT); CipherGroup, when set,
	// replaces it (BIG-IP's `ciphers none cipher-group …`).
	Ciphers     string
	CipherGroup *CipherGroup
	// Options are the `options { }` words (no-tlsv1, no-tlsv1.3, …).
	Options    []string
	ServerName string
	SNIDefault bool
	SNIRequire bool
	// Renegotiation enabled cannot be honoured (Go's server never
	// renegotiates); Build warns.
	Renegotiation bool
	SessionTicket bool
	// DynamicRecordSizing is allow-dynamic-record-sizing: records of about
	// one TCP segment at a connection's start (Go's dynamic sizing, until
	// 128 KB were sent), which a client can decrypt sooner. Disabled,
	// BIG-IP's default, records are full-size (16 KB), as BIG-IP's
	// maximum-record-size default: fewer records, write(2)s and
	// encryptions for a large response.
	DynamicRecordSizing bool
	// PeerCertMode is ignore, request, require or auto ("" = ignore).
	PeerCertMode string
	// NotifyCertStatus is notify-cert-status-to-virtual-server: a client
	// certificate that fails verification (untrusted, expired, too deep,
	// revoked) no longer ends the handshake; the virtual's rules read the
	// verdict (SSL::verify_result) and decide, as BIG-IP lets them. A
	// client that sends none under require is still refused [M].
	NotifyCertStatus bool
	CAFile           *Cert
	// ClientCertCA is client-cert-ca: the CA names the CertificateRequest
	// advertises, so that a client holding several certificates picks
	// one these issued. It does not verify (CAFile does); nil advertises
	// none, and clients send what they have.
	ClientCertCA *Cert
	// CRL (crl-file) turns away a client whose certificate its issuer
	// revoked, with peer-cert-mode require or request [M: request too].
	CRL *CRL
	// AllowExpiredCRL (allow-expired-crl) keeps a CRL past its next
	// update in use; otherwise the certificates it covers are refused
	// until it is renewed, as OpenSSL's CRL_HAS_EXPIRED.
	AllowExpiredCRL bool
	// C3DOCSP (c3d-ocsp) checks the client's certificate with OCSP
	// (c3docsp.go); nil: not.
	C3DOCSP *C3DOCSP
	// AuthenticateDepth is the most intermediate certificates a client's
	// chain may hold; negative means BIG-IP's default, 9.
	AuthenticateDepth int
	// AuthenticateAlways is authenticate always: a client that would
	// resume its session is authenticated again, in a full handshake
	// that asks for its certificate (peer-cert-mode request or require;
	// with ignore there is nothing to authenticate); once (false)
	// resumes it. A rule's SSL::authenticate once|always overrides it
	// for its connection (WithClientChecks).
	AuthenticateAlways bool
	// ForgetCertificate is retain-certificate false: a resumed session
	// does not bring back the client's certificate, so rules (SSL::cert,
	// X509::) see none after a resumption, as BIG-IP's session cache
	// without the certificate.
	ForgetCertificate bool
	// TicketLifetime bounds how long after it was issued a session
	// ticket resumes (session-ticket-timeout, else cache-timeout); an
	// older one gets a full handshake. 0: Go's own bound (7 days).
	TicketLifetime time.Duration
	// MaxActiveHandshakes (max-active-handshakes) bounds the profile's
	// handshakes in progress; 0: indefinite.
	MaxActiveHandshakes int
	// OCSPStapling (ocsp-stapling) staples the status of the
	// certificates that have an OCSP validator to the handshakes of the
	// clients that ask for it.
	OCSPStapling bool
	// CleanShutdown is unclean-shutdown disabled: a client that ends
	// without close_notify is counted (Premature Disconnects) and its
	// session is not resumed. StrictResume (strict-resume enabled) does
	// the latter alone. Off (BIG-IP's defaults) nothing is watched.
	CleanShutdown, StrictResume bool
	// SignHash is ssl-sign-hash: the hash of the signature the handshake
	// makes with the profile's certificate (any, "", sha1, sha256,
	// sha384), for clients or auditors that accept only some.
	SignHash string
	// MaxRecordSize is maximum-record-size: the most plaintext a record
	// to the client carries, for clients with small buffers; 0 or 16384
	// (the protocol's own bound) leave records as crypto/tls makes them.
	MaxRecordSize int
	// SecureRenegotiation is secure-renegotiation (request, require,
	// require-strict; "" is require, client-ssl's default): what
	// SSL::secure_renegotiation reads. crypto/tls always answers RFC 5746
	// and never renegotiates as a server, so require and request let
	// every client in alike; require-strict turns away a client whose
	// hello does not offer it, where a rule asks for that
	// (SSL::secure_renegotiation require-strict) [M].
	SecureRenegotiation string
}

// ServerSSL is an `ltm profile server-ssl`: the TLS the system speaks to
// pool members.
type ServerSSL struct {
	Name  string
	Cert  *Cert // client certificate offered to members; nil: none
	Key   *Key
	Chain *Cert

	Ciphers       string
	CipherGroup   *CipherGroup
	Options       []string
	ServerName    string // SNI sent to members ("" = none, or the virtual's choice)
	Renegotiation bool
	SessionTicket bool
	CacheSize     int // session cache entries; 0 = no resumption
	// CacheTimeout (cache-timeout) is how long a member's session is
	// kept for resumption; 0: until the cache drops it.
	CacheTimeout time.Duration
	// AuthenticateAlways is authenticate always: with peer-cert-mode
	// require, no member session is offered again, so that each
	// handshake checks the member's certificate anew.
	AuthenticateAlways bool
	// PeerCertMode is ignore or require ("" = ignore): require verifies the
	// member's chain against CAFile and, when set, AuthenticateName.
	PeerCertMode      string
	CAFile            *Cert
	AuthenticateDepth int // as ClientSSL's
	AuthenticateName  string
	// ExpireControl, UntrustedControl and RevokedControl are what a
	// member's expired, untrusted or revoked certificate does to its
	// connection with peer-cert-mode require: drop (BIG-IP's default;
	// "" too) ends the handshake, ignore lets it go on. mask (forward
	// proxy's forged certificate) is taken as drop, with a warning.
	ExpireControl, UntrustedControl, RevokedControl string
	// CRL (crl-file) lists the member certificates revoked;
	// AllowExpiredCRL as ClientSSL's.
	CRL             *CRL
	AllowExpiredCRL bool
	// OCSP (ocsp) asks the member certificate's status of a responder:
	// revoked does as RevokedControl says; no answer or unknown as
	// UnknownControl (unknown-cert-status-response-control; "" is
	// ignore, BIG-IP's default).
	OCSP           *OCSP
	UnknownControl string
	// MaxActiveHandshakes as ClientSSL's, for the handshakes with members.
	MaxActiveHandshakes int
	// CleanShutdown and StrictResume as ClientSSL's, for a member that
	// ends without close_notify: its session leaves the cache.
	CleanShutdown, StrictResume bool
	// SignHash as ClientSSL's, for the client certificate's signature
	// (CertificateVerify) the profile makes to members.
	SignHash string
	// SecureRenegotiation as ClientSSL's ("" is require-strict,
	// server-ssl's default): what SSL::secure_renegotiation reads, and
	// with require-strict a rule's SERVERSSL_SERVERHELLO refuses a
	// member that does not agree to RFC 5746 [M: read by the rules'
	// connections alone].
	SecureRenegotiation string
}

// Built is a profile turned into Go's TLS configuration.
type Built struct {
	Name   string
	Config *tls.Config
	// Warnings are settings accepted but not applied as BIG-IP would
	// (category 2: the commit goes on, the user is told).
	Warnings   []string
	serverName string
	sniDefault bool
	sniRequire bool
	// verify is how VerifyResult checks a peer's chain.
	verify *verifier
	// forgetCert: retain-certificate false (ClientSSL.ForgetCertificate).
	forgetCert bool
	// authAlways: a client-ssl profile's authenticate always with a
	// certificate to ask for; onceUnwrap is the ticket reading it
	// replaced (nil: crypto/tls's own), which a rule's
	// SSL::authenticate once brings back.
	authAlways bool
	onceUnwrap func([]byte, tls.ConnectionState) (*tls.SessionState, error)
	// stapling: the certificates of a client-ssl profile with
	// ocsp-stapling, in cert-key-chain order; nil otherwise.
	stapling []*stapled
	// Gate is the profile's max-active-handshakes (nil: indefinite),
	// which the dataplane enters around each handshake.
	Gate *HandshakeGate
	// Log is the profile's log-publisher for failed handshakes (nil:
	// none, a nil check per failure).
	Log *FailureLog
	// ends: unclean-shutdown disabled or strict-resume enabled; nil
	// otherwise (ends.go).
	ends *endRules
	// maxRecord: client-ssl's maximum-record-size, 0 at the default
	// (records.go).
	maxRecord int
	// ticketLife bounds how long a revoked session is remembered
	// (session-ticket-timeout); invalid is the sessions rules invalidated
	// (SSL::session invalidate), made at the first (invalidate.go).
	ticketLife time.Duration
	invalidMu  sync.Mutex
	invalid    *lineages

	byName  sync.Map // server name → *tls.Config (server-ssl with serverssl-use-sni)
	byNameN atomic.Int32

	// peer is the chain check made at the handshake (client-ssl's
	// peer-cert-mode require, server-ssl's require), ocsp server-ssl's
	// OCSP check; nil when none. A rule's SSL::authenticate depth makes
	// a connection's copy of them (serverhello.go).
	peer *peerCheck
	ocsp *memberOCSP
	// secureReneg is secure-renegotiation as SSL::secure_renegotiation
	// numbers it.
	secureReneg int
}

// RetainsCertificate reports whether a resumed connection of the profile
// still shows its client's certificate (retain-certificate).
func (b *Built) RetainsCertificate() bool { return b == nil || !b.forgetCert }

// SNIRequired is the profile's sni-require, which a rule reads
// (SSL::sni required) to tell whether clients without SNI are turned away.
func (b *Built) SNIRequired() bool { return b != nil && b.sniRequire }

// maxByName bounds the per-name configurations a server-ssl profile keeps.
const maxByName = 1024

// ForServerName is a server-ssl configuration that sends name as SNI (a
// virtual with serverssl-use-sni passes the client's server name on). The
// profile's own server-name wins when set, as on BIG-IP. Configurations are
// kept per name, so a connection does not copy one.
func (b *Built) ForServerName(name string) *tls.Config {
	if name == "" || b.serverName != "" {
		return b.Config
	}
	if c, ok := b.byName.Load(name); ok {
		return c.(*tls.Config)
	}
	c := b.Config.Clone()
	c.ServerName = name
	if b.byNameN.Load() < maxByName {
		if prev, loaded := b.byName.LoadOrStore(name, c); loaded {
			return prev.(*tls.Config)
		}
		b.byNameN.Add(1)
	}
	return c
}

var knownOptions = []string{
	"no-sslv3", "no-ssl", "no-tlsv1", "no-tlsv1.1", "no-tlsv1.2", "no-tlsv1.3", "no-dtls", "no-dtlsv1", "no-dtlsv1.2",
	"dont-insert-empty-fragments", "no-session-resumption-on-renegotiation", "single-dh-use", "no-compression",
	"cipher-server-preference", "tls-rollback-bug", "microsoft-sess-id-bug", "netscape-reuse-cipher-change-bug",
	"ssleay-080-client-dh-bug", "tls-d5-bug", "tls-block-padding-bug", "msie-sslv2-rsa-padding", "all-bugfixes",
	"ephemeral-rsa", "pkcs1-check-1", "pkcs1-check-2", "netscape-ca-dn-bug", "netscape-demo-cipher-change-bug",
	"passive-close", "no-tlsv1.3-record-padding", "none",
}

// versions applies the options to the versions the cipher list leaves and
// returns Go's range. Go cannot skip a version in the middle: a gap keeps
// the upper part and says so.
func versions(what string, l *CipherList, options []string) (uint16, uint16, []string, error) {
	vs := l.Versions()
	for _, o := range options {
		o = strings.ToLower(o)
		if !slices.Contains(knownOptions, o) {
			return 0, 0, nil, fmt.Errorf("%s: unknown option %q (valid: %s)", what, o, strings.Join(knownOptions, ", "))
		}
		var drop uint16
		switch o {
		case "no-tlsv1":
			drop = verTLS10
		case "no-tlsv1.1":
			drop = verTLS11
		case "no-tlsv1.2":
			drop = verTLS12
		case "no-tlsv1.3":
			drop = verTLS13
		}
		vs = slices.DeleteFunc(vs, func(v uint16) bool { return v == drop })
	}
	if len(vs) == 0 {
		return 0, 0, nil, fmt.Errorf("%s: the cipher list and options leave no protocol version (the ciphers allow %s)", what, versionNames(l.Versions()))
	}
	var warns []string
	lo := len(vs) - 1
	for lo > 0 && vs[lo-1] == vs[lo]-1 {
		lo--
	}
	if lo > 0 {
		warns = append(warns, fmt.Sprintf("%s: Go cannot leave a gap between protocol versions; %s off", what, versionNames(vs[:lo])))
	}
	return vs[lo], vs[len(vs)-1], warns, nil
}

func versionNames(vs []uint16) string {
	var ns []string
	for _, v := range vs {
		ns = append(ns, VersionName(v))
	}
	return strings.Join(ns, ", ")
}

// Build makes the server-side configuration of a client-ssl profile.
func (p *ClientSSL) Build() (*Built, error) {
	what := "profile client-ssl " + p.Name
	l, warns, err := selection(what, p.Ciphers, p.CipherGroup)
	if err != nil {
		return nil, err
	}
	lo, hi, w, err := versions(what, l, p.Options)
	if err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	maxRecord := p.MaxRecordSize
	switch {
	case maxRecord == 0 || maxRecord == MaxRecordSize:
		maxRecord = 0
	case maxRecord < MinRecordSize || maxRecord > MaxRecordSize:
		return nil, fmt.Errorf("%s: maximum-record-size %d is out of range (%d to %d)", what, maxRecord, MinRecordSize, MaxRecordSize)
	}
	if len(p.CertKeyChain) == 0 {
		return nil, fmt.Errorf("%s: cert-key-chain is empty; a client-ssl profile needs a certificate and key", what)
	}
	cfg := &tls.Config{
		MinVersion:                  lo,
		MaxVersion:                  hi,
		CipherSuites:                l.Suites(),
		SessionTicketsDisabled:      !p.SessionTicket,
		Renegotiation:               tls.RenegotiateNever,
		DynamicRecordSizingDisabled: !p.DynamicRecordSizing,
	}
	if w, err = groupCurves(what, p.CipherGroup, cfg); err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	for _, ck := range p.CertKeyChain {
		c, err := Pair(p.Name, ck.Cert, ck.Key, ck.Chain)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = append(cfg.Certificates, c)
	}
	if w, err = signHash(what, p.SignHash, cfg); err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	var stapling []*stapled
	if p.OCSPStapling {
		if stapling, err = staplingOf(what, p.CertKeyChain, cfg.Certificates); err != nil {
			return nil, err
		}
		// crypto/tls calls GetCertificate only when Certificates is
		// empty or the client sent a name; the choice among the
		// profile's certificates is made in it, as crypto/tls makes it.
		cfg.Certificates = nil
		cfg.GetCertificate = staplingCertificate(stapling)
	}
	if p.Renegotiation {
		warns = append(warns, what+": renegotiation enabled is not supported (Go's TLS server never renegotiates); clients asking are refused")
	}
	depth := p.AuthenticateDepth
	if depth < 0 {
		depth = 9
	}
	switch p.PeerCertMode {
	case "", "ignore":
		cfg.ClientAuth = tls.NoClientCert
	case "auto":
		cfg.ClientAuth = tls.NoClientCert
		warns = append(warns, what+": peer-cert-mode auto is treated as ignore")
	case "request":
		// Any certificate, or none, is let in: BIG-IP's request "always
		// authenticates the client", and rules read the verdict
		// (SSL::verify_result, Built.VerifyResult).
		cfg.ClientAuth = tls.RequestClientCert
	case "require":
		if p.CAFile == nil {
			return nil, fmt.Errorf("%s: peer-cert-mode require needs a ca-file to verify client certificates against", what)
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("%s: peer-cert-mode %q is not valid (ignore, request, require, auto)", what, p.PeerCertMode)
	}
	v := &verifier{depth: depth, usage: x509.ExtKeyUsageClientAuth, crl: indexCRL(p.CRL, p.AllowExpiredCRL)}
	if p.CAFile != nil {
		v.roots = p.CAFile.Pool()
	}
	if p.ClientCertCA != nil {
		cfg.ClientCAs = p.ClientCertCA.Pool()
	}
	// Go's server advertises the pool it verifies with; the two are
	// separate on BIG-IP, so the chain is verified here, against ca-file.
	k := &peerCheck{what: what, roots: v.roots, depth: depth, usage: x509.ExtKeyUsageClientAuth, crl: v.crl}
	var peer *peerCheck
	reneg, ok := secureRenegotiation(p.SecureRenegotiation, 1)
	if !ok {
		return nil, fmt.Errorf("%s: secure-renegotiation %q is not valid (request, require, require-strict)", what, p.SecureRenegotiation)
	}
	switch {
	case cfg.ClientAuth == tls.RequireAndVerifyClientCert && p.NotifyCertStatus:
		// The verdict is the rules' (Built.VerifyResult); the
		// handshake only asks for a certificate (crypto/tls refuses one
		// that does not parse).
		cfg.ClientAuth = tls.RequireAnyClientCert
	case cfg.ClientAuth == tls.RequireAndVerifyClientCert:
		cfg.ClientAuth = tls.RequireAnyClientCert
		peer = k
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			chain, err := parseChain(raw)
			if err != nil {
				return err
			}
			return k.check(chain, time.Now())
		}
	case cfg.ClientAuth == tls.RequestClientCert && k.crl != nil && !p.NotifyCertStatus:
		// request lets any certificate in, but not a revoked one [M].
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return nil
			}
			chain, err := parseChain(raw)
			if err != nil {
				return err
			}
			if r, expired := v.revoked(chain, time.Now()); r != nil {
				if expired {
					return fmt.Errorf("%s: the CRL for the client's certificate %q is past its next update (allow-expired-crl disabled)", what, r.Subject.CommonName)
				}
				return fmt.Errorf("%s: the client's certificate %q (serial %X) is revoked (crl-file)", what, r.Subject.CommonName, r.SerialNumber)
			}
			return nil
		}
	}
	if p.C3DOCSP != nil {
		c3dOCSP(cfg, what, p.C3DOCSP, p.CAFile)
	}
	if p.SessionTicket && p.TicketLifetime > 0 {
		ticketLifetime(cfg, p.TicketLifetime)
	}
	authAlways, onceUnwrap := p.AuthenticateAlways && cfg.ClientAuth != tls.NoClientCert, cfg.UnwrapSession
	if authAlways {
		cfg.UnwrapSession = refuseResume
	}
	return &Built{Name: p.Name, Config: cfg, Warnings: warns, verify: v, forgetCert: p.ForgetCertificate, stapling: stapling, peer: peer, secureReneg: reneg,
		authAlways: authAlways, onceUnwrap: onceUnwrap,
		Gate: NewHandshakeGate(p.MaxActiveHandshakes),
		ends: newEndRules(p.CleanShutdown, p.StrictResume, p.TicketLifetime), maxRecord: maxRecord, ticketLife: p.TicketLifetime,
		serverName: strings.ToLower(p.ServerName), sniDefault: p.SNIDefault, sniRequire: p.SNIRequire}, nil
}

// Build makes the client-side configuration of a server-ssl profile.
func (p *ServerSSL) Build() (*Built, error) {
	what := "profile server-ssl " + p.Name
	l, warns, err := selection(what, p.Ciphers, p.CipherGroup)
	if err != nil {
		return nil, err
	}
	lo, hi, w, err := versions(what, l, p.Options)
	if err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	cfg := &tls.Config{
		MinVersion:             lo,
		MaxVersion:             hi,
		CipherSuites:           l.Suites(),
		ServerName:             p.ServerName,
		SessionTicketsDisabled: !p.SessionTicket,
		InsecureSkipVerify:     true, // verification, when asked, is done below
		Renegotiation:          tls.RenegotiateNever,
		// BIG-IP's server-ssl has no dynamic record sizing: full records.
		DynamicRecordSizingDisabled: true,
	}
	if w, err = groupCurves(what, p.CipherGroup, cfg); err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	if p.Renegotiation {
		cfg.Renegotiation = tls.RenegotiateFreelyAsClient
	}
	if p.CacheSize > 0 && p.SessionTicket && !(p.AuthenticateAlways && p.PeerCertMode == "require") {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(p.CacheSize)
		if p.CacheTimeout > 0 {
			cfg.ClientSessionCache = &expiringCache{cache: cfg.ClientSessionCache, ttl: p.CacheTimeout, size: p.CacheSize, cfg: cfg, at: map[string]time.Time{}}
		}
	}
	if p.Cert != nil || p.Key != nil {
		c, err := Pair(p.Name, p.Cert, p.Key, p.Chain)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if w, err = signHash(what, p.SignHash, cfg); err != nil {
		return nil, err
	}
	warns = append(warns, w...)
	depth := p.AuthenticateDepth
	if depth < 0 {
		depth = 9
	}
	unknown := p.UnknownControl
	if unknown == "" {
		unknown = ControlIgnore
	}
	controls := [4]bool{} // ignore expired, untrusted, revoked, unknown
	for i, c := range []struct{ prop, v string }{
		{"expire-cert-response-control", p.ExpireControl},
		{"untrusted-cert-response-control", p.UntrustedControl},
		{"revoked-cert-status-response-control", p.RevokedControl},
		{"unknown-cert-status-response-control", unknown},
	} {
		switch c.v {
		case "", ControlDrop:
		case ControlIgnore:
			controls[i] = true
		case ControlMask:
			warns = append(warns, fmt.Sprintf("%s: %s mask (an SSL forward proxy's masked certificate) is not done by openltm; taken as drop", what, c.prop))
		default:
			return nil, fmt.Errorf("%s: %s %q is not valid (drop, ignore, mask)", what, c.prop, c.v)
		}
	}
	reneg, ok := secureRenegotiation(p.SecureRenegotiation, 2)
	if !ok {
		return nil, fmt.Errorf("%s: secure-renegotiation %q is not valid (request, require, require-strict)", what, p.SecureRenegotiation)
	}
	var peer *peerCheck
	var ocspCheck *memberOCSP
	switch p.PeerCertMode {
	case "", "ignore":
	case "require":
		if p.CAFile == nil {
			return nil, fmt.Errorf("%s: peer-cert-mode require needs a ca-file to verify the server's certificate against", what)
		}
		k := &peerCheck{what: what, roots: p.CAFile.Pool(), depth: depth, usage: x509.ExtKeyUsageServerAuth,
			name: p.AuthenticateName, crl: indexCRL(p.CRL, p.AllowExpiredCRL),
			ignoreExpired: controls[0], ignoreUntrusted: controls[1], ignoreRevoked: controls[2]}
		peer = k
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("server sent no certificate")
			}
			return k.check(cs.PeerCertificates, time.Now())
		}
	default:
		return nil, fmt.Errorf("%s: peer-cert-mode %q is not valid (ignore, require)", what, p.PeerCertMode)
	}
	if p.OCSP != nil {
		oc := &memberOCSP{what: what, o: p.OCSP, ignoreRevoked: controls[2], ignoreUnknown: controls[3]}
		if p.CAFile != nil {
			oc.cas = p.CAFile.Certs
		}
		if p.Chain != nil {
			oc.cas = append(oc.cas, p.Chain.Certs...)
		}
		ocspCheck = oc
		peer := cfg.VerifyConnection
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if peer != nil {
				if err := peer(cs); err != nil {
					return err
				}
			}
			return oc.check(cs.PeerCertificates, time.Now())
		}
	}
	v := &verifier{depth: depth, usage: x509.ExtKeyUsageServerAuth, crl: indexCRL(p.CRL, p.AllowExpiredCRL)}
	if p.CAFile != nil {
		v.roots = p.CAFile.Pool()
	}
	return &Built{Name: p.Name, Config: cfg, Warnings: warns, serverName: p.ServerName, verify: v, Gate: NewHandshakeGate(p.MaxActiveHandshakes),
		peer: peer, ocsp: ocspCheck, secureReneg: reneg,
		ends: newEndRules(p.CleanShutdown, p.StrictResume, p.CacheTimeout)}, nil
}

// ForVirtual is the configuration of a virtual with one or more client-ssl
// profiles: a ClientHello's server name picks the profile whose server-name
// matches (exactly, or a "*.example.com" pattern one label deep), else the
// profile marked sni-default. With several profiles exactly one must be the
// default, as BIG-IP requires. A default profile with sni-require refuses
// hellos without a server name.
func ForVirtual(virtual string, profiles []*Built) (*tls.Config, error) {
	switch len(profiles) {
	case 0:
		return nil, fmt.Errorf("virtual %s: no client-ssl profile", virtual)
	case 1:
		p := profiles[0]
		if !p.sniRequire {
			return p.Config, nil
		}
	}
	var def *Built
	names := map[string]string{}
	for _, p := range profiles {
		if p.sniDefault || len(profiles) == 1 {
			if def != nil {
				return nil, fmt.Errorf("virtual %s: client-ssl profiles %s and %s are both sni-default; only one may be", virtual, def.Name, p.Name)
			}
			def = p
		}
		if p.serverName != "" {
			if other, dup := names[p.serverName]; dup {
				return nil, fmt.Errorf("virtual %s: client-ssl profiles %s and %s have the same server-name %s", virtual, other, p.Name, p.serverName)
			}
			names[p.serverName] = p.Name
		}
	}
	if def == nil {
		return nil, fmt.Errorf("virtual %s: several client-ssl profiles and none is sni-default; set sni-default true on one", virtual)
	}
	base := def.Config.Clone()
	base.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni := strings.ToLower(h.ServerName)
		if sni != "" {
			for _, p := range profiles {
				if p.serverName != "" && nameMatch(p.serverName, sni) {
					return p.Config, nil
				}
			}
		} else if def.sniRequire {
			return nil, fmt.Errorf("client-ssl profile %s requires SNI and the client sent none", def.Name)
		}
		return def.Config, nil
	}
	return base, nil
}

func nameMatch(pattern, name string) bool {
	if pattern == name {
		return true
	}
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		_, after, found := strings.Cut(name, ".")
		return found && after == rest
	}
	return false
}

// Pick is the index of the client-ssl profile ForVirtual chooses for a
// hello's server name sni, for the profiles' statistics and a rule's
// view of them: the profile whose server-name matches, else the
// sni-default one (the first profile when none is).
func Pick(bs []*Built, sni string) int {
	if sni != "" {
		sni = strings.ToLower(sni)
		for i, b := range bs {
			if b.serverName != "" && nameMatch(b.serverName, sni) {
				return i
			}
		}
	}
	for i, b := range bs {
		if b.sniDefault {
			return i
		}
	}
	return 0
}

// ErrHelloRefused is the handshake's error when a rule ended the client
// in CLIENTSSL_CLIENTHELLO.
var ErrHelloRefused = errors.New("tls: the client's hello was refused by an iRule")

// WithHello wraps a virtual's client-side config so that hello runs when
// a client's hello is in, before the server's answer (CLIENTSSL_CLIENTHELLO):
// false refuses the client. The wrapper is per connection and holds no
// settings of its own; the handshake goes on with base (or the profile
// base's SNI choice picks).
func WithHello(base *tls.Config, hello func(h *tls.ClientHelloInfo) bool) *tls.Config {
	return &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		if !hello(h) {
			return nil, ErrHelloRefused
		}
		if base.GetConfigForClient != nil {
			if c, err := base.GetConfigForClient(h); c != nil || err != nil {
				return c, err
			}
		}
		return base, nil
	}}
}

// WithALPN returns base offering protos in ALPN (in order of preference),
// and every configuration base's GetConfigForClient chooses (SNI among
// several client-ssl profiles) offering them too: a virtual's http2
// profile offers h2 whichever profile the client's server name picks.
// base itself is not changed; the profiles' configurations are shared by
// the virtuals that use them.
func WithALPN(base *tls.Config, protos ...string) *tls.Config {
	c := base.Clone()
	c.NextProtos = protos
	if pick := base.GetConfigForClient; pick != nil {
		var mu sync.Mutex
		withALPN := map[*tls.Config]*tls.Config{}
		c.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			chosen, err := pick(h)
			if chosen == nil || err != nil {
				return chosen, err
			}
			mu.Lock()
			defer mu.Unlock()
			w, ok := withALPN[chosen]
			if !ok {
				w = chosen.Clone()
				w.NextProtos = protos
				withALPN[chosen] = w
			}
			return w, nil
		}
	}
	return c
}
