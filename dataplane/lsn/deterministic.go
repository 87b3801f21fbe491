package lsn

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Deterministic mode gives every subscriber one translation address and
// one range of ports, computed from its address alone, so that the
// translation address and port seen by a server name the subscriber
// without a log (Reverse).
//
// The subscribers are the addresses of the source prefixes of the
// virtual servers that use the pool, counted in order (the daemon sorts
// the prefixes); the N subscribers are spread evenly over the A
// translation addresses, ceil(N/A) on each, and each gets the same
// share of the translation port range: k = P / ceil(N/A) ports, where P
// is the range's size. Subscriber i takes address i / ceil(N/A) and the
// ports from low + (i mod ceil(N/A))·k on [M: F5 documents that the
// mapping is computed and reversible (its dnatutil tool), not the
// formula; this one keeps a subscriber's ports in one range on one
// address, as F5's does].
type detMap struct {
	subs    addrSpace
	perAddr uint64 // subscribers on one translation address
	k       uint64 // ports each
	low     uint16
	addrs   addrSpace
}

func newDetMap(pc *config.LSNPool, addrs addrSpace) *detMap {
	d := &detMap{subs: newAddrSpace(pc.Subscribers), low: pc.PortLow, addrs: addrs}
	if addrs.n == 0 || d.subs.n == 0 {
		return d
	}
	d.perAddr = (d.subs.n + addrs.n - 1) / addrs.n
	d.k = (uint64(pc.PortHigh) - uint64(pc.PortLow) + 1) / d.perAddr
	return d
}

// DeterministicShare is the ports each subscriber gets from a
// deterministic pool with addrs translation addresses, subs
// subscribers and ports ports per address; 0 when there are too many
// subscribers (the daemon refuses the configuration).
func DeterministicShare(addrs, subs, ports uint64) uint64 {
	if addrs == 0 || subs == 0 {
		return 0
	}
	per := (subs + addrs - 1) / addrs
	return ports / per
}

func (d *detMap) has(a netip.Addr) bool { return d.subs.contains(a) }

// mapping is subscriber a's translation address and port range.
func (d *detMap) mapping(a netip.Addr) (netip.Addr, uint16, uint16, bool) {
	i, ok := d.subs.index(a)
	if !ok || d.k == 0 {
		return netip.Addr{}, 0, 0, false
	}
	ta, ok := d.addrs.at(i / d.perAddr)
	if !ok {
		return netip.Addr{}, 0, 0, false
	}
	lo := uint64(d.low) + (i%d.perAddr)*d.k
	return ta, uint16(lo), uint16(lo + d.k - 1), true
}

// reverse is the subscriber whose range holds port on translation
// address ta.
func (d *detMap) reverse(ta netip.Addr, port uint16) (netip.Addr, bool) {
	ai, ok := d.addrs.index(ta)
	if !ok || d.k == 0 || port < d.low {
		return netip.Addr{}, false
	}
	b := uint64(port-d.low) / d.k
	if b >= d.perAddr {
		return netip.Addr{}, false
	}
	return d.subs.at(ai*d.perAddr + b)
}

// takeDeterministic holds a free port of the client's range.
func (p *Pool) takeDeterministic(client netip.AddrPort, udp, four bool) (*portUse, uint16, uint16) {
	if p.det == nil {
		return nil, 0, 0
	}
	ta, lo, hi, ok := p.det.mapping(client.Addr().Unmap())
	if !ok || ta.Is4() != four {
		return nil, 0, 0
	}
	st := p.addr(ta)
	u := p.portIn(st, client, udp, lo, hi)
	if u == nil {
		p.dropAddr(st)
		return nil, 0, 0
	}
	return u, lo, hi
}

// Mapping is a deterministic pool's translation address and port range
// for subscriber a; false when the pool is not deterministic or a is
// none of its subscribers.
func (p *Pool) Mapping(a netip.Addr) (netip.Addr, uint16, uint16, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.det == nil {
		return netip.Addr{}, 0, 0, false
	}
	return p.det.mapping(a.Unmap())
}

// Reverse is the subscriber a deterministic pool maps translation
// address ta and port to.
func (p *Pool) Reverse(ta netip.Addr, port uint16) (netip.Addr, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.det == nil {
		return netip.Addr{}, false
	}
	return p.det.reverse(ta.Unmap(), port)
}
