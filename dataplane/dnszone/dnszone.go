// Package dnszone holds one DNS zone's records indexed for answering as
// an authoritative server does. The GSLB's static zones (`gtm zone`) and
// DNS Express's transferred copies (`ltm dns zone`) answer through it, so
// that referrals, CNAME chains, wildcards and negative answers behave the
// same whichever way the records came.
package dnszone

import (
	"iter"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// Zone is one zone's records, never changed once built: a query reads it
// without a lock while the next copy is built beside it.
type Zone struct {
	origin string                         // lower case, final dot
	names  map[string]map[uint16][]dns.RR // owner → type → records
	exists map[string]bool                // owners and the empty non-terminals above them
	soa    *dns.SOA
	count  int // records, the SOA once
}

// Build indexes rrs (the zone's records, the SOA once) under origin, a
// lower-case name with its final dot. Owners are lower-cased; records out
// of the zone are left out (callers that must refuse them check first);
// an SOA other than the apex's is left out.
func Build(origin string, rrs []dns.RR) *Zone {
	z := &Zone{origin: origin, names: map[string]map[uint16][]dns.RR{}, exists: map[string]bool{origin: true}}
	for _, rr := range rrs {
		h := rr.Header()
		h.Name = strings.ToLower(h.Name)
		if !dns.IsSubDomain(origin, h.Name) {
			continue
		}
		if s, ok := rr.(*dns.SOA); ok {
			if h.Name == origin {
				z.soa = s
			}
			continue
		}
		if z.names[h.Name] == nil {
			z.names[h.Name] = map[uint16][]dns.RR{}
		}
		z.names[h.Name][h.Rrtype] = append(z.names[h.Name][h.Rrtype], rr)
		z.count++
		for n := h.Name; n != origin; {
			z.exists[n] = true
			i, end := dns.NextLabel(n, 0)
			if end {
				break
			}
			n = n[i:]
		}
	}
	if z.soa != nil {
		if z.names[origin] == nil {
			z.names[origin] = map[uint16][]dns.RR{}
		}
		z.names[origin][dns.TypeSOA] = []dns.RR{z.soa}
		z.count++
	}
	return z
}

// Origin is the zone's apex, lower case with its final dot.
func (z *Zone) Origin() string { return z.origin }

// SOA is the apex's SOA record, nil when the records had none (a zone
// cannot answer without it: callers refuse or drop such a copy).
func (z *Zone) SOA() *dns.SOA { return z.soa }

// Count is the number of records, the SOA once (`show ltm dns zone`).
func (z *Zone) Count() int { return z.count }

// Set is the records owned by name (lower case) by type; nil when the
// name owns none. The caller must not change it.
func (z *Zone) Set(name string) map[uint16][]dns.RR { return z.names[name] }

// Owners yields each owner name (lower case) with its records by type,
// in no order: what a reader that indexes the zone its own way (response
// policy zones' triggers) walks once per copy. The sets must not be
// changed.
func (z *Zone) Owners() iter.Seq2[string, map[uint16][]dns.RR] {
	return func(yield func(string, map[uint16][]dns.RR) bool) {
		for n, set := range z.names {
			if !yield(n, set) {
				return
			}
		}
	}
}

// Exists says name (lower case) owns records or is an empty non-terminal
// above some: what a DNSSEC denial takes for the closest encloser.
func (z *Zone) Exists(name string) bool { return z.exists[name] }

// Wildcard is the record set a wildcard gives name (RFC 4592), nil when
// none does: the types a DNSSEC denial lists for a name answered so.
func (z *Zone) Wildcard(name string) map[uint16][]dns.RR {
	if z.names[name] != nil || z.exists[name] {
		return nil
	}
	return z.wildcard(name)
}

// Records is the zone as a list, the SOA first, owners and types in
// order: the base of an incremental transfer's changes and of the copy
// kept on disk.
func (z *Zone) Records() []dns.RR {
	out := make([]dns.RR, 0, z.count)
	out = append(out, z.soa)
	owners := make([]string, 0, len(z.names))
	for n := range z.names {
		owners = append(owners, n)
	}
	sort.Strings(owners)
	for _, n := range owners {
		for _, t := range SortedTypes(z.names[n]) {
			if t != dns.TypeSOA {
				out = append(out, z.names[n][t]...)
			}
		}
	}
	return out
}

// Negative is the SOA of a negative answer, its TTL capped by the SOA
// minimum (RFC 2308).
func (z *Zone) Negative() dns.RR {
	s := *z.soa
	if s.Minttl < s.Hdr.Ttl {
		s.Hdr.Ttl = s.Minttl
	}
	return &s
}

// Answer fills m for qname (lower case) and qtype, as an authoritative
// server does: a referral below a zone cut (NS with glue, AA clear), the
// records, a CNAME followed inside the zone, a wildcard's records
// (RFC 4592) named as asked, or NXDOMAIN/NODATA with the SOA. asked is
// the question's own spelling (a resolver's 0x20 case), which the
// answer's owner names keep.
func (z *Zone) Answer(m *dns.Msg, qname, asked string, qtype uint16) {
	m.Authoritative = true
	for n := qname; n != z.origin; {
		if ns := z.names[n][dns.TypeNS]; len(ns) > 0 && !(n == qname && qtype == dns.TypeDS) {
			m.Authoritative = false
			m.Ns = append(m.Ns, ns...)
			z.Glue(m, ns)
			return
		}
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		n = n[i:]
	}
	set := z.names[qname]
	if set == nil && !z.exists[qname] {
		if w := z.wildcard(qname); w != nil {
			set = w
		} else {
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, z.Negative())
			return
		}
	}
	if set == nil {
		m.Ns = append(m.Ns, z.Negative()) // an empty non-terminal: NODATA
		return
	}
	if qtype == dns.TypeANY {
		for _, t := range SortedTypes(set) {
			m.Answer = append(m.Answer, renamed(set[t], asked)...)
		}
		return
	}
	if rrs := set[qtype]; len(rrs) > 0 {
		m.Answer = append(m.Answer, renamed(rrs, asked)...)
		switch qtype {
		case dns.TypeNS, dns.TypeMX, dns.TypeSRV:
			z.Glue(m, rrs)
		}
		return
	}
	if c := set[dns.TypeCNAME]; len(c) > 0 {
		m.Answer = append(m.Answer, renamed(c, asked)...)
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
	m.Ns = append(m.Ns, z.Negative())
}

// wildcard is the record set of *.E for the closest encloser E of qname,
// nil when there is none.
func (z *Zone) wildcard(qname string) map[uint16][]dns.RR {
	for n := qname; n != z.origin; {
		i, end := dns.NextLabel(n, 0)
		if end {
			return nil
		}
		n = n[i:]
		if z.exists[n] {
			return z.names["*."+n]
		}
	}
	return nil
}

// Glue adds the zone's A and AAAA records of the targets of NS, MX and
// SRV records to m's additional section, as referrals and a wide IP's
// full responses carry them.
func (z *Zone) Glue(m *dns.Msg, rrs []dns.RR) {
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
		if set := z.names[strings.ToLower(t)]; set != nil {
			m.Extra = append(m.Extra, set[dns.TypeA]...)
			m.Extra = append(m.Extra, set[dns.TypeAAAA]...)
		}
	}
}

// renamed gives the records the question's spelling of the name (a
// resolver's 0x20 case, a wildcard's owner).
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

// SortedTypes is a name's record types in numeric order, for answers
// and listings that must not depend on map order.
func SortedTypes(set map[uint16][]dns.RR) []uint16 {
	ts := make([]uint16, 0, len(set))
	for t := range set {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}
