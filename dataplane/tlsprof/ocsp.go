package tlsprof

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP is a `sys crypto cert-validator ocsp`: where and how the status of
// a certificate is asked. A client-ssl profile with ocsp-stapling staples
// the answers for its certificates; a server-ssl profile's ocsp checks
// its members' certificates with it.
type OCSP struct {
	Name string
	// ResponderURL is responder-url; "" asks the responder the
	// certificate names (its Authority Information Access).
	ResponderURL string
	// Timeout bounds one exchange with the responder (timeout; 0: 8 s).
	Timeout time.Duration
	// CacheTimeout (cache-timeout) bounds how long an answer is used,
	// below its own next-update; 0: indefinite (until next-update).
	CacheTimeout time.Duration
	// CacheErrorTimeout (cache-error-timeout) is how long a failed
	// exchange is remembered before the responder is asked again.
	CacheErrorTimeout time.Duration
	// ClockSkew (clock-skew) is how far the responder's clock may be
	// from ours when its answer's dates are checked.
	ClockSkew time.Duration
	// SignHash (sign-hash) is the hash of the request's certificate ID:
	// crypto.SHA1 or crypto.SHA256 (0: SHA-256).
	SignHash crypto.Hash
	// TrustedResponders (trusted-responders) are the certificates that
	// may sign answers besides the issuer and the responders it
	// delegated to; nil: only those.
	TrustedResponders *Cert
	// StatusAge (status-age) refuses an answer whose this-update is
	// further in the past than it (plus clock-skew), for responders that
	// hand out answers made long ago; 0: any age, BIG-IP's default.
	StatusAge time.Duration
	// StrictRespCertCheck (strict-resp-cert-check) requires a responder
	// certificate that signs answers in the issuer's name to be marked
	// for OCSP signing (RFC 6960 4.2.2.2), trusted-responders too;
	// disabled, BIG-IP's default, the issuer's signature on it suffices.
	StrictRespCertCheck bool
	// ConcurrentLimit (concurrent-connections-limit) bounds the validator's
	// exchanges with its responder in progress at once, so that a burst of
	// new certificates does not flood it; past it an exchange waits for a
	// place within its timeout. 0: no bound.
	ConcurrentLimit int
	// Resolver (dns-resolver, a `net dns-resolver`) resolves the
	// responder's host name, for responders whose names only the
	// resolver's forward zones know; nil: the system's resolver.
	// ResolverName tells validators with different resolvers apart.
	Resolver     Resolver
	ResolverName string
	// Signer and SignerKey (signer-cert, signer-key) sign the requests,
	// for responders that answer only known requestors; nil: unsigned.
	Signer    *Cert
	SignerKey *Key
	// Proxies (proxy-server-pool) are the HTTP proxies the responder is
	// reached through, for sites where only proxies reach it: the pool's
	// members that may take connections now, asked at each exchange and
	// tried in turn; nil: the responder is connected to directly.
	// ProxyPool names the pool.
	Proxies   func() []netip.AddrPort
	ProxyPool string
	// Params is set when the settings come from an `ltm profile
	// ocsp-stapling-params` (BIG-IP 11.6 to 13.0) that a cert-key-chain
	// entry names, rather than from a cert-validator: messages name it so.
	Params bool
}

// label is how messages name o.
func (o *OCSP) label() string {
	if o.Params {
		return "ocsp-stapling-params " + o.Name
	}
	return "cert-validator " + o.Name
}

// Resolver is a net dns-resolver as a validator uses it
// (fwdproxy.Resolver): host's addresses, IPv4 first.
type Resolver interface {
	Lookup(ctx context.Context, host string, ipv6 bool) ([]netip.Addr, error)
}

// OCSP statuses, as an answer gives them and OpenSSL prints them.
const (
	OCSPGood    = "good"
	OCSPRevoked = "revoked"
	OCSPUnknown = "unknown"
)

// ocspAnswer is one fetched answer, or a failed exchange (der nil, err set).
type ocspAnswer struct {
	der     []byte
	status  string
	expires time.Time // the answer is not used after; a failure: when to ask again
	refresh time.Time // when to ask again ahead of expires
	err     error
	// For show: the answer's own dates, when it came, and the responder
	// last asked.
	thisUpdate, nextUpdate, fetched time.Time
	url                             string
}

