package udp

import (
	"fmt"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/rules"
)

// A UDP flow's rules classify it within its bandwidth controller
// (BWC::color, BWC::priority, BWC::mark) and measure it (BWC::measure),
// as a TCP flow's do. A category's or BWC::mark's marking applies to the
// member sockets the flow opens from then on.
var (
	_ rules.BWCClassConn   = (*flow)(nil)
	_ rules.BWCGroupConn   = (*flow)(nil)
	_ rules.BWCMeasureConn = (*flow)(nil)
)

// bucket is the flow's bucket under its virtual's policy; nil for none.
func (f *flow) bucket() *bwc.Bucket {
	if fb := f.bwc.Load(); fb != nil {
		return fb.b
	}
	return nil
}

// BWCColor implements rules.BWCClassConn.
func (f *flow) BWCColor(policy, category string) error {
	b, err := bwc.UnderName(f.bucket(), policy)
	if err != nil {
		return err
	}
	return b.RuleColor(category)
}

// BWCPriority implements rules.BWCClassConn.
func (f *flow) BWCPriority(level int) error { return f.bucket().RulePriority(level) }

// BWCPriorityName implements rules.BWCGroupConn.
func (f *flow) BWCPriorityName(name string) error { return f.bucket().RulePriorityName(name) }

// BWCMark implements rules.BWCClassConn; -2 keeps what the flow has.
func (f *flow) BWCMark(policy string, tos, qos int) error {
	b, err := bwc.UnderName(f.bucket(), policy)
	if err != nil {
		return err
	}
	b.RuleMark(tos, qos)
	return nil
}

// BWCMeasure implements rules.BWCMeasureConn: a flow's measurement is
// named by its client in the policy's log.
func (f *flow) BWCMeasure(session bool, name string) (rules.BWCMeasurement, error) {
	m, err := f.bucket().RuleMeasure(session, name, f.Client.String())
	if err != nil {
		return nil, err
	}
	return m, nil
}

// A UDP flow is attached to a policy, and detached, by its rules as a
// TCP flow is (BWC::policy attach|detach, F5's "specific flow"), in
// place of its virtual's policy: its datagrams of both directions then
// wait on the policy named.
var _ rules.BWCConn = (*flow)(nil)

// BWCAttach implements rules.BWCConn.
func (f *flow) BWCAttach(name, instance string) error {
	p, full, err := f.bwcPolicy(name)
	if err == nil {
		err = p.CheckSession(full, instance)
	}
	if err != nil {
		return err
	}
	b := p.Attach(instance)
	b.Inherit(f.bucket()) // a rate class the flow is in stays (bwc/class.go)
	f.setBWC(newFlowBWCOn(f, b))
	return nil
}

// BWCDetach implements rules.BWCConn: the flow leaves the policy named;
// under another one (or none) it is not touched.
func (f *flow) BWCDetach(name string) error {
	p, _, err := f.bwcPolicy(name)
	if err != nil {
		return err
	}
	if fb := f.bwc.Load(); fb != nil && fb.b.Policy() == p {
		if cb := fb.b.Class(); cb != nil {
			f.setBWC(newFlowBWCOn(f, cb)) // its rate class, if any, stays
		} else if f.bwc.CompareAndSwap(fb, nil) {
			fb.close()
		}
	}
	return nil
}

// A UDP flow is put in a rate class by its rules (rateclass) as a TCP
// flow is: its datagrams in the class's direction wait in the flow's
// queues on the class's buckets (after its bwc policy's, if it has one).
var _ rules.RateClassConn = (*flow)(nil)

// RateClass implements rules.RateClassConn.
func (f *flow) RateClass(name string) error {
	if f.l.e.env.BWC == nil {
		return fmt.Errorf("rate class %s not found", name)
	}
	p, err := f.l.e.env.BWC.RuleClass(name)
	if err != nil {
		return err
	}
	f.inClass(p)
	return nil
}

// inClass puts f in rate class p, in place of the class it was in: on
// the class's own bucket when f is under no bwc policy, else chained
// after its policy's.
func (f *flow) inClass(p *bwc.Policy) {
	old := f.bucket()
	nb, swap := bwc.WithClass(old, p, "")
	if swap {
		f.setBWC(newFlowBWCOn(f, nb)) // releases old's bucket with its queues
		return
	}
	// The class chained after the flow's policy: new queues on the same
	// bucket, which meet the class's queue discipline and drop policy;
	// the old ones' datagrams are dropped [M: as setBWC's].
	fb := f.bwc.Load()
	if fb == nil {
		return
	}
	nfb := newFlowBWCOn(f, nb)
	if !f.bwc.CompareAndSwap(fb, nfb) {
		return
	}
	fb.up.Close()
	fb.toClient.Close()
	if f.ended.Load() && f.bwc.CompareAndSwap(nfb, nil) {
		nfb.close() // end took the flow's controller meanwhile
	}
}

// BWCRate implements rules.BWCConn.
func (f *flow) BWCRate(bps uint64) error { return f.bucket().RuleRate(bps) }

// BWCPPS implements rules.BWCConn.
func (f *flow) BWCPPS(pps uint64) error { return f.bucket().RulePPS(pps) }

// bwcPolicy finds a running policy by the name a rule gives.
func (f *flow) bwcPolicy(name string) (*bwc.Policy, string, error) {
	if f.l.e.env.BWC == nil {
		return nil, name, fmt.Errorf("bwc policy %s not found", name)
	}
	return f.l.e.env.BWC.RulePolicy(name)
}

var _ rules.BWCDebugConn = (*flow)(nil)

// BWCDebug implements rules.BWCDebugConn.
func (f *flow) BWCDebug() (string, error) { return f.bucket().RuleDebug() }
