package l4

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on L4 flows: `virtual name`, `members`, `LB::mode` and
// LB::server's ratio/priority/weight, which published logging and routing
// rules read (the answers come from state.Pools, shared by every path).

var _ rules.LBInfo = (*proxied)(nil)

// VirtualName implements rules.LBInfo.
func (pr *proxied) VirtualName() string { return pr.Virtual }

// lbPool is the pool a rule means when it names none.
func (pr *proxied) lbPool() *state.Pool {
	if pr.rs.Pool != nil {
		return pr.rs.Pool
	}
	return pr.pool
}

// LBMode implements rules.LBInfo.
func (pr *proxied) LBMode(pool string) (string, error) {
	return pr.e.env.Pools().LBMode(pr.Virtual, pool, pr.lbPool())
}

// Members implements rules.LBInfo.
func (pr *proxied) Members(pool string) ([]netip.AddrPort, error) {
	return pr.e.env.Pools().Members(pr.Virtual, pool, pr.lbPool())
}

// MemberInfo implements rules.LBInfo.
func (pr *proxied) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	ratio, prio, w, err := pr.e.env.Pools().MemberInfo(pr.Virtual, pool, pr.lbPool(), member)
	return rules.MemberInfo{Ratio: ratio, Priority: prio, Weight: w}, err
}

// LBQueue implements rules.LBQueuer.
func (pr *proxied) LBQueue(pool string) (rules.QueueInfo, error) {
	on, depthLimit, timeLimit, depth, err := pr.e.env.Pools().Queue(pr.Virtual, pool, pr.lbPool())
	return rules.QueueInfo{On: on, DepthLimit: depthLimit, TimeLimit: timeLimit, Depth: depth}, err
}

// VirtualProfiles implements rules.ProfileLister.
func (pr *proxied) VirtualProfiles() []rules.ProfileRef { return pr.snap.Cfg.Profiles }

// MayBlock implements rules.Blocker: flows with rules run on goroutines of
// their own (CLIENT_ACCEPTED of a TLS-loop virtual too, before it joins a
// loop), where `after ms` suspends that client alone.
func (pr *proxied) MayBlock() bool { return true }
