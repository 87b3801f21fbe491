package gslb

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules"
)

// The GTM-only rule commands (rules.GTMConn): what a gtm rule reads of
// the query's resolution (wideip, pools, nodes_up, qos_score,
// qos_weight get, matchregion, whoami, whereami) and what it changes of
// it (ttl, member_priority, qos_weight set and reset).

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

// qosOverride is a weight a rule's qos_weight set gave a factor for this
// query: in pool, or in every pool when pool is nil.
type qosOverride struct {
	pool *pool
	f    rules.QoSFactor
	w    int
}

// weighed are the quality-of-service weights of pl under a query's
// overrides: the pool's qos-* settings, each factor a rule set replaced,
// in the order the rule set them.
func weighed(pl *pool, ovs []qosOverride) QoSWeights {
	w := pl.qos
	for _, o := range ovs {
		if o.pool == nil || o.pool == pl {
			*w.factor(o.f) = o.w
		}
	}
	return w
}

// factor is the qos-* coefficient that weighs a factor of qos_score and
// qos_weight (F5's names: bps is qos-kilobytes-second, link_capacity
// qos-lcs).
func (w *QoSWeights) factor(f rules.QoSFactor) *int {
	switch f {
	case rules.QoSBps:
		return &w.Kbps
	case rules.QoSHitRatio:
		return &w.HitRatio
	case rules.QoSHops:
		return &w.Hops
	case rules.QoSLinkCapacity:
		return &w.LinkCapacity
	case rules.QoSPacketRate:
		return &w.PacketRate
	case rules.QoSRTT:
		return &w.RTT
	case rules.QoSTopology:
		return &w.Topology
	case rules.QoSVSCapacity:
		return &w.VSCapacity
	}
	return &w.VSScore
}

// queryAt is what a quality-of-service computation needs of the query
// besides the plan, kept for qos_score while a wide IP's rules run (the
// request itself stays on the stack of the query that has none).
type queryAt struct {
	client, topoAddr netip.Addr
	ecs              *dns.EDNS0_SUBNET
	now              time.Time
}

// qosPool is the gtm pool qos_score and qos_weight act on: the one named
// (of the type the rule wrote, else the wide IP's), else [M] the pool
// load balancing picked (LB_SELECTED), else the wide IP's first.
func (c *ruleConn) qosPool(qp rules.QoSPool) (*pool, error) {
	if qp.Name == "" {
		switch {
		case c.hasLB && c.lb.out == outAnswer && c.lb.pool != nil:
			return c.lb.pool, nil
		case c.w == nil:
			return nil, errors.New("no pool named: valid without one in a wide IP's rules only (pool NAME)")
		case len(c.w.pools) == 0:
			return nil, fmt.Errorf("wide IP %s has no pool: name one (pool NAME)", c.w.full)
		}
		return c.w.pools[0].pool, nil
	}
	t := RRType(qp.Type)
	if t == "" && c.w != nil {
		t = c.w.typ
	}
	if t == "" {
		t = TypeA
	}
	pl := c.p.pools[Key(t, fullPath(qp.Name))]
	if pl == nil {
		return nil, fmt.Errorf("no such gtm pool %s %s", typeWord(t), fullPath(qp.Name))
	}
	return pl, nil
}

// QoSScore implements rules.GTMConn: the score pickQoS gives the member
// among the pool's available members (an unavailable one named is
// scored against them [M]), with this query's weights and those given.
// A factor not gathered for the member adds nothing, as F5 leaves out
// ungathered factors; with none gathered at all the score is 0.
func (c *ruleConn) QoSScore(qp rules.QoSPool, ap netip.AddrPort, with []rules.QoSWeight) (float64, error) {
	if !c.wide {
		return 0, errors.New("valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED")
	}
	var pl *pool
	var m *member
	if qp.Name == "" {
		if !c.hasLB || c.lb.out != outAnswer || c.lb.member == nil {
			return 0, errors.New("no pool member has been picked by load balancing: name one (pool NAME member ADDR PORT)")
		}
		pl, m = c.lb.pool, c.lb.member
	} else {
		var err error
		if pl, err = c.qosPool(qp); err != nil {
			return 0, err
		}
		if pl.typ.named() {
			return 0, fmt.Errorf("gtm pool %s %s has names as members, which quality of service does not score", typeWord(pl.typ), pl.full)
		}
		for _, x := range pl.members {
			if x.vs.cfg.Destination == ap {
				m = x
				break
			}
		}
		if m == nil {
			return 0, fmt.Errorf("%s is not a member of gtm pool %s %s", ap, typeWord(pl.typ), pl.full)
		}
	}
	w := weighed(pl, c.qosw)
	for _, x := range with {
		*w.factor(x.Factor) = int(x.Weight)
	}
	rq := request{plan: c.p, ldns: c.src, client: c.at.client, topoAddr: c.at.topoAddr, ecs: c.at.ecs, now: c.at.now}
	cands := rq.available(pl)
	i := slices.Index(cands, m)
	if i < 0 {
		i, cands = len(cands), append(cands, m)
	}
	var buf [16]float64
	scores, known := c.s.qosScores(&rq, &w, cands, buf[:0])
	if !known {
		return 0, nil
	}
	return scores[i], nil
}