// key tells validators apart in the shared cache: two profiles with the
// same validator and certificate share one answer.
func (o *OCSP) key() string {
	var tr string
	if o.TrustedResponders != nil {
		for _, c := range o.TrustedResponders.Certs {
			h := sha256.Sum256(c.Raw)
			tr += string(h[:8])
		}
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%d\x00%d\x00%d\x00%x\x00%d\x00%v\x00%d\x00%s", o.Name, o.ResponderURL, o.Timeout, o.CacheTimeout,
		o.CacheErrorTimeout, o.ClockSkew, o.SignHash, tr, o.StatusAge, o.StrictRespCertCheck, o.ConcurrentLimit, o.resolverKey()) + o.signerKey() + o.proxyKey() + fmt.Sprint("\x00", o.Params)
}

// signerKey tells request signers apart.
func (o *OCSP) signerKey() string {
	if o.Signer == nil || len(o.Signer.Certs) == 0 {
		return ""
	}
	h := sha256.Sum256(o.Signer.Certs[0].Raw)
	return "\x00" + string(h[:8])
}

// proxyKey tells validators with different proxy pools apart.
func (o *OCSP) proxyKey() string {
	if o.Proxies == nil {
		return ""
	}
	return "\x00proxy " + o.ProxyPool
}

// resolverKey tells resolvers apart: the same name with other settings
// is another resolver.
func (o *OCSP) resolverKey() string {
	if o.Resolver == nil {
		return ""
	}
	return fmt.Sprintf("%s@%p", o.ResolverName, o.Resolver)
}

func (o *OCSP) hash() crypto.Hash {
	if o.SignHash == 0 {
		return crypto.SHA256
	}
	return o.SignHash
}

// timeout bounds one exchange.
func (o *OCSP) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 8 * time.Second
	}
	return o.Timeout
}

// url is where the status of leaf is asked.
func (o *OCSP) url(leaf *x509.Certificate) (string, error) {
	if o.ResponderURL != "" {
		return o.ResponderURL, nil
	}
	for _, u := range leaf.OCSPServer {
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return u, nil
		}
	}
	return "", fmt.Errorf("%s: no responder-url, and certificate %q names no OCSP responder", o.label(), leaf.Subject.CommonName)
}

// ocspSlots are the validators' concurrent-connections-limit places, by
// validator name and limit (a commit that changes the limit starts a new
// count; exchanges under way finish against the old one).
var ocspSlots struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// slots is o's places, nil without a limit.
func (o *OCSP) slots() chan struct{} {
	if o.ConcurrentLimit <= 0 {
		return nil
	}
	k := fmt.Sprintf("%s\x00%d", o.Name, o.ConcurrentLimit)
	ocspSlots.mu.Lock()
	defer ocspSlots.mu.Unlock()
	if ocspSlots.m == nil || len(ocspSlots.m) >= maxOCSPEntries {
		ocspSlots.m = map[string]chan struct{}{}
	}
	c := ocspSlots.m[k]
	if c == nil {
		c = make(chan struct{}, o.ConcurrentLimit)
		ocspSlots.m[k] = c
	}
	return c
}

// ocspClient asks responders without a dns-resolver or proxy pool: no
// proxy from the environment, no connection kept between asks.
var ocspClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// proxyURL stands for the proxy pool in a transport's Proxy: the
// transport dials it, and dialProxy dials the pool's members instead.
var proxyURL = &url.URL{Scheme: "http", Host: "proxy-server-pool:80"}

