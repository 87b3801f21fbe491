package mblbvs

import (
	"errors"

	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on message-based and HTTP virtuals, as on L4 flows
// (state.Pools answers).

var _ rules.LBInfo = (*mblbRules)(nil)

// VirtualName implements rules.LBInfo.
func (r *mblbRules) VirtualName() string { return r.f.Virtual }

// lbPool is the pool a rule means when it names none.
func (r *mblbRules) lbPool() *state.Pool {
	return r.snap.Pool
}

// LBMode implements rules.LBInfo.
func (r *mblbRules) LBMode(pool string) (string, error) {
	return r.f.mv.env.Pools().LBMode(r.f.Virtual, pool, r.lbPool())
}

// Members implements rules.LBInfo.
func (r *mblbRules) Members(pool string) ([]netip.AddrPort, error) {
	return r.f.mv.env.Pools().Members(r.f.Virtual, pool, r.lbPool())
}

// MemberInfo implements rules.LBInfo.
func (r *mblbRules) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	ratio, prio, w, err := r.f.mv.env.Pools().MemberInfo(r.f.Virtual, pool, r.lbPool(), member)
	return rules.MemberInfo{Ratio: ratio, Priority: prio, Weight: w}, err
}

// LBQueue implements rules.LBQueuer.
func (r *mblbRules) LBQueue(pool string) (rules.QueueInfo, error) {
	on, depthLimit, timeLimit, depth, err := r.f.mv.env.Pools().Queue(r.f.Virtual, pool, r.lbPool())
	return rules.QueueInfo{On: on, DepthLimit: depthLimit, TimeLimit: timeLimit, Depth: depth}, err
}

// VirtualProfiles implements rules.ProfileLister.
func (r *mblbRules) VirtualProfiles() []rules.ProfileRef { return r.snap.Cfg.Profiles }

var _ rules.SNATReader = (*mblbRules)(nil)

// SNATDecision implements rules.SNATReader: a SERVER_INIT's snat
// decision while it runs, else the virtual's source-address-translation.
func (r *mblbRules) SNATDecision() string {
	if r.init != nil {
		return r.init.SNATDecision(r.snap.Cfg)
	}
	return irules.VirtualSNAT(r.snap.Cfg)
}

var _ rules.DecisionLogger = (*mblbRules)(nil)

// EnableDecisionLog implements rules.DecisionLogger: the member choice
// of each of the client's requests (messages) from now on.
func (r *mblbRules) EnableDecisionLog() error {
	if r.f.sess == nil {
		return errors.New("no client session")
	}
	r.f.sess.SetDecisionLog()
	return nil
}
