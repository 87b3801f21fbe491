package sslfwd

import (
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client certificate constrained delegation (BIG-IP's C3D): a member that
// authenticates its clients by certificate is shown, in the server-ssl
// handshake, a certificate forged from the one the client showed the
// virtual (its subject and chosen extensions, issued by server-ssl's
// c3d-ca-cert), so that the virtual can terminate the client's TLS and
// still let the member know who the client is. The forging is the
// forward proxy's (forger), with the client's certificate in place of
// the origin's.

// C3DDefaultExtensions is BIG-IP's c3d-cert-extension-includes default.
var C3DDefaultExtensions = []string{ExtBasicConstraints, ExtExtendedKeyUsage, ExtKeyUsage, ExtSubjectAltName}

// C3DConfig is a virtual's C3D settings, read from its server-ssl profile
// (the CA and the forging) and its client-ssl profile (the fallback).
type C3DConfig struct {
	// Name names the server-ssl profile in errors.
	Name string
	// CA (c3d-ca-cert, its first certificate issues) and CAKey
	// (c3d-ca-key) sign the forged certificates; CAChain are the
	// certificates sent after the forged one.
	CA      *x509.Certificate
	CAChain []*x509.Certificate
	CAKey   crypto.Signer
	// Lifespan is c3d-cert-lifespan (hours on BIG-IP); 0: 24 hours.
	Lifespan time.Duration
	// Extensions is c3d-cert-extension-includes (nil:
	// C3DDefaultExtensions); CustomOIDs is c3d-cert-extension-custom-oids,
	// extensions copied as they are.
	Extensions []string
	CustomOIDs []asn1.ObjectIdentifier
	// Fallback is client-ssl's c3d-client-fallback-cert: the certificate
	// forged from when the client showed none; nil: such a client's
	// member handshake offers the server-ssl profile's own certificate,
	// if any.
	Fallback *x509.Certificate
	// Shared, when set, keeps the forged key and certificates across
	// configurations.
	Shared *Forgers
}

// C3D is one virtual's client certificate delegation.
type C3D struct {
	f        *forger
	fallback *x509.Certificate

	mu   sync.Mutex
	cfgs map[c3dKey]*tls.Config
}

// c3dKey names a member configuration: the server-ssl configuration it
// was made from (one per SNI name) and the certificate it offers.
type c3dKey struct {
	base *tls.Config
	fc   *forged
}

// c3dSessions bounds the sessions kept per forged certificate: a
// member's session is resumed only by a connection delegating the same
// client [M].
const c3dSessions = 64

// ParseOID reads a dotted object identifier (1.3.6.1.4.1.311.20.2),
// as c3d-cert-extension-custom-oids lists them.
func ParseOID(s string) (asn1.ObjectIdentifier, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%q is not an object identifier (dotted numbers, such as 1.3.6.1.4.1.311.20.2)", s)
	}
	oid := make(asn1.ObjectIdentifier, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (i == 0 && n > 2) {
			return nil, fmt.Errorf("%q is not an object identifier (dotted numbers, such as 1.3.6.1.4.1.311.20.2)", s)
		}
		oid[i] = n
	}
	return oid, nil
}

// NewC3D checks c and makes its delegation: the CA must be a CA whose
// key is CAKey.
func NewC3D(c C3DConfig) (*C3D, error) {
	what := "profile server-ssl " + c.Name
	if c.CA == nil || c.CAKey == nil {
		return nil, fmt.Errorf("%s: ssl-c3d enabled needs c3d-ca-cert and c3d-ca-key", what)
	}
	if !samePublic(c.CA.PublicKey, c.CAKey.Public()) {
		return nil, fmt.Errorf("%s: c3d-ca-key is not the key of c3d-ca-cert %q", what, c.CA.Subject.String())
	}
	if !c.CA.IsCA || c.CA.KeyUsage != 0 && c.CA.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("%s: c3d-ca-cert %q is not a CA certificate (basicConstraints CA:TRUE, keyCertSign), so members would not trust what it signs", what, c.CA.Subject.String())
	}
	if c.Lifespan <= 0 {
		c.Lifespan = 24 * time.Hour
	}
	if c.Extensions == nil {
		c.Extensions = C3DDefaultExtensions
	}
	var exts uint16
	for _, e := range c.Extensions {
		i := slices.Index(KnownExtensions, e)
		if i < 0 {
			return nil, fmt.Errorf("%s: c3d-cert-extension-includes: unknown extension %q (valid: %v)", what, e, KnownExtensions)
		}
		exts |= 1 << i
	}
	f := c.Shared.forger(&forger{ca: c.CA, chain: c.CAChain, caKey: c.CAKey, lifespan: c.Lifespan, exts: exts, oids: c.CustomOIDs})
	return &C3D{f: f, fallback: c.Fallback, cfgs: map[c3dKey]*tls.Config{}}, nil
}

