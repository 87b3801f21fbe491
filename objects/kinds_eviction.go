package objects

import "strconv"

// evictionSource is where the rows of ltm eviction-policy come from: F5's
// tmsh reference page (the syntax), the iControl REST schema of
// ltm/eviction-policy (highWater 95, lowWater 85, the slow-flow defaults)
// and the REST listing of /Common/default-eviction-policy on a BIG-IP
// 14.1.2.1 (biasIdle and biasOldest true, every other strategy false,
// bias delays 0). K15740 gives the 50 to 100 range of the water marks
// and that high is not below low.
const evictionSource = "F5 tmsh reference: https://clouddocs.f5.com/cli/tmsh-reference/v16/modules/ltm/ltm_eviction-policy.html; iControl REST: https://clouddocs.f5.com/api/icontrol-rest/APIRef_tm_ltm_eviction-policy.html; K15740, K15821 (water marks); REST of /Common/default-eviction-policy (BIG-IP 14.1.2.1)"

// evictionKind is BIG-IP's `ltm eviction-policy`: when a virtual server
// that names one in flow-eviction-policy reaches high-water percent of
// its connection-limit, connections chosen by the strategies are reset
// until low-water percent remain, so that new clients get in
// (dataplane/evict). What it keeps without acting on says why in its
// help. [M] A new policy has no strategy enabled, as REST creates one;
// the built-in default-eviction-policy has bias-idle and bias-oldest.
func evictionKind() *Kind {
	tf := func(name, def, h string) *Prop { return help(enum(name, def, "true", "false"), h) }
	water := func(name, def, h string) *Prop {
		return help(&Prop{Name: name, Type: TInt, Default: def, Min: 50, Max: 100}, h)
	}
	return &Kind{Words: []string{"ltm", "eviction-policy"}, Title: "Eviction Policy", Lower: "eviction policy", Source: evictionSource,
		Help: "Flow eviction policy: which connections of a virtual server (flow-eviction-policy) are reset when it nears its connection-limit, so that new clients get in",
		Props: []*Prop{
			str("description", "none"),
			water("high-water", "95", "percent of the virtual server's connection-limit (50 to 100) at which connections are evicted to make room for a new client"),
			water("low-water", "85", "percent of the connection-limit (50 to 100, at most high-water) left once an eviction is done"),
			block("slow-flow", "Slow Flow",
				"slow-flow detection: a connection older than grace-period seconds that carried fewer than threshold-bps bytes a second (over its life) is a slow flow; slow flows go first when connections are evicted, and with throttling those above maximum are reset, checked once a second",
				tf("enabled", "false", "true: watch the connections' rates for slow flows"),
				help(enum("eviction-type", "percent", "count", "percent"), "whether maximum is a count of slow flows or a percentage of the context's connections"),
				help(&Prop{Name: "grace-period", Type: TInt, Default: "10", Max: 4294967295}, "seconds a connection is open before it can be a slow flow"),
				help(&Prop{Name: "maximum", Type: TInt, Default: "100", Max: 4294967295}, "slow flows allowed to remain open under throttling (a count, or a percentage with eviction-type percent)"),
				help(&Prop{Name: "threshold-bps", Type: TInt, Default: "32", Max: 4294967295}, "bytes a second under which a connection is slow"),
				help(ed("throttling", "disabled"), "enabled: slow flows above maximum are reset, whether or not the high-water mark is reached"),
			),
			block("strategies", "Strategies",
				"which connections go first: low-priority-port, low-priority-geographies, low-priority-virtual-server, low-priority-route-domain and slow flows first, then by bias-idle (idle longest), bias-oldest (oldest), bias-bytes (fewest bytes, once older than delay seconds), bias-fast and bias-slow (bytes a second, once older than delay seconds), several weighed together",
				block("bias-bytes", "Bias Bytes", "connections that carried the fewest bytes go first",
					tf("enabled", "false", "true: connections with the fewest bytes go first"),
					help(&Prop{Name: "delay", Type: TInt, Default: "0", Max: 4294967295}, "seconds a connection is spared by this strategy after it opens (0: none)"),
				),
				block("bias-fast", "Bias Fast", "the fastest connections (bytes a second over their life) go first",
					tf("enabled", "false", "true: the fastest connections go first"),
					help(&Prop{Name: "delay", Type: TInt, Default: "0", Max: 4294967295}, "seconds a connection is spared by this strategy after it opens (0: none)"),
				),
				block("bias-idle", "Bias Idle", "connections idle the longest go first",
					tf("enabled", "false", "true: connections idle the longest go first"),
				),
				block("bias-oldest", "Bias Oldest", "the oldest connections go first",
					tf("enabled", "false", "true: the oldest connections go first"),
				),
				block("bias-slow", "Bias Slow", "the slowest connections (bytes a second over their life) go first",
					tf("enabled", "false", "true: the slowest connections go first"),
					help(&Prop{Name: "delay", Type: TInt, Default: "0", Max: 4294967295}, "seconds a connection is spared by this strategy after it opens (0: none)"),
				),
				block("low-priority-geographies", "Low Priority Geographies",
					"connections from clients the loaded geolocation database places in countries go first",
					help(&Prop{Name: "countries", Type: TList}, "ISO 3166 country codes (DE, US)"),
					tf("enabled", "false", "true: connections from the countries go first"),
				),
				block("low-priority-port", "Low Priority Port",
					"connections that reached one of ports go first (a virtual server on many ports)",
					tf("enabled", "false", "true: connections to the ports go first"),
					help(&Prop{Name: "ports", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Port", Props: []*Prop{
						help(str("port-number", "0"), "the port, by number or service name"),
						help(enum("protocol", "any", "any", "sctp", "tcp", "udp"), "the protocol the port is low priority for"),
						passive(str("app-service", "none")),
					}}}, "ports { NAME { port-number P protocol any|tcp|udp } }"),
				),
				block("low-priority-route-domain", "Low Priority Route Domain",
					"at the global context, connections of the virtual servers in the route domains names lists go first",
					tf("enabled", "false", "true: connections in the route domains go first"),
					help(&Prop{Name: "names", Type: TList}, "route domains (net route-domain names)"),
				),
				block("low-priority-virtual-server", "Low Priority Virtual Server",
					"at a route-domain or the global context, connections of the virtual servers names lists go first (a virtual server's own policy chooses among its own connections)",
					tf("enabled", "false", "true: connections of the virtual servers go first"),
					help(&Prop{Name: "names", Type: TList}, "virtual servers (ltm virtual names)"),
				),
			),
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
}

