package udp

import (
	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/rules"
)

// A UDP flow's rules classify it within its virtual's bandwidth
// controller (BWC::color, BWC::priority, BWC::mark) and measure it
// (BWC::measure), as a TCP flow's do; BWC::policy attach and detach are
// not offered, since a UDP flow's queues are its virtual's policy's for
// its life [M]. A category's or BWC::mark's marking applies to the
// member sockets the flow opens from then on.
var (
	_ rules.BWCClassConn   = (*flow)(nil)
	_ rules.BWCGroupConn   = (*flow)(nil)
	_ rules.BWCMeasureConn = (*flow)(nil)
)

// bucket is the flow's bucket under its virtual's policy; nil for none.
func (f *flow) bucket() *bwc.Bucket {
	if f.bwc == nil {
		return nil
	}
	return f.bwc.b
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
