package objects

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// netListKinds are `net address-list` and `net port-list`, the shared
// lists a traffic-matching-criteria names so that one virtual server
// matches many addresses and ports (BIG-IP 14.1 and later).
func netListKinds() []*Kind {
	src := tmshRef("net address-list")
	al := &Kind{Words: []string{"net", "address-list"}, Title: "Address List", Lower: "address list", Help: "Addresses, ranges and prefixes a traffic-matching-criteria matches", Source: src, Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "addresses", Type: TColl, Items: ItemListAddress, Sub: &Kind{Title: "Address", Props: []*Prop{str("description", "none")}}},
			"addresses: 10.0.0.1, 10.0.0.1-10.0.0.9 or 10.0.0.0/24"),
		help(&Prop{Name: "address-lists", Type: TColl, Items: ItemRef, Ref: []string{"net address-list"}, Sub: &Kind{Title: "Address List"}},
			"address lists whose entries this list includes"),
		help(&Prop{Name: "fqdns", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "FQDN", Props: []*Prop{str("description", "none")}}},
			"domain names, resolved (A and AAAA): listened on in a destination list, admitted in a source list"),
		help(&Prop{Name: "geo", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Geolocation", Props: []*Prop{str("description", "none")}}},
			"countries (US) and regions (US:California) whose clients a source list admits, by the loaded geolocation database"),
		passive(str("app-service", "none")),
	}}
	pl := &Kind{Words: []string{"net", "port-list"}, Title: "Port List", Lower: "port list", Help: "Ports and port ranges a traffic-matching-criteria matches", Source: tmshRef("net port-list"), Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "ports", Type: TColl, Items: ItemListPort, Sub: &Kind{Title: "Port", Props: []*Prop{str("description", "none")}}},
			"ports: 80 or 8000-8099"),
		help(&Prop{Name: "port-lists", Type: TColl, Items: ItemRef, Ref: []string{"net port-list"}, Sub: &Kind{Title: "Port List"}},
			"port lists whose entries this list includes"),
		passive(str("app-service", "none")),
	}}
	return []*Kind{al, pl}
}

// ParseListAddress reads one address-list entry, a host, a range
// (low-high, one family, low first) or a prefix without host bits, into
// the inclusive range it covers. Route domains and zones are refused:
// openltm binds in one routing table.
func ParseListAddress(s string) (lo, hi netip.Addr, err error) {
	bad := func(why string) (netip.Addr, netip.Addr, error) {
		return netip.Addr{}, netip.Addr{}, fmt.Errorf("%q is not an address, address range or prefix: %s", s, why)
	}
	if strings.ContainsRune(s, '%') {
		return bad("route domains are not supported in address lists")
	}
	if l, h, ok := strings.Cut(s, "-"); ok {
		a, err1 := netip.ParseAddr(l)
		b, err2 := netip.ParseAddr(h)
		switch {
		case err1 != nil || err2 != nil:
			return bad("a range is two addresses, low-high")
		case a.Is4() != b.Is4():
			return bad("both ends of a range must be of one family")
		case b.Less(a):
			return bad("the range's first address is above its last")
		}
		return a.Unmap(), b.Unmap(), nil
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return bad("want address/prefix-length")
		}
		if p.Masked() != p {
			return bad(fmt.Sprintf("host bits are set (the network is %s)", p.Masked()))
		}
		if p.Addr().Is4In6() && p.Bits() < 96 {
			return bad("an IPv4-mapped prefix covers IPv4 addresses only (/96 or longer)")
		}
		lo := p.Addr()
		b := lo.AsSlice()
		for i := p.Bits(); i < len(b)*8; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		hi, _ := netip.AddrFromSlice(b)
		return lo.Unmap(), hi.Unmap(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return bad("want an IPv4 or IPv6 address")
	}
	return a.Unmap(), a.Unmap(), nil
}

// canonListEntry is an address or port list entry as it is stored and
// listed: 10.0.0.1, 10.0.0.1-10.0.0.9, 10.0.0.0/24 as netip prints them
// (an IPv4-mapped address as IPv4), a port or range in numbers.
func canonListEntry(items ItemNames, s string) (string, error) {
	if items == ItemListPort {
		lo, hi, err := ParseListPort(s)
		if err != nil {
			return "", err
		}
		if lo == hi {
			return strconv.Itoa(lo), nil
		}
		return strconv.Itoa(lo) + "-" + strconv.Itoa(hi), nil
	}
	lo, hi, err := ParseListAddress(s)
	switch {
	case err != nil:
		return "", err
	case strings.Contains(s, "/"):
		p, _ := netip.ParsePrefix(s)
		if lo.Is4() && p.Addr().Is4In6() {
			return netip.PrefixFrom(lo, p.Bits()-96).String(), nil
		}
		return netip.PrefixFrom(lo, p.Bits()).String(), nil
	case strings.Contains(s, "-"):
		return lo.String() + "-" + hi.String(), nil
	}
	return lo.String(), nil
}

