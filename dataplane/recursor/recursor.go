// Package recursor resolves names from the root down, as BIG-IP's DNS
// resolver (ltm dns cache resolver, itself derived from unbound) does: it
// asks the root hints, follows the referrals with their glue, looks up
// the addresses of name servers named out of bailiwick, chases CNAMEs
// across zones, and keeps the delegations (nameserver-cache-count) and
// the record sets (rrset-cache-size) it learns, so that a busy cache asks
// the root once. README.md says what is [M].
package recursor

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Config is a resolver's settings, plain data from the daemon so that a
// commit that leaves them unchanged keeps the running resolver and what
// it learnt.
type Config struct {
	// RootHints are the servers asked first (root-hints); empty means
	// the root servers of the Internet (DefaultRootHints).
	RootHints []netip.AddrPort
	// IPv4, IPv6, UDP, TCP are use-ipv4/ipv6/udp/tcp: which name server
	// addresses are asked and how (UDP first, TCP when an answer is
	// truncated or UDP is off).
	IPv4, IPv6, UDP, TCP bool
	// Randomize is randomize-query-name-case: the query's name has its
	// letters' case drawn at random and the answer must echo it (0x20).
	Randomize bool
	// MaxUDP and MaxTCP are max-concurrent-udp/tcp: the queries in flight
	// to name servers at once, per transport (0: unbounded).
	MaxUDP, MaxTCP int
	// Wait is allowed-query-time: how long a query waits for one of
	// those slots before it is given up (0: its whole timeout).
	Wait time.Duration
	// NSCount is nameserver-cache-count: the name server addresses kept
	// for the delegations learnt (0: 16536).
	NSCount int
	// RRsetBytes is rrset-cache-size: the bytes of record sets kept
	// (0: 10485760).
	RRsetBytes int
	// Rotate is rrset-rotate query-id: a kept record set is answered
	// rotated by the query's ID, spreading clients over its addresses.
	Rotate bool
	// DefaultZones is answer-default-zones: localhost and the reverse
	// zones of loopback and the private and special ranges are answered
	// here (RFC 6761, 6303) instead of asked for.
	DefaultZones bool
	// LocalZones are local-zones, answered before anything is asked.
	LocalZones []LocalZone
	// Timeout bounds one query to one server (0: 2 s).
	Timeout time.Duration

	// Validate makes a validating resolver (ltm dns cache
	// validating-resolver): queries are sent with the DO bit and answers
	// checked from TrustAnchors down (validate.go).
	Validate bool
	// TrustAnchors are trust-anchors, DS or DNSKEY records (empty: the
	// root's, RootAnchor).
	TrustAnchors []dns.RR
	// IgnoreCD is ignore-cd: a client's CD bit does not get it the
	// answer validation failed.
	IgnoreCD bool
	// KeyCacheBytes is key-cache-size: the bytes of zones' keys kept
	// (0: 10485760).
	KeyCacheBytes int
	// PrefetchKey is prefetch-key: a zone's DS and keys are fetched
	// again before they expire, while they are in use.
	PrefetchKey bool
}

// DefaultRootHints are the root servers' IPv4 and IPv6 addresses (IANA's
// root hints), which a resolver without root-hints starts from, as
// BIG-IP's does.
var DefaultRootHints = parseHints(
	"198.41.0.4", "2001:503:ba3e::2:30", "170.247.170.2", "2801:1b8:10::b", "192.33.4.12", "2001:500:2::c",
	"199.7.91.13", "2001:500:2d::d", "192.203.230.10", "2001:500:a8::e", "192.5.5.241", "2001:500:2f::f",
	"192.112.36.4", "2001:500:12::d0d", "198.97.190.53", "2001:500:1::53", "192.36.148.17", "2001:7fe::53",
	"192.58.128.30", "2001:503:c27::2:30", "193.0.14.129", "2001:7fd::1", "199.7.83.42", "2001:500:9f::42",
	"202.12.27.33", "2001:dc3::35")

