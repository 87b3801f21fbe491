package gslb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// Static zones, answered like a plain authoritative server (BIG-IP's
// ZoneRunner/BIND side) through dataplane/dnszone: exact names, CNAME,
// wildcards, delegations below the apex, NXDOMAIN and NODATA with the
// SOA, glue for NS, MX and SRV targets.

// compileZones parses each zone's text, refusing records out of the zone
// and a zone without an SOA at its apex, longest origin first.

func compileZones(zs []Zone) ([]*dnszone.Zone, error) {
	var out []*dnszone.Zone
	seen := map[string]bool{}
	for _, z := range zs {
		origin := fqdn(z.Origin)
		if seen[origin] {
			return nil, fmt.Errorf("zone %s defined twice", origin)
		}
		seen[origin] = true
		var rrs []dns.RR
		zp := dns.NewZoneParser(strings.NewReader(z.Data), origin, "")
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			if !dns.IsSubDomain(origin, strings.ToLower(rr.Header().Name)) {
				return nil, fmt.Errorf("zone %s: %s is out of the zone", origin, rr.Header().Name)
			}
			rrs = append(rrs, rr)
		}
		if err := zp.Err(); err != nil {
			return nil, fmt.Errorf("zone %s: %v", origin, err)
		}
		c := dnszone.Build(origin, rrs)
		if c.SOA() == nil {
			return nil, fmt.Errorf("zone %s: no SOA record at the apex", origin)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Origin()) > len(out[j].Origin()) })
	return out, nil
}

// zoneFor is the zone with the longest origin that holds qname.
func (p *plan) zoneFor(qname string) *dnszone.Zone {
	for _, z := range p.zones {
		if dns.IsSubDomain(z.Origin(), qname) {
			return z
		}
	}
	return nil
}
