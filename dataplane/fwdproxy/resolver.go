package fwdproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor"
)

// ResolverConfig is a net dns-resolver as the explicit proxy uses it:
// plain data from the daemon, so that a commit that leaves it unchanged
// keeps the running proxy and its cache.
type ResolverConfig struct {
	// Name is the resolver's full path, for messages.
	Name string
	// Zones are forward-zones: a name is sent to the nameservers of the
	// longest zone it falls in ("." takes every name).
	Zones []Zone
	// CacheEntries bounds the answers kept (cache-size is in bytes on
	// BIG-IP; the daemon turns it into entries).
	CacheEntries int
	// UDP and TCP are use-udp and use-tcp: how queries travel (UDP
	// first, TCP when an answer is truncated or UDP is off).
	UDP, TCP bool
	// Timeout bounds one query to one nameserver (0: 2 s).
	Timeout time.Duration
	// NoIPv4 and NoIPv6 are use-ipv4 no and use-ipv6 no: the nameservers
	// of that family are not asked.
	NoIPv4, NoIPv6 bool
	// Randomize is randomize-query-name-case: each query's name has its
	// letters' case drawn at random and an answer that does not echo it
	// is dropped (0x20).
	Randomize bool
	// DefaultZones is answer-default-zones: localhost, loopback's reverse
	// names and the AS112 zones are answered here, not asked for.
	DefaultZones bool
	// RootHints are where a name in no forward zone is resolved from, as
	// BIG-IP's resolver does (dataplane/recursor); empty: the Internet's
	// root servers.
	RootHints []netip.AddrPort
	// CacheBytes is cache-size, what the recursion keeps of the record
	// sets and delegations it learns (0: the recursor's default).
	CacheBytes int
}

// Zone is one forward zone: its name, lower case and fully qualified
// (trailing dot) so that a suffix test finds it, and its nameservers in
// the order they are tried.
type Zone struct {
	Name        string
	Nameservers []netip.AddrPort
}

// The resolver's failures, which the proxy answers with its
// dns-error-message: ErrNoName with 502 (the name has no address),
// ErrDNSTimeout with 504 (no nameserver answered).
var (
	ErrNoName     = errors.New("no address for the name")
	ErrDNSTimeout = errors.New("no nameserver answered")
)

// Resolver answers names through a dns-resolver's forward zones and keeps
// the answers for their TTL, so that a browser's burst of requests to one
// site costs one query.
type Resolver struct {
	cfg   ResolverConfig
	local *recursor.Resolver // the default zones; nil without them
	rec   *recursor.Resolver // resolves from the root the names no forward zone holds; nil when "." is one

	mu    sync.Mutex
	cache map[cacheKey]cacheEntry

	// now is the clock (tests move it).
	now func() time.Time
}

type cacheKey struct {
	name  string
	qtype uint16
}

type cacheEntry struct {
	addrs   []netip.Addr
	err     error // ErrNoName: a negative answer, kept for the SOA's minimum
	expires time.Time
}

// NewResolver makes a resolver for c with an empty cache; zero settings
// take the defaults (4096 answers, 2 s per query, UDP).
func NewResolver(c ResolverConfig) *Resolver {
	if c.CacheEntries <= 0 {
		c.CacheEntries = 4096
	}
	if c.Timeout <= 0 {
		c.Timeout = 2 * time.Second
	}
	if !c.UDP && !c.TCP {
		c.UDP = true
	}
	r := &Resolver{cfg: c, cache: map[cacheKey]cacheEntry{}, now: time.Now}
	if c.DefaultZones {
		r.local = recursor.New(recursor.Config{DefaultZones: true})
	}
	if r.zoneFor("invalid.") == nil { // no "." zone: some names recurse
		r.rec = recursor.New(recursor.Config{RootHints: c.RootHints, IPv4: !c.NoIPv4, IPv6: !c.NoIPv6, UDP: c.UDP, TCP: c.TCP,
			Randomize: c.Randomize, RRsetBytes: c.CacheBytes, Timeout: c.Timeout})
	}
	return r
}

// zoneFor is the nameservers of the longest forward zone name is in.
func (r *Resolver) zoneFor(name string) []netip.AddrPort {
	best, bestLen := -1, -1
	for i, z := range r.cfg.Zones {
		n := len(z.Name)
		if z.Name == "." {
			n = 0
		} else if name != z.Name && !strings.HasSuffix(name, "."+z.Name) {
			continue
		}
		if n > bestLen {
			best, bestLen = i, n
		}
	}
	if best < 0 {
		return nil
	}
	return r.cfg.Zones[best].Nameservers
}

