package gslb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// Static zones, answered like a plain authoritative server (BIG-IP's
// ZoneRunner/BIND side): exact names, CNAME, delegations below the apex,
// NXDOMAIN and NODATA with the SOA, glue for NS and MX targets.

type zone struct {
	origin string                         // lower case, final dot
	names  map[string]map[uint16][]dns.RR // owner → type → records
	exists map[string]bool                // owners and the empty non-terminals above them
	soa    *dns.SOA
}

func compileZones(zs []Zone) ([]*zone, error) {
	var out []*zone
	seen := map[string]bool{}
	for _, z := range zs {
		origin := fqdn(z.Origin)
		if seen[origin] {
			return nil, fmt.Errorf("zone %s defined twice", origin)
		}
		seen[origin] = true
		c := &zone{origin: origin, names: map[string]map[uint16][]dns.RR{}, exists: map[string]bool{origin: true}}
		zp := dns.NewZoneParser(strings.NewReader(z.Data), origin, "")
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			h := rr.Header()
			h.Name = strings.ToLower(h.Name)
			if !dns.IsSubDomain(origin, h.Name) {
				return nil, fmt.Errorf("zone %s: %s is out of the zone", origin, h.Name)
			}
			if c.names[h.Name] == nil {
				c.names[h.Name] = map[uint16][]dns.RR{}
			}
			c.names[h.Name][h.Rrtype] = append(c.names[h.Name][h.Rrtype], rr)
			for n := h.Name; n != origin; {
				c.exists[n] = true
				i, end := dns.NextLabel(n, 0)
				if end {
					break
				}
				n = n[i:]
			}
			if s, ok := rr.(*dns.SOA); ok && h.Name == origin {
				c.soa = s
			}
		}
		if err := zp.Err(); err != nil {
			return nil, fmt.Errorf("zone %s: %v", origin, err)
		}
		if c.soa == nil {
			return nil, fmt.Errorf("zone %s: no SOA record at the apex", origin)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].origin) > len(out[j].origin) })
	return out, nil
}

// zoneFor is the zone with the longest origin that holds qname.
func (p *plan) zoneFor(qname string) *zone {
	for _, z := range p.zones {
		if dns.IsSubDomain(z.origin, qname) {
			return z
		}
	}
	return nil
}

// negative returns the SOA for a negative answer, its TTL capped by the
// SOA minimum as RFC 2308 says.
func (z *zone) negative() dns.RR {
	s := *z.soa
	if s.Minttl < s.Hdr.Ttl {
		s.Hdr.Ttl = s.Minttl
	}
	return &s
}

// answer fills m for qname/qtype from the zone; qname is lower case.
func (z *zone) answer(m *dns.Msg, qname, origName string, qtype uint16) {
	m.Authoritative = true
	// A delegation between the apex and the name answers with a referral.
	for n := qname; n != z.origin; {
		if ns := z.names[n][dns.TypeNS]; len(ns) > 0 && !(n == qname && qtype == dns.TypeDS) {
			m.Authoritative = false
			m.Ns = append(m.Ns, ns...)
			z.glue(m, ns)
			return
		}
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		n = n[i:]
	}
	set := z.names[qname]
	if set == nil {
		if z.exists[qname] {
			m.Ns = append(m.Ns, z.negative())
			return
		}
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, z.negative())
		return
	}
	if qtype == dns.TypeANY {
		for _, t := range sortedTypes(set) {
			m.Answer = append(m.Answer, renamed(set[t], origName)...)
		}
		return
	}
	if rrs := set[qtype]; len(rrs) > 0 {
		m.Answer = append(m.Answer, renamed(rrs, origName)...)
		switch qtype {
		case dns.TypeNS, dns.TypeMX, dns.TypeSRV:
			z.glue(m, rrs)
		}
		return
	}
	if c := set[dns.TypeCNAME]; len(c) > 0 {
		m.Answer = append(m.Answer, renamed(c, origName)...)
		// Follow the chain inside the zone, a few steps at most.
		target := strings.ToLower(c[0].(*dns.CNAME).Target)
		for i := 0; i < 8 && dns.IsSubDomain(z.origin, target); i++ {
			next := z.names[target]
			if rrs := next[qtype]; len(rrs) > 0 {
				m.Answer = append(m.Answer, rrs...)
				break
			}
			cn := next[dns.TypeCNAME]
			if len(cn) == 0 {
				break
			}
			m.Answer = append(m.Answer, cn...)
			target = strings.ToLower(cn[0].(*dns.CNAME).Target)
		}
		return
	}
	m.Ns = append(m.Ns, z.negative())
}

// glue adds the zone's A and AAAA records for the targets of NS, MX and
// SRV records.
func (z *zone) glue(m *dns.Msg, rrs []dns.RR) {
	for _, rr := range rrs {
		var t string
		switch x := rr.(type) {
		case *dns.NS:
			t = x.Ns
		case *dns.MX:
			t = x.Mx
		case *dns.SRV:
			t = x.Target
		default:
			continue
		}
		t = strings.ToLower(t)
		if set := z.names[t]; set != nil {
			m.Extra = append(m.Extra, set[dns.TypeA]...)
			m.Extra = append(m.Extra, set[dns.TypeAAAA]...)
		}
	}
}

// renamed gives the records the question's spelling of the owner name, as
// servers echo the case a resolver asked with (0x20 randomisation).
func renamed(rrs []dns.RR, name string) []dns.RR {
	if len(rrs) == 0 || rrs[0].Header().Name == name {
		return rrs
	}
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		c := dns.Copy(rr)
		c.Header().Name = name
		out[i] = c
	}
	return out
}

func sortedTypes(set map[uint16][]dns.RR) []uint16 {
	ts := make([]uint16, 0, len(set))
	for t := range set {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}
