package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The connection rate limits of virtual servers, pool members and nodes.
var (
	virtualRateLimit   = ltmVirtual.MustProp("rate-limit")
	virtualRateMode    = ltmVirtual.MustProp("rate-limit-mode")
	virtualRateSrcMask = ltmVirtual.MustProp("rate-limit-src-mask")
	virtualRateDstMask = ltmVirtual.MustProp("rate-limit-dst-mask")
	memberRateLimit    = poolMembers.Sub.MustProp("rate-limit")
	nodeRateLimit      = ltmNode.MustProp("rate-limit")
)

// rateLimit reads a rate-limit value: disabled (or 0) is none.
func rateLimit(s string) int { return max(atoi(s), 0) }

// virtualRate sets v's rate-limit and how it is counted from o.
func (t *translator) virtualRate(o *objects.Object, v *dataplane.Virtual) {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	v.RateLimit = rateLimit(e(virtualRateLimit))
	if v.RateLimit == 0 {
		return
	}
	m, ok := dataplane.ParseRateLimitMode(e(virtualRateMode))
	if !ok { // the schema's enum refused it already
		m, _ = dataplane.ParseRateLimitMode("object")
	}
	m.SrcMask, m.DstMask = max(atoi(e(virtualRateSrcMask)), 0), max(atoi(e(virtualRateDstMask)), 0)
	v.RateLimitMode = m
}