// checkEviction refuses a global-flow-eviction-policy that is not an
// eviction policy (01020036), a slow-flow maximum over 100 percent [M],
// an eviction policy whose low-water is above its
// high-water, which BIG-IP refuses (K15740) [M: the wording], a
// low-priority port that is not a port, and a country that is not two
// letters or digits [M: BIG-IP checks them against its own database].
func checkEviction(c *Config, s *Schema, o *Object) error {
	if o.Kind.Key() == "ltm global-settings connection" {
		// The global policy is a reference (a name relative to the
		// folder is taken); it must name an eviction policy.
		n := c.EffectiveStr(o, "global-flow-eviction-policy")
		if k := s.Kind("ltm eviction-policy"); k != nil && n != "" && n != "none" && c.Lookup(s, []string{k.Key()}, n) == nil {
			return NotFound(k, n)
		}
		return nil
	}
	if o.Kind.Key() != "ltm eviction-policy" {
		return nil
	}
	if sf := o.Props["slow-flow"]; sf != nil && sf.Sub != nil {
		max := 100
		if sf.Sub.Props["maximum"] != nil {
			max, _ = strconv.Atoi(sf.Sub.Props["maximum"].Str)
		}
		typ := "percent"
		if v := sf.Sub.Props["eviction-type"]; v != nil {
			typ = v.Str
		}
		if typ == "percent" && max > 100 {
			return Invalid("eviction policy %s: slow-flow maximum %d is a percentage (eviction-type percent), at most 100; use eviction-type count for a number of flows", o.Name, max)
		}
	}
	if st := o.Props["strategies"]; st != nil && st.Sub != nil {
		if b := st.Sub.Props["low-priority-port"]; b != nil && b.Sub != nil && b.Sub.Props["ports"] != nil {
			for _, it := range b.Sub.Props["ports"].Items {
				pn := "0"
				if v := it.Props["port-number"]; v != nil {
					pn = v.Str
				}
				if p, err := ParsePort(pn); err != nil || p == 0 {
					return Invalid("eviction policy %s: low-priority-port %s: port-number %q is not a port (a number from 1 to 65535 or a service name such as http)", o.Name, it.Name, pn)
				}
			}
		}
		if b := st.Sub.Props["low-priority-geographies"]; b != nil && b.Sub != nil && b.Sub.Props["countries"] != nil {
			for _, cc := range b.Sub.Props["countries"].List {
				if len(cc) != 2 || !isAlnum(cc) {
					return Invalid("eviction policy %s: low-priority-geographies: %q is not a country (an ISO 3166 code of two letters, such as DE or US)", o.Name, cc)
				}
			}
		}
	}
	hi, _ := strconv.Atoi(c.EffectiveStr(o, "high-water"))
	lo, _ := strconv.Atoi(c.EffectiveStr(o, "low-water"))
	if lo > hi {
		return Invalid("eviction policy %s: low-water %d is above high-water %d (low-water must be at most high-water)", o.Name, lo, hi)
	}
	return nil
}

func isAlnum(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
