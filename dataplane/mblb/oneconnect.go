package mblb

import (
	"net/netip"
	"sync"
	"sync/atomic"
)

// poolKey groups the connections one message may use: same member at
// the same translated address and port, same masked server-side source
// (reference §6.1 source-mask). A member at port any (or a virtual with
// translate-port or translate-address disabled) on a virtual of every
// port goes to as many addresses as clients reach: to keeps their
// connections apart, so that a connection to one port never carries a
// request meant for another.
type poolKey struct {
	id  MemberID
	to  netip.AddrPort
	src netip.Addr
	// label is ONECONNECT::label: only requests with the same label share
	// a connection.
	label string
}

type poolGroup struct {
	conns   []*serverConn
	dialing int
	// idle holds, per event loop, the connections that went idle there,
	// newest last: a request on that loop takes one without looking at
	// every connection of the group (with OneConnect and many clients a
	// group holds as many connections as there are requests in flight).
	// Entries are checked when popped (reusable), so a connection taken
	// another way or closed since is skipped then.
	idle []loopIdle
}

// loopIdle is one loop's stack of idle connections (nil loop: goroutine
// connections, on systems without event loops or for tunnels).
type loopIdle struct {
	l     *evl
	conns []*serverConn
}

// reusable: sc is idle, open and may carry another message (not an
// upload's: upload.go). The caller holds mu.
func reusable(sc *serverConn) bool {
	return sc.idleCounted && !sc.removed && !sc.retired && !sc.down.Load() && !sc.uploading.Load()
}

// stack is l's idle stack in g, created on first use.
func (g *poolGroup) stack(l *evl) *loopIdle {
	for i := range g.idle {
		if g.idle[i].l == l {
			return &g.idle[i]
		}
	}
	g.idle = append(g.idle, loopIdle{l: l})
	return &g.idle[len(g.idle)-1]
}

// popIdle takes the newest reusable connection that went idle on l, or
// nil. The caller holds mu.
func (g *poolGroup) popIdle(l *evl) *serverConn {
	for i := range g.idle {
		st := &g.idle[i]
		if st.l != l {
			continue
		}
		for n := len(st.conns); n > 0; n = len(st.conns) {
			sc := st.conns[n-1]
			st.conns[n-1] = nil
			st.conns = st.conns[:n-1]
			sc.stacked = false
			if reusable(sc) {
				return sc
			}
		}
		return nil
	}
	return nil
}

// pushIdle records that sc went idle. A connection is in its stack once
// at most (an entry left by a connection taken another way serves again
// when it is idle again), and entries of connections closed since are
// dropped once the stack outgrows the group, so it stays bounded. The
// caller holds mu.
func (g *poolGroup) pushIdle(sc *serverConn) {
	if sc.stacked {
		return
	}
	st := g.stack(sc.lp.loop())
	if len(st.conns) > 2*len(g.conns)+8 {
		keep := st.conns[:0]
		for _, x := range st.conns {
			if x.removed {
				x.stacked = false
				continue
			}
			keep = append(keep, x)
		}
		clear(st.conns[len(keep):])
		st.conns = keep
	}
	sc.stacked = true
	st.conns = append(st.conns, sc)
}

// connPool is OneConnect: server connections shared by every client of the
// engine. A message takes an idle connection when there is one, opens a
// new one while the group is below MaxSize, and otherwise queues behind the
// least busy connection, so the member never sees more than MaxSize
// connections however many clients there are.
type connPool struct {
	e   *Engine
	cfg OneConnect

	// exclusive: one message at a time per connection (per-read framing
	// cannot tell two clients' requests apart once they share a segment).
	exclusive bool
	// iiop: the connections carry GIOP for several clients at once, each
	// request under an id of its own (iiopshare.go).
	iiop bool

	mu      sync.Mutex
	cond    sync.Cond // a dial finished, a connection left or went idle
	groups  map[poolKey]*poolGroup
	idle    int64
	maxIdle int64

	reuses, created atomic.Uint64
}

