package recursor

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Aggressive use of the DNSSEC-validated cache (RFC 8198): the NSEC
// records of a secure negative answer say which names, between their
// owner and next name, do not exist; a validating resolver keeps them
// and answers NXDOMAIN (or NODATA) for any other name in those ranges
// without asking. A zone denying with NSEC3 is kept likewise, its ranges
// by hash (RFC 8198 §5.2): a later name is hashed with the zone's
// parameters and answered when the kept records prove its closest
// encloser, as RFC 5155 §8.4 asks of a server's answer; an opt-out range
// answers nothing, since an unsigned delegation may lie inside it.

// nsecZone is what the aggressive cache keeps of one secure zone: its
// validated SOA (what a synthesised answer carries) and its validated
// NSEC records, by owner, or its NSEC3 records, by owner hash (lower
// case: a hash is one label, so canonical order is the hashes' order).
type nsecZone struct {
	soa     []dns.RR // the SOA and its RRSIGs
	ranges  map[string]*nsecRange
	owners  []string  // the ranges' owners in canonical order, for a binary search
	expires time.Time // the SOA's

	nsec3 bool // the ranges are NSEC3, hashed with iter and salt
	iter  uint16
	salt  string
}

// add files owner in canonical order.
func (z *nsecZone) add(owner string) {
	i := sort.Search(len(z.owners), func(i int) bool { return !canonicalLess(z.owners[i], owner) })
	z.owners = slices.Insert(z.owners, i, owner)
}

// remove takes owner out of the canonical order.
func (z *nsecZone) remove(owner string) {
	i := sort.Search(len(z.owners), func(i int) bool { return !canonicalLess(z.owners[i], owner) })
	if i < len(z.owners) && z.owners[i] == owner {
		z.owners = slices.Delete(z.owners, i, i+1)
	}
}

// covering is the kept range name falls in: the one whose owner comes
// last before name in canonical order (the last one wrapping round to
// the apex), nil when that range does not cover name or has expired.
func (z *nsecZone) covering(name string, now time.Time) *nsecRange {
	if len(z.owners) == 0 {
		return nil
	}
	i := sort.Search(len(z.owners), func(i int) bool { return canonicalLess(name, z.owners[i]) })
	if i == 0 {
		i = len(z.owners)
	}
	nr := z.ranges[z.owners[i-1]]
	if nr == nil || !now.Before(nr.expires) || !nsecCovers(nr.nsec, name) {
		return nil
	}
	return nr
}

// covering3 is the kept NSEC3 range whose span holds hash h (strictly
// between its owner's hash and the next, the last wrapping round), nil
// when none does or it has expired.
func (z *nsecZone) covering3(h string, now time.Time) *nsecRange {
	if len(z.owners) == 0 {
		return nil
	}
	i := sort.Search(len(z.owners), func(i int) bool { return h < z.owners[i] })
	if i == 0 {
		i = len(z.owners)
	}
	owner := z.owners[i-1]
	nr := z.ranges[owner]
	if nr == nil || !now.Before(nr.expires) || owner == h {
		return nil
	}
	next := strings.ToLower(nr.nsec3.NextDomain)
	switch {
	case owner < next:
		if !(h > owner && h < next) {
			return nil
		}
	case owner > next: // the last of the chain
		if !(h > owner || h < next) {
			return nil
		}
	}
	return nr
}

// hash3 is name's NSEC3 hash, lower case, as the zone's ranges are kept.
func hash3(name string, iter uint16, salt string) string {
	return strings.ToLower(dns.HashName(name, dns.SHA1, iter, salt))
}

type nsecRange struct {
	nsec    *dns.NSEC
	nsec3   *dns.NSEC3
	rrs     []dns.RR // the NSEC and its RRSIGs
	expires time.Time
	bytes   int
}

type nsecOwner struct{ zone, owner string }

