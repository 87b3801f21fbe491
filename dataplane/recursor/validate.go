package recursor

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Security is what validation made of an answer (RFC 4035 §4.3).
type Security int8

// An answer is secure (a chain of signatures from a trust anchor vouches
// for it), insecure (a signed parent proves the delegation unsigned, or
// no trust anchor is above it) or bogus (the chain is broken).
const (
	Insecure Security = iota
	Secure
	Bogus
)

func (s Security) String() string {
	return [...]string{"insecure", "secure", "bogus"}[s]
}

// worse is the security of an answer made of parts a and b.
func worse(a, b Security) Security {
	if a == Bogus || b == Bogus {
		return Bogus
	}
	if a == Insecure || b == Insecure {
		return Insecure
	}
	return Secure
}

// ErrBogus is a resolution whose answer failed validation: the cache
// answers SERVFAIL, unless the client set CD and ignore-cd is no.
var ErrBogus = errors.New("the answer failed DNSSEC validation")

// RootAnchor is the trust anchor a validating resolver without
// trust-anchors starts from: the DS of the IANA root zone's KSK-2017
// (key tag 20326), as BIG-IP ships it [M].
const RootAnchor = ". 86400 IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"

// bogusTTL is how long a zone found bogus is remembered before its keys
// are fetched again [M: unbound's val-bogus-ttl].
const bogusTTL = 60

// keyEntry is what the key cache knows of a zone: its validated DNSKEYs
// (secure), or that it is insecure or bogus.
type keyEntry struct {
	sec     Security
	keys    []*dns.DNSKEY
	expires time.Time
	ttl     uint32
	bytes   int

	// Where the entry came from, for prefetch-key to fetch it again:
	// the zone's servers, its parent and the parent's servers.
	servers       []netip.AddrPort
	parent        string
	parentServers []netip.AddrPort
	refreshing    atomic.Bool
}

// ParseAnchors reads trust-anchors as BIG-IP takes them: DS or DNSKEY
// records in zone-file form.
func ParseAnchors(lines []string) ([]dns.RR, error) {
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			return nil, err
		}
		if rr == nil {
			continue
		}
		switch v := rr.(type) {
		case *dns.DS, *dns.DNSKEY:
			out = append(out, v)
		default:
			return nil, errors.New("trust anchor " + l + " is neither a DS nor a DNSKEY record")
		}
	}
	return out, nil
}

// KeyRecord is one zone of the key cache, as show ltm dns cache records
// key lists it: what validation made of the zone, and with which keys.
type KeyRecord struct {
	Zone     string
	Security Security
	KeyTags  []uint16 // the zone's DNSKEYs (secure zones)
	TTL      uint32   // seconds left
}

// KeyRecords are the live zones of the key cache, by name.
func (r *Resolver) KeyRecords() []KeyRecord {
	now := r.now()
	r.mu.Lock()
	out := make([]KeyRecord, 0, len(r.keys))
	for z, e := range r.keys {
		if !now.Before(e.expires) {
			continue
		}
		kr := KeyRecord{Zone: z, Security: e.sec, TTL: uint32(e.expires.Sub(now) / time.Second)}
		for _, k := range e.keys {
			kr.KeyTags = append(kr.KeyTags, k.KeyTag())
		}
		out = append(out, kr)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b KeyRecord) int { return strings.Compare(a.Zone, b.Zone) })
	return out
}

// FlushKeys forgets the zones' keys (delete ltm dns cache records key),
// and the NSEC and NSEC3 ranges those keys validated, so that no answer
// rests on them: each zone is validated again from its trust anchor
// when next needed.
func (r *Resolver) FlushKeys() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.keys)
	clear(r.keys)
	r.keyOrder, r.keyBytes = nil, 0
	clear(r.nsecs)
	r.nsecOrder, r.nsecBytes = nil, 0
	return n
}

// keyGet is the live key entry of zone, nil when none is kept.
func (r *Resolver) keyGet(zone string) *keyEntry {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.keys[zone]
	if e != nil && !now.Before(e.expires) {
		return nil
	}
	return e
}