// client is the HTTP client o's exchanges use: ocspClient; one that
// speaks to the responder through o's proxy pool (an absolute URL for
// http://, CONNECT for https://), the proxies resolving its name; or one
// that resolves the responder's host through o's dns-resolver and
// connects to its addresses in turn.
func (o *OCSP) client() *http.Client {
	var d net.Dialer
	if o.Proxies != nil {
		return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return o.dialProxy(ctx, &d, network)
			}}}
	}
	if o.Resolver == nil {
		return ocspClient
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := o.Resolver.Lookup(ctx, host, true)
		if err != nil {
			return nil, fmt.Errorf("dns-resolver %s: %s: %v", o.ResolverName, host, err)
		}
		for _, a := range addrs {
			var c net.Conn
			if c, err = d.DialContext(ctx, network, net.JoinHostPort(a.String(), port)); err == nil {
				return c, nil
			}
		}
		if err == nil {
			err = fmt.Errorf("dns-resolver %s: no address for %s", o.ResolverName, host)
		}
		return nil, err
	}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DialContext: dial}}
}

// dialProxy connects to the first of o's proxies that answers, in the
// pool's order [M: BIG-IP's choice among them is not documented].
func (o *OCSP) dialProxy(ctx context.Context, d *net.Dialer, network string) (net.Conn, error) {
	members := o.Proxies()
	if len(members) == 0 {
		return nil, fmt.Errorf("proxy-server-pool %s: no member available", o.ProxyPool)
	}
	var err error
	for _, m := range members {
		var c net.Conn
		if c, err = d.DialContext(ctx, network, m.String()); err == nil {
			return c, nil
		}
	}
	return nil, fmt.Errorf("proxy-server-pool %s: %v", o.ProxyPool, err)
}

// maxOCSPResponse bounds what is read from a responder.
const maxOCSPResponse = 1 << 20

// fetch asks the responder for leaf's status and checks the answer: its
// signature (by the issuer, a responder the issuer delegated to, or one
// of trusted-responders), its certificate ID and its dates.
func (o *OCSP) fetch(ctx context.Context, leaf, issuer *x509.Certificate, now func() time.Time) ocspAnswer {
	var u string
	fail := func(err error) ocspAnswer {
		// Asked again after cache-error-timeout, at least a second on,
		// so that cache-error-timeout 0 does not have every handshake
		// ask a responder that is down [M].
		t := now().Add(max(o.CacheErrorTimeout, time.Second))
		return ocspAnswer{err: err, expires: t, refresh: t, url: u}
	}
	u, err := o.url(leaf)
	if err != nil {
		return fail(err)
	}
	req, err := ocsp.CreateRequest(leaf, issuer, &ocsp.RequestOptions{Hash: o.hash()})
	if err == nil && o.Signer != nil && len(o.Signer.Certs) > 0 && o.SignerKey != nil {
		req, err = signRequest(req, o.Signer.Certs[0], o.SignerKey.Signer)
	}
	if err != nil {
		return fail(fmt.Errorf("%s: %v", o.label(), err))
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout())
	defer cancel()
	if slots := o.slots(); slots != nil {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return fail(fmt.Errorf("%s: concurrent-connections-limit %d: no place within the timeout", o.label(), o.ConcurrentLimit))
		}
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(req))
	if err != nil {
		return fail(fmt.Errorf("%s: responder %s: %v", o.label(), u, err))
	}
	hr.Header.Set("Content-Type", "application/ocsp-request")
	hr.Header.Set("Accept", "application/ocsp-response")
	res, err := o.client().Do(hr)
	if err != nil {
		return fail(fmt.Errorf("%s: responder %s: %v", o.label(), u, err))
	}
	der, err := io.ReadAll(io.LimitReader(res.Body, maxOCSPResponse))
	res.Body.Close()
	if err != nil {
		return fail(fmt.Errorf("%s: responder %s: %v", o.label(), u, err))
	}
	if res.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("%s: responder %s answered HTTP %d", o.label(), u, res.StatusCode))
	}
	at := now()
	a, err := o.check(der, leaf, issuer, at)
	if err != nil {
		return fail(fmt.Errorf("%s: responder %s: %v", o.label(), u, err))
	}
	a.fetched, a.url = at, u
	return a
}

