package daemon

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/geoip"
	"github.com/openltm/openltm/objects"
)

// trafficMatching reads the traffic-matching-criteria tmc of virtual o
// into v: the destination addresses (inline address or prefix, and an
// address list) each bound on every destination port (inline ranges,
// and a port list), and the source filter (inline prefix or address
// list, inline ports or port list); the names of both lists are left to
// the plane to resolve. It returns false when o is left out,
// with the reason recorded.
func (t *translator) trafficMatching(o, tmc *objects.Object, v *dataplane.Virtual) bool {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, tmc) }
	fail := func(format string, args ...any) bool {
		t.skip(o, "traffic-matching-criteria %s: %s", tmc.Name, fmt.Sprintf(format, args...))
		return false
	}
	if p, vp := e(tmcProtocol), virtualIPProtocol.Effective(t.cfg, o); p != "any" && p != vp {
		return fail("protocol %s does not match the virtual server's ip-protocol %s: set both alike", p, vp)
	}
	switch rd := e(tmcRouteDomain); rd {
	case "any", "0", "%0", "/Common/0":
	default:
		return fail("route-domain %s: openltm binds in one routing table, the default route domain (0); use any or 0", rd)
	}
	var names, dgeo []string
	dst, ok, err := t.tmcAddrs(e(tmcDestAddress), e(tmcDestAddressList), &names, &dgeo)
	if err != nil {
		return fail("destination %v", err)
	}
	if len(dgeo) > 0 {
		t.note(o, "traffic-matching-criteria %s: destination-address-list %s: its geo entries (%s) are not listened on; openltm listens on the list's addresses and names only", tmc.Name, e(tmcDestAddressList), strings.Join(dgeo, " "))
	}
	if !ok && len(names) == 0 {
		t.keep(o, "traffic-matching-criteria %s: destination-address-list %s holds no address openltm can listen on", tmc.Name, e(tmcDestAddressList))
		return false
	}
	v.FQDNs = names // the plane resolves them (dataplane/fqdnvirtual.go)
	if len(dst) > 0 {
		addrs, err := expandAddrs(dst, dataplane.MaxAddressesPerVirtual)
		if err != nil {
			return fail("%v", err)
		}
		v.Destination = netip.AddrPortFrom(addrs[0], 0)
		if len(addrs) > 1 {
			v.Addresses = addrs
		}
	}
	ports, err := t.tmcPorts(e(tmcDestPort), e(tmcDestPortList))
	if err != nil {
		return fail("destination %v", err)
	}
	v.PortRanges = append(v.PortRanges, ports...)
	var snames, sgeo []string
	src, ok, err := t.tmcAddrs(e(tmcSrcAddress), e(tmcSrcAddressList), &snames, &sgeo)
	if err != nil {
		return fail("source %v", err)
	}
	if !ok && len(snames) == 0 && len(sgeo) == 0 {
		t.keep(o, "traffic-matching-criteria %s: source-address-list %s holds no address or name openltm can match", tmc.Name, e(tmcSrcAddressList))
		return false
	}
	sports, err := t.tmcPorts(e(tmcSrcPort), e(tmcSrcPortList))
	if err != nil {
		return fail("source %v", err)
	}
	v.Match = dataplane.NewSourceMatch(src, sports)
	if len(sgeo) > 0 {
		// Asked per client outside the list's addresses, in the
		// databases in use then (geoip.go); none admits nobody.
		g := &dataplane.GeoMatch{Store: t.geoStore()}
		for _, entry := range sgeo {
			c, r, _ := objects.ParseGeoEntry(entry) // checked at commit (objects)
			if r == "" {
				g.Countries = append(g.Countries, c)
			} else {
				g.Regions = append(g.Regions, dataplane.GeoRegion{Country: c, Region: r})
			}
		}
		if !g.Store.Loaded() {
			t.note(o, "traffic-matching-criteria %s: source-address-list %s has geo entries (%s) and no geolocation database is loaded: they admit no client until one is (ltmd --geoip-db, or STATE-DIR/geoip, then run sys geoip reload)", tmc.Name, e(tmcSrcAddressList), strings.Join(sgeo, " "))
		}
		if v.Match == nil {
			v.Match = &dataplane.SourceMatch{}
		}
		v.Match.Geo = g
	}
	if len(snames) > 0 {
		// The plane adds the names' addresses (dataplane/fqdnvirtual.go);
		// until one resolves, a list of names only admits no client.
		v.SourceFQDNs = snames
		if v.Match == nil {
			v.Match = &dataplane.SourceMatch{}
		}
		v.Match.NoAddrs = len(v.Match.Addrs) == 0
	}
	return true
}

// tmcAddrs is the address ranges of an inline address and an address
// list (none when both match everything); ok is false when the list is
// set and holds no address (only FQDNs or geo entries, or empty), which
// must not read as "every address". The list's names and geo entries
// are appended to names and geo.
func (t *translator) tmcAddrs(inline, list string, names, geo *[]string) (out []dataplane.AddrRange, ok bool, err error) {
	p, err := objects.ParseInlineAddress(inline)
	if err != nil {
		return nil, false, err
	}
	if p.IsValid() {
		out = append(out, dataplane.PrefixRange(p))
	}
	if list == "" || list == "none" {
		return out, true, nil
	}
	n := len(out)
	if err := t.addressList(list, map[string]bool{}, &out, names, geo); err != nil {
		return nil, false, err
	}
	return out, len(out) > n, nil
}

