package state

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// AutomapXlat is automap's address of one family for one virtual and its
// ltm snat-translation, resolved at commit (AutomapOf) so that the
// source choice finds the translation without the Index's map lookup.
type AutomapXlat struct {
	// Addr is the address automap gives toward a server of the family:
	// the first self IP of the family (Self), or else the virtual's own
	// address, which automap gives a client that reached it; invalid:
	// not resolved (the choice looks the address up in the Index).
	Addr netip.Addr
	Self bool
	// Xlat is Addr's ltm snat-translation; nil: none (the address is
	// given uncounted).
	Xlat *snatobj.Addr
}

// AutomapOf resolves automap's address and translation per family ([0]
// IPv4, [1] IPv6) for the virtual vc with the self IPs selfIPs and the
// commit's Index idx: the self IP when there is one of the family, else
// the virtual's address when it has one address only (not a network,
// an address list, names or a wildcard). Unresolved families (and every
// family when idx is nil: nothing is counted then) are left zero.
func AutomapOf(vc *config.Virtual, selfIPs []netip.Addr, idx *snatobj.Index) (r [2]AutomapXlat) {
	if idx == nil {
		return r
	}
	for i, v4 := range []bool{true, false} {
		for _, a := range selfIPs {
			if a.Is4() == v4 {
				r[i] = AutomapXlat{Addr: a, Self: true, Xlat: idx.Of(a)}
				break
			}
		}
		if r[i].Addr.IsValid() || vc == nil || vc.Network.IsValid() || len(vc.Addresses) > 0 || len(vc.FQDNs) > 0 {
			continue
		}
		if a := vc.Destination.Addr(); a.IsValid() && !a.IsUnspecified() && a.Is4() == v4 {
			r[i] = AutomapXlat{Addr: a, Xlat: idx.Of(a)}
		}
	}
	return r
}

// automapTake is automap's address toward dst for a client that reached
// local, and its ltm snat-translation taken (count, hold as in
// snatobj.Index.Take): from the virtual's resolved AutomapXlat when it
// applies (a comparison, no lookup), else looked up in the Index (a map
// lookup; none without an Index).
func automapTake(snap *VirtualSnap, local, dst netip.AddrPort, count, hold bool) (addr netip.Addr, h *snatobj.Addr, err error) {
	r := &snap.Automap[0]
	if !dst.Addr().Is4() {
		r = &snap.Automap[1]
	}
	if r.Addr.IsValid() && (r.Self || local.Addr() == r.Addr) {
		if r.Xlat == nil {
			return r.Addr, nil, nil
		}
		h, err = r.Xlat.Take(count, hold)
		return r.Addr, h, err
	}
	addr = automap(snap, local, dst)
	if snap.SNATIndex != nil && addr.IsValid() {
		// An ltm snat-translation of the self IP or virtual address
		// automap gives [M].
		h, err = snap.SNATIndex.Take(addr, count, hold)
	}
	return addr, h, err
}

// AutomapFor reports whether automap may give the source of a client at
// client that arrived on the interface ifx (0: not known): the
// virtual's source-address-translation automap, or, with the virtual's
// own SNAT none, the ltm snat object translating client has automap.
// The message engines start automap from the address such a client
// reached on a virtual that is a network or on every port
// (mblb.ClientOptions.ViaLocal). A pool's allow-snat no and an ltm nat
// of the client are not looked at: such a client, marked although
// automap does not give its source, only has its OneConnect
// connections grouped by the address it reached.
// Cost: the SNAT type test; with no ltm snat objects a nil test more,
// else one table lookup (no allocation).
func (s *VirtualSnap) AutomapFor(client netip.Addr, ifx int) bool {
	switch s.Cfg.SNAT.Type {
	case config.SNATAutomap:
		return true
	case config.SNATNone, "":
		if s.SNATs == nil {
			return false
		}
		e := s.SNATs.LookupIn(client, ifx, s.Cfg.RouteDomain, s.Cfg.RouteDomainReach)
		return e != nil && e.Automap
	}
	return false
}