// Lookup is host's addresses, from the cache while they are fresh: A
// records, and with ipv6 AAAA records when there is no A record [M]. An
// address literal is its own answer, so that `http://10.1.1.1/` needs no
// nameserver.
func (r *Resolver) Lookup(ctx context.Context, host string, ipv6 bool) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		a = a.Unmap()
		if a.Is6() && !ipv6 {
			return nil, ErrNoName
		}
		return []netip.Addr{a}, nil
	}
	name := dns.Fqdn(strings.ToLower(host))
	if _, ok := dns.IsDomainName(name); !ok {
		return nil, ErrNoName
	}
	addrs, err := r.lookupType(ctx, name, dns.TypeA)
	if ipv6 && (errors.Is(err, ErrNoName) || err == nil && len(addrs) == 0) {
		addrs, err = r.lookupType(ctx, name, dns.TypeAAAA)
	}
	if err == nil && len(addrs) == 0 {
		err = ErrNoName
	}
	return addrs, err
}

// lookupType answers one question from the cache or the zone's
// nameservers.
func (r *Resolver) lookupType(ctx context.Context, name string, qtype uint16) ([]netip.Addr, error) {
	k := cacheKey{name, qtype}
	now := r.now()
	r.mu.Lock()
	if e, ok := r.cache[k]; ok {
		if now.Before(e.expires) {
			r.mu.Unlock()
			return e.addrs, e.err
		}
		delete(r.cache, k)
	}
	r.mu.Unlock()
	if r.local != nil {
		q := new(dns.Msg)
		q.SetQuestion(name, qtype)
		if m, ok := r.local.Local(q); ok && m != nil {
			if m.Rcode != dns.RcodeSuccess {
				return nil, ErrNoName
			}
			addrs, _ := answers(m, name, qtype)
			return addrs, nil
		}
	}
	var addrs []netip.Addr
	var ttl time.Duration
	var err error
	if servers := r.zoneFor(name); len(servers) > 0 {
		addrs, ttl, err = r.query(ctx, servers, name, qtype)
	} else {
		addrs, ttl, err = r.recurse(ctx, name, qtype)
	}
	if err == nil || errors.Is(err, ErrNoName) {
		r.store(k, cacheEntry{addrs: addrs, err: err, expires: now.Add(ttl)}, ttl)
	}
	return addrs, err
}

// recurse resolves name from the root hints, a name no forward zone
// holds (BIG-IP's resolver recurses when no forward zone matches).
func (r *Resolver) recurse(ctx context.Context, name string, qtype uint16) ([]netip.Addr, time.Duration, error) {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	in, err := r.rec.Resolve(ctx, q)
	switch {
	case err != nil:
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return nil, 0, ErrDNSTimeout
		}
		return nil, 0, ErrNoName
	case in.Rcode == dns.RcodeSuccess:
		addrs, ttl := answers(in, name, qtype)
		if len(addrs) == 0 {
			return nil, negativeTTL(in), ErrNoName
		}
		return addrs, ttl, nil
	}
	return nil, negativeTTL(in), ErrNoName
}

// store keeps an answer for ttl; a full cache first drops what expired,
// then an arbitrary entry.
func (r *Resolver) store(k cacheKey, e cacheEntry, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cache) >= r.cfg.CacheEntries {
		now := r.now()
		for ck, ce := range r.cache {
			if !now.Before(ce.expires) {
				delete(r.cache, ck)
			}
		}
		for ck := range r.cache {
			if len(r.cache) < r.cfg.CacheEntries {
				break
			}
			delete(r.cache, ck)
		}
	}
	r.cache[k] = e
}

// query asks the nameservers in turn until one answers.
func (r *Resolver) query(ctx context.Context, servers []netip.AddrPort, name string, qtype uint16) ([]netip.Addr, time.Duration, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = true
	in, other := r.askInTurn(ctx, servers, m, name)
	switch {
	case in == nil && other == nil:
		return nil, 0, ErrDNSTimeout
	case in == nil:
		// Only SERVFAIL or REFUSED came back.
		return nil, 0, ErrNoName
	case in.Rcode == dns.RcodeNameError:
		return nil, negativeTTL(in), ErrNoName
	}
	addrs, ttl := answers(in, name, qtype)
	if len(addrs) == 0 {
		return nil, negativeTTL(in), ErrNoName
	}
	return addrs, ttl, nil
}