// check reads an answer for leaf and says until when it is used.
func (o *OCSP) check(der []byte, leaf, issuer *x509.Certificate, now time.Time) (ocspAnswer, error) {
	var r *ocsp.Response
	var err error
	if o.TrustedResponders == nil {
		r, err = ocsp.ParseResponseForCert(der, leaf, issuer)
	} else {
		// Signed by the issuer or one it delegated to, or by a trusted
		// responder (ParseResponseForCert without an issuer checks the
		// certificate ID and the signature by the embedded responder).
		r, err = ocsp.ParseResponseForCert(der, leaf, nil)
		if err == nil && !o.trusted(r, issuer) {
			err = errors.New("the answer is signed by neither the issuer nor a trusted responder")
		}
	}
	if err != nil {
		var re ocsp.ResponseError
		if errors.As(err, &re) {
			return ocspAnswer{}, fmt.Errorf("the responder refused: %v", re)
		}
		return ocspAnswer{}, err
	}
	// A delegated responder must be marked for OCSP signing (RFC 6960
	// 4.2.2.2), always when the issuer delegated to it [M: BIG-IP's
	// default lets any certificate of the issuer sign; the RFC's rule is
	// kept], and with strict-resp-cert-check a trusted responder too.
	signer := r.Certificate
	if signer == nil && o.StrictRespCertCheck && o.TrustedResponders != nil {
		for _, c := range o.TrustedResponders.Certs {
			if r.CheckSignatureFrom(c) == nil {
				signer = c
				break
			}
		}
	}
	if signer != nil && (issuer == nil || !signer.Equal(issuer)) && (o.TrustedResponders == nil || o.StrictRespCertCheck) {
		ok := false
		for _, u := range signer.ExtKeyUsage {
			ok = ok || u == x509.ExtKeyUsageOCSPSigning
		}
		if !ok {
			return ocspAnswer{}, fmt.Errorf("the responder's certificate %q is not for OCSP signing", signer.Subject.CommonName)
		}
	}
	if r.ThisUpdate.After(now.Add(o.ClockSkew)) {
		return ocspAnswer{}, fmt.Errorf("the answer is from the future (this update %s)", r.ThisUpdate.UTC().Format(time.RFC3339))
	}
	if o.StatusAge > 0 && now.Sub(r.ThisUpdate) > o.StatusAge+o.ClockSkew {
		return ocspAnswer{}, fmt.Errorf("the answer is %d s old, past status-age %d s (this update %s)", int64(now.Sub(r.ThisUpdate)/time.Second),
			int64(o.StatusAge/time.Second), r.ThisUpdate.UTC().Format(time.RFC3339))
	}
	if !r.NextUpdate.IsZero() && !now.Add(-o.ClockSkew).Before(r.NextUpdate) {
		return ocspAnswer{}, fmt.Errorf("the answer is out of date (next update %s)", r.NextUpdate.UTC().Format(time.RFC3339))
	}
	a := ocspAnswer{der: der, status: OCSPUnknown, thisUpdate: r.ThisUpdate, nextUpdate: r.NextUpdate}
	switch r.Status {
	case ocsp.Good:
		a.status = OCSPGood
	case ocsp.Revoked:
		a.status = OCSPRevoked
	}
	// Used until next-update or cache-timeout, whichever comes first;
	// asked again half-way there, so that a fresh answer is in before the
	// old one runs out [M]. No next-update and no cache-timeout: an
	// hour, asked again at half.
	life := time.Hour
	if !r.NextUpdate.IsZero() {
		life = r.NextUpdate.Sub(now)
	}
	if o.CacheTimeout > 0 && (r.NextUpdate.IsZero() || o.CacheTimeout < life) {
		life = o.CacheTimeout
	}
	a.expires = now.Add(life)
	a.refresh = now.Add(life / 2)
	return a, nil
}

// trusted reports whether r is signed by the issuer, a responder the
// issuer certified, or one of trusted-responders.
func (o *OCSP) trusted(r *ocsp.Response, issuer *x509.Certificate) bool {
	signers := []*x509.Certificate{issuer}
	signers = append(signers, o.TrustedResponders.Certs...)
	for _, s := range signers {
		if s == nil {
			continue
		}
		if r.CheckSignatureFrom(s) == nil {
			return true
		}
		if r.Certificate != nil && r.Certificate.CheckSignatureFrom(s) == nil {
			return true // the embedded responder's signature was checked by the parse
		}
	}
	return false
}

