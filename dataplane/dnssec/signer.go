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

// Names tells the signer which record types a name of the zone has, so
// that a NODATA answer's NSEC lists them and a validating resolver that
// reuses it (RFC 8198) denies only what is truly absent.
type Names interface {
	TypesAt(name string) []uint16
}

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
// holds: a DNSKEY query at the apex is answered with the zone's keys
// (with or without do); with do, every RRset of the zone in the answer
// and authority sections gets its RRSIGs and a negative answer its NSEC
// records. Anything else is left as it was. names says which types a
// name has (for NODATA); an OPT record at the end of m.Extra stays last.
// The caller truncates afterwards.
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
	if qname == z.apex && q.Qtype == dns.TypeDNSKEY && (m.Rcode == dns.RcodeSuccess || m.Rcode == dns.RcodeNameError || m.Rcode == dns.RcodeRefused) {
		// The keys answer even where no static zone holds the apex
		// (REFUSED): they are the zone's. Copies, so that a rule editing
		// the answer afterwards leaves the key set alone.
		m.Rcode = dns.RcodeSuccess
		m.Authoritative = true
		m.Answer = m.Answer[:0]
		for _, k := range set.dnskeys {
			m.Answer = append(m.Answer, dns.Copy(k))
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
		m.Ns = append(m.Ns, s.nxdomain(z, qname, soa)...)
	case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0 && soa != nil:
		m.Ns = append(m.Ns, nodata(qname, qname == z.apex, minTTL(soa), names))
	case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0 && !m.Authoritative:
		// A referral to an unsigned child: prove it has no DS.
		if cut := delegation(m.Ns, z.apex); cut != "" {
			m.Ns = append(m.Ns, &dns.NSEC{Hdr: dns.RR_Header{Name: cut, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: m.Ns[0].Header().Ttl},
				NextDomain: "\\000." + cut, TypeBitMap: []uint16{dns.TypeNS, dns.TypeRRSIG, dns.TypeNSEC}})
		}
	}
	m.Answer = s.signSection(z, set, m.Answer, now, q.Qtype == dns.TypeDNSKEY && qname == z.apex)
	m.Ns = s.signSection(z, set, m.Ns, now, false)
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

// nxdomain is the denial of a name that does not exist: an NSEC covering
// the name, from just before it to just after it ("white lies", RFC
// 4470), and one covering the wildcard at its parent, which the proof
// takes as the closest encloser. Nothing is added when the name has no
// predecessor to write (a first label of one zero octet).
func (s *Signer) nxdomain(z *zone, qname string, soa *dns.SOA) []dns.RR {
	ttl := minTTL(soa)
	parent := z.apex
	if i, end := dns.NextLabel(qname, 0); !end && qname != z.apex {
		parent = qname[i:]
	}
	cover := covering(qname, ttl)
	wild := covering("*."+parent, ttl)
	if cover == nil || wild == nil {
		return nil
	}
	if dns.CanonicalName(cover.Hdr.Name) == dns.CanonicalName(wild.Hdr.Name) {
		return []dns.RR{cover}
	}
	return []dns.RR{cover, wild}
}

// covering is an NSEC whose span holds name, its descendants, and as
// little else as can be written: from the name with its first label's
// last octet lowered (and \255 appended) to the name with \000
// appended to its first label. A next name below the name itself would
// tell a validator the name is an empty non-terminal. The owner claims
// only RRSIG and NSEC.
func covering(name string, ttl uint32) *dns.NSEC {
	labels := dns.SplitDomainName(strings.ToLower(name))
	if len(labels) == 0 {
		return nil
	}
	first := []byte(unescape(labels[0]))
	rest := "."
	if len(labels) > 1 {
		rest = "." + strings.Join(labels[1:], ".") + "."
	}
	var prev []byte
	switch last := first[len(first)-1]; {
	case last > 0:
		prev = append(append(first[:len(first)-1:len(first)-1], last-1), 0xff)
	case len(first) > 1:
		prev = first[:len(first)-1]
	default:
		return nil
	}
	if len(prev) > 63 {
		prev = prev[:63]
	}
	if len(first) >= 63 {
		return nil // no room for the \000 after it
	}
	next := append(first[:len(first):len(first)], 0)
	return &dns.NSEC{Hdr: dns.RR_Header{Name: escape(prev) + rest, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: escape(next) + rest, TypeBitMap: []uint16{dns.TypeRRSIG, dns.TypeNSEC}}
}

// nodata is the NSEC of a name that exists without the type asked: its
// types (those names gives, and RRSIG and NSEC, and DNSKEY at the apex),
// next name just after it.
func nodata(qname string, apex bool, ttl uint32, names Names) *dns.NSEC {
	types := []uint16{dns.TypeRRSIG, dns.TypeNSEC}
	if apex {
		types = append(types, dns.TypeDNSKEY)
	}
	if names != nil {
		types = append(types, names.TypesAt(qname)...)
	}
	sortTypes(&types)
	return &dns.NSEC{Hdr: dns.RR_Header{Name: qname, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: "\\000." + qname, TypeBitMap: types}
}

func sortTypes(ts *[]uint16) {
	xs := *ts
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	out := xs[:0]
	for i, t := range xs {
		if i == 0 || t != xs[i-1] {
			out = append(out, t)
		}
	}
	*ts = out
}

// signSection appends the RRSIGs of each RRset of the zone in rrs:
// delegation NS records (the child's) and glue are not signed, nor
// RRSIGs. dnskey says the section is the DNSKEY RRset, which the
// key-signing keys sign.
func (s *Signer) signSection(z *zone, set *keySet, rrs []dns.RR, now time.Time, dnskey bool) []dns.RR {
	n := len(rrs)
	for i := 0; i < n; i++ {
		h := rrs[i].Header()
		if h.Rrtype == dns.TypeRRSIG || h.Rrtype == dns.TypeOPT {
			continue
		}
		name := strings.ToLower(h.Name)
		if !dns.IsSubDomain(z.apex, name) || h.Rrtype == dns.TypeNS && name != z.apex {
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
		var rrset []dns.RR
		for j := i; j < n; j++ {
			if hj := rrs[j].Header(); hj.Rrtype == h.Rrtype && strings.EqualFold(hj.Name, h.Name) {
				rrset = append(rrset, rrs[j])
			}
		}
		gens := set.zsk
		if dnskey && h.Rrtype == dns.TypeDNSKEY {
			gens = set.ksk
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

// unescape turns a presentation-format label into its octets.
func unescape(label string) string {
	if !strings.ContainsRune(label, '\\') {
		return label
	}
	var b []byte
	for i := 0; i < len(label); i++ {
		c := label[i]
		if c == '\\' && i+1 < len(label) {
			if i+3 < len(label) && isDigit(label[i+1]) && isDigit(label[i+2]) && isDigit(label[i+3]) {
				b = append(b, byte(int(label[i+1]-'0')*100+int(label[i+2]-'0')*10+int(label[i+3]-'0')))
				i += 3
				continue
			}
			i++
			c = label[i]
		}
		b = append(b, c)
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// escape writes octets as a presentation-format label.
func escape(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == '.' || c == '\\' || c == '"' || c == '(' || c == ')' || c == ';' || c == '@' || c == '$':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c < '!' || c > '~':
			sb.WriteByte('\\')
			sb.WriteByte('0' + c/100)
			sb.WriteByte('0' + c/10%10)
			sb.WriteByte('0' + c%10)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