// ParseGeoEntry reads an address list's geo entry as BIG-IP writes it,
// a country's ISO 3166 code alone (US) or with a region's name after a
// colon (US:California), so that the dataplane compares codes, not
// text: the country comes back upper-cased, the region as written.
func ParseGeoEntry(s string) (country, region string, err error) {
	c, r, hasRegion := strings.Cut(s, ":")
	ok := len(c) == 2
	for i := 0; ok && i < 2; i++ {
		b := c[i]
		ok = b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
	}
	switch {
	case !ok:
		return "", "", fmt.Errorf("geo %q is not a country: use its two-letter ISO 3166 code (US), or code:region (US:California)", s)
	case hasRegion && strings.TrimSpace(r) == "":
		return "", "", fmt.Errorf("geo %q names no region after the colon: use US or US:California", s)
	}
	return strings.ToUpper(c), strings.TrimSpace(r), nil
}

// ParseListPort reads one port-list entry, a port or a range low-high,
// each from 1 to 65535 (a service name is read as its port).
func ParseListPort(s string) (lo, hi int, err error) {
	l, h, ok := strings.Cut(s, "-")
	if !ok {
		h = l
	}
	a, err1 := ParsePort(l)
	b, err2 := ParsePort(h)
	switch {
	case err1 != nil || err2 != nil || a == 0 || b == 0:
		return 0, 0, fmt.Errorf("%q is not a port or port range: use ports from 1 to 65535, as 80 or 8000-8099", s)
	case a > b:
		return 0, 0, fmt.Errorf("%q is not a port range: its first port is above its last", s)
	}
	return a, b, nil
}

// checkNetList refuses an address or port list with an entry that does
// not read, or that includes itself through its nested lists (BIG-IP
// refuses the loop [M: its wording]).
func checkNetList(c *Config, s *Schema, o *Object) error {
	var entries, nested string
	var parse func(string) error
	switch o.Kind.Key() {
	case "net address-list":
		entries, nested = "addresses", "address-lists"
		parse = func(e string) error { _, _, err := ParseListAddress(e); return err }
	case "net port-list":
		entries, nested = "ports", "port-lists"
		parse = func(e string) error { _, _, err := ParseListPort(e); return err }
	default:
		return nil
	}
	if v := o.Props[entries]; v != nil {
		for _, it := range v.Items {
			if err := parse(it.Name); err != nil {
				return Invalid("The %s (%s): %v.", o.Kind.Lower, o.Name, err)
			}
		}
	}
	if v := o.Props["geo"]; v != nil && entries == "addresses" {
		for _, it := range v.Items {
			if _, _, err := ParseGeoEntry(it.Name); err != nil {
				return Invalid("The %s (%s): %v.", o.Kind.Lower, o.Name, err)
			}
		}
	}
	spec := []string{o.Kind.Key()}
	// Depth-first from o along the nested lists; the path is kept to
	// name the loop.
	var path []string
	on := map[string]bool{}
	var walk func(x *Object) error
	walk = func(x *Object) error {
		if on[x.Name] {
			return Invalid("The %s (%s) includes itself through %s.", o.Kind.Lower, o.Name, strings.Join(append(path, x.Name), " -> "))
		}
		if len(path) > 64 {
			return Invalid("The %s (%s) nests lists more than 64 deep.", o.Kind.Lower, o.Name)
		}
		on[x.Name] = true
		path = append(path, x.Name)
		if v := x.Props[nested]; v != nil {
			for _, it := range v.Items {
				if y := c.Lookup(s, spec, it.Name); y != nil {
					if err := walk(y); err != nil {
						return err
					}
				}
			}
		}
		path = path[:len(path)-1]
		on[x.Name] = false
		return nil
	}
	return walk(o)
}

// checkTMCInline refuses a traffic-matching-criteria whose inline
// address or port does not read: an address or prefix (any, any6 and
// 0.0.0.0 match every address), a port or ranges separated by commas
// (0 and any: every port).
func checkTMCInline(o *Object) error {
	if o.Kind.Key() != "ltm traffic-matching-criteria" {
		return nil
	}
	for _, name := range []string{"destination-address-inline", "source-address-inline"} {
		if v := o.Props[name]; v != nil {
			if _, err := ParseInlineAddress(v.Str); err != nil {
				return Invalid("The traffic matching criteria (%s): %s %v.", o.Name, name, err)
			}
		}
	}
	for _, name := range []string{"destination-port-inline", "source-port-inline"} {
		if v := o.Props[name]; v != nil {
			if _, err := ParseInlinePorts(v.Str); err != nil {
				return Invalid("The traffic matching criteria (%s): %s %v.", o.Name, name, err)
			}
		}
	}
	return nil
}

// ParseInlineAddress reads a traffic-matching-criteria's inline address:
// a host is a one-address prefix; any, any6, 0.0.0.0, :: and their /0
// give the zero Prefix, which matches everything.
func ParseInlineAddress(s string) (netip.Prefix, error) {
	switch s {
	case "", "any", "any6", "0.0.0.0", "::", "0.0.0.0/0", "::/0":
		return netip.Prefix{}, nil
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("%q is not an address or a prefix without host bits", s)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an address or a prefix", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// ParseInlinePorts reads a traffic-matching-criteria's inline ports:
// ports and ranges separated by commas; 0 and any alone give none, which
// matches every port.
func ParseInlinePorts(s string) ([][2]int, error) {
	var out [][2]int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "0" || part == "any" || part == "" {
			continue
		}
		lo, hi, err := ParseListPort(part)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]int{lo, hi})
	}
	return out, nil
}
