package dataplane

import (
	"fmt"
	"net/netip"
)

// proxied is the RuleConn of its flow.
var _ RuleConn = (*proxied)(nil)

func (pr *proxied) VirtualName() string { return pr.Virtual }

func (pr *proxied) ClientAddr() netip.AddrPort { return pr.Client }

func (pr *proxied) LocalAddr() netip.AddrPort { return pr.Local }

func (pr *proxied) SetPool(name string) error {
	pool := (*pr.p.poolIndex.Load())[name]
	if pool == nil {
		return fmt.Errorf("pool %s does not exist", name)
	}
	pr.selPool = pool
	pr.selMember = netip.AddrPort{}
	return nil
}

func (pr *proxied) SetMember(pool string, addr netip.AddrPort) error {
	if pool != "" {
		if err := pr.SetPool(pool); err != nil {
			return err
		}
	}
	pr.selMember = addr
	return nil
}

func (pr *proxied) Reject() { pr.reject = true }

func (pr *proxied) Discard() { pr.dropReq = true }

func (pr *proxied) Server() (string, netip.AddrPort, bool) {
	if pr.member == nil {
		return "", netip.AddrPort{}, false
	}
	return pr.pool.name, pr.leg.Server, true
}
