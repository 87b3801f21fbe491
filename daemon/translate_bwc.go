package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The bandwidth controllers (dataplane/bwc) and the virtual's bwc-policy.
var (
	netBWCPolicy     = schema.MustKind("net bwc policy")
	bwcMaxRate       = netBWCPolicy.MustProp("max-rate")
	bwcMaxUserRate   = netBWCPolicy.MustProp("max-user-rate")
	bwcMaxUserPPS    = netBWCPolicy.MustProp("max-user-rate-pps")
	bwcDynamic       = netBWCPolicy.MustProp("dynamic")
	bwcIPTos         = netBWCPolicy.MustProp("ip-tos")
	bwcLinkQos       = netBWCPolicy.MustProp("link-qos")
	bwcCategories    = netBWCPolicy.MustProp("categories")
	bwcMeasure       = netBWCPolicy.MustProp("measure")
	bwcLogPublisher  = netBWCPolicy.MustProp("log-publisher")
	bwcLogPeriod     = netBWCPolicy.MustProp("log-period")
	bwcPriorityMap   = netBWCPolicy.MustProp("traffic-priority-map")
	virtualBWCPolicy = ltmVirtual.MustProp("bwc-policy")

	netBWCPriorityGroup = schema.MustKind("net bwc priority-group")
	bwcPriorityLevels   = netBWCPriorityGroup.MustProp("priority-levels")
)

// parseBWCRate reads a rate such as 10mbps (rules.ParseBitRate: the
// BWC:: commands read rates alike).
var parseBWCRate = rules.ParseBitRate

// parsePPS reads a packet rate: a number, or one with pps, kpps or mpps.
func parsePPS(s string) (uint64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"mpps", 1e6}, {"kpps", 1e3}, {"pps", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > ^uint64(0)/mult {
		return 0, false
	}
	return n * mult, true
}

// bwcPolicies translates every `net bwc policy`; one BIG-IP would refuse
// refuses the commit [M: the messages are openltm's]. A policy needs a
// max-rate; max-user-rate and max-user-rate-pps are a dynamic policy's and
// max-user-rate is at most max-rate.
func (t *translator) bwcPolicies() {
	groups := t.bwcPriorityGroups()
	for _, o := range t.cfg.Of(netBWCPolicy) {
		e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
		pc := &dataplane.BWCPolicy{Name: o.Name, Dynamic: e(bwcDynamic) == "enabled"}
		var ok bool
		if pc.MaxRate, ok = parseBWCRate(e(bwcMaxRate)); !ok {
			t.refuse("BWC policy %s: max-rate %q is not a rate (a number of bps, kbps, mbps or gbps)", o.Name, e(bwcMaxRate))
			continue
		}
		if pc.MaxRate == 0 {
			t.refuse("BWC policy %s: max-rate must be specified (greater than 0)", o.Name)
			continue
		}
		if pc.MaxUserRate, ok = parseBWCRate(e(bwcMaxUserRate)); !ok {
			t.refuse("BWC policy %s: max-user-rate %q is not a rate (a number of bps, kbps, mbps or gbps)", o.Name, e(bwcMaxUserRate))
			continue
		}
		if pc.MaxUserPPS, ok = parsePPS(e(bwcMaxUserPPS)); !ok {
			t.refuse("BWC policy %s: max-user-rate-pps %q is not a packet rate (a number, or with pps, kpps or mpps)", o.Name, e(bwcMaxUserPPS))
			continue
		}
		if !pc.Dynamic && pc.MaxUserRate > 0 {
			t.refuse("BWC policy %s: max-user-rate applies to a dynamic policy only (dynamic enabled)", o.Name)
			continue
		}
		if !pc.Dynamic && pc.MaxUserPPS > 0 {
			t.refuse("BWC policy %s: max-user-rate-pps applies to a dynamic policy only (dynamic enabled)", o.Name)
			continue
		}
		if pc.MaxUserRate > pc.MaxRate {
			t.refuse("BWC policy %s: max-user-rate (%s) must not be greater than max-rate (%s)", o.Name, e(bwcMaxUserRate), e(bwcMaxRate))
			continue
		}
		var err error
		if pc.Mark, err = bwcMark(e(bwcIPTos), e(bwcLinkQos)); err != nil {
			t.refuse("BWC policy %s: %v", o.Name, err)
			continue
		}
		if !t.bwcMeasurement(o, pc) {
			continue
		}
		if name := e(bwcPriorityMap); name != "" && name != "none" {
			g := t.cfg.Lookup(t.s, []string{netBWCPriorityGroup.Key()}, name)
			if g == nil || groups[g.Name] == nil {
				continue // refused above, or a dangling reference the schema reports
			}
			pc.Priority = groups[g.Name]
		}
		if !t.bwcCategories(o, pc) {
			continue
		}
		if t.dc.BWC == nil {
			t.dc.BWC = map[string]*dataplane.BWCPolicy{}
		}
		t.dc.BWC[o.Name] = pc
	}
}

