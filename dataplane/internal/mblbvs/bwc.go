package mblbvs

import (
	"errors"
	"net"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// paced puts the client's connection under the virtual's bandwidth
// controller, or the one a rule attached: what the client sends waits on
// the policy's bucket once read, what it is sent before it is written,
// so that requests' and responses' bodies pass at the policy's rate
// (headers count too, as BIG-IP counts every byte of a flow). A dynamic
// policy's instance is the client's address and port; cls, the
// virtual's rate-class when it has a bwc-policy too, is chained after
// the policy's bucket (a rate-class alone comes as p). p is nil for a
// virtual without one whose rules attach flows (BWC::policy), whose
// clients wait on nothing until a rule attaches them. The client's
// socket takes the policy's ip-tos and link-qos [M: the members'
// connections are shared among clients, so they are not marked]. Such
// clients run on goroutines, not the event loops, since a wait blocks
// (l4/loop_linux.go).
func (f *mblbFlow) paced(c net.Conn, p, cls *bwc.Policy) net.Conn {
	f.bwcMu.Lock()
	if f.bwc == nil && p != nil {
		f.bwc = p.AttachClass(f.Client.String(), cls) // cls: a rate-class besides the bwc-policy (bwc/class.go)
	}
	f.pace = bwc.PacedConn(c, f.bwc)
	b := f.bwc
	f.bwcMu.Unlock()
	b.MarkConn(c)
	return f.pace
}

// needsPace reports whether the flow's client connection goes through
// paced: the virtual has a bandwidth controller, or rules that attach
// one.
func needsPace(f *mblbFlow, p *bwc.Policy) bool {
	return p != nil || (f.rr != nil && irules.Program(f.rr.snap.Cfg.Rules).AttachesBWC())
}

// setBWC puts the flow on b (nil: none), in place of what it was on.
func (f *mblbFlow) setBWC(b *bwc.Bucket) {
	f.bwcMu.Lock()
	old := f.bwc
	f.bwc = b
	if f.pace != nil {
		f.pace.Swap(b)
	}
	f.bwcMu.Unlock()
	old.Release()
	f.markBWC(b)
}

// markBWC marks the client's socket as b says.
func (f *mblbFlow) markBWC(b *bwc.Bucket) {
	if b == nil {
		return
	}
	if s, ok := bwc.MarkSide(b.Mark()); ok && f.sess != nil {
		f.sess.Socket(func(fd int) error { s.Apply(fd); return nil })
	}
}

// bucket is the flow's bucket now; nil for none.
func (f *mblbFlow) bucket() *bwc.Bucket {
	f.bwcMu.Lock()
	defer f.bwcMu.Unlock()
	return f.bwc
}

var (
	_ rules.BWCConn      = (*mblbRules)(nil)
	_ rules.BWCClassConn = (*mblbRules)(nil)
)

// bwcPolicy finds a running policy by the name a rule gives.
func (r *mblbRules) bwcPolicy(name string) (*bwc.Policy, string, error) {
	return r.f.mv.env.BWC.RulePolicy(name)
}

// BWCAttach implements rules.BWCConn.
func (r *mblbRules) BWCAttach(name, instance string) error {
	p, full, err := r.bwcPolicy(name)
	if err == nil {
		err = p.CheckSession(full, instance)
	}
	if err != nil {
		return err
	}
	b := p.Attach(instance)
	b.Inherit(r.f.bucket()) // a rate class the flow is in stays (bwc/class.go)
	r.f.setBWC(b)
	return nil
}

// BWCDetach implements rules.BWCConn: the flow leaves the policy named;
// under another one (or none) it is not touched.
func (r *mblbRules) BWCDetach(name string) error {
	p, _, err := r.bwcPolicy(name)
	if err != nil {
		return err
	}
	if b := r.f.bucket(); b != nil && b.Policy() == p {
		r.f.setBWC(b.Class()) // its rate class, if any, stays
	}
	return nil
}

// RateClass implements rules.RateClassConn: the client's bytes wait on
// the class named too (in place of the rate class it was in), after its
// bwc policy's if it has one. A client the virtual does not pace (no
// bwc-policy, rate-class or rule that attaches one) is refused.
func (r *mblbRules) RateClass(name string) error {
	p, err := r.f.mv.env.BWC.RuleClass(name)
	if err != nil {
		return err
	}
	r.f.bwcMu.Lock()
	paced := r.f.pace != nil
	r.f.bwcMu.Unlock()
	if !paced {
		return errors.New("this connection is not paced: give its virtual a rate-class or bwc-policy")
	}
	if nb, swap := bwc.WithClass(r.f.bucket(), p, ""); swap {
		r.f.setBWC(nb)
	}
	return nil
}

// BWCRate implements rules.BWCConn.
func (r *mblbRules) BWCRate(bps uint64) error { return r.f.bucket().RuleRate(bps) }

// BWCPPS implements rules.BWCConn.
func (r *mblbRules) BWCPPS(pps uint64) error { return r.f.bucket().RulePPS(pps) }

// attachedTo is the flow's bucket under the policy a rule names; an
// error when the flow is not attached to it.
func (r *mblbRules) attachedTo(name string) (*bwc.Bucket, error) {
	p, full, err := r.bwcPolicy(name)
	if err != nil {
		return nil, err
	}
	return bwc.Under(r.f.bucket(), p, full)
}

// BWCColor implements rules.BWCClassConn: the flow joins the category
// and takes its marking.
func (r *mblbRules) BWCColor(policy, category string) error {
	b, err := r.attachedTo(policy)
	if err == nil {
		err = b.RuleColor(category)
	}
	if err != nil {
		return err
	}
	r.f.markBWC(b)
	return nil
}

// BWCPriority implements rules.BWCClassConn.
func (r *mblbRules) BWCPriority(level int) error { return r.f.bucket().RulePriority(level) }

// BWCMark implements rules.BWCClassConn; -2 keeps what the flow has.
func (r *mblbRules) BWCMark(policy string, tos, qos int) error {
	b, err := r.attachedTo(policy)
	if err != nil {
		return err
	}
	if b.RuleMark(tos, qos) {
		r.f.markBWC(b)
	}
	return nil
}

var (
	_ rules.BWCGroupConn     = (*mblbRules)(nil)
	_ rules.BWCMeasureConn   = (*mblbRules)(nil)
	_ rules.IngressLimitConn = (*mblbRules)(nil)
)

// BWCPriorityName implements rules.BWCGroupConn.
func (r *mblbRules) BWCPriorityName(name string) error {
	return r.f.bucket().RulePriorityName(name)
}

// BWCMeasure implements rules.BWCMeasureConn: a flow's measurement is
// named by its client in the policy's log.
func (r *mblbRules) BWCMeasure(session bool, name string) (rules.BWCMeasurement, error) {
	m, err := r.f.bucket().RuleMeasure(session, name, r.f.Client.String())
	if err != nil {
		return nil, err
	}
	return m, nil
}

// errNoIngress is IP::ingress_rate_limit on a client whose connection
// is not paced (an SSL forward proxy's, whose TLS runs on the raw one).
var errNoIngress = errors.New("this connection's client packets cannot be limited")

// pacer is the client's paced connection; nil when it has none.
func (f *mblbFlow) pacer() *bwc.Conn {
	f.bwcMu.Lock()
	defer f.bwcMu.Unlock()
	return f.pace
}

// IngressRateLimit implements rules.IngressLimitConn.
func (r *mblbRules) IngressRateLimit() uint64 {
	if pc := r.f.pacer(); pc != nil {
		return pc.Ingress().PPS()
	}
	return 0
}

// SetIngressRateLimit implements rules.IngressLimitConn: what is read
// from the client waits on pps packets a second (bwc.Ingress), the
// request bodies of an upload among it, as on a TCP virtual.
func (r *mblbRules) SetIngressRateLimit(pps uint64) error {
	pc := r.f.pacer()
	if pc == nil {
		return errNoIngress
	}
	pc.SetIngress(bwc.NewIngress(pps))
	return nil
}

// IngressDropRate implements rules.IngressLimitConn: a stream drops none.
func (r *mblbRules) IngressDropRate() (seen, dropped uint64) { return 0, 0 }

var _ rules.BWCDebugConn = (*mblbRules)(nil)

// BWCDebug implements rules.BWCDebugConn.
func (r *mblbRules) BWCDebug() (string, error) { return r.f.bucket().RuleDebug() }
