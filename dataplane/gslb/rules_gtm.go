package gslb

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/openltm/openltm/rules"
)

// The GTM-only rule commands (rules.GTMConn): what a gtm rule reads of
// the query's resolution (wideip, pools, nodes_up, qos_score,
// qos_weight, matchregion, whoami, whereami) and what it changes of it
// (ttl, member_priority).

var errNotWideIP = errors.New("valid in a wide IP's rules only")

// memberPrio is a member's priority for one query (member_priority).
type memberPrio struct {
	m    *member
	prio int
}

// byPriority orders a pool's available members by the priorities this
// query's rule gave them, highest first; equal priorities (0 for the
// members no rule named) keep member-order. Global availability then
// answers the first, and the other methods take turns in that order.
func (rq *request) byPriority(pl *pool, ms []*member) {
	pr := func(m *member) int {
		for _, x := range rq.prio {
			if x.m == m {
				return x.prio
			}
		}
		return 0
	}
	named := false
	for _, x := range rq.prio {
		named = named || x.m.pool == pl
	}
	if !named {
		return
	}
	slices.SortStableFunc(ms, func(a, b *member) int { return pr(b) - pr(a) })
}

// whoami is the gtm server that is this device: the one the
// configuration names (a BIG-IP server holding a self IP), else [M]
// the first gtm server (by name) one of whose addresses a listener
// serves on, as a standalone DNS server's own gtm server lists the
// address it answers on; nil when neither is.
func (p *plan) whoami() *host {
	if p.self != nil {
		return p.self
	}
	for _, h := range p.hostList {
		for _, a := range h.cfg.Addresses {
			for k := range p.listeners {
				if k.addr.Addr() == a {
					return h
				}
			}
		}
	}
	return nil
}

// wideTyped is the gtm pool of the wide IP's type a rule names (A
// outside a wide IP's rules), and the type's word for errors.
func (c *ruleConn) wideTyped(name string) (*pool, string) {
	t := TypeA
	if c.w != nil {
		t = c.w.typ
	}
	return c.p.pools[Key(t, fullPath(name))], typeWord(t)
}

func typeWord(t RRType) string {
	if t == "" {
		t = TypeA
	}
	return strings.ToLower(string(t))
}

// WideIPName implements rules.GTMConn.
func (c *ruleConn) WideIPName() (string, error) {
	if c.w == nil {
		return "", errNotWideIP
	}
	return c.w.full, nil
}

// WideIPPools implements rules.GTMConn.
func (c *ruleConn) WideIPPools() ([]string, error) {
	if c.w == nil {
		return nil, errNotWideIP
	}
	out := make([]string, len(c.w.pools))
	for i, wp := range c.w.pools {
		out[i] = wp.pool.full
	}
	return out, nil
}

// NodesUp implements rules.GTMConn: a pool of names counts its
// available names.
func (c *ruleConn) NodesUp(name string) (int, error) {
	pl, t := c.wideTyped(name)
	if pl == nil {
		return 0, fmt.Errorf("no such gtm pool %s %s", t, fullPath(name))
	}
	n := 0
	for _, m := range pl.members {
		if ok, _ := memberState(m); ok {
			n++
		}
	}
	for _, m := range pl.names {
		if ok, _ := nameState(m); ok {
			n++
		}
	}
	return n, nil
}

// VirtualUp implements rules.GTMConn: any gtm server's virtual server at
// that address answers (up when one of several is).
func (c *ruleConn) VirtualUp(ap netip.AddrPort) (bool, error) {
	found := false
	for _, h := range c.p.hostList {
		for _, v := range h.vss {
			if v.cfg.Destination != ap && (ap.Port() != 0 || v.addr != ap.Addr()) {
				continue
			}
			found = true
			if ok, _ := vsState(v); ok {
				return true, nil
			}
		}
	}
	if !found {
		return false, fmt.Errorf("no gtm virtual server is at %s", ap)
	}
	return false, nil
}

// PoolMembers implements rules.GTMConn: members lists a gtm pool's
// virtual servers, whatever their state, in member-order.
func (c *ruleConn) PoolMembers(name string) ([]netip.AddrPort, error) {
	pl, t := c.addrPool(name)
	if pl == nil {
		return nil, fmt.Errorf("no such gtm pool %s %s", t, fullPath(name))
	}
	out := make([]netip.AddrPort, len(pl.members))
	for i, m := range pl.members {
		out[i] = m.vs.cfg.Destination
	}
	return out, nil
}