// Source is the certificate a member is shown a copy of for a client
// whose handshake showed peer: the client's own, else the fallback; nil
// when neither.
func (d *C3D) Source(peer []*x509.Certificate) *x509.Certificate {
	if len(peer) > 0 {
		return peer[0]
	}
	return d.fallback
}

// ServerSide is the member configuration, base (the server-ssl
// profile's, for the connection's SNI) offering the certificate forged
// from src (Source), forged now or kept; base itself when src is nil.
// r is the rules' choices (nil: none): their extensions and validity go
// into the forged certificate. Each forged certificate has its own
// session cache, so that a member's session is never resumed for
// another client.
func (d *C3D) ServerSide(base *tls.Config, src *x509.Certificate, r *C3DRule, now time.Time) (*tls.Config, error) {
	if src == nil {
		return base, nil
	}
	// Kept by certificate and subject: a rule may name another subject
	// (WithCommonName) for the same certificate; and by the rule's
	// extensions and validity, when it chose any.
	fp, sub := sha256.Sum256(src.Raw), sha256.Sum256(src.RawSubject)
	for i := range fp {
		fp[i] ^= sub[i]
	}
	if !r.forging() {
		r = nil
	} else {
		k := r.Key()
		for i := range fp {
			fp[i] ^= k[i]
		}
	}
	fc, err := d.f.getKeyed(fp, src, now, r)
	if err != nil {
		return nil, err
	}
	k := c3dKey{base, fc}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cfg := d.cfgs[k]; cfg != nil {
		return cfg, nil
	}
	cfg := base.Clone()
	cfg.Certificates = []tls.Certificate{fc.cert}
	cfg.GetClientCertificate = nil
	if base.ClientSessionCache != nil {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(c3dSessions)
	}
	if len(d.cfgs) >= maxForged {
		clear(d.cfgs)
	}
	d.cfgs[k] = cfg
	return cfg, nil
}

// Cached is how many forged certificates the delegation's forger keeps.
func (d *C3D) Cached() int {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return len(d.f.forged)
}

// WithCommonName is src with its subject's common name set to cn (the
// others kept, in order; added last when it has none), for SSL::c3d
// subject commonName. The value is encoded as PrintableString where it
// can be, else UTF8String, as BIG-IP documents.
func WithCommonName(src *x509.Certificate, cn string) (*x509.Certificate, error) {
	var rdns pkix.RDNSequence
	if _, err := asn1.Unmarshal(src.RawSubject, &rdns); err != nil {
		return nil, fmt.Errorf("c3d: the certificate's subject: %v", err)
	}
	out := make(pkix.RDNSequence, 0, len(rdns)+1)
	found := false
	for _, rdn := range rdns {
		set := slices.Clone(rdn)
		for i, a := range set {
			if a.Type.Equal(oidCommonName) {
				set[i].Value, found = cn, true
			}
		}
		out = append(out, set)
	}
	if !found {
		out = append(out, pkix.RelativeDistinguishedNameSET{{Type: oidCommonName, Value: cn}})
	}
	raw, err := asn1.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("c3d: the subject with common name %q: %v", cn, err)
	}
	c := *src
	c.RawSubject = raw
	return &c, nil
}

var oidCommonName = asn1.ObjectIdentifier{2, 5, 4, 3}

// C3DRule is what a connection's rules chose with SSL::c3d; nil or the
// zero value: nothing.
type C3DRule struct {
	// Cert replaces the client's certificate (SSL::c3d cert).
	Cert *x509.Certificate
	// CN, when SetCN, is the subject's common name (SSL::c3d subject
	// commonName).
	CN    string
	SetCN bool
	// Extensions are added to the forged certificate (SSL::c3d
	// extension), for members that read a client's role or account from
	// an extension its own certificate does not carry.
	Extensions []pkix.Extension
	// Lifespan (SSL::c3d cert_lifespan) replaces c3d-cert-lifespan for
	// this connection; Start (SSL::c3d cert_start_date) is the forged
	// certificate's start, the lifespan counted from it. Zero: the
	// profile's lifespan from an hour before the forging.
	Lifespan time.Duration
	Start    time.Time
}