// OneConnectStats are the figures of `show ltm profile one-connect`.
type OneConnectStats struct {
	// CurrentIdle is the connections waiting for a message.
	CurrentIdle int64
	// Maximum is the highest CurrentIdle seen.
	Maximum int64
	// TotalReuses counts messages carried by a connection that had
	// carried one before.
	TotalReuses uint64
	// New counts connections opened.
	New uint64
}

func newConnPool(e *Engine, cfg OneConnect) *connPool {
	p := &connPool{e: e, cfg: cfg, groups: make(map[poolKey]*poolGroup)}
	// HTTP: one request at a time per server connection, as BIG-IP's
	// OneConnect does; members need not support pipelining.
	p.exclusive = cfg.Exclusive || e.cfg.Request.Mode == PerRead || e.respMode.Mode == PerRead ||
		e.cfg.Request.Mode == HTTP
	p.iiop = e.cfg.Request.Mode == IIOP
	p.cond.L = &p.mu
	return p
}

// OneConnectStats returns the pool's figures; ok is false without
// OneConnect.
func (e *Engine) OneConnectStats() (st OneConnectStats, ok bool) {
	p := e.pool
	if p == nil {
		return st, false
	}
	p.mu.Lock()
	st.CurrentIdle, st.Maximum = p.idle, p.maxIdle
	p.mu.Unlock()
	st.TotalReuses = p.reuses.Load()
	st.New = p.created.Load()
	return st, true
}

func (p *connPool) mask(a netip.Addr) netip.Addr {
	m := p.cfg.SourceMask
	if !m.IsValid() || m.IsUnspecified() {
		return netip.Addr{}
	}
	a = a.Unmap()
	if a.Is4() && m.Is4() {
		a4, m4 := a.As4(), m.As4()
		for i := range a4 {
			a4[i] &= m4[i]
		}
		return netip.AddrFrom4(a4)
	}
	return a
}

// take reserves sc for one message. The caller holds mu.
func (p *connPool) take(sc *serverConn) {
	if sc.uses > 0 {
		p.reuses.Add(1)
		if sc.uses >= p.cfg.MaxReuse {
			sc.retired = true
		}
	}
	sc.uses++
	if sc.idleCounted {
		sc.idleCounted = false
		p.idle--
	}
	sc.npending.Add(1)
}

