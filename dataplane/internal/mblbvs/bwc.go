package mblbvs

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// paced puts the client's connection under the virtual's bandwidth
// controller, or the one a rule attached: what the client sends waits on
// the policy's bucket once read, what it is sent before it is written,
// so that requests' and responses' bodies pass at the policy's rate
// (headers count too, as BIG-IP counts every byte of a flow). A dynamic
// policy's instance is the client's address and port. p is nil for a
// virtual without one whose rules attach flows (BWC::policy), whose
// clients wait on nothing until a rule attaches them. The client's
// socket takes the policy's ip-tos and link-qos [M: the members'
// connections are shared among clients, so they are not marked]. Such
// clients run on goroutines, not the event loops, since a wait blocks
// (l4/loop_linux.go).
func (f *mblbFlow) paced(c net.Conn, p *bwc.Policy) net.Conn {
	f.bwcMu.Lock()
	if f.bwc == nil && p != nil {
		f.bwc = p.Attach(f.Client.String())
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

// bwcPolicy finds a running policy by the name a rule gives: a bare name
// is in /Common, as F5's page says BIG-IP looks it up.
func (r *mblbRules) bwcPolicy(name string) (*bwc.Policy, string, error) {
	full := name
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + name
	}
	p := r.f.mv.env.BWC.Policy(full)
	if p == nil {
		return nil, full, fmt.Errorf("bwc policy %s not found", full)
	}
	return p, full, nil
}

// BWCAttach implements rules.BWCConn: the client's requests and
// responses pass at the policy's rate from now on.
func (r *mblbRules) BWCAttach(name, instance string) error {
	p, full, err := r.bwcPolicy(name)
	if err != nil {
		return err
	}
	switch {
	case p.Cfg.Dynamic && instance == "":
		return fmt.Errorf("bwc policy %s is dynamic: a session_id is required", full)
	case !p.Cfg.Dynamic && instance != "":
		return fmt.Errorf("bwc policy %s is static: it takes no session_id", full)
	}
	r.f.setBWC(p.Attach(instance))
	return nil
}

// BWCDetach implements rules.BWCConn.
func (r *mblbRules) BWCDetach(name string) error {
	p, _, err := r.bwcPolicy(name)
	if err != nil {
		return err
	}
	if b := r.f.bucket(); b != nil && b.Policy() == p {
		r.f.setBWC(nil)
	}
	return nil
}

// errNotDynamic is BWC::rate and BWC::pps on a flow without a dynamic
// policy's instance.
var errNotDynamic = errors.New("the flow is not attached to a dynamic bwc policy")

// BWCRate implements rules.BWCConn.
func (r *mblbRules) BWCRate(bps uint64) error {
	b := r.f.bucket()
	if b == nil || !b.Dynamic() {
		return errNotDynamic
	}
	b.SetRate(bps)
	return nil
}

// BWCPPS implements rules.BWCConn.
func (r *mblbRules) BWCPPS(pps uint64) error {
	b := r.f.bucket()
	if b == nil || !b.Dynamic() {
		return errNotDynamic
	}
	b.SetPPS(pps)
	return nil
}

// attachedTo is the flow's bucket under the policy a rule names.
func (r *mblbRules) attachedTo(name string) (*bwc.Bucket, error) {
	p, full, err := r.bwcPolicy(name)
	if err != nil {
		return nil, err
	}
	b := r.f.bucket()
	if b == nil || b.Policy() != p {
		return nil, fmt.Errorf("the flow is not attached to bwc policy %s", full)
	}
	return b, nil
}

// BWCColor implements rules.BWCClassConn.
func (r *mblbRules) BWCColor(policy, category string) error {
	b, err := r.attachedTo(policy)
	if err != nil {
		return err
	}
	if !b.SetCategory(category) {
		return fmt.Errorf("bwc policy %s has no category %s", b.Policy().Cfg.Name, category)
	}
	r.f.markBWC(b)
	return nil
}

// BWCPriority implements rules.BWCClassConn.
func (r *mblbRules) BWCPriority(level int) error {
	b := r.f.bucket()
	if b == nil {
		return errors.New("the flow is not attached to a bwc policy")
	}
	if !b.SetLevel(level) {
		return fmt.Errorf("level %d is not 0 to %d", level, bwc.Levels-1)
	}
	return nil
}

// BWCMark implements rules.BWCClassConn; -2 keeps what the flow has.
func (r *mblbRules) BWCMark(policy string, tos, qos int) error {
	b, err := r.attachedTo(policy)
	if err != nil || (tos == -2 && qos == -2) {
		return err
	}
	m := b.Mark()
	if tos != -2 {
		m.TOS = tos
	}
	if qos != -2 {
		m.QoS = qos
	}
	b.SetMark(m)
	r.f.markBWC(b)
	return nil
}