func parseHints(addrs ...string) []netip.AddrPort {
	out := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		out[i] = netip.AddrPortFrom(netip.MustParseAddr(a), 53)
	}
	return out
}

// Bounds of one resolution, so that a loop of referrals or CNAMEs or a
// chain of out-of-bailiwick name servers ends [M: unbound's are similar].
const (
	maxQueries   = 48 // queries sent for one client question
	maxReferrals = 16 // delegations followed for one name
	maxCNAME     = 8  // CNAMEs chased
	maxDepth     = 4  // nested look-ups of name servers' addresses
	maxNSLookups = 3  // name servers without glue looked up per referral
)

// Errors of a resolution; the cache answers them SERVFAIL.
var (
	ErrNoServer  = errors.New("no name server could be asked")
	ErrTooDeep   = errors.New("too many referrals, CNAMEs or queries")
	ErrMismatch  = errors.New("the answer does not echo the query's name")
	ErrServFail  = errors.New("the name servers failed")
	errSlotsBusy = errors.New("no query slot was free in time")
)

// Resolver resolves questions from the root hints and keeps what it
// learns; one serves every virtual whose profile names the cache.
type Resolver struct {
	cfg      Config
	hints    []netip.AddrPort
	udp, tcp chan struct{} // max-concurrent slots, nil for unbounded
	local    []LocalZone   // local-zones then the default zones

	mu      sync.Mutex
	rrsets  map[rrKey]*rrEntry
	rrOrder []rrKey
	rrBytes int
	ns      map[string]*nsEntry // zone -> its servers' addresses
	nsOrder []string
	nsAddrs int

	anchors  map[string][]dns.RR  // trust anchors by zone, when validating
	keys     map[string]*keyEntry // the key cache: zone -> its keys
	keyOrder []string
	keyBytes int

	nsecs     map[string]*nsecZone // the aggressive cache (RFC 8198): zone -> its validated NSEC or NSEC3 ranges
	nsecOrder []nsecOwner
	nsecBytes int

	st  Stats
	now func() time.Time
}

// Stats count what a resolver did, for show ltm dns cache: how often it
// had to go out and how well its caches serve.
type Stats struct {
	// Queries are the queries sent to name servers, TCP those of them
	// over TCP; Referrals the delegations followed.
	Queries, TCP, Referrals atomic.Uint64
	// RRsetHits are record sets answered from the cache.
	RRsetHits atomic.Uint64
	// Mismatches are answers dropped for not echoing the query's name.
	Mismatches atomic.Uint64
	// Failures are resolutions that ended without an answer.
	Failures atomic.Uint64
	// Secure, Insecure and Bogus count a validating resolver's answers
	// by what validation made of them.
	Secure, Insecure, Bogus atomic.Uint64
	// KeyPrefetches are zones' keys fetched again before they expired.
	KeyPrefetches atomic.Uint64
	// NSEC3Limited are proofs whose NSEC3 records were past the
	// iteration limits (RFC 9276) or of an unknown hash: their answers
	// insecure, or bogus past the hard cap.
	NSEC3Limited atomic.Uint64
	// AggressiveNXDOMAIN and AggressiveNODATA are answers made from the
	// validated NSEC ranges kept (RFC 8198), no name server asked.
	AggressiveNXDOMAIN, AggressiveNODATA atomic.Uint64
}

// Reset zeroes the counters (reset-stats ltm dns cache).
func (s *Stats) Reset() {
	for _, c := range []*atomic.Uint64{&s.Queries, &s.TCP, &s.Referrals, &s.RRsetHits, &s.Mismatches, &s.Failures, &s.Secure, &s.Insecure, &s.Bogus, &s.KeyPrefetches, &s.NSEC3Limited, &s.AggressiveNXDOMAIN, &s.AggressiveNODATA} {
		c.Store(0)
	}
}

