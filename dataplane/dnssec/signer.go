package dnssec

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Signer signs the answers of a commit's zones. It is safe for
// concurrent use; its signature cache and key generations are shared by
// every query.
type Signer struct {
	kr    *Keyring
	zones []*zone // longest apex first
	used  map[string]*key

	mu    sync.Mutex
	cache map[string]*cached
}

type zone struct {
	apex     string
	zsk, ksk []*key

	mu   sync.Mutex // held while the set is made again
	set  *keySet    // nil until first used, and after a generation changes
	next time.Time  // when the set is to be made again (zero: never)
	// cur is set and next for the queries, read without the lock.
	cur atomic.Pointer[current]
}

type current struct {
	set  *keySet
	next time.Time
}

// keySet is a zone's keys at one moment: the DNSKEY RRset and the
// generation that signs with each key.
type keySet struct {
	dnskeys []dns.RR
	zsk     []signerGen
	ksk     []signerGen
	ds      []*dns.DS
}

// signerGen is a generation that signs, with its key's settings.
type signerGen struct {
	g                     *Generation
	tag                   uint16
	validity, publication time.Duration
}

type cached struct {
	sigs  []dns.RR
	until time.Time
	set   *keySet
}

// maxCached bounds the signature cache; past it, it starts again.
const maxCached = 8192

// Zone is the zone holding name (lower case, final dot), nil when none.
func (s *Signer) zoneFor(name string) *zone {
	for _, z := range s.zones {
		if dns.IsSubDomain(z.apex, name) {
			return z
		}
	}
	return nil
}

// Covers reports whether name is at or below a signed zone, so a caller
// can skip a fast path that cannot sign.
func (s *Signer) Covers(name string) bool {
	return s != nil && s.zoneFor(strings.ToLower(name)) != nil
}

func signing(k *key, now time.Time) *Generation {
	// The newest generation published for the key's TTL signs; before
	// that the oldest does [M], so resolvers holding the old DNSKEY RRset
	// can check every signature.
	for i := len(k.gens) - 1; i >= 0; i-- {
		g := k.gens[i]
		if i == 0 || now.Sub(g.Created) >= time.Duration(k.cfg.TTL)*time.Second {
			return g
		}
	}
	return nil
}