// QoSWeight implements rules.GTMConn.
func (c *ruleConn) QoSWeight(qp rules.QoSPool, f rules.QoSFactor) (int64, error) {
	pl, err := c.qosPool(qp)
	if err != nil {
		return 0, err
	}
	w := weighed(pl, c.qosw)
	return int64(*w.factor(f)), nil
}

var errQoSSet = errors.New("weights are set in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED")

// SetQoSWeights implements rules.GTMConn: the weights hold for the rest
// of the query (load balancing after DNS_REQUEST, an LB event's pool or
// LB::reselect, qos_score), in the pool named or else in every pool.
func (c *ruleConn) SetQoSWeights(qp rules.QoSPool, ws []rules.QoSWeight) error {
	if !c.wide {
		return errQoSSet
	}
	var pl *pool
	if qp.Name != "" {
		var err error
		if pl, err = c.qosPool(qp); err != nil {
			return err
		}
	}
	for _, x := range ws {
		c.dropQoS(pl, x.Factor)
		c.qosw = append(c.qosw, qosOverride{pl, x.Factor, int(x.Weight)})
	}
	return nil
}

// ResetQoSWeight implements rules.GTMConn: without a pool, every pool's
// factor is its own again; with one, that pool's (over a weight set for
// every pool).
func (c *ruleConn) ResetQoSWeight(qp rules.QoSPool, f rules.QoSFactor) (int64, error) {
	if !c.wide {
		return 0, errQoSSet
	}
	pl, err := c.qosPool(qp)
	if err != nil {
		return 0, err
	}
	if qp.Name == "" {
		c.dropQoS(nil, f)
	} else {
		c.dropQoS(pl, f)
		if slices.ContainsFunc(c.qosw, func(o qosOverride) bool { return o.pool == nil && o.f == f }) {
			c.qosw = append(c.qosw, qosOverride{pl, f, *pl.qos.factor(f)})
		}
	}
	w := weighed(pl, c.qosw)
	return int64(*w.factor(f)), nil
}

// dropQoS forgets the weights set for f in pl (nil: in every pool), so
// that the list stays one entry a pool and factor at most.
func (c *ruleConn) dropQoS(pl *pool, f rules.QoSFactor) {
	c.qosw = slices.DeleteFunc(c.qosw, func(o qosOverride) bool { return o.f == f && (pl == nil || o.pool == pl) })
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

// MemberInfo is LB::server priority, ratio and weight of a gtm pool's
// member, the one load balancing picked (LB_SELECTED): priority is the
// one this query's member_priority gave it (0 when none did) [M: gtm
// pool members have no priority setting of their own], ratio and
// weight its ratio in the pool.
func (c *ruleConn) MemberInfo(name string, ap netip.AddrPort) (rules.MemberInfo, error) {
	pl, t := c.addrPool(name)
	if pl == nil {
		return rules.MemberInfo{}, fmt.Errorf("no such gtm pool %s %s", t, fullPath(name))
	}
	for _, m := range pl.members {
		if m.vs.cfg.Destination != ap && (ap.Port() != 0 || m.vs.addr != ap.Addr()) {
			continue
		}
		mi := rules.MemberInfo{Ratio: m.ratio, Weight: m.ratio}
		for _, p := range c.prio {
			if p.m == m {
				mi.Priority = p.prio
			}
		}
		return mi, nil
	}
	return rules.MemberInfo{}, fmt.Errorf("%s is not a member of gtm pool %s %s", ap, t, pl.full)
}

// WideIPPersist implements rules.GTMPersistConn: whether this query
// uses the wide IP's LDNS persistence (its persistence setting, unless
// a persist enable or disable changed it).
func (c *ruleConn) WideIPPersist() (bool, error) {
	if !c.wide || c.w == nil {
		return false, errNotWideIP
	}
	if c.persist != 0 {
		return c.persist > 0, nil
	}
	return c.w.cfg.Persistence, nil
}

// SetWideIPPersist implements rules.GTMPersistConn: persist enable or
// disable, for the load balancing that follows (after DNS_REQUEST, or a
// pool or LB::reselect of an LB event): looking up and recording the
// LDNS's persistence record with the wide IP's ttl-persistence and
// persist-cidr [M: F5 does not say what enable does on a wide IP with
// persistence disabled; here it persists as if it were enabled].
func (c *ruleConn) SetWideIPPersist(on bool) (bool, error) {
	prev, err := c.WideIPPersist()
	if err != nil {
		return false, err
	}
	switch c.event {
	case rules.DNSRequest, rules.LBSelected, rules.LBFailed:
	default:
		return false, errors.New("valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED")
	}
	c.persist = -1
	if on {
		c.persist = 1
	}
	return prev, nil
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
