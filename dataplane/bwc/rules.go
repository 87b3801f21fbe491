package bwc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What the BWC:: commands do to a flow, the same on every path that
// shapes one (the L4 proxy's flows, the http virtuals' clients): each
// path keeps its flow's bucket its own way and calls these.

// ErrNotDynamic is BWC::rate and BWC::pps on a flow without a dynamic
// policy's instance.
var ErrNotDynamic = errors.New("the flow is not attached to a dynamic bwc policy")

// RulePolicy finds a running policy by the name a rule gives: a bare name
// is in /Common, as F5's page says BIG-IP looks it up. full is the name
// looked up, for messages.
func (s *Set) RulePolicy(name string) (p *Policy, full string, err error) {
	full = name
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + name
	}
	if p = s.Policy(full); p == nil {
		return nil, full, fmt.Errorf("bwc policy %s not found", full)
	}
	return p, full, nil
}

// CheckSession is BWC::policy attach's rule: a static policy takes no
// session, a dynamic one needs one (F5's BWC::policy page).
func (p *Policy) CheckSession(full, session string) error {
	switch {
	case p.Cfg.Dynamic && session == "":
		return fmt.Errorf("bwc policy %s is dynamic: a session_id is required", full)
	case !p.Cfg.Dynamic && session != "":
		return fmt.Errorf("bwc policy %s is static: it takes no session_id", full)
	}
	return nil
}

// Under is b, a flow's bucket (nil: none), when it is under policy p
// (named full); an error when the flow is not attached to it.
func Under(b *Bucket, p *Policy, full string) (*Bucket, error) {
	if b == nil || b.Policy() != p {
		return nil, fmt.Errorf("the flow is not attached to bwc policy %s", full)
	}
	return b, nil
}

// RuleRate is BWC::rate on a flow whose bucket is b (nil: none).
func (b *Bucket) RuleRate(bps uint64) error {
	if b == nil || !b.Dynamic() {
		return ErrNotDynamic
	}
	b.SetRate(bps)
	return nil
}

// RulePPS is BWC::pps on a flow whose bucket is b (nil: none).
func (b *Bucket) RulePPS(pps uint64) error {
	if b == nil || !b.Dynamic() {
		return ErrNotDynamic
	}
	b.SetPPS(pps)
	return nil
}

// RuleColor is BWC::color set: b joins the category; the caller then
// marks the flow with b.Mark().
func (b *Bucket) RuleColor(category string) error {
	if !b.SetCategory(category) {
		return fmt.Errorf("bwc policy %s has no category %s", b.Policy().Cfg.Name, category)
	}
	return nil
}

// RulePriority is BWC::priority on a flow whose bucket is b (nil: none).
func (b *Bucket) RulePriority(level int) error {
	if b == nil {
		return errors.New("the flow is not attached to a bwc policy")
	}
	if !b.SetLevel(level) {
		return fmt.Errorf("level %d is not 0 to %d", level, Levels-1)
	}
	return nil
}

// RuleMark is BWC::mark: the flow's ToS and QoS marks (-2 keeps what it
// has); it reports whether anything changed, for the caller to mark the
// flow's sockets again.
func (b *Bucket) RuleMark(tos, qos int) bool {
	if tos == -2 && qos == -2 {
		return false
	}
	m := b.Mark()
	if tos != -2 {
		m.TOS = tos
	}
	if qos != -2 {
		m.QoS = qos
	}
	b.SetMark(m)
	return true
}

// RulePriorityName is BWC::priority NAME on a flow whose bucket is b:
// the level of that name in its policy's priority group.
func (b *Bucket) RulePriorityName(name string) error {
	if b == nil {
		return errors.New("the flow is not attached to a bwc policy")
	}
	l, err := b.p.Level(name)
	if err != nil {
		return err
	}
	b.SetLevel(l)
	return nil
}

// RuleMeasure is the measurement BWC::measure names on a flow whose
// bucket is b (nil: none): the flow's own (label its client), or a
// session's of its policy.
func (b *Bucket) RuleMeasure(session bool, name, label string) (*Measure, error) {
	if b == nil {
		return nil, errors.New("the flow is not attached to a bwc policy")
	}
	if !session {
		return b.FlowMeasure(label), nil
	}
	return b.SessionMeasure(name)
}

// UnderName is Under for a policy a rule names (a bare name is in
// /Common), where the caller holds the flow's bucket but not the set.
func UnderName(b *Bucket, name string) (*Bucket, error) {
	full := name
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + name
	}
	if b == nil || b.p.Cfg.Name != full {
		return nil, fmt.Errorf("the flow is not attached to bwc policy %s", full)
	}
	return b, nil
}

// RuleDebug is what BWC::debug logs of a flow whose bucket is b (nil:
// none): its policy, its instance (a dynamic policy's session), its
// category and priority level, the instance's rate (max-user-rate, or
// BWC::rate's) and the policy's counters now, in the form
//
//	policy /Common/gold session 10.1.1.1 category video level 6 user-rate 2000000 bps policy-rate 1981440 bps passed 495360 bytes delayed 0 bytes dropped 0 packets
//
// [M: F5's page says BWC::debug turns on debug logs of the policy
// instance under the bwc trace db variables, and not what they hold;
// openltm writes this one line each time it runs].
func (b *Bucket) RuleDebug() (string, error) {
	if b == nil {
		return "", errors.New("the flow is not attached to a bwc policy")
	}
	p := b.p
	s := make([]byte, 0, 200)
	s = append(s, "policy "...)
	s = append(s, p.Cfg.Name...)
	if b.in != nil {
		s = append(s, " session "...)
		s = append(s, b.in.key...)
	}
	if c := b.cat.Load(); c != nil {
		s = append(s, " category "...)
		s = append(s, c.name...)
	}
	s = append(s, " level "...)
	s = strconv.AppendInt(s, int64(b.level.Load()), 10)
	if b.in != nil {
		s = append(s, " user-rate "...)
		var bps uint64
		if l := b.in.user.Load(); l != nil {
			bps = uint64(float64(l.Limit()) * 8)
		}
		s = strconv.AppendUint(s, bps, 10)
		s = append(s, " bps"...)
	}
	s = append(s, " policy-rate "...)
	s = strconv.AppendUint(s, p.rate.bps(time.Now()), 10)
	s = append(s, " bps passed "...)
	s = strconv.AppendUint(s, p.Passed.Load(), 10)
	s = append(s, " bytes delayed "...)
	s = strconv.AppendUint(s, p.Delayed.Load(), 10)
	s = append(s, " bytes dropped "...)
	s = strconv.AppendUint(s, p.DroppedPkts.Load(), 10)
	s = append(s, " packets"...)
	return string(s), nil
}