type rrKey struct {
	name  string // lower case
	qtype uint16
}

type rrEntry struct {
	rrs     []dns.RR
	stored  time.Time
	expires time.Time
	bytes   int
	sec     Security
}

type nsEntry struct {
	names   []string // the NS records' targets, as the referral gave them
	addrs   []netip.AddrPort
	expires time.Time
}

// New makes a resolver with empty caches; zero settings take BIG-IP's
// defaults.
func New(c Config) *Resolver {
	if !c.UDP && !c.TCP {
		c.UDP = true
	}
	if !c.IPv4 && !c.IPv6 {
		c.IPv4 = true
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	if c.NSCount <= 0 {
		c.NSCount = 16536
	}
	if c.RRsetBytes <= 0 {
		c.RRsetBytes = 10485760
	}
	r := &Resolver{cfg: c, hints: c.RootHints, rrsets: map[rrKey]*rrEntry{}, ns: map[string]*nsEntry{}, now: time.Now}
	if len(r.hints) == 0 {
		r.hints = DefaultRootHints
	}
	if c.MaxUDP > 0 {
		r.udp = make(chan struct{}, c.MaxUDP)
	}
	if c.MaxTCP > 0 {
		r.tcp = make(chan struct{}, c.MaxTCP)
	}
	if c.Validate {
		if c.KeyCacheBytes <= 0 {
			r.cfg.KeyCacheBytes = 10485760
		}
		anchors := c.TrustAnchors
		if len(anchors) == 0 {
			rr, _ := dns.NewRR(RootAnchor)
			anchors = []dns.RR{rr}
		}
		r.anchors, r.keys = map[string][]dns.RR{}, map[string]*keyEntry{}
		for _, a := range anchors {
			z := strings.ToLower(dns.Fqdn(a.Header().Name))
			r.anchors[z] = append(r.anchors[z], a)
		}
	}
	r.local = append(r.local, c.LocalZones...)
	if c.DefaultZones {
		r.local = append(r.local, defaultZones...)
	}
	return r
}

// Stats are the resolver's counters.
func (r *Resolver) Stats() *Stats { return &r.st }

// Resolve is the answer to q (one question): its records with the CNAME
// chain that leads to them, or NXDOMAIN / NODATA with the zone's SOA;
// recursion available. An error means no answer could be had (SERVFAIL).
func (r *Resolver) Resolve(ctx context.Context, q *dns.Msg) (*dns.Msg, error) {
	if len(q.Question) != 1 {
		return nil, ErrServFail
	}
	qs := q.Question[0]
	m := new(dns.Msg)
	m.SetReply(q)
	m.RecursionAvailable = true
	if lm, ok := r.Local(q); ok {
		if lm == nil {
			return nil, ErrDrop
		}
		return lm, nil
	}
	if qs.Qclass != dns.ClassINET || qs.Qtype == dns.TypeAXFR || qs.Qtype == dns.TypeIXFR { // a resolver transfers no zone
		m.Rcode = dns.RcodeRefused
		return m, nil
	}
	b := &budget{}
	ans, auth, rcode, sec, err := r.lookup(ctx, strings.ToLower(dns.Fqdn(qs.Name)), qs.Qtype, 0, b, q.Id)
	if err != nil {
		r.st.Failures.Add(1)
		return nil, err
	}
	if r.cfg.Validate {
		switch sec {
		case Secure:
			r.st.Secure.Add(1)
		case Insecure:
			r.st.Insecure.Add(1)
		case Bogus:
			r.st.Bogus.Add(1)
		}
		// With CD (and ignore-cd no) the client takes the answer
		// unvalidated, bogus or not; else bogus is SERVFAIL.
		cd := q.CheckingDisabled && !r.cfg.IgnoreCD
		if sec == Bogus && !cd {
			return nil, ErrBogus
		}
		do := q.IsEdns0() != nil && q.IsEdns0().Do()
		m.AuthenticatedData = sec == Secure && (do || q.AuthenticatedData)
		m.CheckingDisabled = q.CheckingDisabled
		if !do {
			ans, auth = stripDNSSEC(ans, qs.Qtype), stripDNSSEC(auth, qs.Qtype)
		}
	}
	m.Rcode, m.Answer, m.Ns = rcode, ans, auth
	// The answer carries the client's spelling of its own name.
	for _, rr := range m.Answer {
		if strings.EqualFold(rr.Header().Name, qs.Name) {
			rr.Header().Name = qs.Name
		}
	}
	return m, nil
}

// denial is the NSEC and NSEC3 records of rrs and their RRSIGs: the
// proof a wildcard's answer carries that the name itself does not exist.
func denial(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		t := rr.Header().Rrtype
		if sig, ok := rr.(*dns.RRSIG); ok {
			t = sig.TypeCovered
		}
		if t == dns.TypeNSEC || t == dns.TypeNSEC3 {
			out = append(out, rr)
		}
	}
	return out
}