// prefetch fetches zone's DS and keys again, in the background, when
// its entry is in the last tenth of its TTL (prefetch-key), so that a
// busy zone does not wait for its keys when they expire [M: unbound's
// prefetch-key fetches a DNSKEY as soon as its DS is seen, which this
// resolver always does]. One fetch per zone at a time.
func (r *Resolver) prefetch(zone string, e *keyEntry) {
	if !r.cfg.PrefetchKey || e.sec != Secure || len(e.servers) == 0 {
		return
	}
	left := e.expires.Sub(r.now())
	if left > time.Duration(e.ttl)*time.Second/10 || !e.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var parent *keyEntry
		if e.parent != "" {
			if parent = r.keyGet(e.parent); parent == nil {
				return // the parent's keys are gone: the next resolution starts over
			}
		}
		if ne := r.enter(ctx, zone, e.servers, parent, e.parent, e.parentServers, nil, &budget{}); ne.sec == Secure {
			r.st.KeyPrefetches.Add(1)
			r.keyPut(zone, ne)
		} else {
			e.refreshing.Store(false)
		}
	}()
}

// keyPut keeps zone's entry within key-cache-size bytes, the oldest
// going first.
func (r *Resolver) keyPut(zone string, e *keyEntry) {
	e.bytes = len(zone) + 32
	for _, k := range e.keys {
		e.bytes += dns.Len(k)
	}
	e.expires = r.now().Add(time.Duration(e.ttl) * time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.keys[zone]; old != nil {
		r.keyBytes -= old.bytes
	} else {
		r.keyOrder = append(r.keyOrder, zone)
	}
	r.keys[zone] = e
	r.keyBytes += e.bytes
	for r.keyBytes > r.cfg.KeyCacheBytes && len(r.keyOrder) > 1 {
		old := r.keyOrder[0]
		r.keyOrder = r.keyOrder[1:]
		if old == zone {
			r.keyOrder = append(r.keyOrder, old)
			continue
		}
		if oe := r.keys[old]; oe != nil {
			r.keyBytes -= oe.bytes
			delete(r.keys, old)
		}
	}
}

// enter decides what zone is worth, its servers known: anchored (a trust
// anchor names it), else as its parent's DS says: secure with the
// DNSKEYs a DS vouches for, insecure when the parent proves there is no
// DS (or the parent is insecure), bogus otherwise. referral is the
// parent's answer that delegated (its DS or proof), nil to ask the
// parent's servers for the DS.
func (r *Resolver) enter(ctx context.Context, zone string, servers []netip.AddrPort, parent *keyEntry, parentZone string, parentServers []netip.AddrPort, referral *dns.Msg, b *budget) *keyEntry {
	e := r.enter1(ctx, zone, servers, parent, parentZone, parentServers, referral, b)
	e.servers, e.parent, e.parentServers = servers, parentZone, parentServers
	return e
}

func (r *Resolver) enter1(ctx context.Context, zone string, servers []netip.AddrPort, parent *keyEntry, parentZone string, parentServers []netip.AddrPort, referral *dns.Msg, b *budget) *keyEntry {
	if anchors := r.anchors[zone]; len(anchors) > 0 {
		return r.fetchKeys(ctx, zone, servers, anchors, b)
	}
	if parent == nil || parent.sec != Secure {
		sec := Insecure
		if parent != nil {
			sec = parent.sec
		}
		return &keyEntry{sec: sec, ttl: 3600}
	}
	var section []dns.RR
	if referral != nil {
		section = referral.Ns
	}
	ds, sigs := rrsetOf(section, zone, dns.TypeDS)
	if len(ds) == 0 && !hasDenial(section) {
		m, err := r.askAny(ctx, parentServers, zone, dns.TypeDS, b)
		if err != nil {
			return &keyEntry{sec: Bogus, ttl: bogusTTL}
		}
		section = append(within(m.Answer, parentZone), within(m.Ns, parentZone)...)
		ds, sigs = rrsetOf(section, zone, dns.TypeDS)
	}
	if len(ds) > 0 {
		if !r.verify(ds, sigs, parent.keys, parentZone) {
			return &keyEntry{sec: Bogus, ttl: bogusTTL}
		}
		e := r.fetchKeys(ctx, zone, servers, ds, b)
		if e.sec == Secure {
			e.ttl = minTTL(ds, e.ttl) // the keys are worth what the DS is
		}
		return e
	}
	switch r.noData(section, parent, parentZone, zone, dns.TypeDS) {
	case Secure, Insecure: // no DS, or a proof past the NSEC3 limits
		return &keyEntry{sec: Insecure, ttl: minTTL(section, 3600)}
	}
	return &keyEntry{sec: Bogus, ttl: bogusTTL}
}

// fetchKeys asks zone's servers for its DNSKEYs and keeps them when one
// the anchors (DS or DNSKEY records) name signs the set: secure; bogus
// when none does. Anchors of no algorithm or digest known make the zone
// insecure (RFC 4035 §5.2).
func (r *Resolver) fetchKeys(ctx context.Context, zone string, servers []netip.AddrPort, anchors []dns.RR, b *budget) *keyEntry {
	usable := false
	for _, a := range anchors {
		switch v := a.(type) {
		case *dns.DS:
			usable = usable || (algorithmKnown(v.Algorithm) && (v.DigestType == dns.SHA1 || v.DigestType == dns.SHA256 || v.DigestType == dns.SHA384))
		case *dns.DNSKEY:
			usable = usable || algorithmKnown(v.Algorithm)
		}
	}
	if !usable {
		return &keyEntry{sec: Insecure, ttl: 3600}
	}
	m, err := r.askAny(ctx, servers, zone, dns.TypeDNSKEY, b)
	if err != nil {
		return &keyEntry{sec: Bogus, ttl: bogusTTL}
	}
	set, sigs := rrsetOf(within(m.Answer, zone), zone, dns.TypeDNSKEY)
	var keys, trusted []*dns.DNSKEY
	for _, rr := range set {
		k := rr.(*dns.DNSKEY)
		if k.Flags&dns.ZONE == 0 || k.Flags&dns.REVOKE != 0 {
			continue
		}
		keys = append(keys, k)
		for _, a := range anchors {
			if anchorMatches(a, k) {
				trusted = append(trusted, k)
				break
			}
		}
	}
	if len(trusted) == 0 || !r.verify(set, sigs, trusted, zone) {
		return &keyEntry{sec: Bogus, ttl: bogusTTL}
	}
	return &keyEntry{sec: Secure, keys: keys, ttl: minTTL(set, 86400)}
}

func algorithmKnown(a uint8) bool {
	switch a {
	case dns.RSASHA1, dns.RSASHA1NSEC3SHA1, dns.RSASHA256, dns.RSASHA512, dns.ECDSAP256SHA256, dns.ECDSAP384SHA384, dns.ED25519:
		return true
	}
	return false
}

func anchorMatches(a dns.RR, k *dns.DNSKEY) bool {
	switch v := a.(type) {
	case *dns.DS:
		if v.KeyTag != k.KeyTag() || v.Algorithm != k.Algorithm {
			return false
		}
		d := k.ToDS(v.DigestType)
		return d != nil && strings.EqualFold(d.Digest, v.Digest)
	case *dns.DNSKEY:
		return v.Algorithm == k.Algorithm && v.PublicKey == k.PublicKey && v.Flags&^dns.REVOKE == k.Flags&^dns.REVOKE
	}
	return false
}

// rrsetOf is the records of name and type in rrs, and the RRSIGs
// covering them.
func rrsetOf(rrs []dns.RR, name string, t uint16) ([]dns.RR, []*dns.RRSIG) {
	var set []dns.RR
	var sigs []*dns.RRSIG
	for _, rr := range rrs {
		if !strings.EqualFold(rr.Header().Name, name) {
			continue
		}
		if s, ok := rr.(*dns.RRSIG); ok {
			if s.TypeCovered == t {
				sigs = append(sigs, s)
			}
		} else if rr.Header().Rrtype == t {
			set = append(set, rr)
		}
	}
	return set, sigs
}

// verify reports whether one of sigs, made by signer and valid now,
// verifies set with one of keys.
func (r *Resolver) verify(set []dns.RR, sigs []*dns.RRSIG, keys []*dns.DNSKEY, signer string) bool {
	return r.verifying(set, sigs, keys, signer) != nil
}

// verifying is the first of sigs that verifies set, nil when none does.
func (r *Resolver) verifying(set []dns.RR, sigs []*dns.RRSIG, keys []*dns.DNSKEY, signer string) *dns.RRSIG {
	if len(set) == 0 {
		return nil
	}
	now := r.now()
	labels := uint8(dns.CountLabel(set[0].Header().Name))
	for _, s := range sigs {
		if !strings.EqualFold(s.SignerName, signer) || !s.ValidityPeriod(now) || s.Labels > labels {
			continue
		}
		for _, k := range keys {
			if k.KeyTag() == s.KeyTag && k.Algorithm == s.Algorithm && s.Verify(k, set) == nil {
				return s
			}
		}
	}
	return nil
}

// noSuchName is what auth makes of the claim that name, answered from a
// wildcard whose signature has labels labels, does not exist itself
// (RFC 4035 §5.3.4): secure with an NSEC covering it, or an NSEC3
// covering the next closer name below the wildcard's closest encloser.
func (r *Resolver) noSuchName(auth []dns.RR, e *keyEntry, zone, name string, labels uint8) Security {
	nsec, nsec3, limit := r.verifiedDenial(auth, e, zone)
	for _, n := range nsec {
		if nsecCovers(n, name) {
			return Secure
		}
	}
	if l := dns.SplitDomainName(name); int(labels) < len(l) {
		next := dns.Fqdn(strings.Join(l[len(l)-int(labels)-1:], "."))
		for _, n := range nsec3 {
			if n.Cover(next) {
				return Secure
			}
		}
	}
	if limit != Secure {
		return limit
	}
	return Bogus
}

func hasDenial(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if t := rr.Header().Rrtype; t == dns.TypeNSEC || t == dns.TypeNSEC3 {
			return true
		}
	}
	return false
}

