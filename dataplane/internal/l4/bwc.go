package l4

import (
	"errors"
	"fmt"
	"strings"

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

var _ rules.BWCConn = (*proxied)(nil)

// bwcPolicy finds a running policy by the name a rule gives: a bare name
// is in /Common, as F5's page says BIG-IP looks it up.
func (pr *proxied) bwcPolicy(name string) (*bwc.Policy, string, error) {
	full := name
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + name
	}
	p := pr.e.env.BWC.Policy(full)
	if p == nil {
		return nil, full, fmt.Errorf("bwc policy %s not found", full)
	}
	return p, full, nil
}

// BWCAttach implements rules.BWCConn. A static policy takes no session,
// a dynamic one needs one (F5's BWC::policy page).
func (pr *proxied) BWCAttach(name, instance string) error {
	p, full, err := pr.bwcPolicy(name)
	if err != nil {
		return err
	}
	switch {
	case p.Cfg.Dynamic && instance == "":
		return fmt.Errorf("bwc policy %s is dynamic: a session_id is required", full)
	case !p.Cfg.Dynamic && instance != "":
		return fmt.Errorf("bwc policy %s is static: it takes no session_id", full)
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
	if b := pr.bwc.Load(); b != nil && b.Policy() == p && pr.bwc.CompareAndSwap(b, nil) {
		b.Release()
	}
	return nil
}

// errNotDynamic is BWC::rate and BWC::pps on a flow without a dynamic
// policy's instance.
var errNotDynamic = errors.New("the flow is not attached to a dynamic bwc policy")

// BWCRate implements rules.BWCConn.
func (pr *proxied) BWCRate(bps uint64) error {
	b := pr.bwc.Load()
	if b == nil || !b.Dynamic() {
		return errNotDynamic
	}
	b.SetRate(bps)
	return nil
}

// BWCPPS implements rules.BWCConn.
func (pr *proxied) BWCPPS(pps uint64) error {
	b := pr.bwc.Load()
	if b == nil || !b.Dynamic() {
		return errNotDynamic
	}
	b.SetPPS(pps)
	return nil
}

var _ rules.BWCClassConn = (*proxied)(nil)

// attachedTo is the flow's bucket under the policy a rule names; an
// error when the flow is not attached to it.
func (pr *proxied) attachedTo(name string) (*bwc.Bucket, error) {
	p, full, err := pr.bwcPolicy(name)
	if err != nil {
		return nil, err
	}
	b := pr.bwc.Load()
	if b == nil || b.Policy() != p {
		return nil, fmt.Errorf("the flow is not attached to bwc policy %s", full)
	}
	return b, nil
}

// BWCColor implements rules.BWCClassConn: the flow joins the category
// and takes its marking.
func (pr *proxied) BWCColor(policy, category string) error {
	b, err := pr.attachedTo(policy)
	if err != nil {
		return err
	}
	if !b.SetCategory(category) {
		return fmt.Errorf("bwc policy %s has no category %s", b.Policy().Cfg.Name, category)
	}
	pr.markBWC(b)
	return nil
}

// BWCPriority implements rules.BWCClassConn.
func (pr *proxied) BWCPriority(level int) error {
	b := pr.bwc.Load()
	if b == nil {
		return errors.New("the flow is not attached to a bwc policy")
	}
	if !b.SetLevel(level) {
		return fmt.Errorf("level %d is not 0 to %d", level, bwc.Levels-1)
	}
	return nil
}

// BWCMark implements rules.BWCClassConn; -2 keeps what the flow has.
func (pr *proxied) BWCMark(policy string, tos, qos int) error {
	b, err := pr.attachedTo(policy)
	if err != nil {
		return err
	}
	if tos == -2 && qos == -2 {
		return nil
	}
	m := b.Mark()
	if tos != -2 {
		m.TOS = tos
	}
	if qos != -2 {
		m.QoS = qos
	}
	b.SetMark(m)
	pr.markBWC(b)
	return nil
}