// stripDNSSEC is rrs without the RRSIG, NSEC and NSEC3 records a client
// without the DO bit did not ask for.
func stripDNSSEC(rrs []dns.RR, qtype uint16) []dns.RR {
	out := rrs[:0:0]
	for _, rr := range rrs {
		switch t := rr.Header().Rrtype; t {
		case dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3:
			if t != qtype {
				continue
			}
		}
		out = append(out, rr)
	}
	return out
}

// budget counts one resolution's queries across its nested look-ups.
type budget struct{ queries int }

// lookup resolves name/qtype: from the rrset cache, else iterating,
// chasing CNAMEs; it returns the answer records (the chain first), the
// authority records of a negative answer, the rcode and, when
// validating, what validation made of them all (the worst of the
// chain's parts; insecure when not validating).
func (r *Resolver) lookup(ctx context.Context, name string, qtype uint16, depth int, b *budget, id uint16) ([]dns.RR, []dns.RR, int, Security, error) {
	var chain, proofs []dns.RR
	sec := Secure
	if !r.cfg.Validate {
		sec = Insecure
	}
	for range maxCNAME + 1 {
		if rrs, s := r.rrGet(name, qtype, id); rrs != nil {
			return append(chain, rrs...), proofs, dns.RcodeSuccess, worse(sec, s), nil
		}
		if qtype != dns.TypeCNAME {
			if c, s := r.rrGet(name, dns.TypeCNAME, id); len(c) > 0 {
				if target := cnameTarget(c); target != "" {
					chain = append(chain, c...)
					sec = worse(sec, s)
					name = target
					continue
				}
			}
		}
		if r.cfg.Validate {
			if auth, rcode, ok := r.aggressive(name, qtype); ok {
				return chain, append(proofs, auth...), rcode, sec, nil
			}
		}
		ans, auth, rcode, s, err := r.iterate(ctx, name, qtype, depth, b)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		sec = worse(sec, s)
		if rcode != dns.RcodeSuccess || len(ans) == 0 {
			return chain, append(proofs, auth...), rcode, sec, nil
		}
		proofs = append(proofs, auth...) // a wildcard's proof
		recs, next := follow(ans, name, qtype)
		chain = append(chain, recs...)
		if next == "" {
			return chain, proofs, dns.RcodeSuccess, sec, nil
		}
		name = next
	}
	return nil, nil, 0, 0, ErrTooDeep
}

// cnameTarget is the target of the one CNAME in rrs (its RRSIGs beside
// it), "" when there is not exactly one.
func cnameTarget(rrs []dns.RR) string {
	target := ""
	for _, rr := range rrs {
		if c, ok := rr.(*dns.CNAME); ok {
			if target != "" {
				return ""
			}
			target = strings.ToLower(c.Target)
		}
	}
	return target
}

