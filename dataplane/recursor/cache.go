package recursor

import (
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// rrGet is a copy of the live record set name/qtype (with its RRSIGs
// when validating), its TTLs lowered by its age and, with rrset-rotate
// query-id, rotated by id, and what validation made of it; nil when none
// is kept.
func (r *Resolver) rrGet(name string, qtype uint16, id uint16) ([]dns.RR, Security) {
	k := rrKey{name, qtype}
	now := r.now()
	r.mu.Lock()
	e := r.rrsets[k]
	if e != nil && !now.Before(e.expires) {
		delete(r.rrsets, k)
		r.rrBytes -= e.bytes
		e = nil
	}
	var out []dns.RR
	sec := Insecure
	if e != nil {
		sec = e.sec
		age := uint32(now.Sub(e.stored) / time.Second)
		out = make([]dns.RR, len(e.rrs))
		start := 0
		if r.cfg.Rotate {
			start = int(id) % len(e.rrs)
		}
		for i := range e.rrs {
			rr := dns.Copy(e.rrs[(start+i)%len(e.rrs)])
			rr.Header().Ttl -= min(age, rr.Header().Ttl)
			out[i] = rr
		}
	}
	r.mu.Unlock()
	if out != nil {
		r.st.RRsetHits.Add(1)
	}
	return out, sec
}

// rrPutAll keeps each record set of rrs (records of one owner and type)
// for its least TTL, within rrset-cache-size bytes: the oldest go first.
// An RRSIG is kept with the set it covers; sec is what validation made
// of them (a bogus set is not kept).
func (r *Resolver) rrPutAll(rrs []dns.RR, sec Security) {
	if sec == Bogus {
		return
	}
	sets := map[rrKey][]dns.RR{}
	var keys []rrKey
	for _, rr := range rrs {
		h := rr.Header()
		k := rrKey{strings.ToLower(h.Name), h.Rrtype}
		if sig, ok := rr.(*dns.RRSIG); ok {
			k.qtype = sig.TypeCovered
		}
		if sets[k] == nil {
			keys = append(keys, k)
		}
		sets[k] = append(sets[k], dns.Copy(rr))
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		set := sets[k]
		ttl, size := set[0].Header().Ttl, 0
		for _, rr := range set {
			ttl = min(ttl, rr.Header().Ttl)
			size += dns.Len(rr)
		}
		if ttl == 0 || size > r.cfg.RRsetBytes {
			continue
		}
		if old := r.rrsets[k]; old != nil {
			r.rrBytes -= old.bytes
		} else {
			r.rrOrder = append(r.rrOrder, k)
		}
		r.rrsets[k] = &rrEntry{rrs: set, stored: now, expires: now.Add(time.Duration(ttl) * time.Second), bytes: size, sec: sec}
		r.rrBytes += size
		for r.rrBytes > r.cfg.RRsetBytes && len(r.rrOrder) > 1 {
			old := r.rrOrder[0]
			r.rrOrder = r.rrOrder[1:]
			if old == k {
				r.rrOrder = append(r.rrOrder, k)
				continue
			}
			if e := r.rrsets[old]; e != nil {
				delete(r.rrsets, old)
				r.rrBytes -= e.bytes
			}
		}
	}
	if len(r.rrOrder) > 2*len(r.rrsets)+16 { // keys of expired sets: compact
		live := r.rrOrder[:0]
		for _, o := range r.rrOrder {
			if r.rrsets[o] != nil {
				live = append(live, o)
			}
		}
		r.rrOrder = live
	}
}

// nsPut keeps zone's name server addresses (and the names the referral
// gave them) for ttl, within nameserver-cache-count addresses: the
// oldest delegations go first.
func (r *Resolver) nsPut(zone string, names []string, addrs []netip.AddrPort, ttl uint32) {
	if ttl == 0 {
		return
	}
	if len(addrs) > r.cfg.NSCount {
		addrs = addrs[:r.cfg.NSCount]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.ns[zone]; old != nil {
		r.nsAddrs -= len(old.addrs)
	} else {
		r.nsOrder = append(r.nsOrder, zone)
	}
	r.ns[zone] = &nsEntry{names: names, addrs: addrs, expires: r.now().Add(time.Duration(ttl) * time.Second)}
	r.nsAddrs += len(addrs)
	for r.nsAddrs > r.cfg.NSCount && len(r.nsOrder) > 1 {
		old := r.nsOrder[0]
		r.nsOrder = r.nsOrder[1:]
		if old == zone {
			r.nsOrder = append(r.nsOrder, zone)
			continue
		}
		if e := r.ns[old]; e != nil {
			delete(r.ns, old)
			r.nsAddrs -= len(e.addrs)
		}
	}
}

// Delegation is one zone cut the resolver learnt: what a response
// policy's NSDNAME and NSIP triggers match.
type Delegation struct {
	Zone  string           // the zone, lower case, fully qualified
	Names []string         // its name servers' names, lower case
	Addrs []netip.AddrPort // the addresses asked (glue, or looked up)
}

// Delegations appends to dst the zone cuts known above name (lower case,
// fully qualified), the closest first, down to the root: the name
// servers a resolution of name goes through, or went through. A
// delegation past its TTL is still given until it is learnt again or
// evicted, so that an answer kept longer than its zone's NS records is
// still matched against the servers it came from [M]. The slices are
// shared and must not be changed. With a dst of room enough it
// allocates nothing.
func (r *Resolver) Delegations(dst []Delegation, name string) []Delegation {
	if r == nil {
		return dst
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for z := name; ; {
		if e := r.ns[z]; e != nil {
			dst = append(dst, Delegation{Zone: z, Names: e.names, Addrs: e.addrs})
		}
		if z == "." || z == "" {
			return dst
		}
		i := strings.IndexByte(z, '.')
		if z = z[i+1:]; z == "" {
			z = "."
		}
	}
}

// CacheSizes are what the resolver keeps: record sets and their bytes,
// delegations and their name server addresses.
func (r *Resolver) CacheSizes() (rrsets, rrBytes, zones, nsAddrs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rrsets), r.rrBytes, len(r.ns), r.nsAddrs
}

// KeyCacheSizes are what the key cache keeps: zones and their bytes.
func (r *Resolver) KeyCacheSizes() (zones, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.keys), r.keyBytes
}

// Flush forgets every record set, delegation and key learnt.
func (r *Resolver) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.rrsets)
	clear(r.ns)
	clear(r.keys)
	clear(r.nsecs)
	r.rrOrder, r.nsOrder, r.keyOrder, r.rrBytes, r.nsAddrs, r.keyBytes = nil, nil, nil, 0, 0, 0
	r.nsecOrder, r.nsecBytes = nil, 0
}
