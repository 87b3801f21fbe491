package daemon

import (
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// Rate shaping (dataplane/bwc/class.go) and the virtual's rate-class.
var (
	netRateClass      = schema.MustKind("net rate-shaping class")
	rcRate            = netRateClass.MustProp("rate")
	rcRatePct         = netRateClass.MustProp("rate-percentage")
	rcCeiling         = netRateClass.MustProp("ceiling")
	rcCeilingPct      = netRateClass.MustProp("ceiling-percentage")
	rcMaxBurst        = netRateClass.MustProp("max-burst")
	rcDirection       = netRateClass.MustProp("direction")
	rcParent          = netRateClass.MustProp("parent")
	rcShapingPolicy   = netRateClass.MustProp("shaping-policy")
	rcQueue           = netRateClass.MustProp("queue")
	rcDropPolicy      = netRateClass.MustProp("drop-policy")
	spQueue           = netShapingPolicy.MustProp("queue")
	spDropPolicy      = netShapingPolicy.MustProp("drop-policy")
	netRateQueue      = schema.MustKind("net rate-shaping queue")
	netDropPolicy     = schema.MustKind("net rate-shaping drop-policy")
	netShapingPolicy  = schema.MustKind("net rate-shaping shaping-policy")
	spRatePct         = netShapingPolicy.MustProp("rate-percentage")
	spCeilingPct      = netShapingPolicy.MustProp("ceiling-percentage")
	spMaxBurst        = netShapingPolicy.MustProp("max-burst")
	virtualRateClass  = ltmVirtual.MustProp("rate-class")
	rateClassMinRate  = uint64(296) // F5's least ceiling, bits per second (REST reference)
	rateClassMaxDepth = 16          // ancestors a class may have [M: F5 documents no limit]
)

// rateClasses translates every `net rate-shaping class`; one BIG-IP would
// refuse refuses the commit [M: the messages are openltm's]: a rate
// that is none of rate and rate-percentage (or both), a percentage
// without a parent, a ceiling below the rate, a parent cycle. Parents
// come first, as a child's percentages are of its parent's rates.
func (t *translator) rateClasses() {
	t.dropPolicies()
	objs := t.cfg.Of(netRateClass)
	if len(objs) == 0 {
		return
	}
	byName := map[string]*objects.Object{}
	for _, o := range objs {
		byName[o.Name] = o
	}
	done := map[string]*dataplane.RateClass{}
	bad := map[string]bool{}
	var visit func(o *objects.Object, path []string) *dataplane.RateClass
	visit = func(o *objects.Object, path []string) *dataplane.RateClass {
		if rc := done[o.Name]; rc != nil || bad[o.Name] {
			return rc
		}
		for i, n := range path {
			if n == o.Name {
				cycle := append(append([]string(nil), path[i:]...), o.Name)
				t.refuse("Rate class %s: parent cycle (%s): a class cannot be its own ancestor", o.Name, joinArrows(cycle))
				for _, n := range cycle {
					bad[n] = true
				}
				return nil
			}
		}
		if len(path) > rateClassMaxDepth {
			bad[o.Name] = true
			t.refuse("Rate class %s: more than %d ancestors", o.Name, rateClassMaxDepth)
			return nil
		}
		var parent *dataplane.RateClass
		if pn := rcParent.Effective(t.cfg, o); pn != "" && pn != "none" {
			po := t.cfg.Lookup(t.s, []string{netRateClass.Key()}, pn)
			if po == nil {
				bad[o.Name] = true
				return nil // a dangling reference the schema reports
			}
			if parent = visit(byName[po.Name], append(path, o.Name)); parent == nil {
				bad[o.Name] = true
				return nil
			}
		}
		rc := t.rateClass(o, parent)
		if rc == nil {
			bad[o.Name] = true
			return nil
		}
		done[o.Name] = rc
		return rc
	}
	for _, o := range objs {
		visit(o, nil)
	}
	if len(done) > 0 {
		t.dc.RateClasses = done
	}
}

// joinArrows writes a parent chain a -> b -> a.
func joinArrows(ns []string) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += " -> "
		}
		s += n
	}
	return s
}