// acquire returns a connection to m reserved for one message from s.
func (p *connPool) acquire(s *ClientConn, m Member, label string, cur *evl) (*serverConn, error) {
	key := poolKey{m.ID, m.Addr, p.mask(s.source), label}
	if s.viaLocal && !key.src.IsValid() {
		// It left from the address its client reached (automap's source
		// follows it): min-conn's connections opened ahead for that
		// address (Member.Via) are filed under it too (keepMin).
		key.src = s.local.Addr()
	}
	p.mu.Lock()
	for {
		g := p.groups[key]
		if g == nil {
			g = &poolGroup{}
			p.groups[key] = g
		}
		if s.isClosed() {
			p.dropEmpty(key, g)
			p.mu.Unlock()
			return nil, errClosed
		}
		// An idle connection on the caller's own loop is the best there
		// can be (no load, no hand-off): take it without the scan.
		if sc := g.popIdle(cur); sc != nil {
			p.take(sc)
			p.mu.Unlock()
			return sc, nil
		}
		var best *serverConn
		var bestLoad, bestScore int32
		bestFar := false
		live := 0
		for _, sc := range g.conns {
			if sc.retired || sc.down.Load() || sc.uploading.Load() {
				// (An upload's connection carries nothing else until
				// its body has gone, upload.go; meanwhile the pool may
				// open another beyond max-size.)
				continue
			}
			live++
			// A connection on another event loop counts one message
			// busier: writing to it costs a hand-off to that loop. Among
			// equal ones, the caller's own loop wins. (A goroutine's
			// connection, min-conn's opened before the loops were known,
			// is not passed over: it is there to be used.)
			l := sc.npending.Load()
			far := cur != nil && sc.lp != nil && sc.lp.loop() != cur
			score := l
			if far {
				score++
			}
			if best == nil || score < bestScore || (score == bestScore && bestFar && !far) {
				best, bestLoad, bestScore, bestFar = sc, l, score, far
			}
		}
		room := live+g.dialing < p.cfg.MaxSize
		// The member's connection limit (one-connect limit-type, decided
		// by the proxy): no new connection beyond it; limit-type idle
		// closes an idle one elsewhere to make room.
		limited := false
		if room && p.cfg.MayOpen != nil {
			room, limited = p.cfg.mayOpen(p, m, best != nil && bestLoad == 0)
		}
		// An idle connection is reused, unless it lives on another loop
		// while the pool may grow: one opened here serves this loop's
		// clients without a hand-off per message from then on.
		idle := bestLoad == 0 && !(bestFar && room)
		if best != nil && (idle || (!room && !p.exclusive)) {
			p.take(best)
			p.mu.Unlock()
			return best, nil
		}
		if room {
			return p.open(s, m, key, g, cur)
		}
		if limited {
			if p.cfg.CloseIdle && best == nil {
				if old := p.closeIdleOf(m.ID); old != nil {
					p.mu.Unlock()
					old.shutdown()
					p.mu.Lock()
					return p.open(s, m, key, g, cur)
				}
			}
			if best == nil {
				p.mu.Unlock()
				return nil, errNoRoom
			}
			if cur != nil || !p.exclusive {
				p.take(best)
				p.mu.Unlock()
				return best, nil
			}
		}
		if cur != nil {
			// An event loop never waits: the request queues behind the
			// least busy connection (HTTP members take pipelined
			// requests), or opens one over max-size when every slot is
			// still being dialled elsewhere.
			if best != nil {
				p.take(best)
				p.mu.Unlock()
				return best, nil
			}
			return p.open(s, m, key, g, cur)
		}
		p.cond.Wait() // every slot is being dialled, or busy and exclusive
	}
}

// open dials a new connection to m for s in g, reserved for one message.
// It is called with p.mu held and returns with it released; while the
// dial runs the slot counts as dialling, and the waiters are told when it
// ends either way (some wait because every slot was being dialled).
func (p *connPool) open(s *ClientConn, m Member, key poolKey, g *poolGroup, cur *evl) (*serverConn, error) {
	g.dialing++
	p.mu.Unlock()
	sc, err := p.e.dial(s, m, nil, cur)
	if err == nil && p.iiop {
		sc.iiop = newIIOPShared() // before another client can see it
	}
	p.mu.Lock()
	g.dialing--
	p.cond.Broadcast()
	if err != nil {
		p.dropEmpty(key, g)
		p.mu.Unlock()
		return nil, err
	}
	sc.key = key
	g.conns = append(g.conns, sc)
	p.created.Add(1)
	p.take(sc)
	p.mu.Unlock()
	if p.iiop {
		go sc.iiopSharedRead()
	} else {
		sc.start()
	}
	return sc, nil
}