// follow walks name's CNAME chain through ans: the records on the way
// and at its end, and the name the chain leads to when ans ends before
// the records of qtype ("" when it does not).
func follow(ans []dns.RR, name string, qtype uint16) ([]dns.RR, string) {
	var out []dns.RR
	cur := name
	for range maxCNAME {
		var cname *dns.CNAME
		var sigs []dns.RR
		found := false
		for _, rr := range ans {
			h := rr.Header()
			if !strings.EqualFold(h.Name, cur) {
				continue
			}
			if h.Rrtype == qtype || qtype == dns.TypeANY {
				out = append(out, rr)
				found = true
			} else if c, ok := rr.(*dns.CNAME); ok {
				cname = c
			} else if s, ok := rr.(*dns.RRSIG); ok {
				sigs = append(sigs, s)
			}
		}
		for _, s := range sigs { // the signatures of the records taken
			if t := s.(*dns.RRSIG).TypeCovered; t == qtype || (found && qtype == dns.TypeANY) || (!found && cname != nil && t == dns.TypeCNAME) {
				out = append(out, s)
			}
		}
		if found || cname == nil {
			return out, ""
		}
		out = append(out, cname)
		cur = strings.ToLower(cname.Target)
		if !hasOwner(ans, cur) {
			return out, cur
		}
	}
	return out, ""
}

func hasOwner(rrs []dns.RR, name string) bool {
	for _, rr := range rrs {
		if strings.EqualFold(rr.Header().Name, name) {
			return true
		}
	}
	return false
}

// iterate asks from the closest delegation known down to the servers of
// name's zone and returns their answer for name (records within their
// zone only), or the negative answer's SOA and rcode; when validating,
// what validation made of it, the zones' keys followed down from the
// trust anchors as the referrals are.
func (r *Resolver) iterate(ctx context.Context, name string, qtype uint16, depth int, b *budget) ([]dns.RR, []dns.RR, int, Security, error) {
	start := name
	if qtype == dns.TypeDS && name != "." { // a DS is its parent's to answer
		start = name[strings.IndexByte(name, '.')+1:]
		if start == "" {
			start = "."
		}
	}
	zone, servers := r.closest(start)
	var ke *keyEntry
	if r.cfg.Validate {
		if ke = r.keyGet(zone); ke == nil { // the root, or a zone's keys gone
			zone, servers = ".", r.hints
			if ke = r.keyGet("."); ke == nil {
				ke = r.enter(ctx, ".", servers, nil, "", nil, nil, b)
				r.keyPut(".", ke)
			}
		}
		r.prefetch(zone, ke)
	}
	judge := func(ans, auth []dns.RR, rcode int) Security {
		if ke == nil {
			return Insecure
		}
		return r.validate(ctx, ke, zone, servers, ans, auth, rcode, name, qtype, b)
	}
	for range maxReferrals {
		m, err := r.askAny(ctx, servers, name, qtype, b)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		switch m.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			auth := within(m.Ns, zone)
			sec := judge(nil, auth, dns.RcodeNameError)
			if sec == Secure {
				r.nsecPut(ke, zone, auth)
			}
			return nil, auth, dns.RcodeNameError, sec, nil
		default:
			return nil, nil, 0, 0, ErrServFail
		}
		if ans := within(m.Answer, zone); len(ans) > 0 {
			auth := within(m.Ns, zone)
			sec := judge(ans, auth, dns.RcodeSuccess)
			r.rrPutAll(ans, sec)
			return ans, denial(auth), dns.RcodeSuccess, sec, nil
		}
		child, nsNames := referral(m, zone, name)
		if child == "" { // NODATA
			auth := within(m.Ns, zone)
			sec := judge(nil, auth, dns.RcodeSuccess)
			if sec == Secure {
				r.nsecPut(ke, zone, auth)
			}
			return nil, auth, dns.RcodeSuccess, sec, nil
		}
		r.st.Referrals.Add(1)
		addrs := r.glue(m.Extra, nsNames, zone)
		if len(addrs) == 0 {
			if depth >= maxDepth {
				return nil, nil, 0, 0, ErrTooDeep
			}
			addrs = r.nsAddresses(ctx, nsNames, depth, b)
		}
		if len(addrs) == 0 {
			return nil, nil, 0, 0, ErrNoServer
		}
		if ke != nil {
			ce := r.enter(ctx, child, addrs, ke, zone, servers, m, b)
			r.keyPut(child, ce)
			ke = ce
		}
		r.nsPut(child, nsNames, addrs, nsTTL(m.Ns))
		zone, servers = child, addrs
	}
	return nil, nil, 0, 0, ErrTooDeep
}

