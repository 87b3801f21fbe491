package recursor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// LocalZone is one of local-zones: names answered here, never asked for.
type LocalZone struct {
	// Name is the zone, lower case and fully qualified.
	Name string
	// Type is BIG-IP's local-zone type (unbound's): deny, refuse,
	// static, transparent, type-transparent or redirect.
	Type string
	// Records are the zone's records (records { "NAME TTL IN TYPE DATA" }).
	Records []dns.RR
}

// LocalZoneTypes are the types a local zone may have.
var LocalZoneTypes = []string{"deny", "redirect", "refuse", "static", "transparent", "type-transparent"}

// ErrDrop is a deny local zone's answer: none at all.
var ErrDrop = errors.New("the query is dropped (local zone deny)")

// defaultZones are answer-default-zones' zones: localhost, the reverse
// zones of 127.0.0.0/8 and ::1 (and of the unspecified addresses, as
// unbound adds), and the AS112 zones, the reverse zones of the private
// and link-local ranges (RFC 6303), which no public server should be
// asked for.
var defaultZones = func() []LocalZone {
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		return r
	}
	soa := func(z string) dns.RR {
		return rr(z + " 10800 IN SOA localhost. nobody.invalid. 1 3600 1200 604800 10800")
	}
	zone := func(name string, recs ...string) LocalZone {
		z := LocalZone{Name: name, Type: "static", Records: []dns.RR{soa(name), rr(name + " 10800 IN NS localhost.")}}
		for _, s := range recs {
			z.Records = append(z.Records, rr(s))
		}
		return z
	}
	zones := []LocalZone{
		zone("localhost.", "localhost. 10800 IN A 127.0.0.1", "localhost. 10800 IN AAAA ::1"),
		zone("127.in-addr.arpa.", "1.0.0.127.in-addr.arpa. 10800 IN PTR localhost."),
		zone("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.",
			"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa. 10800 IN PTR localhost."),
		zone("0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa."),
		zone("0.in-addr.arpa."),
		zone("10.in-addr.arpa."),
		zone("168.192.in-addr.arpa."),
		zone("254.169.in-addr.arpa."),
		zone("d.f.ip6.arpa."),
		zone("8.e.f.ip6.arpa."), zone("9.e.f.ip6.arpa."), zone("a.e.f.ip6.arpa."), zone("b.e.f.ip6.arpa."),
	}
	for i := 16; i < 32; i++ {
		zones = append(zones, zone(fmt.Sprintf("%d.172.in-addr.arpa.", i)))
	}
	return zones
}()

// Local answers q from the local zones (local-zones first, then the
// default zones) when one holds its name and its type says so; ok is
// false when none does, m nil when the query is to be dropped (deny).
// A cache that forwards asks this before its forward zones and pool.
func (r *Resolver) Local(q *dns.Msg) (m *dns.Msg, ok bool) {
	if len(r.local) == 0 || len(q.Question) != 1 {
		return nil, false
	}
	qs := q.Question[0]
	name := strings.ToLower(dns.Fqdn(qs.Name))
	var z *LocalZone
	for i := range r.local {
		lz := &r.local[i]
		if dns.IsSubDomain(lz.Name, name) && (z == nil || len(lz.Name) > len(z.Name)) {
			z = lz
		}
	}
	if z == nil {
		return nil, false
	}
	m = new(dns.Msg)
	m.SetReply(q)
	m.RecursionAvailable = true
	m.Authoritative = true
	owner := name
	if z.Type == "redirect" {
		owner = z.Name
	}
	var match []dns.RR
	exists := false
	for _, rr := range z.Records {
		h := rr.Header()
		if !strings.EqualFold(h.Name, owner) {
			continue
		}
		exists = true
		if h.Rrtype == qs.Qtype || qs.Qtype == dns.TypeANY || h.Rrtype == dns.TypeCNAME {
			c := dns.Copy(rr)
			c.Header().Name = qs.Name
			match = append(match, c)
		}
	}
	switch z.Type {
	case "deny":
		return nil, true
	case "refuse":
		m.Rcode = dns.RcodeRefused
		m.Authoritative = false
		return m, true
	case "type-transparent":
		if len(match) == 0 {
			return nil, false
		}
	case "transparent":
		if len(match) == 0 && !exists {
			return nil, false
		}
	}
	m.Answer = match
	if len(match) == 0 {
		if !exists {
			m.Rcode = dns.RcodeNameError
		}
		for _, rr := range z.Records {
			if rr.Header().Rrtype == dns.TypeSOA {
				m.Ns = append(m.Ns, dns.Copy(rr))
			}
		}
	}
	return m, true
}
