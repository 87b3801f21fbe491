package objects

import "net"

// packetFilterKinds are BIG-IP's packet filters: `net packet-filter`
// (one per rule, applied by order) and the `net packet-filter-trusted`
// singleton (sources exempt from filtering). The daemon compiles each
// rule (dataplane/pktfilter) and puts them in force while sys db
// packetfilter is enable.
//
// Rows follow F5's tmsh reference of net packet-filter and
// net packet-filter-trusted, and the Packet Filters chapter of BIG-IP
// TMOS Routing Administration
// (https://techdocs.f5.com/en-us/bigip-14-1-0/big-ip-tmos-routing-administration-14-1-0/packet-filters.html).
// [M] choices: order and action are required at create, as the man page
// marks them; rule defaults to the empty expression, which matches every
// packet. A filter's vlan matches only what arrives on the VLAN's
// interfaces; the trusted vlans exempt what arrives on theirs, the
// trusted mac-addresses the clients the neighbour table maps to them
// (a client behind a router has the router's MAC, as on BIG-IP). A
// filter's rate-class puts the connections and flows it accepts in that
// class.
func packetFilterKinds() []*Kind {
	pf := &Kind{Words: []string{"net", "packet-filter"}, Title: "Packet Filter", Lower: "packet filter", Source: tmshRef("net packet-filter"),
		Help: "packet filter: a rule (tcpdump syntax) matched against each new connection or UDP flow, in order, while sys db packetfilter is enable",
		Props: []*Prop{
			help(enum("action", "accept", "accept", "discard", "reject", "continue"), "what a match does: accept it, discard it (a TCP client closed without a reset), reject it (a TCP client reset, a UDP client sent an ICMP port unreachable), or continue to the next filter"),
			help(&Prop{Name: "order", Type: TInt, Min: 1, Max: 4294967295}, "where the filter applies, lowest first; no two filters share one"),
			help(str("rule", ""), `the expression, in quotes: host, net A/LEN, port, portrange, src/dst, tcp, udp, icmp, ip, ip6, proto N, and, or, not, ( ); "" matches everything`),
			help(enum("logging", "disabled", "enabled", "disabled"), "enabled: each match writes a line to the ltm log"),
			help(ref("vlan", "net vlan"), "the VLAN the filter applies to: only traffic arriving on its interfaces is matched; none: every VLAN"),
			help(ref("rate-class", "net rate-shaping class"), "the rate class the TCP and UDP connections the filter accepts are shaped by (net rate-shaping class), or none"),
			str("description", "none"),
			passive(str("app-service", "none")),
		}}
	trusted := &Kind{Words: []string{"net", "packet-filter-trusted"}, Title: "Packet Filter Trusted", Lower: "packet filter trusted", Singleton: true,
		Source: tmshRef("net packet-filter-trusted"),
		Help:   "sources exempt from packet filtering",
		Props: []*Prop{
			help(&Prop{Name: "ip-addresses", Type: TList, Format: "ip"}, "client addresses never filtered, { 10.1.1.1 10.1.1.2 }"),
			help(&Prop{Name: "mac-addresses", Type: TList, Format: "mac"}, "client MAC addresses never filtered (the neighbour table's entry for the client's address), { 00:50:56:a1:b2:c3 }"),
			help(&Prop{Name: "vlans", Type: TList, Ref: []string{"net vlan"}}, "VLANs whose traffic is never filtered, { internal }"),
			str("description", "none"),
		}}
	return []*Kind{pf, trusted}
}

// checkPacketFilter refuses a packet filter without its order or action,
// as BIG-IP does, and two filters of one order.
func checkPacketFilter(c *Config, o *Object) error {
	if o.Kind.Key() != "net packet-filter" {
		return nil
	}
	for _, p := range []string{"order", "action"} {
		if v := o.Props[p]; v == nil || v.Str == "" {
			return Invalid("The packet filter (%s) must have an %s.", o.Name, p)
		}
	}
	order := o.Props["order"].Str
	for _, x := range c.Of(o.Kind) {
		if x != o && x.Props["order"] != nil && x.Props["order"].Str == order {
			a, b := x.Name, o.Name
			if b < a {
				a, b = b, a
			}
			return Invalid("The packet filters %s and %s have the same order (%s); each needs its own.", a, b, order)
		}
	}
	return nil
}

// canonicalMAC reads a MAC address of six octets (00:50:56:A1:B2:C3,
// 00-50-56-a1-b2-c3 or 0050.56a1.b2c3) in lower-case colon form, as
// BIG-IP lists mac-addresses [M].
func canonicalMAC(s string) (string, bool) {
	m, err := net.ParseMAC(s)
	if err != nil || len(m) != 6 {
		return "", false
	}
	return m.String(), true
}
