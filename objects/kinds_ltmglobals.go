package objects

// LTM's global settings: the `ltm global-settings connection`, `general`
// and `traffic-control` singletons (`modify ltm global-settings
// connection ...`, `list ltm global-settings connection all-properties`).
// Property names, defaults and ranges are F5's: the tmsh reference and
// the REST output of a BIG-IP 14.1.2.1 (iControl REST model
// descriptions give the ranges). Each row openltm does not act on is kept
// with a warning that says why; traffic-control max-reject-rate is acted
// on (daemon: the plane's reject rate, as sys db tm.maxrejectrate), and
// general maintenance-mode (daemon: every virtual refuses new clients).
//
// [M] a value BIG-IP documents as "a number or infinite" (the SYN
// challenge thresholds) is read as such here; BIG-IP's REST shows the
// number 0 for infinite, which tmsh does not take.

// infiniteOr is a threshold that takes infinite or an integer in lo..hi.
func infiniteOr(name, def string, lo, hi int64, h string) *Prop {
	p := help(str(name, def), h)
	p.Format, p.Min, p.Max = "infinite", lo, hi
	return p
}

// globalNum is an integer row with F5's range.
func globalNum(name, def string, lo, hi int64, h string) *Prop {
	p := help(num(name, def), h)
	p.Min, p.Max = lo, hi
	return p
}

// The reasons of the rows kept, shared with the sys db keys that BIG-IP
// ties to the same settings (dbkeys.go).
const (
	keptSynCookies = "kept: SYN cookies are the Linux kernel's (net.ipv4.tcp_syncookies); openltm counts no SYN flood of its own"
	keptNoL2       = "kept: openltm has no VLANs and no layer 2 of its own; the Linux kernel routes and answers ARP"
	keptReaper     = "kept: deprecated by BIG-IP since 11.6 (ltm eviction-policy replaces it); openltm has no memory reaper"
)

// ltmGlobalKinds are the three singletons.
func ltmGlobalKinds() []*Kind {
	src := func(k string) string {
		return tmshRef("ltm global-settings "+k) + restDefaults("ltm global-settings "+k) + "; ranges: F5's iControl REST model descriptions"
	}
	gs := func(k, title, h string, props ...*Prop) *Kind {
		return &Kind{Words: []string{"ltm", "global-settings", k}, Title: title, Singleton: true, Help: h, Source: src(k),
			Props: append([]*Prop{str("description", "none")}, props...)}
	}
	connection := gs("connection", "Connection Settings", "connection handling of the whole system",
		passive(globalNum("adaptive-reaper-hiwater", "95", 0, 100, keptReaper)),
		passive(globalNum("adaptive-reaper-lowater", "85", 0, 100, keptReaper)),
		passive(help(ed("auto-lasthop", "enabled"), keptNoL2)),
		passive(infiniteOr("default-vs-syn-challenge-threshold", "infinite", 128, 1048576, keptSynCookies)),
		help(refDefault("global-flow-eviction-policy", "/Common/default-eviction-policy", "ltm eviction-policy"), "the eviction policy of the global context: its high-water and low-water are percentages of the system's capacity, half of ltmd's open-file limit (a proxied connection holds two sockets) [openltm's measure], over the connections of every virtual server; none: no global eviction"),
		passive(infiniteOr("global-syn-challenge-threshold", "64000", 2048, 4194304, keptSynCookies)),
		passive(globalNum("syncookies-threshold", "16384", 0, 4294967295, keptSynCookies)),
		passive(help(ed("vlan-keyed-conn", "enabled"), keptNoL2)),
		passive(help(ed("vlan-syn-cookie", "enabled"), keptSynCookies)),
	)
	general := gs("general", "General Settings", "system-wide LTM settings",
		passive(globalNum("gratuitous-arp-rate", "0", 0, 4294967295, keptNoL2)),
		passive(globalNum("l2-cache-timeout", "300", 0, 4294967295, keptNoL2)),
		help(ed("maintenance-mode", "disabled"), "enabled: every virtual server refuses new clients, as a disabled one does; the connections already up go on"),
		passive(help(ed("mgmt-auto-lasthop", "enabled"), keptNoL2)),
		passive(help(enum("share-single-mac", "vmw-compat", "global", "unique", "vmw-compat"), keptNoL2)),
		passive(help(ed("snat-packet-forward", "disabled"), "kept: openltm forwards no packets of its own; a SNAT translates connections")),
	)
	keptKernel := func(what string) string { return "kept: " + what + " is the Linux kernel's" }
	rate := globalNum("max-reject-rate", "250", 1, 1000, "resets a second sent to clients a virtual server refuses (over it: closed without a reset, 011e0001 in the ltm log); as sys db tm.maxrejectrate")
	traffic := gs("traffic-control", "Traffic Control Settings", "how the system treats traffic no virtual server takes, and its rates",
		passive(help(ed("accept-ip-options", "disabled"), keptKernel("IP option handling"))),
		passive(help(ed("accept-ip-source-route", "disabled"), keptKernel("IP option handling"))),
		passive(help(ed("allow-ip-source-route", "disabled"), keptKernel("IP option handling"))),
		passive(help(ed("continue-matching", "disabled"), "kept: a disabled virtual server's clients are refused; openltm does not pass them on to a less specific virtual")),
		passive(globalNum("max-icmp-rate", "100", 0, 2147483647, keptKernel("ICMP (net.ipv4.icmp_ratelimit)"))),
		rate,
		passive(globalNum("max-reject-rate-timeout", "30", 0, 4294967295, "kept: openltm counts the resets over the rate by the second")),
		passive(globalNum("min-path-mtu", "296", 68, 1500, keptKernel("path MTU discovery"))),
		passive(help(ed("path-mtu-discovery", "enabled"), keptKernel("path MTU discovery"))),
		passive(globalNum("port-find-linear", "16", 0, 61439, keptKernel("ephemeral port choice"))),
		passive(globalNum("port-find-random", "16", 0, 1024, keptKernel("ephemeral port choice"))),
		passive(globalNum("port-find-threshold-timeout", "30", 0, 300, keptKernel("ephemeral port choice"))),
		passive(globalNum("port-find-threshold-trigger", "8", 1, 12, keptKernel("ephemeral port choice"))),
		passive(help(ed("port-find-threshold-warning", "enabled"), keptKernel("ephemeral port choice"))),
		passive(help(ed("reject-unmatched", "enabled"), "kept: a connection to an address and port no virtual server listens on is answered by the Linux kernel (a reset on loopback), not by openltm")),
	)
	return []*Kind{connection, general, traffic}
}
