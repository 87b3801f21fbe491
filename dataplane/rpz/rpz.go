// Package rpz is DNS response policy zones (RPZ, draft-vixie-dnsop-dns-rpz)
// on BIG-IP's DNS caches: a cache's response-policy-zones name DNS
// Express zones (ltm dns zone with response-policy yes) whose records are
// triggers: a query from a client under a client-IP trigger, or whose
// name (or a parent, through a wildcard QNAME trigger) one of them holds,
// or whose answer has an address under a response-IP trigger or came
// from name servers an NSDNAME or NSIP trigger lists, gets the trigger's
// policy instead of the answer of the cache, its local zones, its
// resolution or the pool. README.md says what is [M].
package rpz

import (
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// The cache's actions (response-policy-zones ZONE { action ... }).
const (
	ActionNXDOMAIN     = "nxdomain"
	ActionWalledGarden = "walled-garden"
)

// The policies a trigger gives, as DNS::rpz_policy names them [M].
const (
	PolicyNXDOMAIN     = "nxdomain"      // CNAME .
	PolicyNODATA       = "nodata"        // CNAME *.
	PolicyPassthru     = "passthru"      // CNAME rpz-passthru.
	PolicyDrop         = "drop"          // CNAME rpz-drop.
	PolicyTCPOnly      = "tcp-only"      // CNAME rpz-tcp-only., to a query over UDP
	PolicyLocalData    = "local-data"    // any other records
	PolicyWalledGarden = "walled-garden" // the cache's action walled-garden
)

// Zone is one of a cache's response-policy-zones.
type Zone struct {
	// Name is the policy zone's apex, lower case and fully qualified:
	// the DNS Express zone whose copy holds the triggers.
	Name string
	// Action is nxdomain (the triggers' own policies) or walled-garden
	// (every trigger but a passthru answered from Garden).
	Action string
	// GardenName is walled-garden, the cache's local zone whose apex
	// records (Garden) answer a walled-garden hit.
	GardenName string
	Garden     []dns.RR
}

// Source holds the policy zones' copies: DNS Express's store.
type Source interface {
	// PolicyZone is the copy of the response policy zone of that name,
	// nil while there is none.
	PolicyZone(name string) *dnszone.Zone
}

// The triggers, as Hit.Kind and the counters name them, in the order
// the draft has one zone's triggers take precedence.
const (
	TriggerClientIP = "client-ip" // PREFIXLEN.REVERSED.rpz-client-ip.ZONE: the querying client's address
	TriggerQNAME    = "qname"     // NAME.ZONE, *.NAME.ZONE: the query's name
	TriggerIP       = "ip"        // PREFIXLEN.REVERSED.rpz-ip.ZONE: an address of the answer
	TriggerNSDNAME  = "nsdname"   // NAME.rpz-nsdname.ZONE: an authoritative name server's name
	TriggerNSIP     = "nsip"      // PREFIXLEN.REVERSED.rpz-nsip.ZONE: an authoritative name server's address
)

// Policies are a cache's response-policy-zones, in their order: the
// first zone with a trigger for a name decides (the draft's order).
type Policies struct {
	Zones []Zone
	idx   []atomic.Pointer[index] // each zone's copy last seen, indexed
	build sync.Mutex              // one index built at a time: the first queries after a transfer wait for it
	st    Stats
}

// New makes the policies of zones.
func New(zones []Zone) *Policies {
	return &Policies{Zones: zones, idx: make([]atomic.Pointer[index], len(zones))}
}

// Stats count a cache's policy hits by the policy applied and by the
// trigger that matched, for show ltm dns cache: how much the zones
// block, and with what.
type Stats struct {
	NXDOMAIN, NODATA, LocalData, WalledGarden, Passthru, Drop, TCPOnly atomic.Uint64
	ClientIP, QNAME, IP, NSDNAME, NSIP                                 atomic.Uint64
}

// Reset zeroes the counters.
func (s *Stats) Reset() {
	for _, c := range []*atomic.Uint64{&s.NXDOMAIN, &s.NODATA, &s.LocalData, &s.WalledGarden, &s.Passthru, &s.Drop, &s.TCPOnly,
		&s.ClientIP, &s.QNAME, &s.IP, &s.NSDNAME, &s.NSIP} {
		c.Store(0)
	}
}

// Stats are the counters.
func (p *Policies) Stats() *Stats { return &p.st }

// Hit is a trigger that matched a query: what DNS::rpz_policy reports and
// what the answer is made from.
type Hit struct {
	// Zone is the policy zone, Trigger the owner of the trigger within
	// it (relative, "*.bad.example" for a wildcard, "32.7.2.0.192.rpz-ip"
	// for an address), Policy one of the Policy* names, Kind one of the
	// Trigger* names.
	Zone, Trigger, Policy, Kind string
	set                         map[uint16][]dns.RR // the trigger's records (local data)
	z                           *Zone
	soa                         *dns.SOA
}

// String is DNS::rpz_policy's value, the Tcl list "ZONE POLICY TRIGGER"
// [M: BIG-IP does not document its format].
func (h *Hit) String() string {
	if h == nil {
		return ""
	}
	return strings.TrimSuffix(h.Zone, ".") + " " + h.Policy + " " + h.Trigger
}

// index is zone i's copy d with its address and name server triggers
// indexed: the one kept while d is the copy, a new one after a transfer.
func (p *Policies) index(i int, d *dnszone.Zone) *index {
	if i >= len(p.idx) {
		return buildIndex(d, p.Zones[i].Name) // a Policies not made by New
	}
	if ix := p.idx[i].Load(); ix != nil && ix.d == d {
		return ix
	}
	p.build.Lock()
	defer p.build.Unlock()
	if ix := p.idx[i].Load(); ix != nil && ix.d == d {
		return ix
	}
	ix := buildIndex(d, p.Zones[i].Name)
	p.idx[i].Store(ix)
	return ix
}

// Check is the policy the zones give a query before it is answered:
// its client's address (client-IP triggers; an invalid client for none)
// and its name, qname in any case (QNAME triggers); nil when no trigger
// matches. Zones are taken in order, and within one a client-IP trigger
// before a QNAME one (the draft's precedence). A zone without a copy yet
// is passed over. udp says the query came over UDP, where an
// rpz-tcp-only trigger sends the client back over TCP (over TCP it is a
// passthru). It allocates nothing for a query no trigger holds.
func (p *Policies) Check(src Source, client netip.Addr, qname string, udp bool) *Hit {
	if p == nil || src == nil || len(p.Zones) == 0 {
		return nil
	}
	name := strings.ToLower(dns.Fqdn(qname))
	special := isTriggerName(name)
	for i := range p.Zones {
		z := &p.Zones[i]
		d := src.PolicyZone(z.Name)
		if d == nil {
			continue
		}
		if client.IsValid() {
			if ix := p.index(i, d); ix.client.any() {
				if _, owner := ix.client.match(client); owner != "" {
					return p.hit(z, d, owner, d.Set(owner), TriggerClientIP, udp)
				}
			}
		}
		if special {
			continue
		}
		owner, set := lookup(d, name, z.Name)
		if set == nil {
			continue
		}
		return p.hit(z, d, owner, set, TriggerQNAME, udp)
	}
	return nil
}

// isTriggerName says a query's name ends in one of the labels that hold
// the other triggers, which no QNAME trigger stands for.
func isTriggerName(name string) bool {
	n := strings.TrimSuffix(name, ".")
	last := n[strings.LastIndexByte(n, '.')+1:]
	switch last {
	case labelClientIP, labelIP, labelNSDNAME, labelNSIP:
		return true
	}
	return false
}

// NameServers are the authoritative servers of one zone cut a
// resolution went through (or would go through) for the name asked or
// a CNAME target of its answer: what NSDNAME and NSIP triggers match.
type NameServers struct {
	Zone  string           // the zone cut, lower case, fully qualified
	Names []string         // its NS records' targets, lower case
	Addrs []netip.AddrPort // their addresses, from glue or looked up
}

// minNSLabels is how many labels a zone cut needs for its name servers
// to meet NSDNAME and NSIP triggers: the root's and the TLDs' servers,
// which every resolution goes through, are not checked [M: BIND's
// min-ns-dots 1].
const minNSLabels = 2

// WantsNameServers says some zone's copy has NSDNAME or NSIP triggers,
// so that a caller gathers the name servers CheckResponse takes only
// when one could match.
func (p *Policies) WantsNameServers(src Source) bool {
	if p == nil || src == nil {
		return false
	}
	for i := range p.Zones {
		if d := src.PolicyZone(p.Zones[i].Name); d != nil {
			if ix := p.index(i, d); ix.nsip.any() || len(ix.nsExact) > 0 || len(ix.nsWild) > 0 {
				return true
			}
		}
	}
	return false
}

// CheckResponse is the policy the zones give m, the answer about to go
// to a query, and ns, the name servers it came from (nil when unknown):
// response-IP triggers on the A and AAAA records of its answer section,
// NSDNAME triggers on the servers' names, NSIP triggers on their
// addresses; nil when none matches. Zones are taken in order, and
// within one the draft's precedence: IP, then NSDNAME, then NSIP; among
// addresses the longest prefix wins (the smallest address on a tie),
// among names the smallest in DNSSEC order. udp is Check's. A zone
// without such triggers costs one look-up.
func (p *Policies) CheckResponse(src Source, m *dns.Msg, ns []NameServers, udp bool) *Hit {
	if p == nil || src == nil || m == nil {
		return nil
	}
	for i := range p.Zones {
		z := &p.Zones[i]
		d := src.PolicyZone(z.Name)
		if d == nil {
			continue
		}
		ix := p.index(i, d)
		if ix.ip.any() {
			best, bestAddr, owner := -1, netip.Addr{}, ""
			for _, rr := range m.Answer {
				a, ok := rrAddr(rr)
				if !ok {
					continue
				}
				if bits, o := ix.ip.match(a); o != "" && better(bits, a, best, bestAddr) {
					best, bestAddr, owner = bits, a, o
				}
			}
			if owner != "" {
				return p.hit(z, d, owner, d.Set(owner), TriggerIP, udp)
			}
		}
		if len(ix.nsExact) > 0 || len(ix.nsWild) > 0 {
			name, owner := "", ""
			for _, c := range ns {
				if dns.CountLabel(c.Zone) < minNSLabels {
					continue
				}
				for _, n := range c.Names {
					if o := ix.nsMatch(n); o != "" && (owner == "" || canonicalLess(n, name)) {
						name, owner = n, o
					}
				}
			}
			if owner != "" {
				return p.hit(z, d, owner, d.Set(owner), TriggerNSDNAME, udp)
			}
		}
		if ix.nsip.any() {
			best, bestAddr, owner := -1, netip.Addr{}, ""
			for _, c := range ns {
				if dns.CountLabel(c.Zone) < minNSLabels {
					continue
				}
				for _, ap := range c.Addrs {
					a := ap.Addr().Unmap()
					if bits, o := ix.nsip.match(a); o != "" && better(bits, a, best, bestAddr) {
						best, bestAddr, owner = bits, a, o
					}
				}
			}
			if owner != "" {
				return p.hit(z, d, owner, d.Set(owner), TriggerNSIP, udp)
			}
		}
	}
	return nil
}

// better says a match of bits on a beats the best so far: a longer
// prefix, or as long on a smaller address (the draft's tie-break).
func better(bits int, a netip.Addr, best int, bestAddr netip.Addr) bool {
	return bits > best || (bits == best && a.Less(bestAddr))
}

// rrAddr is an A or AAAA record's address.
func rrAddr(rr dns.RR) (netip.Addr, bool) {
	var a netip.Addr
	switch x := rr.(type) {
	case *dns.A:
		a, _ = netip.AddrFromSlice(x.A.To4())
	case *dns.AAAA:
		a, _ = netip.AddrFromSlice(x.AAAA.To16())
	}
	return a.Unmap(), a.IsValid()
}

// hit is the policy zone z's trigger owner (its records set, from d)
// of kind as a counted hit: the policy its records say, the walled
// garden instead for a zone whose action is walled-garden (passthru
// aside). rpz-tcp-only is tcp-only for a query over UDP (udp), a
// passthru over TCP, as BIND has it.
func (p *Policies) hit(z *Zone, d *dnszone.Zone, owner string, set map[uint16][]dns.RR, kind string, udp bool) *Hit {
	h := &Hit{Zone: z.Name, Trigger: strings.TrimSuffix(owner, "."+z.Name), Kind: kind, set: set, z: z, soa: d.SOA()}
	h.Policy = policyOf(set)
	if h.Policy == PolicyTCPOnly && !udp {
		h.Policy = PolicyPassthru
	}
	if h.Policy != PolicyPassthru && z.Action == ActionWalledGarden {
		h.Policy = PolicyWalledGarden
	}
	p.count(h.Policy, kind)
	return h
}

func (p *Policies) count(policy, kind string) {
	switch policy {
	case PolicyNXDOMAIN:
		p.st.NXDOMAIN.Add(1)
	case PolicyNODATA:
		p.st.NODATA.Add(1)
	case PolicyLocalData:
		p.st.LocalData.Add(1)
	case PolicyWalledGarden:
		p.st.WalledGarden.Add(1)
	case PolicyPassthru:
		p.st.Passthru.Add(1)
	case PolicyDrop:
		p.st.Drop.Add(1)
	case PolicyTCPOnly:
		p.st.TCPOnly.Add(1)
	}
	switch kind {
	case TriggerClientIP:
		p.st.ClientIP.Add(1)
	case TriggerQNAME:
		p.st.QNAME.Add(1)
	case TriggerIP:
		p.st.IP.Add(1)
	case TriggerNSDNAME:
		p.st.NSDNAME.Add(1)
	case TriggerNSIP:
		p.st.NSIP.Add(1)
	}
}

// lookup finds name's trigger in the policy zone d (apex zone): the exact
// owner NAME.zone, else the closest wildcard *.PARENT.zone above it. The
// owners tried are built in a buffer on the stack and looked up without
// a copy, so that a name no trigger holds costs no allocation.
func lookup(d *dnszone.Zone, name, zone string) (string, map[uint16][]dns.RR) {
	if name == "." {
		return "", nil
	}
	var buf [512]byte
	probe := func(parts ...string) (string, map[uint16][]dns.RR) {
		b := buf[:0]
		for _, p := range parts {
			b = append(b, p...)
		}
		if set := d.Set(unsafe.String(unsafe.SliceData(b), len(b))); set != nil {
			return string(b), set
		}
		return "", nil
	}
	if owner, set := probe(name, zone); set != nil {
		return owner, set
	}
	for n := name; ; {
		i, end := dns.NextLabel(n, 0)
		if end {
			return "", nil
		}
		n = n[i:]
		if owner, set := probe("*.", n, zone); set != nil {
			return owner, set
		}
	}
}

// policyOf is the policy a trigger's records give (the draft's policy
// actions): a CNAME to the root is NXDOMAIN, to *. NODATA, to
// rpz-passthru. passthru, to rpz-drop. no answer, to rpz-tcp-only. an
// empty truncated answer (to a query over UDP; hit makes it a passthru
// over TCP); anything else is local data.
func policyOf(set map[uint16][]dns.RR) string {
	if cn := set[dns.TypeCNAME]; len(cn) == 1 && len(set) == 1 {
		switch strings.ToLower(cn[0].(*dns.CNAME).Target) {
		case ".":
			return PolicyNXDOMAIN
		case "*.":
			return PolicyNODATA
		case "rpz-passthru.":
			return PolicyPassthru
		case "rpz-tcp-only.":
			return PolicyTCPOnly
		case "rpz-drop.":
			return PolicyDrop
		}
	}
	return PolicyLocalData
}

// Answer is the reply to r the hit gives; nil for a drop (nothing is
// sent) and for a passthru (the query goes on as if no zone held it).
// NXDOMAIN and NODATA carry the policy zone's SOA [M: as BIND's RPZ
// answers do, so that clients cache them no longer than the zone says].
// tcp-only is an answer with no records and TC set, which sends the
// client back over TCP, where the trigger is a passthru (BIND's
// rpz-tcp-only, a defence against reflection through forged sources).
func (h *Hit) Answer(r *dns.Msg) *dns.Msg {
	if h == nil || h.Policy == PolicyPassthru || h.Policy == PolicyDrop {
		return nil
	}
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	if h.Policy == PolicyTCPOnly {
		m.Truncated = true
		if o := r.IsEdns0(); o != nil {
			m.SetEdns0(1232, o.Do())
		}
		return m
	}
	switch h.Policy {
	case PolicyNXDOMAIN:
		m.Rcode = dns.RcodeNameError
	case PolicyLocalData:
		m.Answer = localData(h.set, q.Name, q.Qtype)
	case PolicyWalledGarden:
		m.Answer = garden(h.z.Garden, q.Name, q.Qtype)
	}
	if len(m.Answer) == 0 && h.soa != nil {
		soa := dns.Copy(h.soa).(*dns.SOA)
		soa.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
		m.Ns = []dns.RR{soa}
	}
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(1232, o.Do())
	}
	return m
}

