package objects

import "net/netip"

// trafficClassKind is `ltm traffic-class`: criteria on a connection's
// addresses (each with a mask), ports and protocol, and the
// classification, the tag a connection of a virtual naming the class in
// its traffic-classes gets when it matches; iRules read it with
// LB::class (dataplane, "Traffic classes").
//
// Rows follow F5's tmsh reference of ltm traffic-class and the
// iControl REST fields its SDK sends (classification, destination-address,
// destination-mask, destination-port, protocol, source-address,
// source-mask, source-port); "About traffic classes", BIG-IP Local
// Traffic Manager: Concepts 11.5
// (https://techdocs.f5.com/kb/en-us/products/big-ip_ltm/manuals/product/ltm-concepts-11-5-1/18.html):
// the most specific class that matches a flow is the one taken.
// [M]: an address without its mask is a host (/32, /128); a mask without
// an address is refused at commit; ports are numbers (0: any); protocol
// is any or one a virtual carries (tcp, udp, sctp).
func trafficClassKind() *Kind {
	return &Kind{Words: []string{"ltm", "traffic-class"}, Title: "Traffic Class", Lower: "traffic class",
		Source: tmshRef("ltm traffic-class"),
		Help:   "classifies a virtual's connections by addresses, ports and protocol; the matching class's classification is what LB::class returns",
		Props: []*Prop{
			help(str("classification", ""), "the tag a matching connection gets (required)"),
			str("description", "none"),
			help(&Prop{Name: "destination-address", Type: TString, Default: "none", Format: "ip"}, "the virtual address side the connection went to, with destination-mask; none: any"),
			help(&Prop{Name: "destination-mask", Type: TString, Default: "none", Format: "ip"}, "a netmask such as 255.255.255.0 (none: the whole address)"),
			help(&Prop{Name: "destination-port", Type: TInt, Default: "0", Max: 65535}, "the port the connection went to; 0: any"),
			help(enum("protocol", "any", "any", "tcp", "udp", "sctp"), "the connection's protocol"),
			help(&Prop{Name: "source-address", Type: TString, Default: "none", Format: "ip"}, "the client's address, with source-mask; none: any"),
			help(&Prop{Name: "source-mask", Type: TString, Default: "none", Format: "ip"}, "a netmask such as 255.255.0.0 (none: the whole address)"),
			help(&Prop{Name: "source-port", Type: TInt, Default: "0", Max: 65535}, "the client's port; 0: any"),
			passive(str("app-service", "none")),
		}}
}

// actTrafficClasses makes a virtual's traffic-classes (kept verbatim
// before) a list of references to ltm traffic-class objects.
func actTrafficClasses(ks []*Kind) {
	for _, k := range ks {
		if k.Key() != "ltm virtual" {
			continue
		}
		for i, p := range k.Props {
			if p.Name == "traffic-classes" {
				k.Props[i] = help(&Prop{Name: "traffic-classes", Type: TList, Ref: []string{"ltm traffic-class"}, Source: tmshRef("ltm virtual")},
					"ltm traffic-class objects each connection is matched against; the most specific match is its class (LB::class)")
			}
		}
	}
}

// metricsExclusionsKind is `gtm global-settings metrics-exclusions`: the
// LDNS addresses the GSLB never probes for path metrics (K: "Excluding
// a local DNS server from GTM probes"; F5's tmsh reference of gtm
// global-settings metrics-exclusions). An excluded LDNS is answered by
// the methods that need no path metrics, as an unmeasured one is.
func metricsExclusionsKind() *Kind {
	return &Kind{Words: []string{"gtm", "global-settings", "metrics-exclusions"}, Title: "Metrics Exclusions", Lower: "metrics exclusions", Singleton: true,
		Source: tmshRef("gtm global-settings metrics-exclusions"),
		Help:   "LDNS addresses the GSLB does not probe",
		Props: []*Prop{
			help(&Prop{Name: "addresses", Type: TList, Format: "ip", Inline: true}, "LDNS addresses never probed, { 192.0.2.53 198.51.100.53 }, or none"),
		}}
}

// TrafficClassMask reads a traffic class's address and mask into a
// prefix: none is any (ok with a zero prefix); an address without a
// mask is a host; a mask must be contiguous and of the address's family.
func TrafficClassMask(addr, mask string) (netip.Prefix, bool) {
	if addr == "" || addr == "none" {
		return netip.Prefix{}, mask == "" || mask == "none"
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	if mask == "" || mask == "none" {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	m, err := netip.ParseAddr(mask)
	if err != nil || m.Unmap().BitLen() != a.BitLen() {
		return netip.Prefix{}, false
	}
	bits, seenZero := 0, false
	for _, b := range m.Unmap().AsSlice() {
		for i := 7; i >= 0; i-- {
			if b&(1<<i) != 0 {
				if seenZero {
					return netip.Prefix{}, false
				}
				bits++
			} else {
				seenZero = true
			}
		}
	}
	return netip.PrefixFrom(a, bits).Masked(), true
}

// checkTrafficClass refuses a traffic class without a classification,
// and an address and mask that do not make a network.
func checkTrafficClass(o *Object) error {
	if o.Kind.Key() != "ltm traffic-class" {
		return nil
	}
	if o.Str("classification") == "" {
		return Invalid("The traffic class (%s) must have a classification.", o.Name)
	}
	for _, side := range []string{"source", "destination"} {
		if _, ok := TrafficClassMask(o.Str(side+"-address"), o.Str(side+"-mask")); !ok {
			return Invalid("The traffic class (%s): %s-address %s with %s-mask %s is not a network: give an address and a contiguous mask of its family, such as 10.1.0.0 and 255.255.0.0.", o.Name, side, o.Str(side+"-address"), side, o.Str(side+"-mask"))
		}
	}
	return nil
}