// askInTurn sends m to each usable nameserver in turn until one answers
// NOERROR or NXDOMAIN (in); a SERVFAIL or REFUSED tries the next, and the
// last of those is other. Both are nil when no nameserver answered.
func (r *Resolver) askInTurn(ctx context.Context, servers []netip.AddrPort, m *dns.Msg, name string) (in, other *dns.Msg) {
	for _, s := range servers {
		if ctx.Err() != nil {
			break
		}
		if a := s.Addr().Unmap(); (a.Is4() && r.cfg.NoIPv4) || (a.Is6() && r.cfg.NoIPv6) {
			continue
		}
		if r.cfg.Randomize {
			m.Question[0].Name = recursor.RandomCase(name)
		}
		got, err := r.exchange(ctx, m, s.String())
		if err != nil {
			continue
		}
		if got.Rcode == dns.RcodeSuccess || got.Rcode == dns.RcodeNameError {
			return got, nil
		}
		other = got
	}
	return nil, other
}

// exchange sends m to addr by UDP, then by TCP when the answer was
// truncated (or UDP is off).
func (r *Resolver) exchange(ctx context.Context, m *dns.Msg, addr string) (*dns.Msg, error) {
	if r.cfg.UDP {
		c := &dns.Client{Net: "udp", Timeout: r.cfg.Timeout}
		in, _, err := c.ExchangeContext(ctx, m, addr)
		if err != nil || !in.Truncated || !r.cfg.TCP {
			return r.echoed(m, in, err)
		}
	}
	c := &dns.Client{Net: "tcp", Timeout: r.cfg.Timeout}
	in, _, err := c.ExchangeContext(ctx, m, addr)
	return r.echoed(m, in, err)
}

// echoed drops an answer whose question is not the query's, spelled as
// sent, when the name's case was randomized.
func (r *Resolver) echoed(m, in *dns.Msg, err error) (*dns.Msg, error) {
	if err == nil && r.cfg.Randomize && (len(in.Question) != 1 || in.Question[0].Name != m.Question[0].Name) {
		return nil, recursor.ErrMismatch
	}
	return in, err
}

// answers follows name's CNAME chain through the answer section and
// collects the addresses at its end; the TTL is the least along the way.
func answers(in *dns.Msg, name string, qtype uint16) ([]netip.Addr, time.Duration) {
	var out []netip.Addr
	ttl := uint32(1<<31 - 1)
	target := strings.ToLower(name)
	for hops := 0; hops < 8; hops++ {
		next := ""
		for _, rr := range in.Answer {
			h := rr.Header()
			if !strings.EqualFold(h.Name, target) {
				continue
			}
			switch v := rr.(type) {
			case *dns.CNAME:
				next = strings.ToLower(v.Target)
				ttl = min(ttl, h.Ttl)
			case *dns.A:
				if qtype == dns.TypeA {
					if a, ok := netip.AddrFromSlice(v.A.To4()); ok {
						out = append(out, a)
						ttl = min(ttl, h.Ttl)
					}
				}
			case *dns.AAAA:
				if qtype == dns.TypeAAAA {
					if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok {
						out = append(out, a)
						ttl = min(ttl, h.Ttl)
					}
				}
			}
		}
		if len(out) > 0 || next == "" {
			break
		}
		target = next
	}
	return out, time.Duration(ttl) * time.Second
}

// negativeTTL is how long a negative answer is kept (RFC 2308): the
// SOA's minimum, or its own TTL when smaller; 0 without a SOA.
func negativeTTL(in *dns.Msg) time.Duration {
	for _, rr := range in.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return time.Duration(min(soa.Minttl, soa.Hdr.Ttl)) * time.Second
		}
	}
	return 0
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Message is the whole answer to one question (RESOLVER::name_lookup's
// dns_message), through the same zones as Lookup: the default zones,
// else the longest forward zone's nameservers in turn (a SERVFAIL or
// REFUSED tries the next), else resolution from the root hints. It is
// not kept in the address cache, which holds addresses alone [M].
func (r *Resolver) Message(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	name = dns.Fqdn(strings.ToLower(name))
	if _, ok := dns.IsDomainName(name); !ok {
		return nil, ErrNoName
	}
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	if r.local != nil {
		if m, ok := r.local.Local(q); ok && m != nil {
			return m, nil
		}
	}
	servers := r.zoneFor(name)
	if len(servers) == 0 {
		if r.rec == nil {
			return nil, ErrNoName
		}
		m, err := r.rec.Resolve(ctx, q)
		if err != nil {
			return nil, ErrDNSTimeout
		}
		return m, nil
	}
	q.RecursionDesired = true
	in, other := r.askInTurn(ctx, servers, q, name)
	if in == nil {
		in = other
	}
	if in == nil {
		return nil, ErrDNSTimeout
	}
	return in, nil
}
