package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/openltm/openltm/dataplane/geoip"
)

// MaxAddressesPerVirtual caps how many destination addresses one virtual
// may bind through traffic-matching-criteria (a prefix, an address
// list). openltm binds one socket per address and port, where BIG-IP
// matches a prefix in its flow table; the cap keeps a /16 typed by
// mistake from opening 65536 sockets.
const MaxAddressesPerVirtual = 256

// AddrRange is an inclusive range of addresses of one family: an address
// list's host (Low == High), range or prefix.
type AddrRange struct{ Low, High netip.Addr }

// PrefixRange is the range of addresses p covers.
func PrefixRange(p netip.Prefix) AddrRange {
	p = p.Masked()
	lo := p.Addr()
	b := lo.AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	hi, _ := netip.AddrFromSlice(b)
	return AddrRange{Low: lo, High: hi}
}

// Contains reports whether a is in the range (an address of the other
// family never is).
func (r AddrRange) Contains(a netip.Addr) bool {
	return r.Low.Is4() == a.Is4() && r.Low.Compare(a) <= 0 && a.Compare(r.High) <= 0
}

// SourceMatch is a traffic-matching-criteria's source filter: a client
// is admitted when its address is in one of Addrs (none: any address)
// and its port in one of Ports (none: any port).
type SourceMatch struct {
	Addrs []AddrRange
	Ports []PortRange
	// NoAddrs makes an empty Addrs admit no address: a source list of
	// names none of which resolves yet must not read as "any client".
	NoAddrs bool
	// Geo admits, beside Addrs, the clients the geolocation database
	// places in one of its countries or regions (an address list's geo
	// entries); nil when the list has none, so that a filter without
	// them never looks an address up.
	Geo *GeoMatch
}

// GeoMatch is the geo entries of a source address list, read against the
// databases in use when the client connects, so that a database loaded
// or reloaded after the commit is acted on at once.
type GeoMatch struct {
	// Store is the engine's databases; nil or empty admits nobody.
	Store *geoip.Store
	// Countries are ISO 3166 codes, upper case.
	Countries []string
	// Regions are country:region entries.
	Regions []GeoRegion
}

// GeoRegion is one country:region entry; Region is compared, without
// regard to case, with the database's subdivision name (California) and
// its code (CA), since BIG-IP writes the name and a user may type either.
type GeoRegion struct{ Country, Region string }

// Admits reports whether the databases place a in one of g's countries
// or regions. An address they do not know is admitted by no entry.
func (g *GeoMatch) Admits(a netip.Addr) bool {
	var l geoip.Location
	if g == nil || !g.Store.Lookup(a, &l) || l.Country == "" {
		return false
	}
	for _, c := range g.Countries {
		if c == l.Country {
			return true
		}
	}
	for _, r := range g.Regions {
		if r.Country == l.Country && (strings.EqualFold(r.Region, l.StateName) || l.State != "" && strings.EqualFold(r.Region, l.State)) {
			return true
		}
	}
	return false
}

// NewSourceMatch sorts and merges the ranges once at commit, so that
// Admits is a binary search per connection; it returns nil when neither
// filters anything.
func NewSourceMatch(addrs []AddrRange, ports []PortRange) *SourceMatch {
	if len(addrs) == 0 && len(ports) == 0 {
		return nil
	}
	m := &SourceMatch{}
	a := slices.Clone(addrs)
	for i := range a {
		a[i].Low, a[i].High = a[i].Low.Unmap(), a[i].High.Unmap()
	}
	slices.SortFunc(a, func(x, y AddrRange) int { return x.Low.Compare(y.Low) })
	for _, r := range a {
		if n := len(m.Addrs); n > 0 {
			last := &m.Addrs[n-1]
			if last.Low.Is4() == r.Low.Is4() && (r.Low.Compare(last.High) <= 0 || last.High.Next() == r.Low) {
				if r.High.Compare(last.High) > 0 {
					last.High = r.High
				}
				continue
			}
		}
		m.Addrs = append(m.Addrs, r)
	}
	p := slices.Clone(ports)
	slices.SortFunc(p, func(x, y PortRange) int { return int(x.Low) - int(y.Low) })
	for _, r := range p {
		if n := len(m.Ports); n > 0 && int(r.Low) <= int(m.Ports[n-1].High)+1 {
			m.Ports[n-1].High = max(m.Ports[n-1].High, r.High)
			continue
		}
		m.Ports = append(m.Ports, r)
	}
	return m
}

// Admits reports whether client passes the filter; a nil filter admits
// everyone. The geolocation database is asked only for a client outside
// the address ranges, and only when the list has geo entries.
func (m *SourceMatch) Admits(client netip.AddrPort) bool {
	if m == nil {
		return true
	}
	if len(m.Addrs) > 0 || m.NoAddrs || m.Geo != nil {
		a := client.Addr().Unmap()
		i, _ := slices.BinarySearchFunc(m.Addrs, a, func(r AddrRange, a netip.Addr) int {
			if r.High.Compare(a) < 0 {
				return -1
			}
			return 1
		})
		if (i == len(m.Addrs) || !m.Addrs[i].Contains(a)) && !m.Geo.Admits(a) {
			return false
		}
	}
	if len(m.Ports) > 0 {
		p := client.Port()
		i, _ := slices.BinarySearchFunc(m.Ports, p, func(r PortRange, p uint16) int {
			if r.High < p {
				return -1
			}
			return 1
		})
		if i == len(m.Ports) || p < m.Ports[i].Low {
			return false
		}
	}
	return true
}

// Listeners lists every address and port the virtual binds: each of
// Addresses (or Destination's address) on each of Ports. At most
// MaxAddressesPerVirtual addresses and MaxPortsPerVirtual sockets in all.
func (v *Virtual) Listeners() ([]netip.AddrPort, error) {
	ports, err := v.Ports()
	if err != nil {
		return nil, err
	}
	if len(v.Addresses) == 0 {
		out := make([]netip.AddrPort, len(ports))
		for i, p := range ports {
			out[i] = netip.AddrPortFrom(v.Destination.Addr(), p)
		}
		return out, nil
	}
	if len(v.Addresses) > MaxAddressesPerVirtual {
		return nil, fmt.Errorf("%d destination addresses; at most %d addresses per virtual server can be bound (one listener per address and port)", len(v.Addresses), MaxAddressesPerVirtual)
	}
	if n := len(v.Addresses) * len(ports); n > MaxPortsPerVirtual {
		return nil, fmt.Errorf("%d addresses x %d ports make %d listeners; at most %d listeners per virtual server can be bound", len(v.Addresses), len(ports), n, MaxPortsPerVirtual)
	}
	seen := make(map[netip.Addr]bool, len(v.Addresses))
	out := make([]netip.AddrPort, 0, len(v.Addresses)*len(ports))
	for _, a := range v.Addresses {
		if seen[a] {
			continue
		}
		seen[a] = true
		for _, p := range ports {
			out = append(out, netip.AddrPortFrom(a, p))
		}
	}
	return out, nil
}
