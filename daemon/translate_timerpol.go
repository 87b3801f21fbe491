package daemon

import (
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A virtual's service-policy and its timer policy (dataplane/timerpol).
var (
	netServicePolicy       = schema.MustKind("net service-policy")
	netTimerPolicy         = schema.MustKind("net timer-policy")
	servicePolicyTimers    = netServicePolicy.MustProp("timer-policy")
	virtualServicePolicy   = ltmVirtual.MustProp("service-policy")
	routeDomainServicePols = netRouteDomain.MustProp("service-policy")
)

// virtualTimers gives v the timer policy of its service-policy, or, when
// it has none, of its route domain's (the one its destination names,
// ADDRESS%ID; route domain 0 without one), as BIG-IP ranks a virtual
// server's policy above its route domain's and that above the global
// one's (tmsh reference, net timer-policy: "Virtual Server, SelfIP,
// Route Domain, Global"). A self IP's service-policy times the traffic
// to the self IP, which openltm does not proxy, and the global context
// is AFM's (security firewall global-rules), which openltm does not
// have: neither reaches a virtual's flows.
func (t *translator) virtualTimers(o *objects.Object, v *dataplane.Virtual) {
	sp := t.refObject(virtualServicePolicy.Str(o), netServicePolicy)
	if sp == nil {
		sp = t.routeDomainServicePolicy(v.RouteDomain)
	}
	if sp == nil {
		return
	}
	tp := t.refObject(servicePolicyTimers.Str(sp), netTimerPolicy)
	if tp == nil {
		return // a service policy with only AFM's port misuse policy
	}
	v.Timers = t.timerPolicy(tp)
	if v.MRF != nil { // message routing's peer connections (dataplane/mrf)
		v.MRF.Timers = v.Timers
	}
}

// routeDomainTimers is the timer policy of route domain id's
// service-policy (or its parents', routeDomainServicePolicy), nil for
// none: what a virtual in that route domain without a service-policy of
// its own gets, and what a NAT's way in gets (its virtuals are the
// plane's, dataplane/nat.go, with no service-policy of their own), as
// the NAT's way in is in its route domain's eviction context.
func (t *translator) routeDomainTimers(id int) *dataplane.TimerPolicy {
	sp := t.routeDomainServicePolicy(id)
	if sp == nil {
		return nil
	}
	if tp := t.refObject(servicePolicyTimers.Str(sp), netTimerPolicy); tp != nil {
		return t.timerPolicy(tp)
	}
	return nil
}

// refObject is the object of kind k name refers to; nil for none or a
// dangling reference (the schema reports those).
func (t *translator) refObject(name string, k *objects.Kind) *objects.Object {
	if name == "" || name == "none" {
		return nil
	}
	return t.cfg.Lookup(t.s, []string{k.Key()}, name)
}

// routeDomainServicePolicy is the service-policy of the route domain
// whose id is id, nil for none (or no such route domain). A route domain
// with no id set is route domain 0 only when named 0 [M]. A route domain
// without a service-policy of its own takes its parent's, and so up the
// parents [M: F5 documents a route domain's parent only for route
// lookups (TMOS Routing Administration, "About parent IDs"); a child
// inheriting its parent's service policy is openltm's choice, what a
// child without routes of its own already does for routes].
func (t *translator) routeDomainServicePolicy(id int) *objects.Object {
	rd := t.routeDomainByID(id)
	// At most as many steps as route domains: a loop of parents (which
	// the schema refuses) ends without a policy.
	for range len(t.cfg.Of(netRouteDomain)) {
		if rd == nil {
			return nil
		}
		if sp := routeDomainServicePols.Str(rd); sp != "" && sp != "none" {
			return t.refObject(sp, netServicePolicy)
		}
		rd = objects.RouteDomainParentOf(t.cfg, t.s, rd)
	}
	return nil
}

// routeDomainByID is the route domain whose id is id, nil for none.
func (t *translator) routeDomainByID(id int) *objects.Object {
	want := strconv.Itoa(id)
	for _, rd := range t.cfg.Of(netRouteDomain) {
		if v := rd.Props["id"]; (v != nil && v.Str == want) || (v == nil && id == 0 && rd.Name == "/Common/0") {
			return rd
		}
	}
	return nil
}

// timerPolicy is tp as the dataplane acts on it, translated once per
// commit however many virtuals use it.
func (t *translator) timerPolicy(tp *objects.Object) *dataplane.TimerPolicy {
	if p := t.timerPolicies[tp]; p != nil {
		return p
	}
	p := &dataplane.TimerPolicy{Name: tp.Name}
	if rs := tp.Props["rules"]; rs != nil {
		for _, it := range rs.Items {
			p.Rules = append(p.Rules, timerRule(it))
		}
	}
	if t.timerPolicies == nil {
		t.timerPolicies = map[*objects.Object]*dataplane.TimerPolicy{}
	}
	t.timerPolicies[tp] = p
	return p
}

// timerRule is one rule of a timer policy: its protocol as a number, its
// ports, and its flow-idle-timeout (unspecified when it has none).
func timerRule(it *objects.Item) dataplane.TimerRule {
	r := dataplane.TimerRule{Name: it.Name, Proto: dataplane.TimerAllOther, Unspecified: true}
	if v := it.Props["ip-protocol"]; v != nil && v.Str != "" {
		r.Proto = timerProtoNumber(v.Str)
	}
	if v := it.Props["destination-ports"]; v != nil {
		for _, pe := range v.Items {
			if lo, hi, err := objects.ParseListPort(pe.Name); err == nil {
				r.Ports = append(r.Ports, dataplane.TimerPorts{Lo: uint16(lo), Hi: uint16(hi)})
			}
		}
	}
	if v := it.Props["timers"]; v != nil {
		for _, tm := range v.Items {
			if tm.Name != "flow-idle-timeout" {
				continue
			}
			val := "unspecified"
			if x := tm.Props["value"]; x != nil && x.Str != "" {
				val = x.Str
			}
			switch val {
			case "unspecified":
			case "indefinite":
				r.Unspecified, r.Idle = false, 0
			case "immediate", "0":
				r.Unspecified, r.Idle = false, dataplane.TimerImmediate
			default:
				n, _ := strconv.ParseInt(val, 10, 64)
				r.Unspecified, r.Idle = false, secondsOf(n)
			}
		}
	}
	return r
}

// timerProtoNumber is a timer rule's ip-protocol as a number: a number
// as given, a name as IANA numbers it (isp-ip, which no flow of openltm
// carries, matches none [M]).
func timerProtoNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	switch s {
	case "all-other":
		return dataplane.TimerAllOther
	case "icmp":
		return 1
	case "ipencap":
		return 4
	case "tcp":
		return 6
	case "mux":
		return 18
	case "ipv6":
		return 41
	case "gre":
		return 47
	case "bna":
		return 49
	case "esp", "ipv6-crypt":
		return 50
	case "ah", "ipv6-auth":
		return 51
	case "ipv6-icmp":
		return 58
	case "ospf":
		return 89
	case "etherip":
		return 97
	case "sctp":
		return 132
	case "udplite":
		return 136
	case "udp":
		return 17
	}
	return 256 // no IP protocol: matches no flow
}