// within keeps the records whose owner is in zone: a server answers for
// its own zone only, so that a record it adds for another (a CNAME's
// target in another zone) is not believed.
func within(rrs []dns.RR, zone string) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT && dns.IsSubDomain(zone, rr.Header().Name) {
			out = append(out, rr)
		}
	}
	return out
}

// referral reads a delegation from m: the child zone (below zone, above
// or at name) and its name servers; "" when m is no referral.
func referral(m *dns.Msg, zone, name string) (string, []string) {
	child := ""
	var names []string
	for _, rr := range m.Ns {
		ns, ok := rr.(*dns.NS)
		if !ok {
			continue
		}
		owner := strings.ToLower(ns.Hdr.Name)
		if owner == zone || !dns.IsSubDomain(zone, owner) || !dns.IsSubDomain(owner, name) {
			continue
		}
		if child == "" {
			child = owner
		}
		if owner == child {
			names = append(names, strings.ToLower(ns.Ns))
		}
	}
	return child, names
}

func nsTTL(rrs []dns.RR) uint32 {
	ttl := uint32(86400)
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeNS {
			ttl = min(ttl, rr.Header().Ttl)
		}
	}
	return ttl
}

// glue is the addresses the referral's additional section gives for its
// name servers, port 53, within the referring server's zone (other glue
// is not believed) and the families in use.
func (r *Resolver) glue(extra []dns.RR, names []string, zone string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, rr := range extra {
		owner := strings.ToLower(rr.Header().Name)
		if !dns.IsSubDomain(zone, owner) || !contains(names, owner) {
			continue
		}
		if a, ok := addrOf(rr); ok && r.family(a) {
			out = append(out, netip.AddrPortFrom(a, 53))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func addrOf(rr dns.RR) (netip.Addr, bool) {
	switch v := rr.(type) {
	case *dns.A:
		a, ok := netip.AddrFromSlice(v.A.To4())
		return a, ok
	case *dns.AAAA:
		a, ok := netip.AddrFromSlice(v.AAAA.To16())
		return a.Unmap(), ok && !a.Is4In6()
	}
	return netip.Addr{}, false
}

func (r *Resolver) family(a netip.Addr) bool {
	if a.Is4() {
		return r.cfg.IPv4
	}
	return r.cfg.IPv6
}

// nsAddresses looks up the addresses of name servers a referral named
// without glue (out of bailiwick), a few of them, in the families used.
func (r *Resolver) nsAddresses(ctx context.Context, names []string, depth int, b *budget) []netip.AddrPort {
	var out []netip.AddrPort
	for i, n := range names {
		if i == maxNSLookups {
			break
		}
		for _, t := range []uint16{dns.TypeA, dns.TypeAAAA} {
			if (t == dns.TypeA && !r.cfg.IPv4) || (t == dns.TypeAAAA && !r.cfg.IPv6) {
				continue
			}
			ans, _, rcode, sec, err := r.lookup(ctx, n, t, depth+1, b, 0)
			if err != nil || rcode != dns.RcodeSuccess || sec == Bogus {
				continue
			}
			for _, rr := range ans {
				if a, ok := addrOf(rr); ok {
					out = append(out, netip.AddrPortFrom(a, 53))
				}
			}
		}
		if len(out) > 0 {
			break
		}
	}
	return out
}

// closest is the deepest delegation known above name: its zone and
// servers, the root hints when none is.
func (r *Resolver) closest(name string) (string, []netip.AddrPort) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for z := name; ; {
		if e := r.ns[z]; e != nil && now.Before(e.expires) {
			return z, e.addrs
		}
		if z == "." {
			break
		}
		i := strings.IndexByte(z, '.')
		if z = z[i+1:]; z == "" {
			z = "."
		}
	}
	return ".", r.hints
}

// askAny asks servers in turn until one gives a usable answer.
func (r *Resolver) askAny(ctx context.Context, servers []netip.AddrPort, name string, qtype uint16, b *budget) (*dns.Msg, error) {
	err := ErrNoServer
	for _, s := range servers {
		if !r.family(s.Addr().Unmap()) {
			continue
		}
		if b.queries >= maxQueries {
			return nil, ErrTooDeep
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b.queries++
		var m *dns.Msg
		if m, err = r.ask(ctx, s, name, qtype); err == nil {
			if m.Rcode == dns.RcodeServerFailure || m.Rcode == dns.RcodeRefused {
				err = ErrServFail
				continue
			}
			return m, nil
		}
	}
	return nil, err
}

// ask sends one query to s, without recursion desired, over UDP then TCP
// when the answer is truncated (TCP alone with use-udp no).
func (r *Resolver) ask(ctx context.Context, s netip.AddrPort, name string, qtype uint16) (*dns.Msg, error) {
	q := new(dns.Msg)
	qname := name
	if r.cfg.Randomize {
		qname = RandomCase(name)
	}
	q.SetQuestion(qname, qtype)
	q.RecursionDesired = false
	q.SetEdns0(1232, r.cfg.Validate) // DO: the signatures, when validating
	if r.cfg.UDP {
		m, err := r.exchange(ctx, "udp", r.udp, q, s)
		if err != nil || !m.Truncated || !r.cfg.TCP {
			return m, err
		}
	}
	r.st.TCP.Add(1)
	return r.exchange(ctx, "tcp", r.tcp, q, s)
}

func (r *Resolver) exchange(ctx context.Context, network string, slots chan struct{}, q *dns.Msg, s netip.AddrPort) (*dns.Msg, error) {
	if slots != nil {
		wait := r.cfg.Timeout
		if r.cfg.Wait > 0 {
			wait = r.cfg.Wait
		}
		t := time.NewTimer(wait)
		select {
		case slots <- struct{}{}:
			t.Stop()
			defer func() { <-slots }()
		case <-t.C:
			return nil, errSlotsBusy
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	r.st.Queries.Add(1)
	c := &dns.Client{Net: network, Timeout: r.cfg.Timeout, UDPSize: 1232}
	m, _, err := c.ExchangeContext(ctx, q, s.String())
	if err != nil {
		return nil, err
	}
	if len(m.Question) != 1 || m.Question[0].Name != q.Question[0].Name || m.Question[0].Qtype != q.Question[0].Qtype {
		r.st.Mismatches.Add(1)
		return nil, ErrMismatch
	}
	return m, nil
}

// RandomCase is name with each letter's case drawn at random (0x20,
// draft-vixie-dnsext-dns0x20), at least one letter changed: a forged
// answer must guess it too, and a server that does not echo it shows.
func RandomCase(name string) string {
	b := []byte(name)
	bits := rand.Uint64()
	first, flipped := -1, false
	for i, c := range b {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			if first < 0 {
				first = i
			}
			if bits&1 == 1 {
				b[i], flipped = c^0x20, true
			}
			bits >>= 1
			if bits == 0 {
				bits = rand.Uint64()
			}
		}
	}
	if !flipped && first >= 0 { // a name left as it was would test nothing
		b[first] ^= 0x20
	}
	return string(b)
}