// AnswerTTL implements rules.GTMConn: the TTL a rule set, else that of
// load balancing's answer (LB_SELECTED), else the wide IP's first pool's,
// which its rule-made answers take.
func (c *ruleConn) AnswerTTL() (uint32, error) {
	switch {
	case c.w == nil:
		return 0, errNotWideIP
	case c.ttlSet:
		return c.ttl, nil
	case c.hasLB && c.lb.out == outAnswer && c.lb.ttl > 0:
		return c.lb.ttl, nil
	}
	return c.w.ttl(), nil
}

// SetAnswerTTL implements rules.GTMConn: the wide IP's answer records
// (addresses, names, a rule's cname or host) go with ttl.
func (c *ruleConn) SetAnswerTTL(ttl uint32) error {
	if !c.wide {
		return errors.New("valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED")
	}
	c.ttl, c.ttlSet = ttl, true
	return nil
}

// QoSScore implements rules.GTMConn.
func (c *ruleConn) QoSScore() (float64, error) {
	if !c.hasLB || c.lb.out != outAnswer {
		return 0, errors.New("valid in a wide IP's LB_SELECTED, once load balancing chose a member")
	}
	if !c.lb.hasQoS {
		return 0, errors.New("load balancing did not choose by quality-of-service")
	}
	return c.lb.qos, nil
}

// QoSWeights implements rules.GTMConn, by the qos- settings' names.
func (c *ruleConn) QoSWeights(name string) ([]rules.QoSWeight, error) {
	pl, t := c.wideTyped(name)
	if pl == nil {
		return nil, fmt.Errorf("no such gtm pool %s %s", t, fullPath(name))
	}
	q := pl.qos
	return []rules.QoSWeight{{Name: "rtt", Weight: q.RTT}, {Name: "hit-ratio", Weight: q.HitRatio}, {Name: "hops", Weight: q.Hops},
		{Name: "packet-rate", Weight: q.PacketRate}, {Name: "kilobytes-second", Weight: q.Kbps}, {Name: "vs-capacity", Weight: q.VSCapacity},
		{Name: "vs-score", Weight: q.VSScore}, {Name: "topology", Weight: q.Topology}, {Name: "lcs", Weight: q.LinkCapacity}}, nil
}

// SetMemberPriority implements rules.GTMConn, before load balancing: in
// a wide IP's DNS_REQUEST.
func (c *ruleConn) SetMemberPriority(name string, ap netip.AddrPort, prio int) error {
	if !c.wide || c.event != rules.DNSRequest {
		return errors.New("valid in a wide IP's DNS_REQUEST, before load balancing")
	}
	pl, t := c.wideTyped(name)
	if pl == nil {
		return fmt.Errorf("no such gtm pool %s %s", t, fullPath(name))
	}
	if pl.typ.named() {
		return fmt.Errorf("gtm pool %s %s has names as members, not addresses", t, pl.full)
	}
	for _, m := range pl.members {
		if m.vs.cfg.Destination == ap || (ap.Port() == 0 && m.vs.addr == ap.Addr()) {
			for i := range c.prio {
				if c.prio[i].m == m {
					c.prio[i].prio = prio
					return nil
				}
			}
			c.prio = append(c.prio, memberPrio{m, prio})
			return nil
		}
	}
	return fmt.Errorf("%s is not a member of gtm pool %s %s", ap, t, pl.full)
}

// MatchRegion implements rules.GTMConn: the region's members match the
// address as a topology record's LDNS side does.
func (c *ruleConn) MatchRegion(a netip.Addr, region string) (bool, error) {
	name := fullPath(region)
	if c.p.regions[name] == nil {
		return false, fmt.Errorf("no such gtm region %s", name)
	}
	var g *geoAddr
	if c.p.cfg.Geo != nil {
		g = &geoAddr{store: c.p.cfg.Geo, addr: a}
	}
	return c.p.matchLDNS(Match{Kind: MatchRegion, Name: name}, a, g, 0), nil
}

// Self implements rules.GTMConn.
func (c *ruleConn) Self() (server, datacenter string) {
	if h := c.p.me; h != nil {
		if h.dc != nil {
			datacenter = h.dc.name
		}
		return h.name, datacenter
	}
	return "", ""
}

// answerTTL gives the wide IP's answer the TTL its rule set.
func (c *ruleConn) answerTTL(d *decision) {
	if c.ttlSet && d.out == outAnswer {
		d.ttl = c.ttl
	}
}
