// Package rpz is DNS response policy zones (RPZ, draft-vixie-dnsop-dns-rpz)
// on BIG-IP's DNS caches: a cache's response-policy-zones name DNS
// Express zones (ltm dns zone with response-policy yes) whose records are
// triggers: a query whose name (or a parent, through a wildcard QNAME
// trigger) one of them holds, or whose answer has an address under a
// response-IP trigger, gets the trigger's policy instead of the answer
// of the cache, its local zones, its resolution or the pool. README.md
// says what is [M].
package rpz

import (
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

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

// Policies are a cache's response-policy-zones, in their order: the
// first zone with a trigger for a name decides (the draft's order).
type Policies struct {
	Zones []Zone
	ip    []string // each zone's rpz-ip.ZONE, where its response-IP triggers are
	st    Stats
}

// New makes the policies of zones.
func New(zones []Zone) *Policies {
	p := &Policies{Zones: zones, ip: make([]string, len(zones))}
	for i, z := range zones {
		p.ip[i] = "rpz-ip." + z.Name
	}
	return p
}

// Stats count a cache's policy hits by the policy applied, for show ltm
// dns cache: how much the zones block.
type Stats struct {
	NXDOMAIN, NODATA, LocalData, WalledGarden, Passthru, Drop atomic.Uint64
}

// Reset zeroes the counters.
func (s *Stats) Reset() {
	for _, c := range []*atomic.Uint64{&s.NXDOMAIN, &s.NODATA, &s.LocalData, &s.WalledGarden, &s.Passthru, &s.Drop} {
		c.Store(0)
	}
}

// Stats are the counters.
func (p *Policies) Stats() *Stats { return &p.st }

// Hit is a trigger that matched a query: what DNS::rpz_policy reports and
// what the answer is made from.
type Hit struct {
	// Zone is the policy zone, Trigger the owner of the trigger within
	// it (relative, "*.bad.example" for a wildcard), Policy one of the
	// Policy* names.
	Zone, Trigger, Policy string
	set                   map[uint16][]dns.RR // the trigger's records (local data)
	z                     *Zone
	soa                   *dns.SOA
}

// String is DNS::rpz_policy's value, the Tcl list "ZONE POLICY TRIGGER"
// [M: BIG-IP does not document its format].
func (h *Hit) String() string {
	if h == nil {
		return ""
	}
	return strings.TrimSuffix(h.Zone, ".") + " " + h.Policy + " " + h.Trigger
}

// Check is the policy the zones give a query for qname (any case); nil
// when no trigger matches. A zone without a copy yet is passed over.
// It allocates nothing for a name no zone holds.
func (p *Policies) Check(src Source, qname string) *Hit {
	if p == nil || src == nil || len(p.Zones) == 0 {
		return nil
	}
	name := strings.ToLower(dns.Fqdn(qname))
	for i := range p.Zones {
		z := &p.Zones[i]
		d := src.PolicyZone(z.Name)
		if d == nil {
			continue
		}
		owner, set := lookup(d, name, z.Name)
		if set == nil {
			continue
		}
		return p.hit(z, d, owner, set)
	}
	return nil
}

// CheckResponse is the policy the zones' response-IP triggers give m,
// the answer about to go to a query: the first A or AAAA record of its
// answer section whose address is under a trigger
// (PREFIXLEN.REVERSED-ADDRESS.rpz-ip.ZONE; IPv6 groups reversed, zz for
// the longest run of zero groups), the longest prefix of it; nil when
// none is [M: the draft has the longest prefix over all the addresses
// win; here the first address with a match decides]. A zone with no
// rpz-ip names costs one look-up.
func (p *Policies) CheckResponse(src Source, m *dns.Msg) *Hit {
	if p == nil || src == nil || m == nil || len(p.ip) != len(p.Zones) {
		return nil
	}
	for i := range p.Zones {
		z := &p.Zones[i]
		d := src.PolicyZone(z.Name)
		if d == nil || !d.Exists(p.ip[i]) {
			continue
		}
		for _, rr := range m.Answer {
			var a netip.Addr
			switch x := rr.(type) {
			case *dns.A:
				a, _ = netip.AddrFromSlice(x.A.To4())
			case *dns.AAAA:
				a, _ = netip.AddrFromSlice(x.AAAA.To16())
			default:
				continue
			}
			if !a.IsValid() {
				continue
			}
			for bits := a.BitLen(); bits > 0; bits-- {
				owner := ipOwner(netip.PrefixFrom(a, bits).Masked()) + "." + p.ip[i]
				set := d.Set(owner)
				if set == nil {
					continue
				}
				return p.hit(z, d, owner, set)
			}
		}
	}
	return nil
}

// hit is the policy zone z's trigger owner (its records set, from d)
// as a counted hit: the policy its records say, the walled garden
// instead for a zone whose action is walled-garden (passthru aside).
func (p *Policies) hit(z *Zone, d *dnszone.Zone, owner string, set map[uint16][]dns.RR) *Hit {
	h := &Hit{Zone: z.Name, Trigger: strings.TrimSuffix(owner, "."+z.Name), set: set, z: z, soa: d.SOA()}
	h.Policy = policyOf(set)
	if h.Policy != PolicyPassthru && z.Action == ActionWalledGarden {
		h.Policy = PolicyWalledGarden
	}
	p.count(h.Policy)
	return h
}

// ipOwner is a response-IP trigger's name for the prefix, without the
// zone: 24.0.2.0.192 for 192.0.2.0/24, 48.zz.db8.2001 for 2001:db8::/48.
func ipOwner(px netip.Prefix) string {
	a := px.Addr()
	var b strings.Builder
	b.WriteString(strconv.Itoa(px.Bits()))
	if a.Is4() {
		o := a.As4()
		for i := 3; i >= 0; i-- {
			b.WriteByte('.')
			b.WriteString(strconv.Itoa(int(o[i])))
		}
		return b.String()
	}
	groups := strings.Split(a.String(), ":") // RFC 5952: "::" for the longest zero run
	zz := false
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g == "" {
			if zz {
				continue
			}
			zz, g = true, "zz"
		}
		b.WriteByte('.')
		b.WriteString(g)
	}
	return b.String()
}