// rateClass reads one class under parent (nil: a root class); nil when
// refused.
func (t *translator) rateClass(o *objects.Object, parent *dataplane.RateClass) *dataplane.RateClass {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
	rc := &dataplane.RateClass{Name: o.Name}
	if parent != nil {
		rc.Parent = parent.Name
	}
	ratePct, ceilPct, burst := atou(e(rcRatePct)), atou(e(rcCeilingPct)), atou(e(rcMaxBurst))
	queue, drop := e(rcQueue), e(rcDropPolicy)
	if sp := e(rcShapingPolicy); sp != "" && sp != "none" {
		if so := t.cfg.Lookup(t.s, []string{netShapingPolicy.Key()}, sp); so != nil {
			// F5: a class's shaping-policy sets its percentages,
			// max-burst, queue and drop-policy (those it gives: none
			// leaves the class's).
			es := func(p *objects.Prop) string { return p.Effective(t.cfg, so) }
			ratePct, ceilPct, burst = atou(es(spRatePct)), atou(es(spCeilingPct)), atou(es(spMaxBurst))
			if q := es(spQueue); q != "" && q != "none" {
				queue = q
			}
			if d := es(spDropPolicy); d != "" && d != "none" {
				drop = d
			}
		}
	}
	t.rateQueueDrop(rc, queue, drop)
	r, ok := parseBWCRate(e(rcRate))
	if !ok {
		t.refuse("Rate class %s: rate %q is not a rate (a number of bps, kbps, mbps or gbps)", o.Name, e(rcRate))
		return nil
	}
	switch {
	case r > 0 && ratePct > 0:
		t.refuse("Rate class %s: give rate or rate-percentage, not both", o.Name)
		return nil
	case ratePct > 0 && parent == nil:
		t.refuse("Rate class %s: rate-percentage %d needs a parent class (it is a share of the parent's rate)", o.Name, ratePct)
		return nil
	case ratePct > 0:
		r = parent.Rate * ratePct / 100
	case r == 0:
		t.refuse("Rate class %s: rate must be specified (at least %d bps), or rate-percentage with a parent", o.Name, rateClassMinRate)
		return nil
	}
	if r < rateClassMinRate {
		t.refuse("Rate class %s: rate %d bps is below the least, %d bps", o.Name, r, rateClassMinRate)
		return nil
	}
	c, ok := parseBWCRate(e(rcCeiling))
	if !ok {
		t.refuse("Rate class %s: ceiling %q is not a rate (a number of bps, kbps, mbps or gbps)", o.Name, e(rcCeiling))
		return nil
	}
	switch {
	case c > 0 && ceilPct > 0:
		t.refuse("Rate class %s: give ceiling or ceiling-percentage, not both", o.Name)
		return nil
	case ceilPct > 0 && parent == nil:
		t.refuse("Rate class %s: ceiling-percentage %d needs a parent class (it is a share of the parent's ceiling)", o.Name, ceilPct)
		return nil
	case ceilPct > 0:
		c = parent.Ceiling * ceilPct / 100
	case c == 0:
		c = r // F5: the ceiling defaults to the rate
	}
	if c < r {
		t.refuse("Rate class %s: ceiling (%d bps) must not be less than rate (%d bps)", o.Name, c, r)
		return nil
	}
	rc.Rate, rc.Ceiling, rc.MaxBurst = r, c, burst
	switch e(rcDirection) {
	case "to-client":
		rc.Direction = dataplane.RateToClient
	case "to-server":
		rc.Direction = dataplane.RateToServer
	}
	return rc
}

// rateQueueDrop gives rc the queue discipline and drop policy named
// (dataplane/bwc/qdisc.go).
func (t *translator) rateQueueDrop(rc *dataplane.RateClass, queue, drop string) {
	if qo := t.cfg.Lookup(t.s, []string{netRateQueue.Key()}, queue); qo != nil {
		eq := func(n string) string { return netRateQueue.MustProp(n).Effective(t.cfg, qo) }
		if eq("type") == "pfifo" {
			rc.Queue = dataplane.RateQueue{FIFO: true, Limit: int(atou(eq("pfifo-min-packets")))}
		} else {
			rc.Queue = dataplane.RateQueue{Depth: int(atou(eq("sfq-bucket-depth")))}
		}
	}
	do := t.cfg.Lookup(t.s, []string{netDropPolicy.Key()}, drop)
	if do == nil {
		return // tail; a dangling name the schema reports
	}
	ed := func(n string) int { return int(atou(netDropPolicy.MustProp(n).Effective(t.cfg, do))) }
	d := dataplane.RateDrop{
		MinThreshold: ed("min-threshold"), MaxThreshold: ed("max-threshold"), MaxProbability: ed("max-probability"),
		InverseWeight: ed("inverse-weight"), AvgPacket: ed("average-packet-size"), HardLimit: ed("red-hard-limit"),
		MaxActive: ed("fred-max-active"), MinDrop: ed("fred-min-drop"), MaxDrop: ed("fred-max-drop"),
	}
	switch netDropPolicy.MustProp("type").Effective(t.cfg, do) {
	case "red":
		d.Type = dataplane.DropRED
	case "fred":
		d.Type = dataplane.DropFRED
	}
	rc.Drop = d
}

// dropPolicies refuses a drop policy whose min-threshold is above its
// max-threshold (0: the default), which a statement giving both is
// refused for at its line:column (objects), and one giving either alone
// here.
func (t *translator) dropPolicies() {
	for _, do := range t.cfg.Of(netDropPolicy) {
		ed := func(n string) uint64 { return atou(netDropPolicy.MustProp(n).Effective(t.cfg, do)) }
		if lo, hi := ed("min-threshold"), ed("max-threshold"); hi != 0 && lo > hi {
			t.refuse("Drop policy %s: min-threshold %d is more than max-threshold %d", do.Name, lo, hi)
		}
	}
}

// atou reads a schema-checked integer; 0 for none.
func atou(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// virtualRateClass puts v's flows in its rate-class: the L4 proxy's TCP
// flows, a message-based (http) virtual's clients and a UDP virtual's
// flows (their datagrams wait in the flow's queues, dropped past them).
// An http virtual that is an SSL forward proxy keeps the setting with a
// warning.
func (t *translator) virtualRateClass(o *objects.Object, v *dataplane.Virtual) {
	name := virtualRateClass.Str(o)
	if name == "" || name == "none" {
		return
	}
	co := t.cfg.Lookup(t.s, []string{netRateClass.Key()}, name)
	if co == nil || t.dc.RateClasses[co.Name] == nil {
		return // refused above, or a dangling reference the schema reports
	}
	if v.MBLB != nil && v.MBLB.ExplicitProxy == nil && v.TLS != nil && v.TLS.Forward != nil {
		t.note(o, "rate-class %s is kept but not applied: openltm does not shape an http virtual that is an SSL forward proxy", co.Name)
		return
	}
	v.RateClass = co.Name
}
