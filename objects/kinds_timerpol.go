package objects

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// timerPolicySource is where the rows of net timer-policy and net
// service-policy come from: F5's tmsh reference pages (the syntax, the
// precedence of contexts), the AFM manual's chapter on service policies
// (a timer policy on a virtual server, self IP, route domain or the
// global context) and F5's Ansible modules bigip_timer_policy and
// bigip_service_policy (ip-protocol all-other by default, the named
// protocols, destination-ports only with tcp, udp and sctp, and the
// values of flow-idle-timeout: seconds, immediate, indefinite,
// unspecified, the default).
const timerPolicySource = "F5 tmsh reference: https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/net/net_timer-policy.html and net_service-policy.html; https://techdocs.f5.com/kb/en-us/products/big-ip-afm/manuals/product/big-ip-network-firewall-policies-and-implementations-14-1-0/18.html; F5 Ansible modules bigip_timer_policy, bigip_service_policy"

// timerProtocols are the names ip-protocol takes in a timer policy's
// rule (any protocol number 0 to 255 too), all-other the default: the
// rule then matches a flow no rule names the protocol of.
var timerProtocols = []string{"all-other", "ah", "bna", "esp", "etherip", "gre", "icmp", "ipencap", "ipv6", "ipv6-auth", "ipv6-crypt", "ipv6-icmp", "isp-ip", "mux", "ospf", "sctp", "tcp", "udp", "udplite"}