// C3DMaxLifespan bounds SSL::c3d cert_lifespan as c3d-cert-lifespan is
// bounded: a year [M].
const C3DMaxLifespan = 8760 * time.Hour

// AddExtension adds the extension oid (dotted) with value, one whole DER
// element, to the forged certificate (SSL::c3d extension), in place of
// one of that OID added before or copied from the client's certificate.
// Not critical.
func (r *C3DRule) AddExtension(oid string, value []byte) error {
	id, err := ParseOID(oid)
	if err != nil {
		return fmt.Errorf("SSL::c3d extension: %v", err)
	}
	if !IsDER(value) {
		return fmt.Errorf("SSL::c3d extension %s: the value is not one DER element", oid)
	}
	r.Extensions = slices.DeleteFunc(r.Extensions, func(e pkix.Extension) bool { return e.Id.Equal(id) })
	r.Extensions = append(r.Extensions, pkix.Extension{Id: id, Value: value})
	return nil
}

// IsDER reports whether b is one whole DER element.
func IsDER(b []byte) bool {
	var raw asn1.RawValue
	rest, err := asn1.Unmarshal(b, &raw)
	return err == nil && len(rest) == 0
}

// SetLifespan is SSL::c3d cert_lifespan: hours, 1 to a year, as
// c3d-cert-lifespan [M: hours, as the profile's setting].
func (r *C3DRule) SetLifespan(hours string) error {
	n, err := strconv.Atoi(hours)
	if err != nil || n < 1 || time.Duration(n)*time.Hour > C3DMaxLifespan {
		return fmt.Errorf("SSL::c3d cert_lifespan %q: hours from 1 to %d", hours, int(C3DMaxLifespan/time.Hour))
	}
	r.Lifespan = time.Duration(n) * time.Hour
	return nil
}

// SetStart is SSL::c3d cert_start_date: seconds since 1970 (as [clock
// seconds] gives them), or an ASN.1 time, GeneralizedTime
// (20260102030405Z) or UTCTime (260102030405Z), in UTC [M].
func (r *C3DRule) SetStart(date string) error {
	if n, err := strconv.ParseInt(date, 10, 64); err == nil && len(date) < 12 {
		if n < 0 {
			return fmt.Errorf("SSL::c3d cert_start_date %q: a date before 1970", date)
		}
		r.Start = time.Unix(n, 0).UTC()
		return nil
	}
	for _, layout := range []string{"20060102150405Z", "060102150405Z"} {
		if t, err := time.Parse(layout, date); err == nil {
			r.Start = t
			return nil
		}
	}
	return fmt.Errorf("SSL::c3d cert_start_date %q: seconds since 1970, or a time such as 20260102030405Z (UTC)", date)
}

// forging reports whether r changes how the certificate is forged.
func (r *C3DRule) forging() bool {
	return r != nil && (len(r.Extensions) > 0 || r.Lifespan > 0 || !r.Start.IsZero())
}

// hasExtension reports whether the rule adds an extension of that OID.
func (r *C3DRule) hasExtension(id asn1.ObjectIdentifier) bool {
	return r != nil && slices.ContainsFunc(r.Extensions, func(e pkix.Extension) bool { return e.Id.Equal(id) })
}

// Key names the rule's forging choices (extensions and validity), for
// the caches of forged certificates and of member connections; zero
// when it has none.
func (r *C3DRule) Key() [32]byte {
	if !r.forging() {
		return [32]byte{}
	}
	h := sha256.New()
	for _, e := range r.Extensions {
		fmt.Fprintf(h, "%v\x00%x\x00", e.Id, e.Value)
	}
	fmt.Fprintf(h, "%d\x00%d", r.Lifespan, r.Start.Unix())
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Chosen is the certificate a member is shown a copy of for a client
// whose handshake showed peer, after its rules' choices r: r's
// certificate, else Source's, with r's common name; nil when none.
func (d *C3D) Chosen(peer []*x509.Certificate, r *C3DRule) (*x509.Certificate, error) {
	if r == nil {
		return d.Source(peer), nil
	}
	src := r.Cert
	if src == nil {
		src = d.Source(peer)
	}
	if src == nil || !r.SetCN {
		return src, nil
	}
	return WithCommonName(src, r.CN)
}
