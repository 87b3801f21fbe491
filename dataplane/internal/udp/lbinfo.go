package udp

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on UDP flows, as on TCP ones: `virtual name`, `members`,
// `LB::mode` and LB::server's ratio/priority/weight.

var _ rules.LBInfo = (*flow)(nil)

// VirtualName implements rules.LBInfo.
func (f *flow) VirtualName() string { return f.Virtual }

// poolName is a rule's pool argument, the current pool when empty.
func (f *flow) poolName(pool string) (string, error) {
	if pool != "" {
		return pool, nil
	}
	p := f.pool
	if f.rs.selPool != nil {
		p = f.rs.selPool
	}
	if p != nil {
		return p.Name, nil
	}
	return "", errors.New("no pool selected")
}

// LBMode implements rules.LBInfo.
func (f *flow) LBMode(pool string) (string, error) {
	name, err := f.poolName(pool)
	if err != nil {
		return "", err
	}
	return f.l.e.env.Pools().LBMode(f.Virtual, name)
}

// Members implements rules.LBInfo.
func (f *flow) Members(pool string) ([]netip.AddrPort, error) {
	name, err := f.poolName(pool)
	if err != nil {
		return nil, err
	}
	return f.l.e.env.Pools().Members(f.Virtual, name)
}

// MemberInfo implements rules.LBInfo.
func (f *flow) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	name, err := f.poolName(pool)
	if err != nil {
		return rules.MemberInfo{}, err
	}
	r, p, w, err := f.l.e.env.Pools().MemberInfo(f.Virtual, name, member)
	return rules.MemberInfo{Ratio: r, Priority: p, Weight: w}, err
}