// ocspEntry is the answer for one certificate under one validator,
// shared by the profiles that use the pair and kept across commits.
type ocspEntry struct {
	o            *OCSP
	vkey         string // o.key(): the validator's settings, for show
	leaf, issuer *x509.Certificate
	cur          atomic.Pointer[ocspAnswer]
	busy         atomic.Bool
	used         atomic.Bool   // a handshake read the answer since the last exchange
	member       atomic.Bool   // a server-ssl handshake checked a member's certificate by it
	members      memberAddrs   // the members that presented the certificate (ocspmember.go)
	mu           sync.Mutex    // one exchange at a time for member checks
	done         chan struct{} // closed when the first exchange ended
	once         sync.Once
	now          func() time.Time
}

// ocspCache holds the entries; bounded: past the bound the idle entries
// are dropped (evictIdle), and all of them when too few are idle.
var ocspCache struct {
	mu sync.Mutex
	m  map[string]*ocspEntry
}

const maxOCSPEntries = 4096

// ocspKey is the cache's key of leaf under the validator settings vk.
func ocspKey(vk string, leaf *x509.Certificate) string {
	h := sha256.Sum256(leaf.Raw)
	return vk + "\x00" + string(h[:])
}

// ocspFor is the shared entry of leaf under o.
func ocspFor(o *OCSP, leaf, issuer *x509.Certificate) *ocspEntry {
	vk := o.key()
	k := ocspKey(vk, leaf)
	ocspCache.mu.Lock()
	defer ocspCache.mu.Unlock()
	if e := ocspCache.m[k]; e != nil {
		return e
	}
	if ocspCache.m == nil {
		ocspCache.m = map[string]*ocspEntry{}
	}
	if len(ocspCache.m) >= maxOCSPEntries && evictIdle(ocspCache.m) < maxOCSPEntries/4 {
		ocspCache.m = map[string]*ocspEntry{}
	}
	e := &ocspEntry{o: o, vkey: vk, leaf: leaf, issuer: issuer, done: make(chan struct{}), now: time.Now}
	e.cur.Store(&ocspAnswer{}) // due now
	e.used.Store(true)
	ocspCache.m[k] = e
	return e
}

// evictIdle drops from m the entries no handshake read since their last
// exchange ended (used false, none under way) and returns how many
// [M: the answers in use stay cached and listed by the shows; an idle
// one leaves them, and comes back with its first handshake]. Called
// under ocspCache.mu when m is full: one walk of at most
// maxOCSPEntries.
func evictIdle(m map[string]*ocspEntry) int {
	n := 0
	for k, e := range m {
		if !e.used.Load() && !e.busy.Load() {
			delete(m, k)
			n++
		}
	}
	return n
}

// kick starts an exchange in the background when one is due and none
// is under way.
func (e *ocspEntry) kick(now time.Time) {
	if now.Before(e.cur.Load().refresh) || !e.busy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		a := e.o.fetch(context.Background(), e.leaf, e.issuer, e.now)
		if a.err != nil {
			// A failure keeps an answer that is still good.
			if old := e.cur.Load(); old.der != nil && e.now().Before(old.expires) {
				a.der, a.status, a.expires = old.der, old.status, old.expires
				a.thisUpdate, a.nextUpdate, a.fetched = old.thisUpdate, old.nextUpdate, old.fetched
			}
		}
		e.cur.Store(&a)
		e.busy.Store(false)
		e.once.Do(func() { close(e.done) })
		e.schedule(&a)
	}()
}

// schedule asks again when a is due to be refreshed, ahead of its
// expiry, if a handshake used the entry meanwhile: an answer in use is
// renewed before it runs out, and one no profile uses any more (its
// profile gone at a commit) is asked once more at most.
func (e *ocspEntry) schedule(a *ocspAnswer) {
	time.AfterFunc(max(a.refresh.Sub(e.now()), time.Second), func() {
		if e.used.Swap(false) {
			e.kick(e.now())
		}
	})
}