func minTTL(rrs []dns.RR, ttl uint32) uint32 {
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeOPT {
			ttl = min(ttl, rr.Header().Ttl)
		}
	}
	return max(ttl, 1)
}

// NSEC3 iteration limits (RFC 9276 §3.2), as BIND and Unbound set them:
// a proof whose NSEC3 records take more extra iterations than
// nsec3InsecureIterations makes the answer insecure, more than
// nsec3BogusIterations bogus [M: the hard cap is openltm's], so that a
// zone cannot make each of its denials cost the resolver thousands of
// hashes.
const (
	nsec3InsecureIterations = 150
	nsec3BogusIterations    = 500
)

// verifiedDenial is the NSEC and NSEC3 records of rrs whose signatures,
// by zone's keys, verify. NSEC3 records of a hash algorithm other than
// SHA-1, or past the iteration limits, are left out and limit says what
// they make of the answer: insecure (unknown hash, RFC 5155 §8.1, or
// more than 150 iterations) or bogus (more than 500); secure when none
// was left out.
func (r *Resolver) verifiedDenial(rrs []dns.RR, e *keyEntry, zone string) (nsec []*dns.NSEC, nsec3 []*dns.NSEC3, limit Security) {
	limit = Secure
	for _, rr := range rrs {
		switch v := rr.(type) {
		case *dns.NSEC:
			if set, sigs := rrsetOf(rrs, v.Hdr.Name, dns.TypeNSEC); r.verify(set, sigs, e.keys, zone) {
				nsec = append(nsec, v)
			}
		case *dns.NSEC3:
			set, sigs := rrsetOf(rrs, v.Hdr.Name, dns.TypeNSEC3)
			if !r.verify(set, sigs, e.keys, zone) {
				continue
			}
			switch {
			case v.Hash != dns.SHA1:
				limit = worse(limit, Insecure)
			case v.Iterations > nsec3BogusIterations:
				limit = Bogus
			case v.Iterations > nsec3InsecureIterations:
				limit = worse(limit, Insecure)
			default:
				nsec3 = append(nsec3, v)
			}
		}
	}
	if limit != Secure {
		r.st.NSEC3Limited.Add(1)
	}
	return nsec, nsec3, limit
}

