package state

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
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
// It is for a data path that does not give translation addresses back
// (see SNATSourceHeld): their connection limits are not enforced there.
// A rule's choice is counted as the virtual's own is.
// The arrival interface is not known there: a SNAT or NAT with a VLAN
// list takes it as 0 (VLANFilter.Admits).
func SNATSource(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool) netip.AddrPort {
	return snatSource(vs, snap, client, local, dst, rule, to, true, false, 0).Src
}

// SNATSourceUncounted is SNATSource for a source that opens no
// connection (the message engines' OneConnect grouping): the ltm snat
// objects' and translation addresses' counters are left alone.
func SNATSourceUncounted(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, to *Pool) netip.AddrPort {
	return snatSource(vs, snap, client, local, dst, nil, to, false, false, 0).Src
}

// SNATSourceUncountedOn is SNATSourceUncounted with a rule's snat or
// snatpool decision (rule, nil: none) and the client's arrival
// interface ifx (0: not known; see SNATSourceHeldOn).
func SNATSourceUncountedOn(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool, ifx int) netip.AddrPort {
	return snatSource(vs, snap, client, local, dst, rule, to, false, false, ifx).Src
}

// SNATHeld is a source choice whose translation address the connection
// holds until it ends (SNATSourceHeld).
type SNATHeld struct {
	// Src is SNATSource's result.
	Src netip.AddrPort
	// Hold is the translation address to give back (Release) when the
	// connection ends or its connect fails, and whose idle timeouts the
	// flow takes; nil: nothing (no ltm snat-translation limit or idle
	// timeout on it).
	Hold *snatobj.Addr
	// Strict: source-port preserve-strict, the connection keeps Src's
	// port or fails.
	Strict bool
	// Err is snatobj.ErrFull when every translation address of the
	// choice is at its connection limit: the connection is refused.
	Err error
}

// SNATSourceHeld is SNATSource for a data path that gives the
// translation address back when the server connection ends: the ltm
// snat-translation connection limits are enforced (an address at its
// limit is passed over), and the choice says what the connection holds.
// Without a limit or idle timeout on the address, Hold is nil.
func SNATSourceHeld(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool) SNATHeld {
	return snatSource(vs, snap, client, local, dst, rule, to, true, true, 0)
}

// SNATSourceHeldOn is SNATSourceHeld for a client whose connection
// arrived on the interface ifx (flows.Flow.Arrival: 0 when not read): a
// SNAT or NAT whose VLAN list does not admit it does not translate it
// (the next most specific SNAT origin is tried).
func SNATSourceHeldOn(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool, ifx int) SNATHeld {
	return snatSource(vs, snap, client, local, dst, rule, to, true, true, ifx)
}