// answer is the answer to staple or check at now (nil der: none), and
// starts a fresh exchange when one is due.
func (e *ocspEntry) answer(now time.Time) *ocspAnswer {
	if !e.used.Load() {
		e.used.Store(true)
	}
	a := e.cur.Load()
	if !now.Before(a.refresh) {
		e.kick(now)
	}
	if a.der != nil && now.Before(a.expires) {
		return a
	}
	return nil
}

// stapled is one certificate of a client-ssl profile with ocsp-stapling:
// its answer is read at each handshake, so that a refreshed one is used
// without a commit.
type stapled struct {
	name  string // the sys file ssl-cert, for show
	base  tls.Certificate
	entry *ocspEntry // nil: not stapled
	last  atomic.Pointer[stapledCert]
}

type stapledCert struct {
	der  []byte
	cert *tls.Certificate
}

// cert is the certificate with the current answer stapled. A new
// tls.Certificate is made only when the answer changes.
func (s *stapled) cert(now time.Time) *tls.Certificate {
	if s.entry == nil {
		return &s.base
	}
	var der []byte
	if a := s.entry.answer(now); a != nil {
		der = a.der
	}
	if l := s.last.Load(); l != nil && sameBytes(l.der, der) {
		return l.cert
	}
	c := s.base
	c.OCSPStaple = der
	s.last.Store(&stapledCert{der: der, cert: &c})
	return &c
}

func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// staplingCertificate picks a certificate as crypto/tls does among a
// profile's (the first the client supports, else the first) and
// staples its current answer.
func staplingCertificate(certs []*stapled) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		now := time.Now()
		pick := certs[0]
		if len(certs) > 1 {
			for _, s := range certs {
				if h.SupportsCertificate(&s.base) == nil {
					pick = s
					break
				}
			}
		}
		return pick.cert(now), nil
	}
}

// OCSPStatus is the status the cached answer gives for a profile's
// certificate under its validator, for diagnostics and tests: good,
// revoked, unknown, or "" with the last exchange's error when there is
// no answer to use.
func (b *Built) OCSPStatus(i int) (string, error) {
	if b == nil || i >= len(b.stapling) || b.stapling[i].entry == nil {
		return "", errors.New("not stapled")
	}
	a := b.stapling[i].entry.cur.Load()
	if a.der != nil && b.stapling[i].entry.now().Before(a.expires) {
		return a.status, nil
	}
	return "", a.err
}

// WaitOCSP waits, up to d, for the first exchange of each stapled
// certificate of the profile to end; a commit need not wait, a test
// does.
func (b *Built) WaitOCSP(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for _, s := range b.stapling {
		if s.entry == nil {
			continue
		}
		select {
		case <-s.entry.done:
		case <-t.C:
			return false
		}
	}
	return true
}

// memberStatus is a member certificate's status under o for a
// server-ssl handshake: a cached answer, else one exchange now (within
// the validator's timeout). A failed exchange is remembered for
// cache-error-timeout.
func memberStatus(o *OCSP, leaf, issuer *x509.Certificate, now time.Time) (string, error) {
	e := ocspFor(o, leaf, issuer)
	if !e.used.Load() {
		e.used.Store(true)
	}
	if !e.member.Load() {
		e.member.Store(true) // listed by show ltm serverssl ocsp-responses
	}
	if a := e.cur.Load(); a.der != nil && now.Before(a.expires) {
		if !now.Before(a.refresh) {
			e.kick(now) // renewed in the background, this one still good
		}
		return a.status, nil
	}
	// No answer in hand: the handshake waits for one exchange, which
	// the handshakes meeting it meanwhile share.
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.cur.Load()
	switch {
	case a.der != nil && now.Before(a.expires):
		return a.status, nil
	case a.err != nil && now.Before(a.refresh):
		return "", a.err // cache-error-timeout
	}
	na := o.fetch(context.Background(), leaf, issuer, e.now)
	e.cur.Store(&na)
	e.once.Do(func() { close(e.done) })
	e.schedule(&na)
	if na.err != nil {
		return "", na.err
	}
	return na.status, nil
}

// memberOCSP is a server-ssl profile's ocsp: the member's certificate
// asked of the responder at each full handshake (answers cached).
type memberOCSP struct {
	what                         string
	o                            *OCSP
	cas                          []*x509.Certificate // ca-file and chain: where the issuer may be
	ignoreRevoked, ignoreUnknown bool
}