// timerPolicyKinds are BIG-IP's `net timer-policy` and `net
// service-policy`: a virtual server's (or route domain's) service-policy
// names a timer policy whose rules give the flows of a protocol and
// destination port an idle timeout of their own, in place of the
// protocol profile's (dataplane/timerpol). An SSH rule keeps a
// forwarding virtual's SSH sessions an hour while its other flows idle
// out in five minutes.
func timerPolicyKinds() []*Kind {
	idle := help(str("value", "unspecified"), "seconds a flow of the rule may idle (0 or immediate: it ends as soon as it idles), indefinite (never), or unspecified (the protocol profile's idle-timeout)")
	idle.Format = "idle-timer"
	timers := help(&Prop{Name: "timers", Type: TColl, Items: ItemPlain, Enum: []string{"flow-idle-timeout"},
		Sub: &Kind{Title: "Timer", Props: []*Prop{idle}}},
		"timers { flow-idle-timeout { value N|immediate|indefinite|unspecified } }")
	rule := &Kind{Title: "Rule", Lower: "rule", Props: []*Prop{
		str("description", "none"),
		help(&Prop{Name: "destination-ports", Type: TColl, Items: ItemListPort, Sub: &Kind{Title: "Port"}},
			"the destination ports the rule matches (80, 8000-8099; tcp, udp and sctp only); none: every port"),
		help(enum("ip-protocol", "all-other", timerProtocols...), "the protocol the rule matches, by name or number; all-other: a flow whose protocol no other rule names"),
		timers,
	}}
	tp := &Kind{Words: []string{"net", "timer-policy"}, Title: "Timer Policy", Lower: "timer policy", Source: timerPolicySource,
		Help: "Per-protocol, per-port idle timeouts, applied through a service policy on a virtual server or route domain",
		Props: []*Prop{
			str("description", "none"),
			help(&Prop{Name: "rules", Type: TColl, Items: ItemPlain, Sub: rule}, "rules { NAME { ip-protocol P destination-ports { ... } timers { flow-idle-timeout { value N } } } }"),
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
	pm := help(ref("port-misuse-policy", "security firewall port-misuse-policy"), "kept: port misuse policies are AFM's, which openltm does not have")
	pm.Passive = true
	sp := &Kind{Words: []string{"net", "service-policy"}, Title: "Service Policy", Lower: "service policy", Source: timerPolicySource,
		Help: "Holds a timer policy (and AFM's port misuse policy) for a virtual server's or route domain's service-policy",
		Props: []*Prop{
			str("description", "none"),
			help(ref("timer-policy", "net timer-policy"), "the timer policy whose idle timeouts the flows get"),
			pm,
			passive(str("app-service", "none")),
			passive(raw("metadata")),
		}}
	return []*Kind{tp, sp}
}

// checkTimerPolicy refuses a timer policy rule that names destination
// ports for a protocol without ports, as F5's own tools refuse it [M:
// BIG-IP's wording]. Two rules that match one flow are taken, the first
// listed winning [M].
func checkTimerPolicy(o *Object) error {
	if o.Kind.Key() != "net timer-policy" || o.Props["rules"] == nil {
		return nil
	}
	for _, r := range o.Props["rules"].Items {
		proto := "all-other"
		if v := r.Props["ip-protocol"]; v != nil && v.Str != "" {
			proto = v.Str
		}
		if ports := r.Props["destination-ports"]; ports == nil || len(ports.Items) == 0 {
			continue
		}
		switch proto {
		case "tcp", "udp", "sctp", "6", "17", "132":
		default:
			return Invalid("timer policy %s: rule %s: destination-ports are taken with ip-protocol tcp, udp or sctp only, not %s", o.Name, r.Name, proto)
		}
	}
	return nil
}

// validIdleTimer reads a timer's value: seconds (0 to 4294967295),
// immediate, indefinite or unspecified.
func validIdleTimer(s string) error {
	switch s {
	case "immediate", "indefinite", "unspecified":
		return nil
	}
	var n uint64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || !intRE.MatchString(s) || n > 4294967295 {
		return fmt.Errorf("%q is not a timeout: use seconds (0 to 4294967295), immediate, indefinite or unspecified", s)
	}
	return nil
}

// checkRouteDomainParent refuses a route domain whose parent is not a
// route domain, or whose parents lead back to it: a child without a
// service-policy takes its parent's (daemon/translate_timerpol.go), and
// routes are looked up in the parents, so the chain must end [M: BIG-IP's
// wording for these is not documented; the GUI offers only existing route
// domains as Parent ID].
func checkRouteDomainParent(c *Config, s *Schema, o *Object) error {
	if o.Kind.Key() != "net route-domain" {
		return nil
	}
	all := c.Of(o.Kind)
	cur := o
	chain := []string{o.Name}
	for range len(all) + 1 {
		p := routeDomainParentName(cur)
		if p == "" {
			return nil
		}
		if _, err := strconv.Atoi(p); err != nil {
			p = FullPath(path.Dir(cur.Name), p)
		}
		next := RouteDomainParentOf(c, s, cur)
		if next == nil {
			return NotFound(o.Kind, p)
		}
		chain = append(chain, next.Name)
		if next == o {
			return Invalid("route domain %s: its parents lead back to it (%s); a route domain's parents must end at one without a parent", o.Name, strings.Join(chain, " -> "))
		}
		cur = next
	}
	return nil
}

// routeDomainParentName is rd's parent as written, "" for none (none,
// or 65535 as F5 spells none in a Parent ID).
func routeDomainParentName(rd *Object) string {
	p := rd.Str("parent")
	if p == "none" || p == "65535" {
		return ""
	}
	return p
}

// RouteDomainParentOf is rd's parent route domain, nil for none or one
// that does not exist: parent names it (/Common/rd1, or rd1 relative to
// rd's folder) as tmsh lists it, or gives its id (1) as the GUI's Parent
// ID does [M]. The daemon walks it for a child's service policy.
func RouteDomainParentOf(c *Config, s *Schema, rd *Object) *Object {
	p := routeDomainParentName(rd)
	if p == "" {
		return nil
	}
	if _, err := strconv.Atoi(p); err == nil {
		for _, o := range c.Of(rd.Kind) {
			if v := o.Props["id"]; (v != nil && v.Str == p) || (v == nil && p == "0" && o.Name == "/Common/0") {
				return o
			}
		}
		return nil
	}
	return c.Lookup(s, []string{rd.Kind.Key()}, FullPath(path.Dir(rd.Name), p))
}

// RouteDomainReach is the route domains beyond rd whose objects (ltm
// nat, ltm snat) rd's traffic may reach, nearest first: none when rd
// has strict isolation (strict enabled, the default); else its parent,
// and the parent's parent while each has strict disabled too. BIG-IP
// lets a route domain with strict isolation disabled cross into its
// parent (TMOS Routing Administration, "About parent IDs"); that a
// parent with strict enabled stops the walk at itself (reached, not
// passed) is openltm's reading [M]. Bounded by the number of route
// domains, so a loop of parents (which checkRouteDomainParent refuses)
// ends. The daemon makes it once per commit per route domain.
func RouteDomainReach(c *Config, s *Schema, rd *Object) []*Object {
	var out []*Object
	cur := rd
	for range len(c.Of(rd.Kind)) {
		if cur.Str("strict") != "disabled" {
			return out
		}
		next := RouteDomainParentOf(c, s, cur)
		if next == nil || next == rd {
			return out
		}
		out = append(out, next)
		cur = next
	}
	return out
}