// keys is the zone's key set now, made again when a generation changes.
func (s *Signer) keys(z *zone, now time.Time) *keySet {
	if c := z.cur.Load(); c != nil && (c.next.IsZero() || now.Before(c.next)) {
		return c.set
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.set != nil && (z.next.IsZero() || now.Before(z.next)) {
		return z.set
	}
	for _, k := range append(z.zsk[:len(z.zsk):len(z.zsk)], z.ksk...) {
		s.kr.roll(k, now) // an error leaves the generations as they were
	}
	set := &keySet{}
	seen := map[*key]bool{}
	z.next = time.Time{}
	for _, ks := range [][]*key{z.ksk, z.zsk} {
		for _, k := range ks {
			if seen[k] {
				continue
			}
			seen[k] = true
			k.mu.Lock()
			for _, g := range k.gens {
				dk := *g.DNSKEY
				dk.Hdr = dns.RR_Header{Name: z.apex, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: k.cfg.TTL}
				set.dnskeys = append(set.dnskeys, &dk)
				if k.cfg.KSK {
					set.ds = append(set.ds, dk.ToDS(dns.SHA1), dk.ToDS(dns.SHA256))
				}
			}
			if n := k.nextChange(); !n.IsZero() && (z.next.IsZero() || n.Before(z.next)) {
				z.next = n
			}
			if g := signing(k, now); g != nil {
				// A later generation starts signing after its TTL.
				for _, x := range k.gens {
					if t := x.Created.Add(time.Duration(k.cfg.TTL) * time.Second); t.After(now) && (z.next.IsZero() || t.Before(z.next)) {
						z.next = t
					}
				}
				sg := signerGen{g: g, tag: g.DNSKEY.KeyTag(), validity: k.cfg.Validity, publication: k.cfg.Publication}
				if containsKey(z.ksk, k) {
					set.ksk = append(set.ksk, sg)
				}
				if containsKey(z.zsk, k) {
					set.zsk = append(set.zsk, sg)
				}
			}
			k.mu.Unlock()
		}
	}
	z.set = set
	z.cur.Store(&current{set: set, next: z.next})
	return set
}

func containsKey(ks []*key, k *key) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// DS is the zone's DS records for its parent (SHA-1 and SHA-256 of each
// key-signing key's generations), nil for a zone not signed.
func (s *Signer) DS(apex string) []*dns.DS {
	if s == nil {
		return nil
	}
	apex = dns.CanonicalName(apex)
	for _, z := range s.zones {
		if z.apex == apex {
			return s.keys(z, s.kr.Now()).ds
		}
	}
	return nil
}

// DNSKEYs is the zone's DNSKEY RRset, nil for a zone not signed.
func (s *Signer) DNSKEYs(apex string) []dns.RR {
	if s == nil {
		return nil
	}
	apex = dns.CanonicalName(apex)
	for _, z := range s.zones {
		if z.apex == apex {
			return s.keys(z, s.kr.Now()).dnskeys
		}
	}
	return nil
}

// Sign completes m, the answer to its question, for a zone the Signer
// holds: DNSKEY and NSEC3PARAM queries at the apex are answered with the
// zone's records (with or without do); with do, every RRset of a signed
// zone in the three sections gets its RRSIGs, a negative answer its
// NSEC3 records and a referral its DS or the proof that there is none.
// Anything else is left as it was. names says what the zone holds (for
// the denials); an OPT record at the end of m.Extra stays last. The
// caller truncates afterwards.
func (s *Signer) Sign(m *dns.Msg, do bool, names Names) {
	if len(m.Question) != 1 {
		return
	}
	q := m.Question[0]
	qname := strings.ToLower(q.Name)
	z := s.zoneFor(qname)
	if z == nil {
		return
	}
	now := s.kr.Now()
	set := s.keys(z, now)
	if qname == z.apex && (q.Qtype == dns.TypeDNSKEY || q.Qtype == dns.TypeNSEC3PARAM) &&
		(m.Rcode == dns.RcodeSuccess || m.Rcode == dns.RcodeNameError || m.Rcode == dns.RcodeRefused) {
		// The zone's own records answer even where no static zone holds
		// the apex (REFUSED). Copies, so that a rule editing the answer
		// afterwards leaves the key set alone.
		m.Rcode = dns.RcodeSuccess
		m.Authoritative = true
		m.Answer = m.Answer[:0]
		if q.Qtype == dns.TypeDNSKEY {
			for _, k := range set.dnskeys {
				m.Answer = append(m.Answer, dns.Copy(k))
			}
		} else {
			m.Answer = append(m.Answer, nsec3Param(z.apex))
		}
		m.Ns = m.Ns[:0]
	}
	if !do {
		return
	}
	var soa *dns.SOA
	for _, rr := range m.Ns {
		if x, ok := rr.(*dns.SOA); ok && strings.EqualFold(x.Hdr.Name, z.apex) {
			soa = x
		}
	}
	switch {
	case m.Rcode == dns.RcodeNameError && soa != nil:
		m.Ns = append(m.Ns, nxdomain(z.apex, qname, minTTL(soa), names)...)
	case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0 && soa != nil:
		if n := matching(z.apex, qname, minTTL(soa), typesAt(qname, qname == z.apex, names)); n != nil {
			m.Ns = append(m.Ns, n)
		}
	case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0 && !m.Authoritative:
		// A referral: the child's DS records, or the proof it has none.
		if cut := delegation(m.Ns, z.apex); cut != "" {
			var ds []dns.RR
			if names != nil {
				ds = names.RRset(cut, dns.TypeDS)
			}
			if len(ds) > 0 {
				m.Ns = append(m.Ns, ds...)
			} else if n := noDS(z.apex, cut, m.Ns[0].Header().Ttl); n != nil {
				m.Ns = append(m.Ns, n)
			}
		}
	}
	m.Answer = s.signSection(z, set, m.Answer, now, q.Qtype == dns.TypeDNSKEY && qname == z.apex)
	m.Ns = s.signSection(z, set, m.Ns, now, false)
	m.Extra = s.signExtra(z, m, names, now)
}

// delegation is the owner of the NS RRset of a referral below apex.
func delegation(ns []dns.RR, apex string) string {
	for _, rr := range ns {
		if rr.Header().Rrtype == dns.TypeNS {
			n := strings.ToLower(rr.Header().Name)
			if n != apex && dns.IsSubDomain(apex, n) {
				return n
			}
		}
	}
	return ""
}

func minTTL(soa *dns.SOA) uint32 {
	return min(soa.Hdr.Ttl, soa.Minttl)
}

// signSection appends the RRSIGs of each RRset of the zone in rrs:
// delegation NS records (the child's) are not signed, nor RRSIGs.
// dnskey says the section is the DNSKEY RRset, which the key-signing
// keys sign.
func (s *Signer) signSection(z *zone, set *keySet, rrs []dns.RR, now time.Time, dnskey bool) []dns.RR {
	return s.signRRsets(rrs, now, func(name string, t uint16) (*zone, *keySet, []signerGen) {
		if !dns.IsSubDomain(z.apex, name) || t == dns.TypeNS && name != z.apex {
			return nil, nil, nil
		}
		if dnskey && t == dns.TypeDNSKEY {
			return z, set, set.ksk
		}
		return z, set, set.zsk
	})
}

// signExtra signs the additional section (RFC 4035 §3.1.1): the RRsets of
// any zone the Signer holds, by that zone's keys, except glue, the
// addresses of names at or below a delegation cut, which are the child's
// (§3.1.4). The OPT record stays last.
func (s *Signer) signExtra(z *zone, m *dns.Msg, names Names, now time.Time) []dns.RR {
	extra := m.Extra
	var opt []dns.RR
	if n := len(extra); n > 0 && extra[n-1].Header().Rrtype == dns.TypeOPT {
		extra, opt = extra[:n-1], extra[n-1:]
	}
	if len(extra) == 0 {
		return m.Extra
	}
	opt = append([]dns.RR(nil), opt...) // extra's appends may overwrite it
	cut := delegation(m.Ns, z.apex)
	extra = s.signRRsets(extra, now, func(name string, t uint16) (*zone, *keySet, []signerGen) {
		zz := s.zoneFor(name)
		if zz == nil || t == dns.TypeNS && name != zz.apex || belowCut(zz.apex, name, cut, names) {
			return nil, nil, nil
		}
		set := s.keys(zz, now)
		return zz, set, set.zsk
	})
	return append(extra, opt...)
}

// belowCut says name is at or below a delegation of the zone at apex: the
// message's referral cut, or a name with NS records between name and
// apex.
func belowCut(apex, name, cut string, names Names) bool {
	for n := name; n != apex; {
		if n == cut || names != nil && hasType(names.TypesAt(n), dns.TypeNS) {
			return true
		}
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		n = n[i:]
	}
	return false
}

// signRRsets appends the RRSIGs of each RRset in rrs that signer (given
// the RRset's lower-case owner and type) names a zone for.
func (s *Signer) signRRsets(rrs []dns.RR, now time.Time, signer func(name string, t uint16) (*zone, *keySet, []signerGen)) []dns.RR {
	n := len(rrs)
	for i := 0; i < n; i++ {
		h := rrs[i].Header()
		if h.Rrtype == dns.TypeRRSIG || h.Rrtype == dns.TypeOPT {
			continue
		}
		// The RRset: the records of this name and type, once.
		first := true
		for j := 0; j < i; j++ {
			if hj := rrs[j].Header(); hj.Rrtype == h.Rrtype && strings.EqualFold(hj.Name, h.Name) {
				first = false
				break
			}
		}
		if !first {
			continue
		}
		z, set, gens := signer(strings.ToLower(h.Name), h.Rrtype)
		if z == nil {
			continue
		}
		var rrset []dns.RR
		for j := i; j < n; j++ {
			if hj := rrs[j].Header(); hj.Rrtype == h.Rrtype && strings.EqualFold(hj.Name, h.Name) {
				rrset = append(rrset, rrs[j])
			}
		}
		rrs = append(rrs, s.sigs(z, set, gens, rrset, now)...)
	}
	return rrs
}

// sigs are the RRSIGs of rrset by gens, from the cache while they are
// within their publication period.
func (s *Signer) sigs(z *zone, set *keySet, gens []signerGen, rrset []dns.RR, now time.Time) []dns.RR {
	var b strings.Builder
	for _, rr := range rrset {
		t := rr.String()
		b.WriteString(strings.ToLower(rr.Header().Name))
		b.WriteString(t[len(rr.Header().Name):])
		b.WriteByte('\n')
	}
	ck := b.String()
	s.mu.Lock()
	c := s.cache[ck]
	s.mu.Unlock()
	if c != nil && c.set == set && now.Before(c.until) {
		return rename(c.sigs, rrset[0].Header().Name)
	}
	var out []dns.RR
	publication := time.Duration(0)
	for _, sg := range gens {
		g := sg.g
		validity := sg.validity
		if validity <= 0 {
			validity = 7 * 24 * time.Hour
		}
		if publication == 0 || sg.publication < publication {
			publication = sg.publication
		}
		sig := &dns.RRSIG{Hdr: dns.RR_Header{Name: strings.ToLower(rrset[0].Header().Name), Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: rrset[0].Header().Ttl},
			Algorithm: g.DNSKEY.Algorithm, KeyTag: sg.tag, SignerName: z.apex,
			// An hour back for resolvers whose clock is behind [M].
			Inception:  uint32(now.Add(-time.Hour).Unix()),
			Expiration: uint32(now.Add(validity).Unix()),
		}
		if err := sig.Sign(g.private, rrset); err != nil {
			continue
		}
		out = append(out, sig)
	}
	if publication <= 0 {
		publication = time.Hour
	}
	s.mu.Lock()
	if len(s.cache) >= maxCached {
		s.cache = map[string]*cached{}
	}
	s.cache[ck] = &cached{sigs: out, until: now.Add(publication), set: set}
	s.mu.Unlock()
	return rename(out, rrset[0].Header().Name)
}

// rename gives cached RRSIGs the owner spelling of the RRset they go
// with (the question's case); the signature covers the lower-case name.
func rename(sigs []dns.RR, name string) []dns.RR {
	if len(sigs) == 0 || sigs[0].Header().Name == name {
		return sigs
	}
	out := make([]dns.RR, len(sigs))
	for i, rr := range sigs {
		c := *rr.(*dns.RRSIG)
		c.Hdr.Name = name
		out[i] = &c
	}
	return out
}

func rsaPublic(pub *rsa.PublicKey) string {
	e := big.NewInt(int64(pub.E)).Bytes()
	var buf []byte
	if len(e) < 256 {
		buf = append(buf, byte(len(e)))
	} else {
		buf = append(buf, 0, byte(len(e)>>8), byte(len(e)))
	}
	buf = append(buf, e...)
	buf = append(buf, pub.N.Bytes()...)
	return base64.StdEncoding.EncodeToString(buf)
}

// ecdsaPublic is RFC 6605's form: the point's X and Y, without the
// uncompressed form's leading 0x04.
func ecdsaPublic(pub *ecdsa.PublicKey) (string, error) {
	b, err := pub.Bytes()
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b[1:]), nil
}
