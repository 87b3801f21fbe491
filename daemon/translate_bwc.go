package daemon

import (
	"strconv"
	"strings"

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
	virtualBWCPolicy = ltmVirtual.MustProp("bwc-policy")
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
		if t.dc.BWC == nil {
			t.dc.BWC = map[string]*dataplane.BWCPolicy{}
		}
		t.dc.BWC[o.Name] = pc
	}
}

// virtualBWC puts v's flows under its bwc-policy: the L4 proxy's TCP
// flows (with or without TLS and rules), a UDP virtual's datagrams (each
// flow's queued for the bucket, dropped beyond its queue) and a
// message-based (http) virtual's clients (requests and responses paced).
func (t *translator) virtualBWC(o *objects.Object, v *dataplane.Virtual) {
	name := virtualBWCPolicy.Str(o)
	if name == "" || name == "none" {
		return
	}
	po := t.cfg.Lookup(t.s, []string{"net bwc policy"}, name)
	if po == nil || t.dc.BWC[po.Name] == nil {
		return // refused above, or a dangling reference the schema reports
	}
	v.BWC = po.Name
}
