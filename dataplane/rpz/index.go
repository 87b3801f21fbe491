package rpz

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// The labels under a policy zone's apex that hold the triggers other
// than QNAME ones (the draft's encodings).
const (
	labelClientIP = "rpz-client-ip"
	labelIP       = "rpz-ip"
	labelNSDNAME  = "rpz-nsdname"
	labelNSIP     = "rpz-nsip"
)

// index is one copy of a policy zone with its address and name server
// triggers indexed, built once per copy (a transfer makes a new one), so
// that a query looks each up without building owner names.
type index struct {
	d                *dnszone.Zone
	client, ip, nsip prefixes
	// nsExact maps a name server's name (lower case, fully qualified)
	// to its rpz-nsdname trigger's owner; nsWild a parent to the owner
	// of the wildcard trigger below it (*.PARENT.rpz-nsdname.ZONE).
	nsExact, nsWild map[string]string
	// invalid counts the rpz-ip, rpz-client-ip and rpz-nsip owners that
	// name no prefix (a bad address, a length out of range, bits set
	// past the length): matched by nothing, as BIND ignores them.
	invalid int
}

// prefixes are the address triggers of one kind: each prefix's owner,
// and the prefix lengths present per family, longest first, so that a
// look-up tries only those.
type prefixes struct {
	m      map[netip.Prefix]string
	v4, v6 []int
}

func (ps *prefixes) add(p netip.Prefix, owner string) {
	if ps.m == nil {
		ps.m = map[netip.Prefix]string{}
	}
	if _, dup := ps.m[p]; dup {
		return
	}
	ps.m[p] = owner
	lens := &ps.v6
	if p.Addr().Is4() {
		lens = &ps.v4
	}
	if !slices.Contains(*lens, p.Bits()) {
		*lens = append(*lens, p.Bits())
		slices.SortFunc(*lens, func(a, b int) int { return b - a })
	}
}

func (ps *prefixes) any() bool { return len(ps.m) > 0 }

// match is the longest prefix trigger holding a: its length and owner;
// bits is -1 when none does. It allocates nothing.
func (ps *prefixes) match(a netip.Addr) (bits int, owner string) {
	if len(ps.m) == 0 || !a.IsValid() {
		return -1, ""
	}
	a = a.Unmap()
	lens := ps.v6
	if a.Is4() {
		lens = ps.v4
	}
	for _, b := range lens {
		p, err := a.Prefix(b)
		if err != nil {
			continue
		}
		if o, ok := ps.m[p]; ok {
			return b, o
		}
	}
	return -1, ""
}

// buildIndex indexes the triggers of d, the copy of the policy zone
// zone, that are not QNAME ones.
func buildIndex(d *dnszone.Zone, zone string) *index {
	ix := &index{d: d}
	for owner := range d.Owners() {
		rel, ok := strings.CutSuffix(owner, "."+zone)
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(rel, '.')
		if dot < 0 {
			continue
		}
		kind, name := rel[dot+1:], rel[:dot]
		switch kind {
		case labelClientIP, labelIP, labelNSIP:
			p, ok := parsePrefix(name)
			if !ok {
				ix.invalid++
				continue
			}
			switch kind {
			case labelClientIP:
				ix.client.add(p, owner)
			case labelIP:
				ix.ip.add(p, owner)
			default:
				ix.nsip.add(p, owner)
			}
		case labelNSDNAME:
			if ix.nsExact == nil {
				ix.nsExact, ix.nsWild = map[string]string{}, map[string]string{}
			}
			if parent, ok := strings.CutPrefix(name, "*."); ok {
				ix.nsWild[parent+"."] = owner
			} else if name != "*" {
				ix.nsExact[name+"."] = owner
			}
		}
	}
	return ix
}

// parsePrefix reads a trigger's address encoding, PREFIXLEN then the
// address's parts in reverse: 24.0.2.0.192 is 192.0.2.0/24, 48.zz.db8.2001
// is 2001:db8::/48 (zz the run of zero groups "::" stands for). ok is
// false for anything else, and for a prefix with bits set past its
// length.
func parsePrefix(s string) (netip.Prefix, bool) {
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return netip.Prefix{}, false
	}
	bits, err := strconv.Atoi(labels[0])
	if err != nil || bits < 1 {
		return netip.Prefix{}, false
	}
	parts := labels[1:]
	slices.Reverse(parts)
	var a netip.Addr
	zz := 0
	for _, p := range parts {
		if p == "zz" {
			zz++
		}
	}
	if zz > 1 {
		return netip.Prefix{}, false
	}
	if len(parts) == 4 && zz == 0 {
		a, err = netip.ParseAddr(strings.Join(parts, "."))
		if err != nil || !a.Is4() {
			return netip.Prefix{}, false
		}
	} else {
		for i, p := range parts {
			if p == "zz" {
				parts[i] = ""
			}
		}
		v6 := strings.Join(parts, ":")
		switch {
		case strings.HasPrefix(v6, ":") && !strings.HasPrefix(v6, "::"):
			v6 = ":" + v6
		case strings.HasSuffix(v6, ":") && !strings.HasSuffix(v6, "::"):
			v6 += ":"
		}
		a, err = netip.ParseAddr(v6)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return netip.Prefix{}, false
		}
	}
	p := netip.PrefixFrom(a, bits)
	if !p.IsValid() || p.Masked() != p {
		return netip.Prefix{}, false
	}
	return p, true
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

// nsMatch is the rpz-nsdname trigger a name server's name (lower case,
// fully qualified, any case) matches: the exact owner, else the wildcard of its
// closest parent; "" for none. It allocates nothing.
func (ix *index) nsMatch(name string) string {
	if len(ix.nsExact) == 0 && len(ix.nsWild) == 0 {
		return ""
	}
	name = strings.ToLower(name)
	if o, ok := ix.nsExact[name]; ok {
		return o
	}
	for n := name; ; {
		i, end := dns.NextLabel(n, 0)
		if end || i >= len(n) {
			return ""
		}
		n = n[i:]
		if o, ok := ix.nsWild[n]; ok {
			return o
		}
	}
}

// canonicalLess orders names as DNSSEC does (RFC 4034 §6.1): label by
// label from the root, case aside, bytes compared: the draft's tie-break
// among a zone's rpz-nsdname hits.
func canonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(strings.ToLower(a)), dns.SplitDomainName(strings.ToLower(b))
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if c := strings.Compare(la[i], lb[j]); c != 0 {
			return c < 0
		}
	}
	return len(la) < len(lb)
}
