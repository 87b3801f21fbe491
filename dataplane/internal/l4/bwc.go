package l4

import (
	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/rules"
)

// attachBWC puts the flow under policy p as instance (a dynamic policy's
// user), in place of the policy it had. The copy loops of both directions
// wait on its bucket before each write [M: BIG-IP shapes the traffic of
// a virtual's flows; openltm shapes what it sends to the client and to
// the member alike, on one bucket].
func (pr *proxied) attachBWC(p *bwc.Policy, instance string) {
	b := p.Attach(instance)
	b.Inherit(pr.bwc.Load()) // a rate class the flow is in stays (bwc/class.go)
	if old := pr.bwc.Swap(b); old != nil {
		old.Release()
	}
	pr.markBWC(b)
}

// markBWC marks the flow's sockets as its bucket says: the client's, and
// the member's once connected (a member connect made afterwards takes
// it before its SYN: serverSide). Pass-through leaves a socket as it is.
func (pr *proxied) markBWC(b *bwc.Bucket) {
	if b == nil {
		return
	}
	b.MarkConn(pr.client)
	if sc := pr.srv.Load(); sc != nil && sc.conn != nil {
		b.MarkConn(sc.conn)
	}
}

// serverSide is the flow's settings for a member connect, with its
// bandwidth controller's marking (flow.serverSide's, copied then).
func (pr *proxied) serverSide() *sockopt.Side {
	s := pr.flow.serverSide()
	b := pr.bwc.Load()
	if b == nil {
		return s
	}
	m, ok := bwc.MarkSide(b.Mark())
	if !ok {
		return s
	}
	var c sockopt.Side
	if s != nil {
		c = *s
	}
	if m.SetTOS {
		c.TOS, c.SetTOS = m.TOS, true
	}
	c.Priority, c.SetPriority = m.Priority, m.SetPriority
	return &c
}

var (
	_ rules.BWCConn      = (*proxied)(nil)
	_ rules.BWCClassConn = (*proxied)(nil)
)

// bwcPolicy finds a running policy by the name a rule gives.
func (pr *proxied) bwcPolicy(name string) (*bwc.Policy, string, error) {
	return pr.e.env.BWC.RulePolicy(name)
}

// BWCAttach implements rules.BWCConn.
func (pr *proxied) BWCAttach(name, instance string) error {
	p, full, err := pr.bwcPolicy(name)
	if err == nil {
		err = p.CheckSession(full, instance)
	}
	if err != nil {
		return err
	}
	pr.attachBWC(p, instance)
	return nil
}

// BWCDetach implements rules.BWCConn: the flow leaves the policy named;
// under another one (or none) it is not touched.
func (pr *proxied) BWCDetach(name string) error {
	p, _, err := pr.bwcPolicy(name)
	if err != nil {
		return err
	}
	if b := pr.bwc.Load(); b != nil && b.Policy() == p && pr.bwc.CompareAndSwap(b, b.Class()) { // its rate class, if any, stays
		b.Release()
	}
	return nil
}

// RateClass implements rules.RateClassConn: the flow's bytes wait on
// the class named too (in place of the rate class it was in), after
// its bwc policy's if it has one.
func (pr *proxied) RateClass(name string) error {
	p, err := pr.e.env.BWC.RuleClass(name)
	if err != nil {
		return err
	}
	old := pr.bwc.Load()
	if nb, swap := bwc.WithClass(old, p, ""); swap {
		pr.bwc.Store(nb)
		old.Release()
	}
	return nil
}

// BWCRate implements rules.BWCConn.
func (pr *proxied) BWCRate(bps uint64) error { return pr.bwc.Load().RuleRate(bps) }

// BWCPPS implements rules.BWCConn.
func (pr *proxied) BWCPPS(pps uint64) error { return pr.bwc.Load().RulePPS(pps) }

// attachedTo is the flow's bucket under the policy a rule names; an
// error when the flow is not attached to it.
func (pr *proxied) attachedTo(name string) (*bwc.Bucket, error) {
	p, full, err := pr.bwcPolicy(name)
	if err != nil {
		return nil, err
	}
	return bwc.Under(pr.bwc.Load(), p, full)
}

// BWCColor implements rules.BWCClassConn: the flow joins the category
// and takes its marking.
func (pr *proxied) BWCColor(policy, category string) error {
	b, err := pr.attachedTo(policy)
	if err == nil {
		err = b.RuleColor(category)
	}
	if err != nil {
		return err
	}
	pr.markBWC(b)
	return nil
}

// BWCPriority implements rules.BWCClassConn.
func (pr *proxied) BWCPriority(level int) error { return pr.bwc.Load().RulePriority(level) }

// BWCMark implements rules.BWCClassConn; -2 keeps what the flow has.
func (pr *proxied) BWCMark(policy string, tos, qos int) error {
	b, err := pr.attachedTo(policy)
	if err != nil {
		return err
	}
	if b.RuleMark(tos, qos) {
		pr.markBWC(b)
	}
	return nil
}

var (
	_ rules.BWCGroupConn   = (*proxied)(nil)
	_ rules.BWCMeasureConn = (*proxied)(nil)
)

// BWCPriorityName implements rules.BWCGroupConn.
func (pr *proxied) BWCPriorityName(name string) error {
	return pr.bwc.Load().RulePriorityName(name)
}

// BWCMeasure implements rules.BWCMeasureConn: a flow's measurement is
// named by its client in the policy's log.
func (pr *proxied) BWCMeasure(session bool, name string) (rules.BWCMeasurement, error) {
	m, err := pr.bwc.Load().RuleMeasure(session, name, pr.client.RemoteAddr().String())
	if err != nil {
		return nil, err
	}
	return m, nil
}

var _ rules.BWCDebugConn = (*proxied)(nil)

// BWCDebug implements rules.BWCDebugConn.
func (pr *proxied) BWCDebug() (string, error) { return pr.bwc.Load().RuleDebug() }