// released returns one reservation; a connection left with none is idle
// again, or closed when it has served its age or reuses.
func (p *connPool) released(sc *serverConn) {
	if sc.npending.Add(-1) != 0 {
		return
	}
	p.mu.Lock()
	if sc.removed || sc.idleCounted || sc.npending.Load() != 0 {
		p.mu.Unlock()
		return
	}
	if sc.retired {
		p.removeLocked(sc)
		p.mu.Unlock()
		sc.shutdown()
		return
	}
	sc.idleCounted = true
	if g := p.groups[sc.key]; g != nil {
		g.pushIdle(sc)
	}
	p.idle++
	if p.idle > p.maxIdle {
		p.maxIdle = p.idle
	}
	if p.exclusive {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
	if fn := p.cfg.Idle; fn != nil {
		fn(sc.leg.Member)
	}
}

// retire closes sc once it is idle instead of pooling it again.
func (p *connPool) retire(sc *serverConn) {
	p.mu.Lock()
	sc.retired = true
	p.mu.Unlock()
}

// remove takes a connection that ended out of the pool.
func (p *connPool) remove(sc *serverConn) {
	p.mu.Lock()
	p.removeLocked(sc)
	p.mu.Unlock()
}

func (p *connPool) removeLocked(sc *serverConn) {
	if sc.removed {
		return
	}
	sc.removed = true
	if sc.idleCounted {
		sc.idleCounted = false
		p.idle--
	}
	if g := p.groups[sc.key]; g != nil {
		for i, x := range g.conns {
			if x == sc {
				last := len(g.conns) - 1
				g.conns[i] = g.conns[last]
				g.conns[last] = nil
				g.conns = g.conns[:last]
				break
			}
		}
		p.dropEmpty(sc.key, g)
	}
	p.cond.Broadcast()
}

// dropEmpty forgets a group with no connection, so members and sources
// that come and go leave nothing behind. The caller holds mu.
func (p *connPool) dropEmpty(key poolKey, g *poolGroup) {
	if len(g.conns) == 0 && g.dialing == 0 && p.groups[key] == g {
		delete(p.groups, key)
	}
}

// wake lets sessions waiting for a connection see that theirs closed.
func (p *connPool) wake() {
	p.mu.Lock()
	p.cond.Broadcast()
	p.mu.Unlock()
}

// expire closes idle connections past max-age or their idle timeout (a
// connection's own, Leg.SetIdleTimeout, else idle-timeout-override, else
// the engine's) and retires busy ones past max-age.
func (p *connPool) expire(now int64) {
	idleTO := int64(p.cfg.IdleTimeoutOverride)
	if idleTO == 0 {
		idleTO = int64(p.e.cfg.IdleTimeout)
	}
	var closing []*serverConn
	p.mu.Lock()
	for key, g := range p.groups {
		// min-conn's connections are not closed for being idle: the
		// group keeps that many (mincon.go) [M].
		kept := p.cfg.MinConn > 0 && key.label == "" && !key.src.IsValid()
		spare := len(g.conns) - p.cfg.MinConn
		for _, sc := range g.conns {
			old := now-sc.created > int64(p.cfg.MaxAge)
			if !sc.idleCounted {
				if old {
					sc.retired = true
				}
				continue
			}
			to := idleTO
			if d := sc.idleTO.Load(); d > 0 { // its translation address's tcp-idle-timeout (srcidle.go)
				to = d
			}
			idle := p.e.idleSince(now, sc.leg.lastActive.Load(), to)
			if !old && idle && kept {
				if spare <= 0 {
					continue
				}
				spare--
			}
			if old || idle {
				closing = append(closing, sc)
			}
		}
	}
	for _, sc := range closing {
		p.removeLocked(sc)
	}
	p.mu.Unlock()
	for _, sc := range closing {
		sc.shutdown()
	}
}

// persistLabel starts the label of a server connection keyed by a
// persistence key (ONECONNECT::select persist), so that no
// ONECONNECT::label a rule writes is ever taken for one.
const persistLabel = "\x00persist "

// ocLabel is the OneConnect label a message with persistence key persist
// is sent on: under ONECONNECT::select persist its persistence key (a
// message without one keeps the label [M: F5 does not say]), else the
// ONECONNECT::label in force. Reader only.
func (s *ClientConn) ocLabel(persist string) string {
	if s.selPersist && persist != "" {
		return persistLabel + persist
	}
	return s.label
}

// SetOneConnectLabel makes the client's later messages use only server
// connections opened with label l (ONECONNECT::label on a message-based
// virtual, in CLIENT_DATA); "" shares them with every client again.
// From the client's reader only (its rule events).
func (s *ClientConn) SetOneConnectLabel(l string) { s.label = l }

// SelectPersist makes the client's later messages key their server
// connections by their persistence key (ONECONNECT::select persist, in
// CLIENT_DATA) or stop (none). From the client's reader only.
func (s *ClientConn) SelectPersist(on bool) { s.selPersist = on }