// virtualBWC puts v's flows under its bwc-policy: the L4 proxy's TCP
// flows (with or without TLS and rules), a UDP virtual's datagrams (each
// flow's queued for the bucket, dropped beyond its queue) and a
// message-based (http) virtual's clients (requests and responses paced,
// HTTP/2 clients and an explicit proxy's with its CONNECT tunnels too).
// An http virtual that is an SSL forward proxy without the explicit
// proxy keeps the setting with a warning: its clients' TLS is forged
// on the raw connection, which openltm does not pace.
func (t *translator) virtualBWC(o *objects.Object, v *dataplane.Virtual) {
	name := virtualBWCPolicy.Str(o)
	if name == "" || name == "none" {
		return
	}
	po := t.cfg.Lookup(t.s, []string{"net bwc policy"}, name)
	if po == nil || t.dc.BWC[po.Name] == nil {
		return // refused above, or a dangling reference the schema reports
	}
	if v.MBLB != nil && v.MBLB.ExplicitProxy == nil && v.TLS != nil && v.TLS.Forward != nil {
		t.note(o, "bwc-policy %s is kept but not applied: openltm does not shape an http virtual that is an SSL forward proxy (its clients' forged TLS runs on the raw connection); put the policy on an explicit proxy or a TCP virtual", po.Name)
		return
	}
	v.BWC = po.Name
}

// maxCategories is how many categories a policy may have (F5's limit).
const maxCategories = 32

// bwcCategories reads a dynamic policy's categories into pc; false
// (refused) for one BIG-IP refuses: categories of a static policy, more
// than 32, a rate or percentage beyond the policy's max-rate, or neither.
func (t *translator) bwcCategories(o *objects.Object, pc *dataplane.BWCPolicy) bool {
	c := t.cfg.Effective(o, bwcCategories.Name)
	if c == nil || len(c.Items) == 0 {
		return true
	}
	if !pc.Dynamic {
		return t.refuse("BWC policy %s: categories apply to a dynamic policy only (dynamic enabled)", o.Name)
	}
	if len(c.Items) > maxCategories {
		return t.refuse("BWC policy %s: at most %d categories", o.Name, maxCategories)
	}
	sub := bwcCategories.Sub
	for _, it := range c.Items {
		in := func(name string) string { return sub.MustProp(name).StrIn(it) }
		cat := dataplane.BWCCategory{Name: it.Name}
		r, ok := parseBWCRate(in("max-cat-rate"))
		pct, err := strconv.ParseUint(in("max-cat-rate-percentage"), 10, 64)
		switch {
		case !ok:
			return t.refuse("BWC policy %s: category %s: max-cat-rate %q is not a rate (a number of bps, kbps, mbps or gbps)", o.Name, it.Name, in("max-cat-rate"))
		case err != nil || pct > 100:
			return t.refuse("BWC policy %s: category %s: max-cat-rate-percentage must be 1 to 100", o.Name, it.Name)
		case r > 0 && pct > 0:
			return t.refuse("BWC policy %s: category %s: give max-cat-rate or max-cat-rate-percentage, not both", o.Name, it.Name)
		case r == 0 && pct == 0:
			return t.refuse("BWC policy %s: category %s: max-cat-rate or max-cat-rate-percentage must be specified", o.Name, it.Name)
		case r > pc.MaxRate:
			return t.refuse("BWC policy %s: category %s: max-cat-rate (%s) must not be greater than max-rate", o.Name, it.Name, in("max-cat-rate"))
		case r > 0:
			cat.MaxRate = r
		default:
			cat.MaxRate = pc.MaxRate * pct / 100
		}
		if cat.Mark, err = bwcMark(in("ip-tos"), in("link-qos")); err != nil {
			return t.refuse("BWC policy %s: category %s: %v", o.Name, it.Name, err)
		}
		if lv := in("traffic-priority-map"); lv != "" && lv != "none" {
			if pc.Priority == nil {
				return t.refuse("BWC policy %s: category %s: traffic-priority-map %s needs the policy's traffic-priority-map (a net bwc priority-group)", o.Name, it.Name, lv)
			}
			n, ok := pc.Priority.Levels[lv]
			if !ok {
				return t.refuse("BWC policy %s: category %s: priority group %s has no level %s", o.Name, it.Name, pc.Priority.Name, lv)
			}
			cat.Leveled, cat.Level = true, n
		}
		pc.Categories = append(pc.Categories, cat)
	}
	return true
}