// check ends the handshake when the member's certificate is revoked, or
// its status cannot be had or is unknown, as the controls say.
func (m *memberOCSP) check(chain []*x509.Certificate, now time.Time) error {
	if len(chain) == 0 {
		return errNoCert
	}
	leaf := chain[0]
	issuer := issuerOf(leaf, chain[1:], m.cas)
	var status string
	var err error
	if issuer == nil {
		err = fmt.Errorf("the issuer of %q is neither in the member's chain nor in ca-file", leaf.Subject.CommonName)
	} else {
		status, err = memberStatus(m.o, leaf, issuer, now)
	}
	switch {
	case status == OCSPRevoked && !m.ignoreRevoked:
		return fmt.Errorf("%s: the member's certificate %q (serial %X) is revoked (OCSP, cert-validator %s)", m.what, leaf.Subject.CommonName, leaf.SerialNumber, m.o.Name)
	case status == OCSPRevoked, status == OCSPGood:
		return nil
	case m.ignoreUnknown:
		return nil
	case err != nil:
		return fmt.Errorf("%s: no OCSP status for the member's certificate %q (unknown-cert-status-response-control drop): %v", m.what, leaf.Subject.CommonName, err)
	default:
		return fmt.Errorf("%s: the member's certificate %q has OCSP status unknown (unknown-cert-status-response-control drop)", m.what, leaf.Subject.CommonName)
	}
}

// issuerOf is the certificate among the lists that signed leaf.
func issuerOf(leaf *x509.Certificate, lists ...[]*x509.Certificate) *x509.Certificate {
	for _, l := range lists {
		for _, c := range l {
			if bytes.Equal(c.RawSubject, leaf.RawIssuer) && leaf.CheckSignatureFrom(c) == nil {
				return c
			}
		}
	}
	return nil
}

// staplingOf pairs a client-ssl profile's certificates with their OCSP
// validators and starts the first exchanges, so that the first clients
// find an answer. At least one certificate must have a validator.
func staplingOf(what string, chain []CertKeyChain, certs []tls.Certificate) ([]*stapled, error) {
	var out []*stapled
	found := false
	for i, ck := range chain {
		s := &stapled{name: ck.Cert.Name, base: certs[i]}
		if ck.OCSP != nil {
			leaf := ck.Cert.Certs[0]
			var issuer *x509.Certificate
			if ck.Issuer != nil {
				issuer = issuerOf(leaf, ck.Issuer.Certs)
				if issuer == nil {
					return nil, fmt.Errorf("%s: issuer-cert %s of certificate %s did not sign it", what, ck.Issuer.Name, ck.Cert.Name)
				}
			} else {
				var rest []*x509.Certificate
				rest = append(rest, ck.Cert.Certs[1:]...)
				if ck.Chain != nil {
					rest = append(rest, ck.Chain.Certs...)
				}
				if ck.TrustedCA != nil {
					rest = append(rest, ck.TrustedCA.Certs...)
				}
				if issuer = issuerOf(leaf, rest); issuer == nil {
					if ck.OCSP.Params {
						return nil, fmt.Errorf("%s: ocsp-stapling: certificate %s needs its issuer (set issuer-cert on it, a chain holding the issuer, or the issuer in trusted-ca of %s)", what, ck.Cert.Name, ck.OCSP.label())
					}
					return nil, fmt.Errorf("%s: ocsp-stapling: certificate %s needs its issuer (set issuer-cert on it, or a chain holding the issuer)", what, ck.Cert.Name)
				}
			}
			s.entry = ocspFor(ck.OCSP, leaf, issuer)
			s.entry.kick(time.Now())
			found = true
		}
		out = append(out, s)
	}
	if !found {
		return nil, fmt.Errorf("%s: ocsp-stapling enabled, but no certificate of its cert-key-chain has an OCSP cert-validator (sys file ssl-cert ... cert-validators { V } cert-validation-options { ocsp }) or names ocsp-stapling-params (cert-key-chain { NAME { ... ocsp-stapling-params P } })", what)
	}
	return out, nil
}