func snatSource(vs *Virtual, snap *VirtualSnap, client, local, dst netip.AddrPort, rule *SNATChoice, to *Pool, count, hold bool, ifx int) SNATHeld {
	family := func(a netip.Addr) bool { return a.Is4() == dst.Addr().Is4() }
	typ, pool := snap.Cfg.SNAT.Type, snap.SnatPool
	if rule != nil {
		typ, pool = rule.Type, rule.Addrs
	} else if typ != config.SNATNone && typ != "" && to.noSNAT() {
		typ = config.SNATNone
	}
	if snap.NATs != nil && rule == nil && (typ == config.SNATNone || typ == "") && !to.noNAT() {
		// An ltm nat (natobj) whose originating address is the
		// client's: its translation address, the port as the virtual's
		// own source-port says (a NAT has no source-port of its own
		// [M]); a pool's allow-nat no (not its allow-snat) keeps the
		// client's address from it.
		if e := snap.NATs.LookupIn(client.Addr(), ifx, snap.Cfg.RouteDomain, snap.Cfg.RouteDomainReach); e != nil && e.Xlat.Is4() == dst.Addr().Unmap().Is4() {
			if count {
				e.Counted()
			}
			return portAs(snap.Cfg.SNAT.ChangePort, snap.Cfg.SNAT.StrictPort, e.Xlat, client, hold)
		}
	}
	if snap.SNATs != nil && rule == nil && (typ == config.SNATNone || typ == "") && !to.noSNAT() {
		// The ltm snat objects (snatobj): the most specific origin
		// holding the client's address translates it.
		if e := snap.SNATs.LookupIn(client.Addr(), ifx, snap.Cfg.RouteDomain, snap.Cfg.RouteDomainReach); e != nil {
			return objectSource(e, snap, client, local, dst, count, hold)
		}
	}
	var addr netip.Addr
	var h SNATHeld
	switch typ {
	case config.SNATAutomap:
		if addr, h.Hold, h.Err = automapTake(snap, local, dst, count, hold); h.Err != nil { // automap.go
			return SNATHeld{Err: h.Err}
		}
	case config.SNATPool:
		if rule == nil && len(snap.SnatPoolStats) == len(pool) {
			// The virtual's snatpool: its addresses' counters and
			// ltm snat-translation limits.
			addr, h.Hold, h.Err = snatobj.PickPool(snap.SnatPoolStats, &vs.snatNext, dst.Addr().Is4(), count, hold)
			break
		}
		if rule != nil && snap.SNATIndex != nil {
			// A rule's snat address or snatpool: the addresses with an
			// ltm snat-translation are counted, and those with a limit
			// or idle timeout held, as the virtual's snatpool's are.
			addr, h.Hold, h.Err = snap.SNATIndex.PickAddrs(pool, &vs.snatNext, dst.Addr().Is4(), count, hold)
			break
		}
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
		if addr.IsLoopback() && !snap.Cfg.SNAT.StrictPort {
			// A client on this machine holds its own address and port, so
			// keeping the port would always fail: any port will do
			// (preserve, change). Under preserve-strict the port is
			// tried, and the connection fails as the port is taken [M].
			h.Src = netip.AddrPortFrom(addr, 0)
			return h
		}
	}
	if addr.IsValid() {
		p := portAs(snap.Cfg.SNAT.ChangePort, snap.Cfg.SNAT.StrictPort, addr, client, hold)
		h.Src, h.Strict = p.Src, p.Strict
	}
	return h
}

// portAs is the source from addr with the port the virtual's own
// source-port (config.SNAT.ChangePort, StrictPort) gives: change, any
// port (0); otherwise the client's, to be kept exactly under
// preserve-strict (Strict, where the path holds the choice: hold). Two
// boolean tests, as an ltm snat's are in objectSource; no allocation.
func portAs(change, strict bool, addr netip.Addr, client netip.AddrPort, hold bool) SNATHeld {
	if change {
		return SNATHeld{Src: netip.AddrPortFrom(addr, 0)}
	}
	return SNATHeld{Src: netip.AddrPortFrom(addr, client.Port()), Strict: strict && hold && client.Port() != 0}
}

// automap is source-address-translation automap's address toward dst:
// the first self IP of its family, else the address the client reached;
// invalid when neither is of dst's family.
func automap(snap *VirtualSnap, local, dst netip.AddrPort) netip.Addr {
	for _, a := range snap.SelfIPs {
		if a.Is4() == dst.Addr().Is4() {
			return a
		}
	}
	if local.Addr().Is4() == dst.Addr().Is4() {
		return local.Addr()
	}
	return netip.Addr{}
}

// objectSource is the source an ltm snat object e gives a client's
// connection to dst: its translation address (a snatpool's in turn,
// passing over those at their connection limit) or automap's, with the
// client's port unless e changes it (source-port change); invalid ("let
// the kernel choose") when e has no address of dst's family. count: the
// connection is counted; hold: and holds the address (see
// SNATSourceHeld).
func objectSource(e *snatobj.Entry, snap *VirtualSnap, client, local, dst netip.AddrPort, count, hold bool) SNATHeld {
	var h SNATHeld
	var addr netip.Addr
	if e.Automap {
		if addr, h.Hold, h.Err = automapTake(snap, local, dst, count, hold); h.Err != nil { // automap.go
			return SNATHeld{Err: h.Err}
		}
		if addr.IsValid() && count {
			e.Counted()
		}
	} else {
		addr, h.Hold, h.Err = e.Pick(dst.Addr().Is4(), count, hold)
	}
	if !addr.IsValid() {
		return h
	}
	switch {
	case e.ChangePort:
		h.Src = netip.AddrPortFrom(addr, 0)
	default:
		h.Src = netip.AddrPortFrom(addr, client.Port())
		h.Strict = e.Strict && hold && client.Port() != 0
	}
	return h
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

// noNAT reports the pool's allow-nat no; false for no pool.
func (p *Pool) noNAT() bool {
	if p == nil {
		return false
	}
	s := p.Snap.Load()
	return s != nil && s.Cfg.NoNAT
}