// bwcMark reads ip-tos (0 to 255) and link-qos (0 to 7), each a number
// or pass-through (-1).
func bwcMark(tos, qos string) (dataplane.BWCMark, error) {
	m := dataplane.BWCMark{TOS: -1, QoS: -1}
	var err error
	if m.TOS, err = markValue(tos, 255); err != nil {
		return m, fmt.Errorf("ip-tos %q must be 0 to 255 or pass-through", tos)
	}
	if m.QoS, err = markValue(qos, 7); err != nil {
		return m, fmt.Errorf("link-qos %q must be 0 to 7 or pass-through", qos)
	}
	return m, nil
}

// markValue is a marking value up to max, -1 for pass-through.
func markValue(s string, max int) (int, error) {
	if s == "" || s == "pass-through" || s == "passthrough" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("out of range")
	}
	return n, nil
}

// bwcMeasurement reads a policy's measure, log-publisher and log-period
// (milliseconds; 0 is F5's default of 2048).
func (t *translator) bwcMeasurement(o *objects.Object, pc *dataplane.BWCPolicy) bool {
	pc.Measure = bwcMeasure.Effective(t.cfg, o) == "enabled"
	if name := bwcLogPublisher.Effective(t.cfg, o); name != "" && name != "none" {
		if p := t.cfg.Lookup(t.s, []string{"sys log-config publisher"}, name); p != nil {
			pc.LogPublisher = p.Name
		}
	}
	ms, err := strconv.ParseUint(bwcLogPeriod.Effective(t.cfg, o), 10, 31)
	if err != nil {
		return t.refuse("BWC policy %s: log-period %q is not a number of milliseconds", o.Name, bwcLogPeriod.Effective(t.cfg, o))
	}
	pc.LogPeriod = time.Duration(ms) * time.Millisecond
	return true
}

// bwcPriorityGroups reads every `net bwc priority-group`: its levels by
// name, each a level number (0 to 7) no other level of the group has and
// a weight. A group one BIG-IP would refuse is refused [M: the messages
// are openltm's], as is one without levels, which would share nothing.
func (t *translator) bwcPriorityGroups() map[string]*dataplane.BWCPriorityGroup {
	out := map[string]*dataplane.BWCPriorityGroup{}
	sub := bwcPriorityLevels.Sub
	for _, o := range t.cfg.Of(netBWCPriorityGroup) {
		c := t.cfg.Effective(o, bwcPriorityLevels.Name)
		if c == nil || len(c.Items) == 0 {
			t.refuse("BWC priority group %s: priority-levels must have at least one level", o.Name)
			continue
		}
		g := &dataplane.BWCPriorityGroup{Name: o.Name, Levels: map[string]int{}}
		ok := true
		for _, it := range c.Items {
			lv, err1 := strconv.Atoi(sub.MustProp("level").StrIn(it))
			w, err2 := strconv.Atoi(sub.MustProp("weight").StrIn(it))
			switch {
			case err1 != nil || lv < 0 || lv > 7:
				ok = t.refuse("BWC priority group %s: level %s: level must be 0 to 7", o.Name, it.Name)
			case err2 != nil || w < 1 || w > 100:
				ok = t.refuse("BWC priority group %s: level %s: weight must be 1 to 100", o.Name, it.Name)
			case g.Weights[lv] != 0:
				ok = t.refuse("BWC priority group %s: level %s: another level of the group is level %d", o.Name, it.Name, lv)
			}
			if !ok {
				break
			}
			g.Weights[lv] = w
			g.Levels[it.Name] = lv
		}
		if ok {
			out[o.Name] = g
		}
	}
	return out
}
