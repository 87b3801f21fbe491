package mblbvs

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on message-based and HTTP virtuals, as on L4 flows.

var _ rules.LBInfo = (*mblbRules)(nil)

// VirtualName implements rules.LBInfo.
func (r *mblbRules) VirtualName() string { return r.f.Virtual }

// poolName is a rule's pool argument, the virtual's pool when empty.
func (r *mblbRules) poolName(pool string) (string, error) {
	if pool != "" {
		return pool, nil
	}
	if r.snap.Pool != nil {
		return r.snap.Pool.Name, nil
	}
	return "", errors.New("no pool selected")
}

// LBMode implements rules.LBInfo.
func (r *mblbRules) LBMode(pool string) (string, error) {
	name, err := r.poolName(pool)
	if err != nil {
		return "", err
	}
	return r.f.mv.env.Pools().LBMode(r.f.Virtual, name)
}

// Members implements rules.LBInfo.
func (r *mblbRules) Members(pool string) ([]netip.AddrPort, error) {
	name, err := r.poolName(pool)
	if err != nil {
		return nil, err
	}
	return r.f.mv.env.Pools().Members(r.f.Virtual, name)
}

// MemberInfo implements rules.LBInfo.
func (r *mblbRules) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	name, err := r.poolName(pool)
	if err != nil {
		return rules.MemberInfo{}, err
	}
	ra, p, w, err := r.f.mv.env.Pools().MemberInfo(r.f.Virtual, name, member)
	return rules.MemberInfo{Ratio: ra, Priority: p, Weight: w}, err
}