// nsecPut keeps the validated NSEC records of auth, zone's secure
// negative answer, and its SOA, each for the least of its TTL and the
// SOA's minimum (RFC 9077); within rrset-cache-size bytes of their own,
// the oldest going first.
func (r *Resolver) nsecPut(e *keyEntry, zone string, auth []dns.RR) {
	var soa *dns.SOA
	for _, rr := range auth {
		if s, ok := rr.(*dns.SOA); ok && strings.EqualFold(s.Hdr.Name, zone) {
			soa = s
		}
	}
	if soa == nil {
		return
	}
	soaSet, soaSigs := rrsetOf(auth, soa.Hdr.Name, dns.TypeSOA)
	if !r.verify(soaSet, soaSigs, e.keys, zone) {
		return
	}
	nsec, nsec3all, _ := r.verifiedDenial(auth, e, zone)
	// NSEC3 records of the zone itself (their owner a hash right below
	// its apex) with the parameters of the first; others prove nothing
	// here.
	var nsec3 []*dns.NSEC3
	for _, n := range nsec3all {
		owner := n.Hdr.Name
		i := strings.IndexByte(owner, '.')
		if i < 0 || !strings.EqualFold(owner[i+1:], zone) && !(zone == "." && owner[i+1:] == "") {
			continue
		}
		if len(nsec3) > 0 && (n.Iterations != nsec3[0].Iterations || !strings.EqualFold(n.Salt, nsec3[0].Salt)) {
			continue
		}
		nsec3 = append(nsec3, n)
	}
	if len(nsec) == 0 && len(nsec3) == 0 {
		return
	}
	useNSEC3 := len(nsec) == 0
	now := r.now()
	neg := min(soa.Minttl, soa.Hdr.Ttl)
	soaRRs := []dns.RR{dns.Copy(soa)}
	for _, s := range soaSigs {
		soaRRs = append(soaRRs, dns.Copy(s))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nsecs == nil {
		r.nsecs = map[string]*nsecZone{}
	}
	z := r.nsecs[zone]
	if z != nil && (z.nsec3 != useNSEC3 || useNSEC3 && (z.iter != nsec3[0].Iterations || !strings.EqualFold(z.salt, nsec3[0].Salt))) {
		// The zone changed its denial (NSEC to NSEC3, a new salt):
		// its old ranges go.
		for _, nr := range z.ranges {
			r.nsecBytes -= nr.bytes
		}
		z = nil
	}
	if z == nil {
		z = &nsecZone{ranges: map[string]*nsecRange{}, nsec3: useNSEC3}
		if useNSEC3 {
			z.iter, z.salt = nsec3[0].Iterations, nsec3[0].Salt
		}
		r.nsecs[zone] = z
	}
	z.soa, z.expires = soaRRs, now.Add(time.Duration(soa.Hdr.Ttl)*time.Second)
	type kept struct {
		owner, name string
		rrtype      uint16
		ttl         uint32
		nr          *nsecRange
	}
	var ks []kept
	for _, n := range nsec {
		ks = append(ks, kept{strings.ToLower(n.Hdr.Name), n.Hdr.Name, dns.TypeNSEC, n.Hdr.Ttl, &nsecRange{nsec: n}})
	}
	for _, n := range nsec3 {
		owner := strings.ToLower(n.Hdr.Name[:strings.IndexByte(n.Hdr.Name, '.')])
		ks = append(ks, kept{owner, n.Hdr.Name, dns.TypeNSEC3, n.Hdr.Ttl, &nsecRange{nsec3: n}})
	}
	for _, k := range ks {
		owner, nr := k.owner, k.nr
		set, sigs := rrsetOf(auth, k.name, k.rrtype)
		nr.expires = now.Add(time.Duration(min(k.ttl, neg)) * time.Second)
		for _, rr := range set {
			nr.rrs = append(nr.rrs, dns.Copy(rr))
		}
		for _, s := range sigs {
			nr.rrs = append(nr.rrs, dns.Copy(s))
		}
		for _, rr := range nr.rrs {
			nr.bytes += dns.Len(rr)
		}
		if old := z.ranges[owner]; old != nil {
			r.nsecBytes -= old.bytes
		} else {
			r.nsecOrder = append(r.nsecOrder, nsecOwner{zone, owner})
			z.add(owner)
		}
		z.ranges[owner] = nr
		r.nsecBytes += nr.bytes
	}
	for r.nsecBytes > r.cfg.RRsetBytes && len(r.nsecOrder) > 0 {
		o := r.nsecOrder[0]
		r.nsecOrder = r.nsecOrder[1:]
		if oz := r.nsecs[o.zone]; oz != nil {
			if nr := oz.ranges[o.owner]; nr != nil {
				r.nsecBytes -= nr.bytes
				delete(oz.ranges, o.owner)
				oz.remove(o.owner)
			}
			if len(oz.ranges) == 0 {
				delete(r.nsecs, o.zone)
			}
		}
	}
}

// nsecZoneOf is the closest zone above name (above its parent for a
// DS, which is the parent's: the child's apex says nothing of it) whose
// ranges are kept; r.mu is held.
func (r *Resolver) nsecZoneOf(name string, qtype uint16) (string, *nsecZone) {
	n := name
	if qtype == dns.TypeDS && name != "." {
		if n = name[strings.IndexByte(name, '.')+1:]; n == "" {
			n = "."
		}
	}
	for {
		if z := r.nsecs[n]; z != nil {
			return n, z
		}
		if n == "." {
			return "", nil
		}
		if n = n[strings.IndexByte(n, '.')+1:]; n == "" {
			n = "."
		}
	}
}

// aggressive answers name/qtype from the kept NSEC ranges of the
// closest zone that has some: NXDOMAIN when one covers the name and one
// the wildcard at its closest encloser, NODATA when the NSEC at the name
// (or, for a name that does not exist, at the wildcard) lacks the type
// and CNAME; the answer's authority section is the zone's SOA and those
// NSEC records with their signatures, TTLs lowered by their age. ok is
// false when the ranges prove nothing, and the name is asked. A zone
// kept with NSEC3 is answered by aggressive3.
func (r *Resolver) aggressive(name string, qtype uint16) (auth []dns.RR, rcode int, ok bool) {
	now := r.now()
	r.mu.Lock()
	if len(r.nsecs) == 0 {
		r.mu.Unlock()
		return nil, 0, false
	}
	if zone, z := r.nsecZoneOf(name, qtype); z != nil && z.nsec3 {
		iter, salt := z.iter, z.salt
		r.mu.Unlock()
		return r.aggressive3(zone, name, qtype, iter, salt, now)
	}
	defer r.mu.Unlock()
	zone, z := r.nsecZoneOf(name, qtype)
	if z == nil || !now.Before(z.expires) {
		return nil, 0, false
	}
	live := func(owner string) *nsecRange {
		nr := z.ranges[owner]
		if nr == nil || !now.Before(nr.expires) {
			return nil
		}
		return nr
	}
	lacks := func(n *dns.NSEC) bool {
		return !typeIn(n.TypeBitMap, qtype) && !typeIn(n.TypeBitMap, dns.TypeCNAME)
	}
	// A delegation's NSEC (NS without SOA) speaks for the parent's side
	// of the cut only: its DS, not the names below it; nor does a DNAME's.
	cut := func(n *dns.NSEC) bool {
		return typeIn(n.TypeBitMap, dns.TypeDNAME) || typeIn(n.TypeBitMap, dns.TypeNS) && !typeIn(n.TypeBitMap, dns.TypeSOA)
	}
	var used []*nsecRange
	if nr := live(name); nr != nil { // the name exists
		if !lacks(nr.nsec) || (cut(nr.nsec) && qtype != dns.TypeDS) || qtype == dns.TypeNSEC {
			return nil, 0, false
		}
		used, rcode = append(used, nr), dns.RcodeSuccess
	} else {
		nr := z.covering(name, now)
		if nr == nil || (cut(nr.nsec) && dns.IsSubDomain(nr.nsec.Hdr.Name, name)) {
			return nil, 0, false
		}
		wild := "*." + nsecEncloser(nr.nsec, name)
		if !dns.IsSubDomain(zone, wild) {
			return nil, 0, false
		}
		switch w := live(wild); {
		case w != nil && lacks(w.nsec): // a wildcard NODATA
			used, rcode = append(used, nr, w), dns.RcodeSuccess
		case w != nil: // the wildcard answers: ask
			return nil, 0, false
		default:
			wr := z.covering(wild, now)
			if wr == nil {
				return nil, 0, false
			}
			used, rcode = append(used, nr), dns.RcodeNameError
			if wr != nr {
				used = append(used, wr)
			}
		}
	}
	return r.synthesised(z, used, rcode, now), rcode, true
}

// synthesised is the authority section of an answer made from z's
// ranges: its SOA and the records used with their signatures, TTLs
// lowered by their age; it counts the answer.
func (r *Resolver) synthesised(z *nsecZone, used []*nsecRange, rcode int, now time.Time) (auth []dns.RR) {
	age := func(rr dns.RR, expires time.Time) dns.RR {
		c := dns.Copy(rr)
		if left := uint32(expires.Sub(now) / time.Second); left < c.Header().Ttl {
			c.Header().Ttl = left
		}
		return c
	}
	for _, rr := range z.soa {
		auth = append(auth, age(rr, z.expires))
	}
	for _, nr := range used {
		for _, rr := range nr.rrs {
			auth = append(auth, age(rr, nr.expires))
		}
	}
	if rcode == dns.RcodeNameError {
		r.st.AggressiveNXDOMAIN.Add(1)
	} else {
		r.st.AggressiveNODATA.Add(1)
	}
	return auth
}

// aggressive3 answers name/qtype from zone's kept NSEC3 ranges (RFC
// 8198 §5.2, RFC 5155 §8.4-8.7): NODATA when the NSEC3 matching the name
// lacks the type (and CNAME); else, the closest encloser proven (an
// ancestor matched, the next closer name below it covered), NXDOMAIN
// when the wildcard at it is covered too, NODATA when the wildcard's
// NSEC3 lacks the type. A covering range with opt-out proves nothing,
// nor does an encloser that is a delegation or a DNAME. The names are
// hashed before the lock is taken, so that a zone of many iterations
// does not hold up the other resolutions.
func (r *Resolver) aggressive3(zone, name string, qtype uint16, iter uint16, salt string, now time.Time) (auth []dns.RR, rcode int, ok bool) {
	if !dns.IsSubDomain(zone, name) {
		return nil, 0, false
	}
	// name, its ancestors down to the apex, and the wildcards below them.
	var anc []string
	for n := name; ; {
		anc = append(anc, n)
		if n == zone || n == "." {
			break
		}
		if n = n[strings.IndexByte(n, '.')+1:]; n == "" {
			n = "."
		}
	}
	h := make([]string, len(anc))
	hw := make([]string, len(anc))
	for i, n := range anc {
		h[i] = hash3(n, iter, salt)
		if i > 0 {
			hw[i] = hash3("*."+n, iter, salt)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	z := r.nsecs[zone]
	if z == nil || !z.nsec3 || z.iter != iter || z.salt != salt || !now.Before(z.expires) {
		return nil, 0, false
	}
	live := func(hash string) *nsecRange {
		nr := z.ranges[hash]
		if nr == nil || !now.Before(nr.expires) {
			return nil
		}
		return nr
	}
	lacks := func(n *dns.NSEC3) bool {
		return !typeIn(n.TypeBitMap, qtype) && !typeIn(n.TypeBitMap, dns.TypeCNAME)
	}
	cut := func(n *dns.NSEC3) bool {
		return typeIn(n.TypeBitMap, dns.TypeDNAME) || typeIn(n.TypeBitMap, dns.TypeNS) && !typeIn(n.TypeBitMap, dns.TypeSOA)
	}
	covered := func(hash string) *nsecRange {
		nr := z.covering3(hash, now)
		if nr == nil || nr.nsec3.Flags&1 != 0 { // opt-out: unsigned delegations may lie inside
			return nil
		}
		return nr
	}
	var used []*nsecRange
	use := func(nr *nsecRange) { // one record may match and cover at once
		if !slices.Contains(used, nr) {
			used = append(used, nr)
		}
	}
	if nr := live(h[0]); nr != nil { // the name exists
		if !lacks(nr.nsec3) || (cut(nr.nsec3) && qtype != dns.TypeDS) || qtype == dns.TypeNSEC3 {
			return nil, 0, false
		}
		use(nr)
		rcode = dns.RcodeSuccess
	} else {
		ce := 0
		for i := 1; i < len(anc); i++ {
			if m := live(h[i]); m != nil {
				if cut(m.nsec3) {
					return nil, 0, false
				}
				ce = i
				use(m)
				break
			}
		}
		if ce == 0 {
			return nil, 0, false
		}
		nc := covered(h[ce-1])
		if nc == nil {
			return nil, 0, false
		}
		use(nc)
		switch w := live(hw[ce]); {
		case w != nil && lacks(w.nsec3): // a wildcard NODATA
			use(w)
			rcode = dns.RcodeSuccess
		case w != nil: // the wildcard answers: ask
			return nil, 0, false
		default:
			wc := covered(hw[ce])
			if wc == nil {
				return nil, 0, false
			}
			use(wc)
			rcode = dns.RcodeNameError
		}
	}
	return r.synthesised(z, used, rcode, now), rcode, true
}
