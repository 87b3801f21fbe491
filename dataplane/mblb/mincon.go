package mblb

import "net/netip"

// clientAddr is the client's address, or none for a connection opened
// ahead of need (min-conn), which no client asked for.
func (s *ClientConn) clientAddr() netip.AddrPort {
	if s == nil {
		return netip.AddrPort{}
	}
	return s.client
}

// noteLoop remembers an event loop a client came in on, so that min-conn
// opens its connections on the loops that serve the clients (a pooled
// connection on the caller's loop needs no hand-off per message). It
// runs per accepted client only when min-conn is set: one atomic load
// when the loop is known already.
func (e *Engine) noteLoop(l *evl) {
	for {
		cur := e.spareLoops.Load()
		var list []*evl
		if cur != nil {
			list = *cur
		}
		for _, x := range list {
			if x == l {
				return
			}
		}
		next := append(append(make([]*evl, 0, len(list)+1), list...), l)
		if e.spareLoops.CompareAndSwap(cur, &next) {
			return
		}
	}
}

// keepMin opens connections until each member OneConnect.Members lists
// has MinConn in the pool (source-mask any, no label; a member listed
// with Via, once per address its clients reached, in that address's
// group, the connections leaving from it), counting those
// being dialled, within max-size and the member's connection limit. The
// janitor calls it every tick; the dials run elsewhere, so a member that
// does not answer holds nothing up, and one that refuses is reported as
// any failed connect is (and tried again at the next tick).
func (p *connPool) keepMin() {
	if p.cfg.Members == nil {
		return
	}
	want := min(p.cfg.MinConn, p.cfg.MaxSize)
	// Once the clients' loops are known, idle connections opened on
	// goroutines before them (the virtual's first seconds) make way for
	// ones on the loops: a loop's request would pass them over for one
	// of its own while the pool may grow.
	onLoops := p.e.cfg.DialFD != nil && p.e.spareLoops.Load() != nil
	var moved []*serverConn
	for _, m := range p.cfg.Members() {
		// One opened ahead for the clients of an address (Via: automap
		// from the address they reached) is theirs alone, as their own
		// connections are (acquire).
		key := poolKey{id: m.ID, to: m.Addr, src: m.Via}
		p.mu.Lock()
		g := p.groups[key]
		if g == nil {
			g = &poolGroup{}
			p.groups[key] = g
		}
		live := g.dialing
		for _, sc := range g.conns {
			if onLoops && sc.lp == nil && reusable(sc) {
				moved = append(moved, sc)
				continue
			}
			if !sc.retired && !sc.down.Load() && !sc.uploading.Load() {
				live++
			}
		}
		n := 0
		for ; live+n < want; n++ {
			if p.cfg.MayOpen != nil {
				if room, _ := p.cfg.mayOpen(p, m, false); !room {
					break
				}
			}
			g.dialing++
		}
		for _, sc := range moved {
			p.removeLocked(sc)
		}
		if n == 0 {
			p.dropEmpty(key, g)
		}
		p.mu.Unlock()
		for _, sc := range moved {
			sc.shutdown()
		}
		moved = moved[:0]
		for i := 0; i < n; i++ {
			p.openSpare(m, key, g)
		}
	}
}

// openSpare dials one connection to m ahead of need, on one of the loops
// the clients came in on (posted to it: a loop's sockets are its own), or
// on a goroutine when none is known yet. The slot was counted as
// dialling in g by keepMin. An IIOP virtual's (its sessions run on
// goroutines) is dialled on a goroutine, given its shared state before a
// client can take it, and read by iiopSharedRead, as open does.
func (p *connPool) openSpare(m Member, key poolKey, g *poolGroup) {
	e := p.e
	if e.cfg.DialFD != nil && !p.iiop {
		if loops := e.spareLoops.Load(); loops != nil && len(*loops) > 0 {
			p.mu.Lock()
			l := (*loops)[e.spareNext%len(*loops)]
			e.spareNext++
			p.mu.Unlock()
			l.Post(func() {
				sc, err := e.dialLoop(nil, m, nil, l)
				p.spareOpened(sc, err, key, g)
			})
			return
		}
	}
	go func() {
		sc, err := e.dial(nil, m, nil, nil)
		if err == nil && p.iiop {
			sc.iiop = newIIOPShared() // before a client can take it
		}
		p.spareOpened(sc, err, key, g)
		switch {
		case sc == nil:
		case p.iiop:
			sc.iiopSharedRead()
		default:
			sc.start()
		}
	}()
}

// spareOpened files a connection min-conn opened as idle in its group, or
// gives its slot back when the dial failed.
func (p *connPool) spareOpened(sc *serverConn, err error, key poolKey, g *poolGroup) {
	p.mu.Lock()
	g.dialing--
	p.cond.Broadcast()
	if err != nil {
		p.dropEmpty(key, g)
		p.mu.Unlock()
		return
	}
	sc.key = key
	sc.idleCounted = true
	g.conns = append(g.conns, sc)
	g.pushIdle(sc)
	p.idle++
	if p.idle > p.maxIdle {
		p.maxIdle = p.idle
	}
	p.created.Add(1)
	p.mu.Unlock()
	p.e.stats.spareConns.Add(1)
	if fn := p.cfg.Idle; fn != nil {
		fn(sc.leg.Member)
	}
}
