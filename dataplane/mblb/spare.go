package mblb

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// spareSet is min-conn without OneConnect (Config.MinConn): connections
// opened to each member ahead of need, which a client takes as its own
// the first time one of its messages goes to that member, instead of
// paying a connect; the janitor opens another in its place. They are
// bare sockets until taken: on event loops a socket DialFD gave, which
// the taking client's loop adopts; on goroutines a net.Conn. No
// per-message cost: a client looks here only when it would dial.
type spareSet struct {
	e       *Engine
	n       int
	members func() []Member

	mu      sync.Mutex
	idle    map[spareKey][]spareConn
	dialing map[spareKey]int
	closed  bool
}

// spareConn is one connection opened ahead: fd (+1, 0: none) on loops,
// c on goroutines.
type spareConn struct {
	m     Member
	fd    int
	done  bool
	local netip.AddrPort
	c     net.Conn
}

func (sp spareConn) close() {
	if sp.c != nil {
		sp.c.Close()
	} else if sp.fd > 0 {
		rawsock.Close(sp.fd - 1)
	}
}

// alive reports whether the member has not closed or refused the
// connection meanwhile: no error pending on the socket, and a peek that
// finds no end of stream (bytes the member sent unasked are left).
func (sp spareConn) alive() bool {
	check := func(fd int) error {
		if v, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_ERROR); err != nil || v != 0 {
			return errSpareDead
		}
		var b [1]byte
		n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			return errSpareDead // the member's FIN
		case err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.ENOTCONN):
			return errSpareDead
		}
		return nil
	}
	if sp.c != nil {
		return rawsock.Control(sp.c, check) == nil || !isRawConn(sp.c)
	}
	return check(sp.fd-1) == nil
}

var errSpareDead = errors.New("mblb: connection opened ahead was closed")

// isRawConn reports whether c exposes its socket (a TLS connection does
// not: it is then taken on trust, and a dead one fails as any would).
func isRawConn(c net.Conn) bool {
	_, ok := c.(syscall.Conn)
	return ok
}

func newSpareSet(e *Engine) *spareSet {
	return &spareSet{e: e, n: e.cfg.MinConn, members: e.cfg.MinConnMembers,
		idle: make(map[spareKey][]spareConn), dialing: make(map[spareKey]int)}
}

// spareKey files the connections opened ahead by member and the address
// they go to: a member at port any (or translate-port disabled) on a
// virtual of every port is warmed on each port clients asked for, and a
// client of one port never takes a connection to another.
//
// via is Member.Via: a member listed once per address its clients
// reached (automap from that address, ClientOptions.ViaLocal) is warmed
// from each, and a client takes only one that left from the address it
// reached.
type spareKey struct {
	id  MemberID
	to  netip.AddrPort
	via netip.Addr
}

func keyOfSpare(m Member) spareKey { return spareKey{m.ID, m.Addr, m.Via} }

// take gives the client s a connection to m opened ahead, as its own, or
// nil when none is idle (the client then dials). A loop's client takes
// a socket (DialFD), a goroutine's a net.Conn, so each kind is only
// taken where it is served.
func (p *spareSet) take(s *ClientConn, m Member, cur *evl) *serverConn {
	if (cur != nil) != (p.e.cfg.DialFD != nil) {
		return nil
	}
	if s.viaLocal {
		m.Via = s.local.Addr() // as dial would leave
	}
	for {
		p.mu.Lock()
		k := keyOfSpare(m)
		list := p.idle[k]
		if len(list) == 0 {
			p.mu.Unlock()
			return nil
		}
		sp := list[len(list)-1]
		list[len(list)-1] = spareConn{}
		p.idle[k] = list[:len(list)-1]
		p.mu.Unlock()
		if sp.m.Addr != m.Addr || sp.m.Via != m.Via || !sp.alive() {
			sp.close()
			continue
		}
		ms := p.e.memberStats(m.ID)
		var sc *serverConn
		var err error
		if sp.c != nil {
			sc, err = p.e.attachConn(s, m, s, ms, sp.c)
		} else {
			sc, err = p.e.attachFD(s, m, s, ms, cur, sp.fd-1, sp.done, sp.local)
		}
		if err != nil {
			return nil
		}
		p.e.stats.spareTaken.Add(1)
		return sc
	}
}

// keep opens connections until each member the proxy lists has n idle
// (counting those being dialled), closes those that died or whose
// member is no longer listed (drained, disabled, removed). The janitor
// calls it every tick.
func (p *spareSet) keep() {
	members := p.members()
	listed := make(map[spareKey]bool, len(members))
	var dead []spareConn
	for _, m := range members {
		k := keyOfSpare(m)
		listed[k] = true
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		list := p.idle[k]
		kept := list[:0]
		for _, sp := range list {
			if sp.m.Addr == m.Addr && sp.alive() {
				kept = append(kept, sp)
			} else {
				dead = append(dead, sp)
			}
		}
		clear(list[len(kept):])
		p.idle[k] = kept
		n := p.n - len(kept) - p.dialing[k]
		p.dialing[k] += max(n, 0)
		p.mu.Unlock()
		for range n {
			p.open(m)
		}
	}
	p.mu.Lock()
	for id, list := range p.idle {
		if !listed[id] {
			dead = append(dead, list...)
			delete(p.idle, id)
		}
	}
	p.mu.Unlock()
	for _, sp := range dead {
		sp.close()
	}
}

// open dials one connection to m ahead of need: a non-blocking connect
// on loops (the socket joins a loop when a client takes it), a goroutine
// otherwise. A failed dial is reported as any failed connect is, and
// tried again at the next tick.
func (p *spareSet) open(m Member) {
	e := p.e
	if e.cfg.DialFD != nil {
		fd, done, local, err := e.cfg.DialFD(netip.AddrPort{}, m)
		p.opened(m, spareConn{m: m, fd: fd + 1, done: done, local: local}, err)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.cfg.ConnectTimeout)
		c, err := e.cfg.Dial(ctx, netip.AddrPort{}, m)
		cancel()
		p.opened(m, spareConn{m: m, c: c}, err)
	}()
}

// opened files a connection open dialled as idle, or gives its slot back.
func (p *spareSet) opened(m Member, sp spareConn, err error) {
	p.mu.Lock()
	k := keyOfSpare(m)
	p.dialing[k]--
	if err != nil || p.closed {
		p.mu.Unlock()
		if err != nil {
			p.e.logf("mblb: connect to %s %s failed: %v", m.Name, m.Addr, err)
			p.e.memberFailed(m, p.e.memberStats(m.ID), err)
		} else {
			sp.close()
		}
		return
	}
	p.idle[k] = append(p.idle[k], sp)
	p.mu.Unlock()
	p.e.stats.spareConns.Add(1)
}

// idleCount is how many connections opened ahead wait for a client.
func (p *spareSet) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, list := range p.idle {
		n += len(list)
	}
	return n
}

// closeAll closes the idle ones with the engine.
func (p *spareSet) closeAll() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = map[spareKey][]spareConn{}
	p.mu.Unlock()
	for _, list := range idle {
		for _, sp := range list {
			sp.close()
		}
	}
}
