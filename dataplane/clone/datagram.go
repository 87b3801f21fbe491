package clone

import (
	"net"
	"syscall"
)

// Datagrams is the clone sockets of one UDP flow: a socket connected to
// one member of each clone pool that gave one, for the flow's life. A
// datagram is copied as it is, one datagram per datagram [M]: UDP has no
// stream to buffer, so a copy the socket cannot take at once is lost, as
// the datagram itself would be, and the flow never waits for it.
type Datagrams struct {
	set   *Set
	socks []*dgramSock
}

// dgramSock is one clone member's socket of a UDP flow.
type dgramSock struct {
	dest   Dest
	server bool
	conn   *net.UDPConn
	rc     syscall.RawConn
}

// StartDatagrams opens the clone sockets of a new UDP flow; nil when s is
// nil or no clone pool gave a member. A UDP socket's connect sends
// nothing, so Start never waits on the network here either; a member
// whose socket cannot be made is dropped and counted.
func (s *Set) StartDatagrams() *Datagrams {
	if s == nil || len(s.Targets) == 0 {
		return nil
	}
	var g *Datagrams
	s.pick(func(d Dest, server bool) {
		g = s.AddDatagrams(g, d, server)
	})
	return g
}

// AddDatagrams opens one more clone socket, to d, for the UDP flow g
// (nil: a new flow's, which it returns; g as it was when the socket
// cannot be made, dropped and counted): a rule's clone command, which
// copies one flow where the virtual's clone pools copy them all. s gives
// the counters; it may have no Targets. The caller orders it before the
// flow's first datagram and its Close.
func (s *Set) AddDatagrams(g *Datagrams, d Dest, server bool) *Datagrams {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(d.Addr))
	var rc syscall.RawConn
	if err == nil {
		if rc, err = c.SyscallConn(); err != nil {
			c.Close()
		}
	}
	if err != nil {
		s.Counters.Dropped.Add(1)
		if d.Done != nil {
			d.Done(false)
		}
		return g
	}
	s.Counters.Conns.Add(1)
	if g == nil {
		g = &Datagrams{set: s, socks: make([]*dgramSock, 0, max(len(s.Targets), 1))}
	}
	g.socks = append(g.socks, &dgramSock{dest: d, server: server, conn: c, rc: rc})
	return g
}

// Join is g's clone sockets and h's as one flow's (g's, grown, when
// both have some); either may be nil. Like AddDatagrams, the caller
// orders it with the flow's copies and its Close.
func (g *Datagrams) Join(h *Datagrams) *Datagrams {
	if g == nil || len(g.socks) == 0 {
		return h
	}
	if h != nil {
		g.socks = append(g.socks, h.socks...)
	}
	return g
}

// Client copies a datagram as the client sent it to the clientside pools.
func (g *Datagrams) Client(p []byte) { g.send(p, false) }

// Both copies a datagram to every clone socket of the flow, clientside
// and serverside alike: a message-routing flow's datagrams, which go to
// peers the router picks rather than to one member, as the client sent
// them.
func (g *Datagrams) Both(p []byte) {
	if g == nil {
		return
	}
	for _, s := range g.socks {
		g.sendTo(s, p)
	}
}

// Server copies a datagram as it goes to the member to the serverside
// pools.
func (g *Datagrams) Server(p []byte) { g.send(p, true) }

func (g *Datagrams) send(p []byte, server bool) {
	if g == nil {
		return
	}
	for _, s := range g.socks {
		if s.server == server {
			g.sendTo(s, p)
		}
	}
}

// sendTo copies p to one clone socket, counting what it took.
func (g *Datagrams) sendTo(s *dgramSock, p []byte) {
	if n, ok := sendNow(s.rc, p); ok {
		g.set.Counters.Bytes.Add(uint64(n))
		if s.dest.Sent != nil {
			s.dest.Sent(n)
		}
	}
}

// Close ends the flow's clone sockets (what clone members answered is
// never read; it goes with the socket).
func (g *Datagrams) Close() {
	if g == nil {
		return
	}
	for _, s := range g.socks {
		s.conn.Close()
		if s.dest.Done != nil {
			s.dest.Done(true)
		}
	}
}