func (p *Policies) count(policy string) {
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
	}
}

// lookup finds name's trigger in the policy zone d (apex zone): the exact
// owner NAME.zone, else the closest wildcard *.PARENT.zone above it.
func lookup(d *dnszone.Zone, name, zone string) (string, map[uint16][]dns.RR) {
	if name == "." {
		return "", nil
	}
	owner := name + zone
	if set := d.Set(owner); set != nil {
		return owner, set
	}
	for n := name; ; {
		i, end := dns.NextLabel(n, 0)
		if end {
			return "", nil
		}
		n = n[i:]
		w := "*." + n + zone
		if set := d.Set(w); set != nil {
			return w, set
		}
	}
}

// policyOf is the policy a trigger's records give (the draft's policy
// actions): a CNAME to the root is NXDOMAIN, to *. NODATA, to
// rpz-passthru. passthru, to rpz-drop. no answer; anything else is local
// data. rpz-tcp-only. is taken as passthru [M: openltm does not make
// UDP clients come back over TCP].
func policyOf(set map[uint16][]dns.RR) string {
	if cn := set[dns.TypeCNAME]; len(cn) == 1 && len(set) == 1 {
		switch strings.ToLower(cn[0].(*dns.CNAME).Target) {
		case ".":
			return PolicyNXDOMAIN
		case "*.":
			return PolicyNODATA
		case "rpz-passthru.", "rpz-tcp-only.":
			return PolicyPassthru
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
func (h *Hit) Answer(r *dns.Msg) *dns.Msg {
	if h == nil || h.Policy == PolicyPassthru || h.Policy == PolicyDrop {
		return nil
	}
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
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
