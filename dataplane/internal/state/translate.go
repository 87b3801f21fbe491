package state

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Address translation, the same for every data path.

// Translate is where the server side of a client that reached local goes
// for a member at member: the member's address and port, or local's parts
// where translate-address or translate-port is off or the member's port
// is any.
func Translate(cfg *config.Virtual, member, local netip.AddrPort) netip.AddrPort {
	return TranslateAs(cfg.TranslateAddress, cfg.TranslatePort, member, local)
}

// TranslateAs is Translate with translate-address (addr) and
// translate-port (port) given, as a rule's translate command sets them
// for one connection.
func TranslateAs(addr, port bool, member, local netip.AddrPort) netip.AddrPort {
	a, p := member.Addr(), member.Port()
	if !addr {
		a = local.Addr()
	}
	if p == 0 || !port {
		p = local.Port()
	}
	return netip.AddrPortFrom(a, p)
}

// SNATSource is the server side's source address per the virtual's
// source-address-translation, or a rule's snat/snatpool decision (rule
// non-nil); its port is the client's, to be kept when free (0: any port).
// An invalid result means "let the kernel choose". local is the address
// the client reached; to is the pool of the member at dst (nil: none, a
// node a rule named), whose allow-snat no keeps the client's address.
func SNATSource(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool) netip.AddrPort {
	family := func(a netip.Addr) bool { return a.Is4() == dst.Addr().Is4() }
	typ, pool := snap.Cfg.SNAT.Type, snap.SnatPool
	if rule != nil {
		typ, pool = rule.Type, rule.Addrs
	} else if typ != config.SNATNone && typ != "" && to.noSNAT() {
		typ = config.SNATNone
	}
	var addr netip.Addr
	switch typ {
	case config.SNATAutomap:
		for _, a := range snap.SelfIPs {
			if family(a) {
				addr = a
				break
			}
		}
		if !addr.IsValid() && family(local.Addr()) {
			addr = local.Addr()
		}
	case config.SNATPool:
		n := len(pool)
		start := int(vs.snatNext.Add(1))
		for i := 0; i < n; i++ {
			if a := pool[(start+i)%n]; family(a) {
				addr = a
				break
			}
		}
	default:
		if family(client.Addr()) {
			addr = client.Addr()
		}
		if addr.IsLoopback() {
			// A client on this machine holds its own address and port, so
			// keeping the port would always fail: any port will do.
			return netip.AddrPortFrom(addr, 0)
		}
	}
	if !addr.IsValid() {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(addr, client.Port())
}

// SNATChoice is a rule's snat or snatpool decision for one flow, which
// replaces the virtual's source-address-translation.
type SNATChoice struct {
	Set   bool
	Type  config.SNATType
	Addrs []netip.Addr // snat address or snatpool addresses
}

// noSNAT reports the pool's allow-snat no; false for no pool.
func (p *Pool) noSNAT() bool {
	if p == nil {
		return false
	}
	s := p.Snap.Load()
	return s != nil && s.Cfg.NoSNAT
}
