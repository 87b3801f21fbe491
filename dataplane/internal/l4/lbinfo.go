package l4

import (
	"errors"
	"net/netip"

	"github.com/openltm/openltm/rules"
)

// rules.LBInfo on L4 flows: `virtual name`, `members`, `LB::mode` and
// LB::server's ratio/priority/weight, which published logging and
// routing rules read.

var _ rules.LBInfo = (*proxied)(nil)

// VirtualName implements rules.LBInfo.
func (pr *proxied) VirtualName() string { return pr.Virtual }

// poolName is a rule's pool argument, the current pool when empty.
func (pr *proxied) poolName(pool string) (string, error) {
	if pool != "" {
		return pool, nil
	}
	p := pr.pool
	if pr.rs.selPool != nil {
		p = pr.rs.selPool
	}
	if p != nil {
		return p.Name, nil
	}
	return "", errors.New("no pool selected")
}

// LBMode implements rules.LBInfo.
func (pr *proxied) LBMode(pool string) (string, error) {
	name, err := pr.poolName(pool)
	if err != nil {
		return "", err
	}
	return pr.e.env.Pools().LBMode(pr.Virtual, name)
}

// Members implements rules.LBInfo.
func (pr *proxied) Members(pool string) ([]netip.AddrPort, error) {
	name, err := pr.poolName(pool)
	if err != nil {
		return nil, err
	}
	return pr.e.env.Pools().Members(pr.Virtual, name)
}

// MemberInfo implements rules.LBInfo.
func (pr *proxied) MemberInfo(pool string, member netip.AddrPort) (rules.MemberInfo, error) {
	name, err := pr.poolName(pool)
	if err != nil {
		return rules.MemberInfo{}, err
	}
	r, p, w, err := pr.e.env.Pools().MemberInfo(pr.Virtual, name, member)
	return rules.MemberInfo{Ratio: r, Priority: p, Weight: w}, err
}