// noData is what rrs make of the claim that name has no record of type
// t (nor a CNAME): secure when proven by an NSEC at name, or an NSEC3
// matching it, without the type; for a DS, an opt-out NSEC3 covering the
// name will do; for a name that a wildcard would answer, the proof that
// the name does not exist and the wildcard's own NSEC or NSEC3 without
// the type (RFC 4035 §3.1.3.4, RFC 5155 §7.2.5). Bogus without a proof,
// unless NSEC3 records left out by the iteration limits say otherwise.
func (r *Resolver) noData(rrs []dns.RR, e *keyEntry, zone, name string, t uint16) Security {
	nsec, nsec3, limit := r.verifiedDenial(rrs, e, zone)
	lacks := func(ts []uint16) bool { return !typeIn(ts, t) && !typeIn(ts, dns.TypeCNAME) }
	for _, n := range nsec {
		if strings.EqualFold(n.Hdr.Name, name) && lacks(n.TypeBitMap) {
			return Secure
		}
	}
	for _, n := range nsec3 {
		if n.Match(name) && lacks(n.TypeBitMap) {
			return Secure
		}
		if t == dns.TypeDS && n.Flags&1 == 1 && n.Cover(name) {
			return Secure
		}
	}
	// A wildcard NODATA: name is covered, the wildcard at its closest
	// encloser exists without the type.
	for _, n := range nsec {
		if !nsecCovers(n, name) {
			continue
		}
		wild := "*." + nsecEncloser(n, name)
		for _, w := range nsec {
			if strings.EqualFold(w.Hdr.Name, wild) && lacks(w.TypeBitMap) {
				return Secure
			}
		}
	}
	if ce, ok := closestEncloser(nsec3, zone, name); ok {
		for _, n := range nsec3 {
			if n.Match("*."+ce) && lacks(n.TypeBitMap) {
				return Secure
			}
		}
	}
	if limit != Secure {
		return limit
	}
	return Bogus
}

