package daemon

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The ltm nat objects: one-to-one static NATs (dataplane/nat.go,
// dataplane/natobj).
var (
	ltmNAT      = schema.MustKind("ltm nat")
	natOrig     = ltmNAT.MustProp("originating-address")
	natXlat     = ltmNAT.MustProp("translation-address")
	natEnabled  = ltmNAT.MustProp("enabled")
	natVLANs    = ltmNAT.MustProp("vlans")
	natVLANsOff = ltmNAT.MustProp("vlans-disabled")
)

// natAddr reads one of a NAT's addresses, ADDRESS or ADDRESS%ID
// (translate_natrd.go): invalid and "" when unset, invalid and why when
// it is not an address or its route domain does not exist.
func (t *translator) natAddr(p *objects.Prop, o *objects.Object) (netip.Addr, int, string) {
	s := p.Str(o)
	if s == "" || s == "none" {
		return netip.Addr{}, 0, ""
	}
	base, rd, why := t.addrRD(s)
	if why != "" {
		return netip.Addr{}, 0, why
	}
	a, err := netip.ParseAddr(base)
	if err != nil {
		return netip.Addr{}, 0, s + " is not an address (10.1.2.3, 10.1.2.3%2, 2001:db8::3)"
	}
	return a.Unmap(), rd, ""
}

// natTaken is who else holds the addresses a NAT's translation address
// may not be [M: the wording is ours]: self IPs, SNAT translation
// addresses (a snat's translation, a snatpool's members), virtual
// addresses no port-specific virtual server uses, and addresses a
// virtual server takes on every port. An ltm snat-translation object
// holds nothing by itself: it is the settings of an address, which the
// NAT's own translation address gets too (objects'
// CompleteSNATTranslations) [M].
func (t *translator) natTaken() map[netip.Addr]string {
	taken := map[netip.Addr]string{}
	add := func(s, who string) {
		s = strings.TrimSuffix(strings.SplitN(s, "%", 2)[0], "/32")
		if p, err := netip.ParsePrefix(s); err == nil {
			s = p.Addr().String()
		}
		a, ok := objects.NodeAddr(s)
		if !ok {
			return
		}
		if _, had := taken[a.Unmap()]; !had {
			taken[a.Unmap()] = who
		}
	}
	for _, o := range t.cfg.Of(netSelf) {
		add(netSelfAddress.Str(o), "the self IP "+o.Name)
	}
	for _, o := range t.cfg.Of(ltmSNAT) {
		if x := snatObjXlat.Str(o); x != "" && x != "none" {
			add(x, "the translation address of ltm snat "+o.Name)
		}
	}
	for _, o := range t.cfg.Of(ltmSnatPool) {
		if v := snatPoolMembers.Get(o); v != nil {
			for _, m := range v.List {
				if a, ok := snatPoolMemberAddr(t.s, t.cfg, m); ok { // an address or an ltm snat-translation's name
					add(a.String(), "a member of ltm snatpool "+o.Name)
				}
			}
		}
	}
	onPort := map[netip.Addr]bool{}
	for _, o := range t.cfg.Of(ltmVirtual) {
		d, err := objects.ParseDest(virtualDestination.Str(o))
		if err != nil || d.Any || !d.Addr.IsValid() {
			continue
		}
		if d.Port == 0 {
			add(d.Addr.String(), "the address ltm virtual "+o.Name+" takes on every port")
		} else {
			onPort[d.Addr.Unmap()] = true
		}
	}
	for _, o := range t.cfg.Of(ltmVirtualAddr) {
		a, ok := objects.NodeAddr(strings.SplitN(objects.AddressOf(o), "%", 2)[0])
		if ok && !onPort[a.Unmap()] {
			add(a.String(), "the ltm virtual-address "+o.Name)
		}
	}
	return taken
}

// nats translates every ltm nat into the dataplane's NATs, refusing
// what BIG-IP refuses [M: the messages are ours]: a missing
// originating-address or translation-address, addresses of two
// families, one address as both, a translation address another NAT, a
// SNAT, a self IP or a virtual address holds, and an originating
// address in two NATs (the later name in sort order is refused), a
// VLAN that does not exist, and addresses in a route domain
// (ADDRESS%ID) that does not exist or in two route domains
// (translate_natrd.go). Addresses are compared without their route
// domain: openltm has one routing table. vlans with vlans-enabled or vlans-disabled
// limits both ways to those VLANs' interfaces. The settings openltm
// keeps and does not act on (arp, auto-lasthop, traffic-group) are
// warned of by the schema when set.
func (t *translator) nats() {
	objs := t.cfg.Of(ltmNAT)
	if len(objs) == 0 {
		return
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
	taken := t.natTaken()
	xlatOf, origOf := map[netip.Addr]string{}, map[netip.Addr]string{}
	for _, o := range objs {
		orig, origRD, why := t.natAddr(natOrig, o)
		if why == "" && !orig.IsValid() {
			why = "originating-address is required (the address of the host behind the system, 10.1.2.3)"
		}
		if why != "" {
			t.refuse("%s", about(o, "originating-address %s", why))
			continue
		}
		xlat, xlatRD, why := t.natAddr(natXlat, o)
		if why == "" && !xlat.IsValid() {
			why = "translation-address is required (the address clients reach the host at, 192.0.2.3)"
		}
		if why != "" {
			t.refuse("%s", about(o, "translation-address %s", why))
			continue
		}
		switch {
		case orig.Is4() != xlat.Is4():
			t.refuse("%s", about(o, "originating-address %s and translation-address %s are of different address families", orig, xlat))
			continue
		case origRD != xlatRD:
			// [M: openltm's rule: the NAT is in one route domain, as
			// the clients it translates are in their virtual's]
			t.refuse("%s", about(o, "originating-address %s and translation-address %s are in different route domains (%d and %d); write both with the same %%ID", natOrig.Str(o), natXlat.Str(o), origRD, xlatRD))
			continue
		case orig == xlat:
			t.refuse("%s", about(o, "originating-address and translation-address are both %s", orig))
			continue
		}
		if other, ok := xlatOf[xlat]; ok {
			t.refuse("%s", about(o, "translation-address %s is already the translation address of ltm nat %s", xlat, other))
			continue
		}
		if who, ok := taken[xlat]; ok {
			t.refuse("%s", about(o, "translation-address %s is already %s", xlat, who))
			continue
		}
		if other, ok := origOf[orig]; ok {
			t.refuse("%s", about(o, "originating-address %s is already the originating address of ltm nat %s", orig, other))
			continue
		}
		xlatOf[xlat], origOf[orig] = o.Name, o.Name
		n := dataplane.NAT{Name: o.Name, Orig: orig, Xlat: xlat, Disabled: natEnabled.Str(o) == "disabled", RouteDomain: origRD,
			RouteDomainReach: t.routeDomainReach(origRD),  // translate_natrd.go
			Timers:           t.routeDomainTimers(origRD)} // translate_timerpol.go
		f, msg := vlanFilter(t.cfg, t.s, o, natVLANs, natVLANsOff) // translate_vlans.go
		if msg != "" {
			t.refuse("%s", about(o, "%s", msg))
			continue
		}
		if f != nil {
			n.VLANs = f
			t.note(o, "%s is acted on for the connections to translation-address %s and those originating-address %s opens through standard (TCP), UDP, HTTP and the other message-based virtuals, dns and DoH virtuals' member queries, rules' listen relays and HTTP/3 clients", vlansWords(f, o), xlat, orig)
		}
		if err := dataplane.AnyPortSupport(); err != nil && !n.Disabled {
			// The way in needs the steering of every port; the way out
			// does not.
			n.OutboundOnly = true
			t.note(o, "connections to translation-address %s are not forwarded, as openltm cannot take every port of an address here: %v; connections the originating address opens through virtual servers are translated", xlat, err)
		}
		t.dc.NATs = append(t.dc.NATs, n)
	}
}
