package objects

import "strings"

var gtmLBModes = []string{
	"round-robin", "ratio", "topology", "global-availability", "static-persistence",
	"return-to-dns", "none", "drop-packet", "fallback-ip", "completion-rate", "cpu",
	"fewest-hops", "kilobytes-per-second", "least-connections", "lowest-round-trip-time",
	"packet-rate", "quality-of-service", "virtual-server-capacity", "virtual-server-score",
}

func gtmKinds() []*Kind {
	dc := &Kind{Words: []string{"gtm", "datacenter"}, Title: "Datacenter", Help: "GSLB data center", Props: []*Prop{
		str("description", "none"),
		str("location", "none"),
		str("contact", "none"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(enum("prober-preference", "inside-datacenter", "inside-datacenter", "outside-datacenter", "pool"), "which BIG-IP (gtm server of product bigip) probes the virtual servers of its servers: one in this datacenter, one outside it, or one of prober-pool"),
		help(enum("prober-fallback", "any-available", "any-available", "inside-datacenter", "outside-datacenter", "pool", "none"), "who probes when no prober of the preference is up; none: nobody (the status is unknown)"),
		ref("prober-pool", "gtm prober-pool"),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	// translationKind is an address item's one property: the address it
	// is known by outside a NAT.
	translationKind := &Kind{Title: "Address", Props: []*Prop{str("translation", "none")}}
	addrKind := &Kind{Title: "Address", Props: []*Prop{str("device-name", ""), str("translation", "none")}}
	vsKind := &Kind{Title: "Virtual Server", Props: []*Prop{
		str("destination", ""),
		str("description", "none"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		str("translation-address", "none"),
		str("translation-port", "0"),
		&Prop{Name: "monitor", Type: TMonitor, Default: "default", Ref: []string{"gtm monitor ", "ltm monitor "}},
		num("limit-max-connections", "0"),
		ed("limit-max-connections-status", "disabled"),
		num("limit-max-bps", "0"),
		ed("limit-max-bps-status", "disabled"),
		passive(&Prop{Name: "depends-on", Type: TList}),
		help(ref("link", "gtm link"), "the gtm link this virtual server is reached over: it is unavailable while the link is down, disabled or over a limit (openltm sets it by hand; BIG-IP derives it from router addresses)"),
		passive(raw("metadata")),
	}}
	server := &Kind{Words: []string{"gtm", "server"}, Title: "Server", Help: "GSLB server (a device hosting virtual servers)", Props: []*Prop{
		ref("datacenter", "gtm datacenter"),
		str("description", "none"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "addresses", Type: TColl, Items: ItemAddress, Sub: addrKind}, "the device's addresses, { 10.0.0.5 { device-name bigip1 } }: the first is where its datacenter's RTT probes come from when no link of the member has an uplink-address"),
		help(&Prop{Name: "devices", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Device", Props: []*Prop{
			str("description", "none"),
			&Prop{Name: "addresses", Type: TColl, Items: ItemAddress, Sub: translationKind},
		}}}, "BIG-IP 13 and later's form of addresses, { bigip1 { addresses { 10.0.0.5 { } } } }: each device's addresses, read after those of addresses, in order"),
		&Prop{Name: "monitor", Type: TMonitor, Default: "none", Ref: []string{"gtm monitor ", "ltm monitor "}},
		str("product", "generic-host"),
		help(enum("virtual-server-discovery", "disabled", "disabled", "enabled", "enabled-no-delete"), "product bigip: over iQuery, add the LTM's virtual servers (enabled also deletes those it no longer has)"),
		help(enum("link-discovery", "disabled", "disabled", "enabled", "enabled-no-delete"), "product bigip: over iQuery, create the links the LTM reports in this server's datacenter"),
		num("limit-max-connections", "0"),
		ed("limit-max-connections-status", "disabled"),
		help(num("limit-cpu-usage", "0"), "percent: the server's virtual servers are out of the answers while its CPU usage is at this limit (with limit-cpu-usage-status enabled; product bigip, reported over iQuery)"),
		ed("limit-cpu-usage-status", "disabled"),
		help(num("limit-mem-avail", "0"), "kilobytes: the server's virtual servers are out of the answers while its available memory is at or below this (with limit-mem-avail-status enabled; product bigip, reported over iQuery)"),
		ed("limit-mem-avail-status", "disabled"),
		help(num("limit-max-bps", "0"), "bits/s: the server's virtual servers are out of the answers while its throughput is at this limit (with limit-max-bps-status enabled)"),
		ed("limit-max-bps-status", "disabled"),
		help(num("limit-max-pps", "0"), "packets/s: the server's virtual servers are out of the answers while its packet rate is at this limit (with limit-max-pps-status enabled)"),
		ed("limit-max-pps-status", "disabled"),
		&Prop{Name: "virtual-servers", Type: TColl, Items: ItemPlain, Sub: vsKind},
		help(enum("prober-preference", "inherit", "inherit", "inside-datacenter", "outside-datacenter", "pool"), "which BIG-IP probes its virtual servers; inherit: its datacenter's"),
		help(enum("prober-fallback", "inherit", "inherit", "any-available", "inside-datacenter", "outside-datacenter", "pool", "none"), "who probes when no prober of the preference is up; inherit: its datacenter's"),
		ref("prober-pool", "gtm prober-pool"),
		help(enum("iq-allow-path", "yes", "yes", "no"), "product bigip: no: the GSLB asks this device for no path metrics (RTT probes of LDNSes from its addresses)"),
		help(enum("iq-allow-service-check", "yes", "yes", "no"), "product bigip: no: this device is never chosen to probe virtual servers for the GSLB (prober selection)"),
		help(str("iquery-cipher-list", "none"), "product bigip: the cipher suites of the iQuery channel with this device (a client-ssl ciphers string; none: DEFAULT, or TLS 1.3 only when iquery-minimum-tls-version is none too)"),
		help(enum("iquery-minimum-tls-version", "none", "none", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"), "product bigip: the lowest TLS version of the iQuery channel with this device (none: TLSv1.2 with an iquery-cipher-list, else TLS 1.3 only)"),
		passive(str("iq-allow-snmp", "yes")),
		passive(str("expose-route-domains", "no")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	link := &Kind{Words: []string{"gtm", "link"}, Title: "Link", Help: "GSLB link (an uplink to an ISP)", Props: []*Prop{
		ref("datacenter", "gtm datacenter"),
		str("description", "none"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "router-addresses", Type: TColl, Items: ItemAddress, Sub: translationKind}, "the link's routers: its monitor probes them, and the link is down while every one is down"),
		help(str("uplink-address", "none"), "the link's own address: RTT probes over this link are sent from it, so each link's path to an LDNS is measured apart"),
		help(&Prop{Name: "monitor", Type: TMonitor, Default: "none", Ref: []string{"gtm monitor ", "ltm monitor "}}, "probes each router address (gateway_icmp, or a tcp check with destination *:port); bigip_link is kept, not run"),
		num("limit-max-inbound-bps", "0"),
		ed("limit-max-inbound-bps-status", "disabled"),
		num("limit-max-outbound-bps", "0"),
		ed("limit-max-outbound-bps-status", "disabled"),
		num("limit-max-total-bps", "0"),
		ed("limit-max-total-bps-status", "disabled"),
		num("link-ratio", "1"),
		passive(str("weighting", "ratio")),
		passive(str("prefix-length", "32")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	region := &Kind{Words: []string{"gtm", "region"}, Title: "Region", Help: "GSLB topology region", Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "region-members", Type: TColl, Items: ItemRegionMember, Sub: &Kind{Title: "Region Member"}}, "[not] subnet|region|datacenter|pool|continent|country|state|isp VALUE, e.g. { subnet 10.0.0.0/8 not country US }"),
		passive(str("app-service", "none")),
	}}
	topology := &Kind{Words: []string{"gtm", "topology"}, Title: "Topology Record", Help: "GSLB topology record (ldns: ... server: ...)", Props: []*Prop{
		str("description", "none"),
		num("order", "0"),
		num("score", "1"),
	}}
	poolMember := &Kind{Title: "Pool Member", Props: []*Prop{
		num("member-order", "0"),
		num("ratio", "1"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "monitor", Type: TMonitor, Default: "default", Ref: []string{"gtm monitor ", "ltm monitor "}}, "the member's own monitor, probed at its virtual server; default: the pool's"),
		num("limit-max-connections", "0"),
		ed("limit-max-connections-status", "disabled"),
		passive(&Prop{Name: "depends-on", Type: TList}),
		passive(raw("metadata")),
	}}
	gpool := &Kind{Words: []string{"gtm", "pool", "a"}, Title: "Pool", Lower: "pool", Help: "GSLB pool of A records", Props: []*Prop{
		str("description", "none"),
		enum("load-balancing-mode", "round-robin", gtmLBModes...),
		enum("alternate-mode", "round-robin", gtmLBModes...),
		enum("fallback-mode", "return-to-dns", gtmLBModes...),
		str("fallback-ip", "any"),
		&Prop{Name: "members", Type: TColl, Items: ItemGTMMember, Sub: poolMember},
		help(&Prop{Name: "monitor", Type: TMonitor, Default: "default", Ref: []string{"gtm monitor ", "ltm monitor "}}, "probed at each member's virtual server, besides the virtual server's own monitor; default: none more"),
		num("ttl", "30"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		num("max-answers-returned", "1"),
		help(ed("manual-resume", "disabled"), "enabled: a member that went down stays out of the answers once up again, until it is disabled and enabled"),
		help(enum("min-members-up-mode", "off", "off", "at-least", "percent"), "at-least or percent: the pool is unavailable while fewer of its members than min-members-up-value (a number, or a percentage of them) are available"),
		help(num("min-members-up-value", "0"), "see min-members-up-mode"),
		help(ed("verify-member-availability", "enabled"), "disabled: answer with members whatever their monitors and reported status say"),
		help(ed("dynamic-ratio", "disabled"), "enabled: the dynamic methods share the answers in proportion to the members' metrics instead of giving them all to the best"),
		help(num("qos-hit-ratio", "5"), "quality-of-service: the weight of the share of RTT probes the LDNS answered over the member's path"),
		help(num("qos-hops", "0"), "quality-of-service: the weight of the hops between the member's probe path and the LDNS (fewer is better)"),
		help(num("qos-kilobytes-second", "3"), "quality-of-service: the weight of throughput (less is better)"),
		help(num("qos-lcs", "30"), "quality-of-service: the weight of the link's free capacity"),
		help(num("qos-packet-rate", "1"), "quality-of-service: the weight of the packet rate (fewer is better)"),
		help(num("qos-rtt", "50"), "quality-of-service: the weight of the LDNS's round-trip time"),
		help(num("qos-topology", "0"), "quality-of-service: the weight of the topology score"),
		help(num("qos-vs-capacity", "0"), "quality-of-service: the weight of the virtual server's capacity"),
		help(num("qos-vs-score", "0"), "quality-of-service: the weight of gtm-score"),
		help(num("limit-max-bps", "0"), "the pool is out of the answers while its members' throughput together is at this limit (with limit-max-bps-status enabled)"),
		ed("limit-max-bps-status", "disabled"),
		help(num("limit-max-connections", "0"), "the pool is out of the answers while its members' connections together are at this limit (with limit-max-connections-status enabled)"),
		ed("limit-max-connections-status", "disabled"),
		help(num("limit-max-pps", "0"), "the pool is out of the answers while its members' packet rate together is at this limit (with limit-max-pps-status enabled)"),
		ed("limit-max-pps-status", "disabled"),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	wideip := &Kind{Words: []string{"gtm", "wideip", "a"}, Title: "Wide IP", Lower: "wide IP", Help: "GSLB wide IP (A)", Props: []*Prop{
		str("description", "none"),
		&Prop{Name: "aliases", Type: TList},
		enum("pool-lb-mode", "round-robin", "round-robin", "ratio", "topology", "global-availability"),
		&Prop{Name: "pools", Type: TColl, Items: ItemRef, Ref: []string{"gtm pool a"}, Sub: &Kind{Title: "Pool", Props: []*Prop{num("order", "0"), num("ratio", "1")}}},
		help(&Prop{Name: "pools-cname", Type: TColl, Items: ItemRef, Ref: []string{"gtm pool cname"}, Sub: &Kind{Title: "Pool", Props: []*Prop{num("order", "0"), num("ratio", "1")}}}, "gtm pool cname objects balanced with the pools by order and ratio: when one is chosen, the answer is its CNAME"),
		ed("persistence", "disabled"),
		num("ttl-persistence", "3600"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "rules", Type: TList, Ref: []string{"gtm rule", "ltm rule"}}, "iRules (gtm rule, or ltm rule): DNS_REQUEST for each query of this wide IP, LB_SELECTED or LB_FAILED, DNS_RESPONSE, in list order"),
		help(enum("failure-rcode", "noerror", "noerror", "formerr", "servfail", "nxdomain", "notimpl", "refused"), "the answer's RCODE when the wide IP cannot be resolved and failure-rcode-response is enabled"),
		help(ed("failure-rcode-response", "disabled"), "answer a wide IP that cannot be resolved with failure-rcode and an SOA, instead of returning to DNS"),
		help(num("failure-rcode-ttl", "0"), "the TTL of that answer's SOA (negative caching)"),
		str("last-resort-pool", ""),
		help(ed("minimal-response", "enabled"), "disabled: answers carry the zone's NS records and their addresses too"),
		num("persist-cidr-ipv4", "32"),
		num("persist-cidr-ipv6", "128"),
		help(ed("topology-prefer-edns0-client-subnet", "disabled"), "enabled: topology scores the address of the query's EDNS0 client subnet instead of the LDNS's"),
		help(&Prop{Name: "load-balancing-decision-log-verbosity", Type: TList}, "steps of each decision logged: pool-selection pool-traversal pool-member-selection pool-member-traversal"),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	listener := &Kind{Words: []string{"gtm", "listener"}, Title: "Listener", Help: "DNS listener", Props: []*Prop{
		str("address", ""),
		str("description", "none"),
		num("port", "53"),
		enum("ip-protocol", "udp", "udp", "tcp"),
		str("mask", "255.255.255.255"),
		help(&Prop{Name: "profiles", Type: TColl, Items: ItemRef, Ref: []string{"ltm profile "}, Sub: &Kind{Title: "Profile"}}, "the dns profile's enable-logging, log-profile and process-xfr act on the listener"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "rules", Type: TList, Ref: []string{"ltm rule"}}, "iRules: DNS_REQUEST and DNS_RESPONSE for every query the listener takes"),
		passive(help(enum("source-port", "preserve", "preserve", "preserve-strict", "change"), "for queries a listener forwards; openltm's listeners answer themselves")),
		passive(help(ed("translate-address", "disabled"), "for queries a listener forwards; openltm's listeners answer themselves")),
		passive(help(ed("translate-port", "disabled"), "for queries a listener forwards; openltm's listeners answer themselves")),
		help(&Prop{Name: "vlans", Type: TList, Ref: []string{"net vlan"}}, "VLANs (their interfaces: Linux interface names) that vlans-enabled takes queries from only, or vlans-disabled not"),
		&Prop{Name: "vlans-disabled", Type: TFlag, Enum: []string{"vlans-disabled", "vlans-enabled"}},
		passive(str("auto-lasthop", "default")),
		passive(str("app-service", "none")),
	}}
	// gtm zone is an openltm extension: BIG-IP keeps the static names of
	// its zones (SOA, NS, MX, A ...) in ZoneRunner's BIND files, outside
	// bigip.conf; openltm keeps each zone as an object holding the zone's
	// master-file text, so it is saved, loaded and committed like the rest.
	zone := &Kind{Words: []string{"gtm", "zone"}, Title: "Zone", Help: "static DNS zone served beside the wide IPs (openltm extension: BIG-IP keeps these in ZoneRunner)", Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "definition", Type: TTcl}, "the zone's records in master-file format ($TTL, $ORIGIN, relative names under the zone's name), with an SOA at the apex; lines may be indented, so every record names its owner (@ for the apex)"),
	}}
	lbSettings := &Kind{Words: []string{"gtm", "global-settings", "load-balancing"}, Title: "Load Balancing Settings", Singleton: true, Help: "GSLB load-balancing settings", Props: []*Prop{
		enum("topology-longest-match", "yes", "yes", "no"),
		enum("topology-allow-zero-scores", "yes", "yes", "no"),
		help(enum("verify-vs-availability", "yes", "yes", "no"), "no: answer with virtual servers whatever their monitors and reported status say"),
		help(enum("respect-fallback-dependency", "no", "no", "yes"), "no: with no member available, a pool's fallback method answers with its enabled members whatever their monitors say; yes: only with available ones"),
		help(enum("ignore-path-ttl", "no", "no", "yes"), "yes: RTT measurements older than path-ttl still decide while the LDNS is probed again"),
		passive(str("fallback-lb-method", "none")),
		passive(raw("qos-factor-rtt")),
	}}
	metrics := &Kind{Words: []string{"gtm", "global-settings", "metrics"}, Title: "Metrics Settings", Singleton: true, Help: "GSLB metrics (RTT probe) settings", Props: []*Prop{
		num("path-ttl", "2400"),
		help(&Prop{Name: "ldns-probe-protocols", Type: TList}, "tried in order until one answers; openltm runs dns_dot, dns_rev and tcp and skips the others"),
		passive(num("metrics-caching", "3600")),
		help(&Prop{Name: "metrics-collection-protocols", Type: TList, Enum: []string{"dns_dot", "dns_rev", "icmp", "tcp", "udp"}, Source: "bigip_gtm.conf saved by BIG-IP 13.1 (metrics-collection-protocols { icmp })"}, "tried first by each path measurement, in order, then ldns-probe-protocols; openltm runs icmp, dns_dot, dns_rev (a PTR query for the LDNS's own address) and tcp, and skips udp with a warning"),
		help(num("inactive-ldns-ttl", "2419200"), "seconds: an LDNS that has not asked for this long leaves the LDNS table"),
		help(num("inactive-paths-ttl", "604800"), "seconds: a path measurement to an LDNS not renewed for this long is dropped"),
		passive(num("max-synchronous-monitor-requests", "20")),
		help(num("ldns-probe-port", "53"), "openltm extension: the LDNS port RTT probes go to"),
		help(num("ldns-probe-timeout", "2"), "openltm extension: seconds one RTT probe waits for its answer"),
		help(num("ldns-prefix-length-ipv4", "24"), "openltm extension: LDNS addresses sharing this prefix share their RTT measurements (32 keeps each apart)"),
		help(num("max-ldns-probes", "64"), "openltm extension: LDNS probes in flight at most"),
	}}
	general := &Kind{Words: []string{"gtm", "global-settings", "general"}, Title: "General Settings", Singleton: true, Help: "GSLB general settings", Props: []*Prop{
		num("static-persist-cidr-ipv4", "32"),
		num("static-persist-cidr-ipv6", "128"),
		passive(num("heartbeat-interval", "10")),
		passive(str("auto-discovery", "yes")),
		passive(str("synchronization", "no")),
		help(enum("drain-persistent-requests", "yes", "yes", "no"), "yes: an LDNS persisted on a member the operator disabled keeps it while it is up"),
		help(enum("monitor-disabled-objects", "no", "no", "yes"), "yes: disabled virtual servers and members are still probed"),
		help(enum("cache-ldns-servers", "yes", "yes", "no"), "no: no LDNS is remembered or probed (show gtm ldns stays empty; round-trip methods pass to the next level)"),
	}}
	// gtm rule is BIG-IP DNS's iRule object, the one bigip_gtm.conf holds
	// and wide IPs name; its body is read and printed as ltm rule's.
	grule := &Kind{Words: []string{"gtm", "rule"}, Title: "iRule", Lower: "iRule", Help: "GSLB iRules (wide IP rules)", Props: []*Prop{
		{Name: "definition", Type: TTcl, Help: "the rule's Tcl body"},
	}}
	proberPool := &Kind{Words: []string{"gtm", "prober-pool"}, Title: "Prober Pool", Help: "BIG-IP systems (gtm servers of product bigip) that probe the servers and datacenters naming the pool", Props: []*Prop{
		str("description", "none"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(enum("load-balancing-mode", "global-availability", "global-availability", "round-robin"), "global-availability: the first member up probes; round-robin: the members up take turns"),
		help(&Prop{Name: "members", Type: TColl, Items: ItemRef, Ref: []string{"gtm server"}, Sub: &Kind{Title: "Member", Props: []*Prop{
			num("order", "0"),
			&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		}}}, "gtm servers of product bigip, by order"),
	}}
	ks := []*Kind{dc, server, link, region, topology, gpool, wideip, listener, dohListener("doh-server"), dohListener("doh-proxy"), zone, lbSettings, metrics, general, grule, proberPool, distApp()}
	return append(ks, typedGTMKinds(gpool, wideip)...)
}

// distApp is `gtm distributed-app`: wide IPs grouped so that they answer
// from the same data center, server or link (dataplane/gslb distapp.go).
// wideips items are NAME:TYPE as bigip_gtm.conf writes them (NAME alone is
// type A [M]); disabled-contexts items are NAME { type datacenter|server|
// link } [M: F5 names the property only], type datacenter by default.
func distApp() *Kind {
	return &Kind{Words: []string{"gtm", "distributed-app"}, Title: "Distributed Application", Lower: "distributed application", Help: "GSLB distributed application (wide IPs answering from one place)", Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "wideips", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Wide IP"}}, "the application's wide IPs, NAME:TYPE (www.example.com:A; NAME alone is A): each must exist, and belongs to one application"),
		help(enum("dependency-level", "none", "none", "datacenter", "server", "link"), "a wide IP's virtual server answers only from a data center (server, link) where every other wide IP of the application has an available virtual server"),
		help(ed("persistence", "disabled"), "enabled: an LDNS answered from a data center for one wide IP of the application is answered from it for all of them, while a member there is available"),
		help(num("ttl-persistence", "3600"), "seconds an application persistence record lasts after its last use"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(&Prop{Name: "disabled-contexts", Type: TColl, Items: ItemRef, Ref: []string{"gtm datacenter", "gtm server", "gtm link"}, Sub: &Kind{Title: "Context", Props: []*Prop{
			help(enum("type", "datacenter", "datacenter", "server", "link"), "what the name is: a gtm datacenter, server or link"),
		}}}, "the data centers, servers or links where the application is disabled: NAME { type datacenter|server|link }; its wide IPs answer from the other places"),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
}

// typedGTMKinds are the pools and wide IPs of the record types other
// than A. AAAA pools are A pools of IPv6 virtual servers; CNAME, MX, SRV,
// NAPTR, SVCB and HTTPS pools hold domain names, each with the record's
// own fields. Each type's wide IP lists pools of its type.
func typedGTMKinds(apool, awideip *Kind) []*Kind {
	nameMember := func(extra ...*Prop) *Kind {
		props := []*Prop{
			num("member-order", "0"),
			num("ratio", "1"),
			&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
			str("description", "none"),
			help(enum("static-target", "no", "no", "yes"), "yes: the name is not a wide IP of this GSLB and is always available; no: a name of an A or AAAA wide IP here is available while that wide IP is"),
		}
		return &Kind{Title: "Pool Member", Props: append(props, extra...)}
	}
	u16 := func(name, def, h string) *Prop { p := help(num(name, def), h); p.Max = 65535; return p }
	members := map[string]*Kind{
		"cname": nameMember(),
		"mx":    nameMember(u16("priority", "10", "the MX record's preference")),
		"srv": nameMember(u16("priority", "10", "the SRV record's priority"), u16("weight", "10", "the SRV record's weight"),
			u16("port", "0", "the SRV record's port")),
		"naptr": nameMember(u16("preference", "10", "the NAPTR record's preference (its order is member-order)"),
			help(str("flags", ""), "the NAPTR record's flags, e.g. s, a, u"), help(str("service", ""), "the NAPTR record's service, e.g. SIP+D2U")),
		"svcb":  svcbMember(nameMember, u16),
		"https": svcbMember(nameMember, u16),
	}
	var out []*Kind
	for _, t := range []string{"aaaa", "cname", "mx", "srv", "naptr", "svcb", "https"} {
		up := strings.ToUpper(t)
		pk := &Kind{Words: []string{"gtm", "pool", t}, Title: "Pool", Lower: "pool", Help: "GSLB pool of " + up + " records"}
		for _, p := range apool.Props {
			switch {
			case p.Name == "members" && t != "aaaa":
				p = help(&Prop{Name: "members", Type: TColl, Items: ItemPlain, Sub: members[t]}, "domain names the pool answers with")
			case p.Name == "fallback-ip" && t != "aaaa":
				continue
			case p.Name == "monitor" && t != "aaaa":
				q := *p // members that are names have no virtual server to probe
				p = passive(&q)
			}
			pk.Props = append(pk.Props, p)
		}
		wk := &Kind{Words: []string{"gtm", "wideip", t}, Title: "Wide IP", Lower: "wide IP", Help: "GSLB wide IP (" + up + ")"}
		for _, p := range awideip.Props {
			if p.Name == "pools-cname" && t != "aaaa" {
				continue
			}
			if p.Name == "pools" {
				p = &Prop{Name: "pools", Type: TColl, Items: ItemRef, Ref: []string{"gtm pool " + t}, Sub: p.Sub}
			}
			wk.Props = append(wk.Props, p)
		}
		out = append(out, pk, wk)
	}
	return out
}

// svcbMember is a member of an SVCB or HTTPS pool (RFC 9460): a target
// name with its SvcPriority and SvcParams. alpn and hpke-key are F5's
// names; priority, port, no-default-alpn, ipv4hint, ipv6hint,
// mandatory, ech and dohpath are openltm's [M] (F5 is silent on them):
// RFC 9460's and RFC 9461's key names, in their presentation format
// (comma-separated lists, ech in base64). hpke-key names the key the
// ech SvcParam is built from: a sys file ssl-key [M] (F5's ltm dns hpke
// key is not kept; naming one is kept with a warning by the daemon).
func svcbMember(nameMember func(...*Prop) *Kind, u16 func(name, def, h string) *Prop) *Kind {
	return nameMember(
		u16("priority", "1", "the record's SvcPriority: 0 is alias mode (the target names the service, no parameters), 1 and up service mode, lower first"),
		help(str("alpn", ""), "the alpn SvcParam: ALPN protocol ids, comma-separated, e.g. h2,h3"),
		help(enum("no-default-alpn", "no", "no", "yes"), "yes: the no-default-alpn SvcParam (needs alpn)"),
		u16("port", "0", "the port SvcParam (0: none, the scheme's default)"),
		help(str("ipv4hint", ""), "the ipv4hint SvcParam: IPv4 addresses, comma-separated"),
		help(str("ipv6hint", ""), "the ipv6hint SvcParam: IPv6 addresses, comma-separated"),
		help(str("mandatory", ""), "the mandatory SvcParam: keys, comma-separated, each set on the member"),
		help(str("hpke-key", "none"), "the HPKE key whose public half the ech SvcParam announces: a sys file ssl-key holding an X25519 (or P-256/384/521) private key [M]; an ECHConfigList for the target name is built from it"),
		withFormat(help(str("ech", "none"), "openltm extension: the ech SvcParam (Encrypted Client Hello), the base64 of an ECHConfigList"), "ech"),
		withFormat(help(str("dohpath", ""), "openltm extension: the dohpath SvcParam (RFC 9461), a DoH URI template such as /dns-query{?dns}"), "dohpath"),
	)
}

func netSysKinds() []*Kind {
	vlan := &Kind{Words: []string{"net", "vlan"}, Title: "VLAN", Help: "VLAN configuration", Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "interfaces", Type: TRaw}, "Linux interface names, e.g. { eth1 { } }: the virtual servers enabled on the VLAN take what arrives on them"),
		num("tag", "0"),
		num("mtu", "1500"),
		passive(str("auto-lasthop", "default")),
		passive(str("cmp-hash", "default")),
		passive(str("failsafe", "disabled")),
		passive(str("sflow", "")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	self := &Kind{Words: []string{"net", "self"}, Title: "Self IP", Help: "Self IP address configuration", Props: []*Prop{
		help(str("address", ""), "address/prefix, e.g. 127.0.1.1/8"),
		str("description", "none"),
		passive(raw("allow-service")),
		str("traffic-group", "/Common/traffic-group-local-only"),
		ref("vlan", "net vlan"),
		passive(str("floating", "disabled")),
		passive(str("inherited-traffic-group", "false")),
		passive(str("unit", "0")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
	gs := &Kind{Words: []string{"sys", "global-settings"}, Title: "Global Settings", Singleton: true, Help: "System-wide settings", Props: []*Prop{
		str("hostname", "openltm.local"),
		str("description", "none"),
		passive(str("gui-setup", "enabled")),
		passive(num("console-inactivity-timeout", "0")),
		passive(str("gui-security-banner", "enabled")),
		passive(str("gui-security-banner-text", "")),
		passive(str("mgmt-dhcp", "enabled")),
		passive(str("lcd-display", "enabled")),
		passive(str("net-reboot", "disabled")),
		passive(str("quiet-boot", "enabled")),
		passive(str("file-whitelist-path-prefix", "")),
		passive(raw("remote-host")),
	}}
	return []*Kind{vlan, self, gs}
}

// dohListener is gtm listener-doh-server or listener-doh-proxy (BIG-IP
// 16.1+): a DNS over HTTPS listener, which BIG-IP makes an ltm virtual
// server of, as openltm does (daemon/translate_doh.go): its profiles hold
// the doh profile of its type, http and tcp (and http2, client-ssl, dns).
// ip-protocol is tcp and port 443 by default; translate-address and
// translate-port are disabled, as on a gtm listener.
func dohListener(typ string) *Kind {
	return &Kind{Words: []string{"gtm", "listener-" + typ}, Title: "DoH Listener", Help: "DNS over HTTPS listener (an ltm virtual server with the " + typ + " profile)", Props: []*Prop{
		str("address", ""),
		str("description", "none"),
		num("port", "443"),
		enum("ip-protocol", "tcp", "tcp"),
		str("mask", "255.255.255.255"),
		help(&Prop{Name: "profiles", Type: TColl, Items: ItemRef, Ref: []string{"ltm profile "}, Sub: &Kind{Title: "Profile", Props: []*Prop{
			enum("context", "all", "all", "clientside", "serverside"),
		}}}, "the "+typ+" profile, http and tcp, and http2, client-ssl and dns as the listener needs"),
		&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}},
		help(ref("pool", "ltm pool"), "the DNS servers the queries go to"),
		help(&Prop{Name: "rules", Type: TList, Ref: []string{"ltm rule"}}, "iRules: a dns profile's DNS_REQUEST and DNS_RESPONSE for every query"),
		help(&Prop{Name: "source-address-translation", Type: TStruct, Sub: &Kind{Title: "SNAT", Props: []*Prop{
			enum("type", "none", "none", "automap", "snat"),
			ref("pool", "ltm snatpool"),
		}}}, "SNAT of the queries sent to the pool: none, automap or a snatpool (type snat)"),
		enum("source-port", "preserve", "preserve", "preserve-strict", "change"),
		ed("translate-address", "disabled"),
		ed("translate-port", "disabled"),
		help(&Prop{Name: "vlans", Type: TList, Ref: []string{"net vlan"}}, "VLANs (their interfaces: Linux interface names) that vlans-enabled listens on only, or vlans-disabled not"),
		&Prop{Name: "vlans-disabled", Type: TFlag, Enum: []string{"vlans-disabled", "vlans-enabled"}},
		passive(str("advertise", "no")),
		passive(str("auto-lasthop", "default")),
		passive(str("last-hop-pool", "none")),
		passive(raw("persist")),
		passive(str("fallback-persistence", "none")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
}