// nxDomain is what rrs make of the claim that name does not exist:
// secure with NSEC, one covering the name and one covering the wildcard
// at its closest encloser; with NSEC3, the closest encloser proof and an
// NSEC3 covering the wildcard (RFC 5155 §8.4). Bogus without a proof,
// unless NSEC3 records left out by the iteration limits say otherwise.
func (r *Resolver) nxDomain(rrs []dns.RR, e *keyEntry, zone, name string) Security {
	nsec, nsec3, limit := r.verifiedDenial(rrs, e, zone)
	for _, n := range nsec {
		if !nsecCovers(n, name) {
			continue
		}
		ce := nsecEncloser(n, name)
		for _, w := range nsec {
			if nsecCovers(w, "*."+ce) {
				return Secure
			}
		}
	}
	if ce, ok := closestEncloser(nsec3, zone, name); ok {
		for _, n := range nsec3 {
			if n.Cover("*." + ce) {
				return Secure
			}
		}
	}
	if limit != Secure {
		return limit
	}
	return Bogus
}

// nsecEncloser is the closest encloser of name that the NSEC covering it
// shows: the longer of name's common ancestors with the NSEC's owner and
// with its next name.
func nsecEncloser(n *dns.NSEC, name string) string {
	ce := commonAncestor(name, n.Hdr.Name)
	if c2 := commonAncestor(name, n.NextDomain); dns.CountLabel(c2) > dns.CountLabel(ce) {
		ce = c2
	}
	return ce
}

