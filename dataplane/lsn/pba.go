package lsn

import (
	"net/netip"
	"time"
)

// Port block allocation: a subscriber's connections take ports from
// its blocks of block-size ports, all on one translation address [M:
// F5 keeps a subscriber's blocks together; its wording]; a new block is
// allocated when its blocks are full, up to client-block-limit. A block
// ends block-idle-timeout after its last connection ended, or at
// block-lifetime (0: never); a block past its lifetime that still has
// connections is a zombie: it takes no new ones and ends with its last,
// or zombie-timeout after its lifetime ended, when Sweep closes its
// connections' server sides (Translation.Attach).

// slotsPerAddr is how many blocks one translation address holds.
func (p *Pool) slotsPerAddr() int {
	pc := p.cfg
	if pc.BlockSize <= 0 {
		return 0
	}
	return (int(pc.PortHigh) - int(pc.PortLow) + 1) / pc.BlockSize
}

// takePBA holds a port of one of sub's blocks, allocating a block when
// it has none with a free port; nb is the new block, if any.
func (p *Pool) takePBA(sub *subscriber, client netip.AddrPort, udp, four bool, now time.Time) (u *portUse, b, nb *block) {
	pc := p.cfg
	var at netip.Addr
	for _, b := range sub.blocks {
		at = b.addr.addr
		if b.zombie || pc.BlockLifetime > 0 && now.Sub(b.created) >= pc.BlockLifetime {
			continue
		}
		if b.addr.addr.Is4() != four {
			continue
		}
		if u := p.portIn(b.addr, client, udp, b.low, b.high); u != nil {
			return u, b, nil
		}
	}
	if len(sub.blocks) >= max(pc.ClientBlockLimit, 1) {
		return nil, nil, nil
	}
	nb = p.newBlock(sub, four, at, now)
	if nb == nil {
		return nil, nil, nil
	}
	u = p.portIn(nb.addr, client, udp, nb.low, nb.high)
	return u, nb, nb
}

// newBlock allocates a free block for sub: on prefer (the address of
// its other blocks) when valid, else on the next address in turn.
func (p *Pool) newBlock(sub *subscriber, four bool, prefer netip.Addr, now time.Time) *block {
	pc := p.cfg
	slots := p.slotsPerAddr()
	if slots == 0 {
		return nil
	}
	try := func(a netip.Addr) *block {
		st := p.addr(a)
		if st.slots == nil {
			st.slots = map[int]*block{}
		}
		for s := 0; s < slots; s++ {
			if st.slots[s] != nil {
				continue
			}
			lo := int(pc.PortLow) + s*pc.BlockSize
			b := &block{owner: sub, addr: st, slot: s, low: uint16(lo), high: uint16(lo + pc.BlockSize - 1), created: now, last: now}
			st.slots[s] = b
			sub.blocks = append(sub.blocks, b)
			p.Stats.BlocksActive.Add(1)
			p.Stats.BlocksTotal.Add(1)
			return b
		}
		p.dropAddr(st)
		return nil
	}
	if prefer.IsValid() {
		return try(prefer)
	}
	tries := min(p.main.n, maxAddrTries)
	for i := uint64(0); i < tries; i++ {
		p.cursor++
		a, ok := p.main.at(p.cursor % p.main.n)
		if !ok || a.Is4() != four {
			continue
		}
		if b := try(a); b != nil {
			return b
		}
	}
	return nil
}

// freeBlock gives a block's slot back.
func (p *Pool) freeBlock(b *block) {
	delete(b.addr.slots, b.slot)
	p.dropAddr(b.addr)
	p.Stats.BlocksActive.Add(-1)
	if b.zombie {
		p.Stats.BlocksZombie.Add(-1)
	}
}
