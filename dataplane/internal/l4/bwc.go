package l4

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/rules"
)

// attachBWC puts the flow under policy p as instance (a dynamic policy's
// user), in place of the policy it had. The copy loops of both directions
// wait on its bucket before each write [M: BIG-IP shapes the traffic of
// a virtual's flows; openltm shapes what it sends to the client and to
// the member alike, on one bucket].
func (pr *proxied) attachBWC(p *bwc.Policy, instance string) {
	if old := pr.bwc.Swap(p.Attach(instance)); old != nil {
		old.Release()
	}
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
