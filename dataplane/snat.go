package dataplane

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/snatobj"
)

// SNATConns is the server connections the ltm snat object name has
// translated since it was configured (show ltm snat); false when it is
// not in the running configuration.
func (p *Plane) SNATConns(name string) (uint64, bool) {
	return p.snats.SNATConns(name)
}

// SNATTranslationConns is the server connections given the translation
// address a by ltm snat objects and virtuals' snatpools (show ltm
// snat-translation); false when none of them uses it.
func (p *Plane) SNATTranslationConns(a netip.Addr) (uint64, bool) {
	return p.snats.AddrConns(a)
}

// SNATTranslationLimit is the connection-limit statistics of the
// translation address a (current, maximum, refused connections; show
// ltm snat-translation); false when a has no connection-limit.
func (p *Plane) SNATTranslationLimit(a netip.Addr) (snatobj.Limited, bool) {
	return p.snats.AddrCurrent(a)
}

// snatArrival reports whether a SNAT or NAT of cfg has a VLAN list: the
// listeners then keep each connection's arrival interface (IP_PKTINFO)
// and the flows read it at accept, for the source choice
// (state.SNATSourceHeldOn). Without one, nothing is read.
func snatArrival(cfg *Config) bool {
	for _, s := range cfg.SNATs {
		if s.VLANs != nil {
			return true
		}
	}
	for _, n := range cfg.NATs {
		if n.VLANs != nil && !n.Disabled {
			return true
		}
	}
	return false
}