// addressList appends the ranges of address list name and of the lists
// it nests (each once), their FQDNs to names and their geo entries to geo
// when these are not nil.
func (t *translator) addressList(name string, seen map[string]bool, out *[]dataplane.AddrRange, names, geo *[]string) error {
	l := t.cfg.Lookup(t.s, specAddressList, name)
	if l == nil {
		return fmt.Errorf("address list %s does not exist", name)
	}
	if seen[l.Name] {
		return nil
	}
	seen[l.Name] = true
	if v := addressListEntries.Get(l); v != nil {
		for _, it := range v.Items {
			lo, hi, err := objects.ParseListAddress(it.Name)
			if err != nil {
				return fmt.Errorf("address list %s: %v", l.Name, err)
			}
			*out = append(*out, dataplane.AddrRange{Low: lo, High: hi})
		}
	}
	if v := addressListFQDNs.Get(l); v != nil && names != nil {
		for _, it := range v.Items {
			n := strings.TrimSuffix(it.Name, ".")
			if _, ok := dns.IsDomainName(n); !ok || n == "" || strings.ContainsAny(n, " \t/:@") {
				return fmt.Errorf("address list %s: fqdn %q is not a domain name", l.Name, it.Name)
			}
			if !slices.Contains(*names, n) {
				*names = append(*names, n)
			}
		}
	}
	if v := addressListGeo.Get(l); v != nil && geo != nil {
		for _, it := range v.Items {
			if _, _, err := objects.ParseGeoEntry(it.Name); err != nil {
				return fmt.Errorf("address list %s: %v", l.Name, err)
			}
			if !slices.Contains(*geo, it.Name) {
				*geo = append(*geo, it.Name)
			}
		}
	}
	if v := addressListNested.Get(l); v != nil {
		for _, it := range v.Items {
			if err := t.addressList(it.Name, seen, out, names, geo); err != nil {
				return err
			}
		}
	}
	return nil
}

// tmcPorts is the port ranges of inline ports and a port list; none
// means every port.
func (t *translator) tmcPorts(inline, list string) ([]dataplane.PortRange, error) {
	rs, err := objects.ParseInlinePorts(inline)
	if err != nil {
		return nil, err
	}
	var out []dataplane.PortRange
	for _, r := range rs {
		out = append(out, dataplane.PortRange{Low: uint16(r[0]), High: uint16(r[1])})
	}
	if list == "" || list == "none" {
		return out, nil
	}
	n := len(out)
	if err := t.portList(list, map[string]bool{}, &out); err != nil {
		return nil, err
	}
	if len(out) == n {
		return nil, fmt.Errorf("port list %s holds no port", list)
	}
	return out, nil
}

// portList appends the ranges of port list name and of the lists it
// nests (each once).
func (t *translator) portList(name string, seen map[string]bool, out *[]dataplane.PortRange) error {
	l := t.cfg.Lookup(t.s, specPortList, name)
	if l == nil {
		return fmt.Errorf("port list %s does not exist", name)
	}
	if seen[l.Name] {
		return nil
	}
	seen[l.Name] = true
	if v := portListEntries.Get(l); v != nil {
		for _, it := range v.Items {
			lo, hi, err := objects.ParseListPort(it.Name)
			if err != nil {
				return fmt.Errorf("port list %s: %v", l.Name, err)
			}
			*out = append(*out, dataplane.PortRange{Low: uint16(lo), High: uint16(hi)})
		}
	}
	if v := portListNested.Get(l); v != nil {
		for _, it := range v.Items {
			if err := t.portList(it.Name, seen, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// expandAddrs lists the addresses of the ranges, each once, in order;
// more than limit is refused before it is built: openltm binds a
// listener per address, where BIG-IP matches a prefix in its flow table.
func expandAddrs(rs []dataplane.AddrRange, limit int) ([]netip.Addr, error) {
	seen := map[netip.Addr]bool{}
	var out []netip.Addr
	for _, r := range rs {
		for a := r.Low; a.IsValid() && !r.High.Less(a); a = a.Next() {
			if seen[a] {
				continue
			}
			if len(out) == limit {
				return nil, fmt.Errorf("the destination addresses cover more than %d addresses: openltm listens with one socket per address and port and binds at most %d addresses per virtual server (it has no wildcard listener for a prefix); use smaller prefixes or ranges", limit, limit)
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

// geoStore is the engine's geolocation databases, which a source list's
// geo entries read per client; nil when translating without an engine,
// so such entries admit nobody.
func (t *translator) geoStore() *geoip.Store {
	if t.rules == nil || t.rules.e == nil {
		return nil
	}
	return t.rules.e.GeoIP()
}
