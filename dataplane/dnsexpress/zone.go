package dnsexpress

import (
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// data is one transferred copy of a zone, never changed once built: a
// query reads it without a lock while a transfer builds the next one.
type data struct {
	origin string                         // lower case, final dot
	names  map[string]map[uint16][]dns.RR // owner → type → records
	exists map[string]bool                // owners and the empty non-terminals above them
	soa    *dns.SOA
	count  int // records, the SOA once
}

// build indexes rrs (the zone's records, the SOA once) under origin.
func build(origin string, rrs []dns.RR) *data {
	d := &data{origin: origin, names: map[string]map[uint16][]dns.RR{}, exists: map[string]bool{origin: true}}
	for _, rr := range rrs {
		h := rr.Header()
		h.Name = strings.ToLower(h.Name)
		if !dns.IsSubDomain(origin, h.Name) {
			continue // out of zone: a primary's mistake, not ours to serve
		}
		if s, ok := rr.(*dns.SOA); ok {
			if h.Name == origin {
				d.soa = s
			}
			continue
		}
		if d.names[h.Name] == nil {
			d.names[h.Name] = map[uint16][]dns.RR{}
		}
		d.names[h.Name][h.Rrtype] = append(d.names[h.Name][h.Rrtype], rr)
		d.count++
		for n := h.Name; n != origin; {
			d.exists[n] = true
			i, end := dns.NextLabel(n, 0)
			if end {
				break
			}
			n = n[i:]
		}
	}
	if d.soa != nil {
		d.names[origin] = ensure(d.names[origin])
		d.names[origin][dns.TypeSOA] = []dns.RR{d.soa}
		d.count++
	}
	return d
}

func ensure(m map[uint16][]dns.RR) map[uint16][]dns.RR {
	if m == nil {
		return map[uint16][]dns.RR{}
	}
	return m
}

// records is the zone as a list, the SOA first, for the next transfer's
// changes and for the state file.
func (d *data) records() []dns.RR {
	out := make([]dns.RR, 0, d.count)
	out = append(out, d.soa)
	owners := make([]string, 0, len(d.names))
	for n := range d.names {
		owners = append(owners, n)
	}
	sort.Strings(owners)
	for _, n := range owners {
		for _, t := range sortedTypes(d.names[n]) {
			if t != dns.TypeSOA {
				out = append(out, d.names[n][t]...)
			}
		}
	}
	return out
}

// negative is the SOA of a negative answer, its TTL capped by the SOA
// minimum (RFC 2308).
func (d *data) negative() dns.RR {
	s := *d.soa
	if s.Minttl < s.Hdr.Ttl {
		s.Hdr.Ttl = s.Minttl
	}
	return &s
}

// answer fills m for qname (lower case) and qtype, as an authoritative
// server does: a referral below a zone cut (NS with glue, AA clear), the
// records, a CNAME followed inside the zone, a wildcard's records named
// as asked, or NXDOMAIN/NODATA with the SOA.
func (d *data) answer(m *dns.Msg, qname, asked string, qtype uint16) {
	m.Authoritative = true
	for n := qname; n != d.origin; {
		if ns := d.names[n][dns.TypeNS]; len(ns) > 0 && !(n == qname && qtype == dns.TypeDS) {
			m.Authoritative = false
			m.Ns = append(m.Ns, ns...)
			d.glue(m, ns)
			return
		}
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		n = n[i:]
	}
	set := d.names[qname]
	name := asked
	if set == nil && !d.exists[qname] {
		// RFC 4592: the wildcard at the closest encloser answers a name
		// that does not exist.
		if w := d.wildcard(qname); w != nil {
			set = w
		} else {
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, d.negative())
			return
		}
	}
	if set == nil {
		m.Ns = append(m.Ns, d.negative()) // an empty non-terminal: NODATA
		return
	}
	if qtype == dns.TypeANY {
		for _, t := range sortedTypes(set) {
			m.Answer = append(m.Answer, renamed(set[t], name)...)
		}
		return
	}
	if rrs := set[qtype]; len(rrs) > 0 {
		m.Answer = append(m.Answer, renamed(rrs, name)...)
		switch qtype {
		case dns.TypeNS, dns.TypeMX, dns.TypeSRV:
			d.glue(m, rrs)
		}
		return
	}
	if c := set[dns.TypeCNAME]; len(c) > 0 {
		m.Answer = append(m.Answer, renamed(c, name)...)
		target := strings.ToLower(c[0].(*dns.CNAME).Target)
		for i := 0; i < 8 && dns.IsSubDomain(d.origin, target); i++ {
			next := d.names[target]
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
	m.Ns = append(m.Ns, d.negative())
}

// wildcard is the record set of *.E for the closest encloser E of qname,
// nil when there is none.
func (d *data) wildcard(qname string) map[uint16][]dns.RR {
	for n := qname; n != d.origin; {
		i, end := dns.NextLabel(n, 0)
		if end {
			return nil
		}
		n = n[i:]
		if d.exists[n] {
			return d.names["*."+n]
		}
	}
	return nil
}

// glue adds the zone's A and AAAA records of the targets of NS, MX and
// SRV records.
func (d *data) glue(m *dns.Msg, rrs []dns.RR) {
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
		if set := d.names[strings.ToLower(t)]; set != nil {
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

func sortedTypes(set map[uint16][]dns.RR) []uint16 {
	ts := make([]uint16, 0, len(set))
	for t := range set {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}
