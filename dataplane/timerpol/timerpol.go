// Package timerpol is BIG-IP's timer policy as a virtual server's
// service-policy applies it: the flows of a protocol and destination
// port get an idle timeout of their own in place of the protocol
// profile's, chosen once when the flow opens (a forwarding virtual keeps
// SSH sessions an hour while its other flows idle out in five minutes).
//
// F5: https://clouddocs.f5.com/cli/tmsh-reference/latest/modules/net/net_timer-policy.html
package timerpol

import "time"

// Immediate is the idle timeout of a rule whose flow-idle-timeout is
// immediate (or 0): the flow ends at the first idle check after its last
// packet, as the udp profile's immediate does in openltm.
const Immediate = time.Nanosecond

// AllOther is Rule.Proto for ip-protocol all-other.
const AllOther = -1

// Rule is one rule of a timer policy.
type Rule struct {
	// Name is the rule's name, for show and logs.
	Name string
	// Proto is the IP protocol number the rule matches, or AllOther:
	// a flow whose protocol no rule names.
	Proto int
	// Ports are the destination port ranges the rule matches; none
	// matches every port.
	Ports []PortRange
	// Idle is the flow's idle timeout: > 0 that long (Immediate for
	// immediate), 0 never (indefinite).
	Idle time.Duration
	// Unspecified leaves the flow the protocol profile's idle-timeout.
	Unspecified bool
}

// PortRange is a destination port or range of a rule, Lo to Hi.
type PortRange struct{ Lo, Hi uint16 }

// Policy is a timer policy, as its service policy gives it to virtual
// servers.
type Policy struct {
	// Name is the timer policy's full path.
	Name string
	// Rules are in the order the policy lists them.
	Rules []Rule
}

// Match is the rule of p that decides a flow of protocol proto to port,
// nil for none. The most specific rule wins [M: BIG-IP's documentation
// gives all-other as the rule for a flow whose protocol no other rule
// names; the order among the rest is openltm's]: a rule of the protocol
// naming the port, then one of the protocol naming no port, then
// all-other (one naming the port, then one naming none); among equals,
// the first listed.
func (p *Policy) Match(proto int, port uint16) *Rule {
	var best *Rule
	bestRank := 0
	for i := range p.Rules {
		r := &p.Rules[i]
		rank := 0
		switch {
		case r.Proto == proto && len(r.Ports) > 0 && hasPort(r.Ports, port):
			rank = 4
		case r.Proto == proto && len(r.Ports) == 0:
			rank = 3
		case r.Proto == AllOther && len(r.Ports) > 0 && hasPort(r.Ports, port):
			rank = 2
		case r.Proto == AllOther && len(r.Ports) == 0:
			rank = 1
		}
		if rank > bestRank {
			best, bestRank = r, rank
		}
	}
	return best
}

// Idle is the idle timeout p gives a flow of protocol proto to port, and
// whether a rule decides it (false: the profile's stays).
func (p *Policy) Idle(proto int, port uint16) (time.Duration, bool) {
	r := p.Match(proto, port)
	if r == nil || r.Unspecified {
		return 0, false
	}
	return r.Idle, true
}

func hasPort(rs []PortRange, port uint16) bool {
	for _, r := range rs {
		if port >= r.Lo && port <= r.Hi {
			return true
		}
	}
	return false
}
