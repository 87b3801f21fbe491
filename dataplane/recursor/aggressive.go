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
// without asking [M: NSEC only, as Unbound; an NSEC3 range is not used,
// its hashed order hiding which names it covers until each is hashed].

// nsecZone is what the aggressive cache keeps of one secure zone: its
// validated SOA (what a synthesised answer carries) and its validated
// NSEC records, by owner.
type nsecZone struct {
	soa     []dns.RR // the SOA and its RRSIGs
	ranges  map[string]*nsecRange
	owners  []string  // the ranges' owners in canonical order, for a binary search
	expires time.Time // the SOA's
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

type nsecRange struct {
	nsec    *dns.NSEC
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
	nsec, _, _ := r.verifiedDenial(auth, e, zone)
	if len(nsec) == 0 {
		return
	}
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
	if z == nil {
		z = &nsecZone{ranges: map[string]*nsecRange{}}
		r.nsecs[zone] = z
	}
	z.soa, z.expires = soaRRs, now.Add(time.Duration(soa.Hdr.Ttl)*time.Second)
	for _, n := range nsec {
		owner := strings.ToLower(n.Hdr.Name)
		set, sigs := rrsetOf(auth, n.Hdr.Name, dns.TypeNSEC)
		nr := &nsecRange{nsec: n, expires: now.Add(time.Duration(min(n.Hdr.Ttl, neg)) * time.Second)}
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

// aggressive answers name/qtype from the kept NSEC ranges of the
// closest zone that has some: NXDOMAIN when one covers the name and one
// the wildcard at its closest encloser, NODATA when the NSEC at the name
// (or, for a name that does not exist, at the wildcard) lacks the type
// and CNAME; the answer's authority section is the zone's SOA and those
// NSEC records with their signatures, TTLs lowered by their age. ok is
// false when the ranges prove nothing, and the name is asked.
func (r *Resolver) aggressive(name string, qtype uint16) (auth []dns.RR, rcode int, ok bool) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.nsecs) == 0 {
		return nil, 0, false
	}
	var zone string
	var z *nsecZone
	start := name
	if qtype == dns.TypeDS && name != "." { // a DS is its parent's: the child's apex NSEC says nothing of it
		start = name[strings.IndexByte(name, '.')+1:]
		if start == "" {
			start = "."
		}
	}
	for n := start; ; {
		if z = r.nsecs[n]; z != nil {
			zone = n
			break
		}
		if n == "." {
			return nil, 0, false
		}
		if n = n[strings.IndexByte(n, '.')+1:]; n == "" {
			n = "."
		}
	}
	if !now.Before(z.expires) {
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
	return auth, rcode, true
}
