package recursor

import (
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Filter picks the entries of show and delete ltm dns cache records:
// Name (key NAME) is a fully qualified owner or zone name in lower case,
// "" for every one; Type (type T) a record type, 0 for every one.
type Filter struct {
	Name string
	Type uint16
}

// match reports whether an entry of owner name and type t passes f.
func (f Filter) match(name string, t uint16) bool {
	return (f.Name == "" || f.Name == name) && (f.Type == 0 || f.Type == t)
}

// RRset is one record set the rrset cache keeps, as show ltm dns cache
// records rrset lists it.
type RRset struct {
	Name     string // the owner, lower case
	Type     uint16
	TTL      uint32   // seconds left
	Security Security // what validation made of it (insecure when not validating)
	// RRs are the set's records and RRSIGs as kept, their TTLs as
	// learnt: shared, never to be changed.
	RRs []dns.RR
}

// walkBatch is how many entries a walk copies under the lock at a time:
// the lock is never held while the caller writes out, and a show of a
// large cache holds only the keys, not its lines [M].
const walkBatch = 64

// RRsets calls fn with each live record set passing f, by owner then
// type, until fn returns false. A walk copies the keys first and looks
// each set up again as it goes, so that the resolver keeps answering
// while a slow reader prints: a set learnt meanwhile may be missed, one
// gone meanwhile is skipped.
func (r *Resolver) RRsets(f Filter, fn func(RRset) bool) {
	var keys []rrKey
	r.mu.Lock()
	if f.Name != "" && f.Type != 0 {
		if r.rrsets[rrKey{f.Name, f.Type}] != nil {
			keys = append(keys, rrKey{f.Name, f.Type})
		}
	} else {
		for k := range r.rrsets {
			if f.match(k.name, k.qtype) {
				keys = append(keys, k)
			}
		}
	}
	r.mu.Unlock()
	slices.SortFunc(keys, func(a, b rrKey) int {
		if c := compareNames(a.name, b.name); c != 0 {
			return c
		}
		return int(a.qtype) - int(b.qtype)
	})
	var batch []RRset
	for len(keys) > 0 {
		n := min(len(keys), walkBatch)
		batch = batch[:0]
		now := r.now()
		r.mu.Lock()
		for _, k := range keys[:n] {
			if e := r.rrsets[k]; e != nil && now.Before(e.expires) {
				batch = append(batch, RRset{Name: k.name, Type: k.qtype, TTL: uint32(e.expires.Sub(now) / time.Second), Security: e.sec, RRs: e.rrs})
			}
		}
		r.mu.Unlock()
		keys = keys[n:]
		for _, s := range batch {
			if !fn(s) {
				return
			}
		}
	}
}

// DeleteRRsets forgets the record sets passing f (delete ltm dns cache
// records rrset) and returns how many went: the next question for them
// is asked of the name servers again.
func (r *Resolver) DeleteRRsets(f Filter) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, e := range r.rrsets {
		if f.match(k.name, k.qtype) {
			delete(r.rrsets, k)
			r.rrBytes -= e.bytes
			n++
		}
	}
	return n
}

// Nameserver is one delegation the nameserver cache keeps, as show ltm
// dns cache records nameserver lists it. The resolver keeps no round
// trip time nor state per server [M]: it asks a zone's servers in turn.
type Nameserver struct {
	Zone  string           // lower case, fully qualified
	Names []string         // the servers' names as the referral gave them; shared
	Addrs []netip.AddrPort // the addresses asked; shared
	TTL   uint32           // seconds left, 0 once past (kept until learnt again)
}

// Nameservers calls fn with each delegation of zone f.Name (every one
// when ""), by zone name, until fn returns false; f.Type is not used.
// It walks as RRsets does.
func (r *Resolver) Nameservers(f Filter, fn func(Nameserver) bool) {
	var zones []string
	r.mu.Lock()
	for z := range r.ns {
		if f.Name == "" || f.Name == z {
			zones = append(zones, z)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(zones, compareNames)
	var batch []Nameserver
	for len(zones) > 0 {
		n := min(len(zones), walkBatch)
		batch = batch[:0]
		now := r.now()
		r.mu.Lock()
		for _, z := range zones[:n] {
			if e := r.ns[z]; e != nil {
				ttl := uint32(0)
				if now.Before(e.expires) {
					ttl = uint32(e.expires.Sub(now) / time.Second)
				}
				batch = append(batch, Nameserver{Zone: z, Names: e.names, Addrs: e.addrs, TTL: ttl})
			}
		}
		r.mu.Unlock()
		zones = zones[n:]
		for _, s := range batch {
			if !fn(s) {
				return
			}
		}
	}
}

// DeleteNameservers forgets the delegations of zone f.Name (every one
// when "") and returns how many went: the zone is found again from its
// parent, or the root hints.
func (r *Resolver) DeleteNameservers(f Filter) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for z, e := range r.ns {
		if f.Name == "" || f.Name == z {
			delete(r.ns, z)
			r.nsAddrs -= len(e.addrs)
			n++
		}
	}
	return n
}

// DeleteKeys forgets the keys of zone f.Name (every zone's when "") and
// returns how many zones went. The NSEC and NSEC3 ranges kept all go
// with them [M: even with a zone named, rather than tell which ranges
// rested on which keys], as FlushKeys does.
func (r *Resolver) DeleteKeys(f Filter) int {
	if f.Name == "" {
		return r.FlushKeys()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.keys[f.Name]
	if e == nil {
		return 0
	}
	delete(r.keys, f.Name)
	r.keyBytes -= e.bytes
	clear(r.nsecs)
	r.nsecOrder, r.nsecBytes = nil, 0
	return 1
}

// compareNames orders domain names as a listing reads best: by their
// labels from the root down (com. before example.com. before
// www.example.com.; a. before b.).
func compareNames(a, b string) int {
	for a != "" || b != "" {
		la, ra := lastLabel(a)
		lb, rb := lastLabel(b)
		if c := strings.Compare(la, lb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	return 0
}

// lastLabel splits name's last label off ("www.example.com." gives
// "com" and "www.example.").
func lastLabel(name string) (label, rest string) {
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return "", ""
	}
	i := strings.LastIndexByte(name, '.')
	return name[i+1:], name[:i+1]
}