// localData is the trigger's records of qtype (any type for ANY), or its
// CNAME, renamed to qname; a CNAME target starting *. has the star
// replaced by qname (the draft's wildcard local data).
func localData(set map[uint16][]dns.RR, qname string, qtype uint16) []dns.RR {
	var out []dns.RR
	add := func(rrs []dns.RR) {
		for _, rr := range rrs {
			c := dns.Copy(rr)
			c.Header().Name = qname
			if cn, ok := c.(*dns.CNAME); ok && strings.HasPrefix(cn.Target, "*.") {
				cn.Target = dns.Fqdn(strings.TrimSuffix(qname, ".") + cn.Target[1:])
			}
			out = append(out, c)
		}
	}
	switch {
	case qtype == dns.TypeANY:
		for _, rrs := range set {
			add(rrs)
		}
	case set[qtype] != nil:
		add(set[qtype])
	default:
		add(set[dns.TypeCNAME])
	}
	return out
}

// garden is the walled-garden local zone's apex records of qtype, renamed
// to qname: the garden's address for A and AAAA; NODATA for a type it
// does not have [M].
func garden(rrs []dns.RR, qname string, qtype uint16) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype != qtype && qtype != dns.TypeANY {
			continue
		}
		c := dns.Copy(rr)
		c.Header().Name = qname
		out = append(out, c)
	}
	return out
}
