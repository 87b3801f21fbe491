package objects

import "strings"

// dhcpv4ProfileKind is `ltm profile dhcpv4` (parents /Common/dhcpv4, mode
// relay, and /Common/dhcpv4_fwd, mode forwarding), with the properties
// of F5's tmsh reference and the defaults a BIG-IP 14.1.2.1 lists (REST
// reads relay-agent-id's block as `suboptions`; tmsh writes
// `suboption`). openltm makes a UDP virtual with it a DHCP relay
// (dataplane/internal/udp/dhcp.go): mode, idle-timeout, max-hops and
// relay-agent-id are acted on. Authentication and subscriber discovery
// need APM and PEM, the lease query and the lease, transaction and TTL
// settings belong to BIG-IP's subscriber tracking and IP layer: kept
// with a warning.
func dhcpv4ProfileKind() *Kind {
	k := profileKind("dhcpv4", "dhcpv4", `
mode enum relay relay|forwarding
idle-timeout int 60
default-lease-time int 86400
lease-query-max-retry int 3
lease-query-only tf false
max-hops int 4
transaction-timeout int 30
ttl-dec-value enum by-1 by-0|by-1|by-2|by-4
ttl-value int 0
`)
	k.row("max-hops").Max = 255
	k.Props = append(k.Props,
		dhcpAuthentication(true),
		dhcpSubscriberDiscovery(true),
		block("relay-agent-id", "Relay Agent ID",
			"add true puts the relay agent information option (82) with suboption's id1/value1 (and id2/value2 when id2 is not 0) into requests that have none; remove true takes option 82 out of the answers",
			help(enum("add", "false", "true", "false"), "true: add option 82 to requests that have none"),
			help(enum("remove", "false", "true", "false"), "true: take option 82 out of the answers to the client"),
			block("suboption", "Suboption", "option 82's suboptions: id1 value1, and id2 value2 when id2 is not 0 (1 circuit-id, 2 remote-id)",
				help(&Prop{Name: "id1", Type: TInt, Default: "1", Min: 0, Max: 255}, "the first suboption's code (1: circuit-id)"),
				help(&Prop{Name: "id2", Type: TInt, Default: "0", Min: 0, Max: 255}, "the second suboption's code (0: none; 2: remote-id)"),
				help(str("value1", "2"), "the first suboption's value"),
				help(str("value2", "none"), "the second suboption's value"),
			),
		),
	)
	return actOn(k, "F5 ltm profile dhcpv4: a DHCPv4 relay on UDP virtuals; mode relay relays each request to every pool member (giaddr, hops, max-hops, option 82) and every answer back; mode forwarding passes messages unchanged to one member",
		"mode", "idle-timeout", "max-hops", "relay-agent-id")
}

// dhcpv6ProfileKind is `ltm profile dhcpv6` (parents /Common/dhcpv6, mode
// relay, and /Common/dhcpv6_fwd, mode forwarding), with the properties
// and defaults a BIG-IP 14.1.2.1 lists. openltm acts on mode,
// idle-timeout, remote-id-option and subscriber-id-option (their add:
// the option joins the Relay-Forward); the rest is kept with a warning.
func dhcpv6ProfileKind() *Kind {
	k := profileKind("dhcpv6", "dhcpv6", `
mode enum relay relay|forwarding
idle-timeout int 60
default-lease-time int 86400
lease-query-max-retry int 3
lease-query-only tf false
transaction-timeout int 30
`)
	k.Props = append(k.Props,
		dhcpAuthentication(false),
		dhcpSubscriberDiscovery(false),
		block("remote-id-option", "Remote ID Option",
			"add true puts a Remote-ID option (37: enterprise-number, value) into the Relay-Forward; remove is kept (the Relay-Reply is unwrapped, so its options never reach the client)",
			help(enum("add", "false", "true", "false"), "true: add the Remote-ID option (37) to Relay-Forward messages"),
			&Prop{Name: "enterprise-number", Type: TInt, Default: "0", Max: 4294967295},
			passive(enum("remove", "false", "true", "false")),
			help(str("value", "none"), "the remote-id's value"),
		),
		block("subscriber-id-option", "Subscriber ID Option",
			"add true puts a Subscriber-ID option (38: value) into the Relay-Forward; remove is kept",
			help(enum("add", "false", "true", "false"), "true: add the Subscriber-ID option (38) to Relay-Forward messages"),
			passive(enum("remove", "false", "true", "false")),
			help(str("value", "none"), "the subscriber-id's value"),
		),
	)
	return actOn(k, "F5 ltm profile dhcpv6: a DHCPv6 relay on UDP virtuals; mode relay wraps each message in a Relay-Forward (RFC 8415) to every pool member and unwraps the Relay-Replies; mode forwarding passes messages unchanged to one member",
		"mode", "idle-timeout", "remote-id-option", "subscriber-id-option")
}

// dhcpAuthentication is the authentication block (APM): kept. DHCPv4's
// user-name also names option 82's suboptions.
func dhcpAuthentication(v4 bool) *Prop {
	un := []*Prop{dhcpFormat(v4, "mac-address|mac-and-relay-option|relay-option|tcl-snippet")}
	if v4 {
		un = append(un, num("suboption-id1", "1"), num("suboption-id2", "2"))
	}
	un = append(un, str("separator1", "@"), str("separator2", "@"), str("tcl", "none"))
	return passive(block("authentication", "Authentication", "kept: authenticating DHCP clients needs APM",
		enum("enabled", "false", "true", "false"),
		str("virtual", "none"),
		block("user-name", "User Name", "kept", un...),
	))
}

// dhcpSubscriberDiscovery is the subscriber-discovery block (PEM): kept.
func dhcpSubscriberDiscovery(v4 bool) *Prop {
	id := []*Prop{dhcpFormat(v4, "mac-address|mac-and-relay-id|tcl-snippet")}
	if v4 {
		id = append(id, num("suboption-id1", "1"), num("suboption-id2", "2"))
	}
	id = append(id, str("separator1", "@"), str("separator2", "@"), str("tcl", "none"))
	return passive(block("subscriber-discovery", "Subscriber Discovery", "kept: subscriber discovery needs PEM",
		enum("enabled", "false", "true", "false"),
		block("subscriber-id", "Subscriber ID", "kept", id...),
	))
}

// dhcpFormat is a user-name or subscriber-id format: DHCPv4's values are
// F5's list; DHCPv6's are not documented, so any word is kept [M].
func dhcpFormat(v4 bool, values string) *Prop {
	if v4 {
		return enum("format", "mac-address", strings.Split(values, "|")...)
	}
	return str("format", "mac-address")
}
