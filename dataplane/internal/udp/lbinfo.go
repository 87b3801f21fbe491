package udp

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on UDP flows, as on TCP ones (state.Pools answers).

var _ rules.LBInfo = (*flow)(nil)

// VirtualName implements rules.LBInfo.
func (f *flow) VirtualName() string { return f.Virtual }

// lbPool is the pool a rule means when it names none.
func (f *flow) lbPool() *state.Pool {
	if f.rs.Pool != nil {
		return f.rs.Pool
	}
	return f.pool
}

// LBMode implements rules.LBInfo.
func (f *flow) LBMode(pool string) (string, error) {
	return f.l.e.env.Pools().LBMode(f.Virtual, pool, f.lbPool())
}

// Members implements rules.LBInfo.
func (f *flow) Members(pool string) ([]netip.AddrPort, error) {
	return f.l.e.env.Pools().Members(f.Virtual, pool, f.lbPool())
}

// MemberInfo implements rules.LBInfo.
func (f *flow) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	ratio, prio, w, err := f.l.e.env.Pools().MemberInfo(f.Virtual, pool, f.lbPool(), member)
	return rules.MemberInfo{Ratio: ratio, Priority: prio, Weight: w}, err
}

// VirtualProfiles implements rules.ProfileLister.
func (f *flow) VirtualProfiles() []rules.ProfileRef { return f.snap.Cfg.Profiles }

var _ rules.SNATReader = (*flow)(nil)

// SNATDecision implements rules.SNATReader: a rule's snat or snatpool
// decision, else the virtual's source-address-translation.
func (f *flow) SNATDecision() string {
	if f.rs == nil {
		return irules.VirtualSNAT(f.snap.Cfg)
	}
	return f.rs.SNATDecision(f.snap.Cfg)
}

var _ rules.Translator = (*flow)(nil)

// Translation implements rules.Translator.
func (f *flow) Translation() (addr, port bool) { return f.rs.Translation(f.snap.Cfg) }

// SetTranslation implements rules.Translator: for the members chosen
// from now on (the next datagram's, with datagram load balancing).
func (f *flow) SetTranslation(addr, port bool) error {
	f.rs.Xlate = irules.Translation{Set: true, Addr: addr, Port: port}
	return nil
}
