package dataplane

import "net/netip"

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