// closestEncloser is name's closest encloser in zone as nsec3 prove it
// (RFC 5155 §8.3): the longest ancestor an NSEC3 matches, the next closer
// name below it covered by one.
func closestEncloser(nsec3 []*dns.NSEC3, zone, name string) (string, bool) {
	if len(nsec3) == 0 {
		return "", false
	}
	labels := dns.SplitDomainName(name)
	for i := 1; i <= len(labels); i++ {
		ce := dns.Fqdn(strings.Join(labels[i:], "."))
		if !dns.IsSubDomain(zone, ce) {
			return "", false
		}
		matched := false
		for _, n := range nsec3 {
			matched = matched || n.Match(ce)
		}
		if !matched {
			continue
		}
		next := dns.Fqdn(strings.Join(labels[i-1:], "."))
		for _, n := range nsec3 {
			if n.Cover(next) {
				return strings.ToLower(ce), true
			}
		}
		return "", false
	}
	return "", false
}

func typeIn(ts []uint16, t uint16) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// nsecCovers reports whether name falls strictly between the NSEC's
// owner and its next name (the last NSEC of a zone wraps to the apex).
func nsecCovers(n *dns.NSEC, name string) bool {
	o, next := n.Hdr.Name, n.NextDomain
	if !canonicalLess(o, name) {
		return false
	}
	return canonicalLess(name, next) || !canonicalLess(o, next)
}

func commonAncestor(a, b string) string {
	n := dns.CompareDomainName(a, b)
	labels := dns.SplitDomainName(a)
	if n == 0 {
		return "."
	}
	return dns.Fqdn(strings.ToLower(strings.Join(labels[len(labels)-n:], ".")))
}

// canonicalLess orders names as DNSSEC does (RFC 4034 §6.1).
func canonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(strings.ToLower(a)), dns.SplitDomainName(strings.ToLower(b))
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if la[i] != lb[j] {
			return la[i] < lb[j]
		}
	}
	return len(la) < len(lb)
}

// validate is what the answer of zone's servers to name/qtype is worth:
// each record set of ans (positive) must be signed by zone's keys (one
// made from a wildcard comes with auth's proof that the name itself does
// not exist), a
// negative answer proven by its NSEC or NSEC3 records. Records signed by
// a zone below (the servers hold it too) are checked against that zone's
// keys, its chain followed first.
func (r *Resolver) validate(ctx context.Context, e *keyEntry, zone string, servers []netip.AddrPort, ans, auth []dns.RR, rcode int, name string, qtype uint16, b *budget) Security {
	if e.sec != Secure {
		return e.sec
	}
	if rcode == dns.RcodeSuccess && len(ans) > 0 {
		sec := Secure
		seen := map[rrKey]bool{}
		for _, rr := range ans {
			h := rr.Header()
			k := rrKey{strings.ToLower(h.Name), h.Rrtype}
			if h.Rrtype == dns.TypeRRSIG || seen[k] {
				continue
			}
			seen[k] = true
			set, sigs := rrsetOf(ans, h.Name, h.Rrtype)
			signer, keys := zone, e.keys
			if len(sigs) > 0 {
				if sn := strings.ToLower(sigs[0].SignerName); sn != zone && dns.IsSubDomain(zone, sn) && dns.IsSubDomain(sn, k.name) {
					ce := r.keyGet(sn)
					if ce == nil {
						ce = r.enter(ctx, sn, servers, e, zone, servers, nil, b)
						r.keyPut(sn, ce)
					}
					if ce.sec != Secure {
						return ce.sec
					}
					signer, keys = sn, ce.keys
				}
			}
			sig := r.verifying(set, sigs, keys, signer)
			if sig == nil {
				return Bogus
			}
			if int(sig.Labels) < dns.CountLabel(h.Name) {
				// A wildcard's answer needs the proof the name does not exist.
				sec = worse(sec, r.noSuchName(auth, e, signer, h.Name, sig.Labels))
			}
		}
		return sec
	}
	if rcode == dns.RcodeNameError {
		return r.nxDomain(auth, e, zone, name)
	}
	return r.noData(auth, e, zone, name, qtype)
}
