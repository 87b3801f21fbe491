package objects

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// lsnKinds are BIG-IP's large-scale NAT (CGNAT) kinds. `ltm lsn-pool`
// acts: a virtual's source-address-translation { type lsn pool NAME }
// translates its subscribers' server sides from the pool's members
// (dataplane/lsn), by mode napt, deterministic or pba, with
// persistence, port blocks, inbound connections, hairpinning, a PCP
// server (pcp { profile selfip }, ltm profile pcp: kinds_pcp.go) and
// logging;
// `ltm lsn-log-profile` says which translation events its pools log.
// The rows and defaults follow F5's tmsh reference (ltm lsn-pool, ltm
// lsn-log-profile) and the iControl REST schema of ltm/lsn-pool
// (clientConnectionLimit 0, hairpinMode disabled, icmpEcho disabled,
// inboundConnections disabled, mode napt, routeAdvertisement disabled,
// translationPortRange 1025-65535) [M: persistence's address-port and
// 300, and port-block-allocation's block-size 64, block-idle-timeout
// 3600, client-block-limit 1, block-lifetime and zombie-timeout 0, are
// as remembered from BIG-IP 13 to 17, not read from a system].
func lsnKinds() []*Kind {
	pool := &Kind{Words: []string{"ltm", "lsn-pool"}, Title: "LSN Pool", Lower: "lsn pool", Source: tmshRef("ltm lsn-pool"),
		Help: "Large-scale NAT (CGNAT) pool: the translation addresses and ports of the virtual servers with source-address-translation type lsn", Props: []*Prop{
			str("description", "none"),
			help(enum("mode", "napt", "napt", "deterministic", "pba"), "napt: any free address and port; deterministic: an address and port range computed from the subscriber's address; pba: blocks of ports per subscriber"),
			help(&Prop{Name: "members", Type: TList, Format: "network", Help: ""}, "translation prefixes (address/prefix length)"),
			help(&Prop{Name: "backup-members", Type: TList, Format: "network"}, "prefixes a deterministic pool translates from (as napt) when a subscriber's ports are all in use"),
			help(u32(num("client-connection-limit", "0")), "translated connections one subscriber may have at once (0: no limit)"),
			help(enum("inbound-connections", "disabled", "disabled", "automatic", "explicit"), "automatic: a connection to a translation address and port in use goes to its subscriber; explicit: only for translations a rule opened with LSN::inbound"),
			help(ed("hairpin-mode", "disabled"), "enabled: a subscriber's connection to a translation address and port another subscriber takes inbound connections on goes to that subscriber inside"),
			passive(ed("icmp-echo", "disabled")),
			passive(ed("route-advertisement", "disabled")),
			help(str("translation-port-range", "1025-65535"), "the ports translations take: LOW:HIGH (or LOW-HIGH), or one port"),
			help(ref("log-profile", "ltm lsn-log-profile"), "which translation events are logged to log-publisher (none: every start and end)"),
			help(ref("log-publisher", "sys log-config publisher"), "the publisher that gets a line per translation and port block started and ended"),
			block("persistence", "Persistence",
				"mode address keeps a subscriber on one translation address, address-port on one translation address and port, for timeout seconds after its last connection",
				help(enum("mode", "address-port", "none", "address", "address-port"), "none, address or address-port"),
				help(u32(num("timeout", "300")), "seconds a subscriber's mapping is kept after its last connection ends"),
			),
			block("port-block-allocation", "Port Block Allocation",
				"mode pba: each subscriber gets blocks of block-size ports, up to client-block-limit, each ended block-idle-timeout after its last connection or at block-lifetime",
				help(&Prop{Name: "block-size", Type: TInt, Default: "64", Min: 1, Max: 65535}, "ports in one block"),
				help(u32(num("block-lifetime", "0")), "seconds a block lives at most (0: no limit)"),
				help(u32(num("block-idle-timeout", "3600")), "seconds a block without connections is kept"),
				help(&Prop{Name: "client-block-limit", Type: TInt, Default: "1", Min: 1, Max: 65535}, "blocks one subscriber may hold"),
				help(u32(num("zombie-timeout", "0")), "seconds a block past its lifetime keeps its connections before they are cut (0: until they end)"),
			),
			passive(&Prop{Name: "egress-interfaces", Type: TList}),
			passive(&Prop{Name: "egress-interfaces-enabled", Type: TFlag, Enum: []string{"egress-interfaces-enabled", "egress-interfaces-disabled"}}),
			block("pcp", "PCP",
				"profile names the ltm profile pcp of the PCP server (RFC 6887) the pool runs on selfip's address, UDP port listening-port",
				help(ref("profile", "ltm profile pcp"), "the pcp profile (none: no PCP server)"),
				help(ref("selfip", "net self"), "the self IP whose address the PCP server listens on"),
				passive(str("dslite", "none")),
				passive(str("dslite_tunnel", "none")),
			),
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
	logProf := &Kind{Words: []string{"ltm", "lsn-log-profile"}, Title: "LSN Log Profile", Lower: "lsn log profile", Source: tmshRef("ltm lsn-log-profile"),
		Parent: "", Help: "Which translation events the lsn pools that name it log", Props: []*Prop{
			ref("defaults-from", "ltm lsn-log-profile"),
			str("description", "none"),
			help(ed("csv-format", "disabled"), "enabled: the lines are comma-separated values instead of key=\"value\" pairs"),
			block("start-outbound-session", "Start Outbound Session", "action enabled logs each translation's start; backup-allocation-only only those from backup-members",
				help(enum("action", "enabled", "enabled", "disabled", "backup-allocation-only"), "enabled, disabled or backup-allocation-only"),
				passive(raw("elements")),
			),
			block("end-outbound-session", "End Outbound Session", "action enabled logs each translation's end; backup-allocation-only only those from backup-members",
				help(enum("action", "enabled", "enabled", "disabled", "backup-allocation-only"), "enabled, disabled or backup-allocation-only"),
				passive(raw("elements")),
			),
			passive(block("start-inbound-session", "Start Inbound Session", "kept",
				passive(enum("action", "disabled", "enabled", "disabled")),
			)),
			passive(block("end-inbound-session", "End Inbound Session", "kept",
				passive(enum("action", "disabled", "enabled", "disabled")),
			)),
			passive(block("quota-exceeded", "Quota Exceeded", "kept",
				passive(enum("action", "enabled", "enabled", "disabled")),
			)),
			passive(block("errors", "Errors", "kept",
				passive(enum("action", "enabled", "enabled", "disabled")),
			)),
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
	return []*Kind{pool, logProf}
}

// ParsePortRange reads an lsn pool's translation-port-range: LOW:HIGH,
// LOW-HIGH or one port, 1 to 65535, LOW not above HIGH.
func ParsePortRange(s string) (lo, hi uint16, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		a, b, ok = strings.Cut(s, "-")
	}
	if !ok {
		b = a
	}
	x, e1 := strconv.ParseUint(a, 10, 16)
	y, e2 := strconv.ParseUint(b, 10, 16)
	if e1 != nil || e2 != nil || x == 0 || y == 0 || x > y {
		return 0, 0, fmt.Errorf("invalid translation-port-range (%s): use LOW:HIGH, ports from 1 to 65535 with LOW not above HIGH", s)
	}
	return uint16(x), uint16(y), nil
}

// checkLSNPool refuses an lsn pool BIG-IP refuses: members that do not
// read as prefixes or overlap one another, a bad port range, a block
// size beyond the range, a deterministic pool whose addresses another
// pool has too [M: the wording].
func checkLSNPool(c *Config, o *Object) error {
	if o.Kind == nil || o.Kind.Key() != "ltm lsn-pool" {
		return nil
	}
	str := func(name string) string {
		if v := o.Props[name]; v != nil {
			return v.Str
		}
		return ""
	}
	sub := func(block, name, def string) string {
		if v := o.Props[block]; v != nil && v.Sub != nil {
			if x := v.Sub.Props[name]; x != nil && x.Str != "" {
				return x.Str
			}
		}
		return def
	}
	lo, hi := uint16(1025), uint16(65535)
	if r := str("translation-port-range"); r != "" {
		var err error
		if lo, hi, err = ParsePortRange(r); err != nil {
			return Invalid("01070734:3: Configuration error: LSN pool (%s): %v", o.Name, err)
		}
	}
	var all []netip.Prefix
	for _, list := range []string{"members", "backup-members"} {
		v := o.Props[list]
		if v == nil {
			continue
		}
		for _, m := range v.List {
			p, err := netip.ParsePrefix(m)
			if err != nil {
				return Invalid("01070734:3: Configuration error: LSN pool (%s): %s %s is not an address/prefix length", o.Name, list, m)
			}
			if p.Masked() != p {
				return Invalid("01070734:3: Configuration error: LSN pool (%s): %s %s has host bits set (use %s)", o.Name, list, m, p.Masked())
			}
			for _, q := range all {
				if q.Overlaps(p) {
					return Invalid("01070734:3: Configuration error: LSN pool (%s): prefixes %s and %s overlap", o.Name, q, p)
				}
			}
			all = append(all, p)
		}
	}
	// A PCP server needs an address to listen on: F5 asks for a selfip
	// or a DS-Lite tunnel with the profile [M: the wording].
	if pf := sub("pcp", "profile", "none"); pf != "none" && sub("pcp", "selfip", "none") == "none" &&
		sub("pcp", "dslite", "none") == "none" && sub("pcp", "dslite_tunnel", "none") == "none" {
		return Invalid("01070734:3: Configuration error: LSN pool (%s): pcp profile %s needs a selfip or a dslite tunnel to listen on", o.Name, pf)
	}
	mode := str("mode")
	if mode == "pba" {
		bs, _ := strconv.Atoi(sub("port-block-allocation", "block-size", "64"))
		if bs > int(hi)-int(lo)+1 {
			return Invalid("01070734:3: Configuration error: LSN pool (%s): port-block-allocation block-size %d is larger than translation-port-range %d:%d", o.Name, bs, lo, hi)
		}
	}
	if mode == "deterministic" {
		// F5: every translation address of a deterministic pool is in
		// that pool only.
		for _, x := range c.Objects() {
			if x == o || x.Kind == nil || x.Kind.Key() != "ltm lsn-pool" {
				continue
			}
			for _, list := range []string{"members", "backup-members"} {
				v := x.Props[list]
				if v == nil {
					continue
				}
				for _, m := range v.List {
					q, err := netip.ParsePrefix(m)
					if err != nil {
						continue
					}
					for _, p := range all {
						if p.Overlaps(q) {
							return Invalid("01070734:3: Configuration error: LSN pool (%s): deterministic mode member %s overlaps %s of LSN pool (%s)", o.Name, p, q, x.Name)
						}
					}
				}
			}
		}
	}
	return nil
}

// checkLSNVirtual refuses a virtual whose source-address-translation
// names a pool of the other type (a snatpool with type lsn, an lsn pool
// with type snat), and one that translates through a deterministic lsn
// pool without a source prefix, whose subscribers the mapping counts:
// F5 requires a source other than 0.0.0.0/0 there [M: the wording].
func checkLSNVirtual(c *Config, s *Schema, o *Object) error {
	if o.Kind == nil || o.Kind.Key() != "ltm virtual" {
		return nil
	}
	sat := o.Props["source-address-translation"]
	if sat == nil || sat.Sub == nil {
		return nil
	}
	t, p := sat.Sub.Props["type"], sat.Sub.Props["pool"]
	if t == nil || p == nil || p.Str == "" || p.Str == "none" {
		return nil
	}
	switch t.Str {
	case "lsn":
		lp := c.Lookup(s, []string{"ltm lsn-pool"}, p.Str)
		if lp == nil {
			if c.Lookup(s, []string{"ltm snatpool"}, p.Str) != nil {
				return Invalid("The virtual server (%s) uses source-address-translation type lsn with a SNAT pool (%s); type lsn takes an LSN pool.", o.Name, p.Str)
			}
			return nil // a dangling reference: refused as such
		}
		if m := lp.Props["mode"]; m != nil && m.Str == "deterministic" {
			src := "0.0.0.0/0"
			if v := o.Props["source"]; v != nil && v.Str != "" {
				src = v.Str
			}
			if pf, err := netip.ParsePrefix(src); err != nil || pf.Bits() == 0 {
				return Invalid("01070734:3: Configuration error: The virtual server (%s) uses deterministic LSN pool (%s) and must specify a source other than %s.", o.Name, lp.Name, src)
			}
		}
	case "snat":
		if c.Lookup(s, []string{"ltm snatpool"}, p.Str) == nil && c.Lookup(s, []string{"ltm lsn-pool"}, p.Str) != nil {
			return Invalid("The virtual server (%s) uses source-address-translation type snat with an LSN pool (%s); type snat takes a SNAT pool.", o.Name, p.Str)
		}
	}
	return nil
}
