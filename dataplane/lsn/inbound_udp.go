package lsn

import (
	"github.com/openltm/openltm/dataplane/flows"

	"context"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// Inbound UDP: a UDP translation that takes inbound datagrams (inbound-
// connections automatic, or a PCP MAP mapping) has a socket of its own
// on the translation address and port, shared with the translation's
// server-side sockets (SO_REUSEPORT; the host gives a connected socket
// the datagrams of its own peer, this one the others'). Each peer that
// sends one gets a socket toward the subscriber's address and port,
// bound to the peer's address where the host can (loopback), else the
// host's choice [M, as for TCP]; what the subscriber answers on it goes
// back to the peer from the translation address and port. A peer idle
// for udpPeerIdle is forgotten.

// udpPeerIdle is how long a peer's relay lives without a datagram [M].
const udpPeerIdle = 60 * time.Second

type inboundUDP struct {
	pool  *Pool
	use   *portUse
	conn  *net.UDPConn
	mu    sync.Mutex
	peers map[netip.AddrPort]*udpPeer
}

type udpPeer struct {
	c    *net.UDPConn
	last time.Time
	// f is the relay's flow in the connection table; nil untracked.
	f *flows.Flow
}

// openInboundUDP opens u's inbound socket. The caller holds p.mu.
func (p *Pool) openInboundUDP(u *portUse) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp", u.at.String())
	if err != nil {
		return // another program holds it: no inbound for this one
	}
	iu := &inboundUDP{pool: p, use: u, conn: pc.(*net.UDPConn), peers: map[netip.AddrPort]*udpPeer{}}
	u.in = &inbound{pool: p, use: u, udp: iu}
	go iu.serve()
}

// udpAddrPortOf is a UDP socket's address.
func udpAddrPortOf(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

func (iu *inboundUDP) close() {
	iu.conn.Close()
	iu.mu.Lock()
	for k, pe := range iu.peers {
		pe.c.Close()
		delete(iu.peers, k)
	}
	iu.mu.Unlock()
}

func (iu *inboundUDP) serve() {
	buf := make([]byte, 65535)
	for {
		n, from, err := iu.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		pe := iu.peer(from)
		if pe == nil {
			iu.pool.Stats.InboundRefused.Add(1)
			continue
		}
		if _, err := pe.c.Write(buf[:n]); err == nil && pe.f != nil {
			note(pe.f, true, n)
		}
	}
}

// peer is from's relay toward the subscriber, made at its first
// datagram.
func (iu *inboundUDP) peer(from netip.AddrPort) *udpPeer {
	now := time.Now()
	iu.mu.Lock()
	defer iu.mu.Unlock()
	if pe := iu.peers[from]; pe != nil {
		pe.last = now
		return pe
	}
	p := iu.pool
	if ok, last := p.admit(iu.use, from); !ok || last && len(iu.peers) > 0 {
		return nil
	}
	p.mu.Lock()
	to := iu.use.client
	p.mu.Unlock()
	var laddr *net.UDPAddr
	if a := from.Addr().Unmap(); a.IsLoopback() && a.Is4() == to.Addr().Unmap().Is4() {
		laddr = &net.UDPAddr{IP: a.AsSlice()}
	}
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(to))
	if err != nil && laddr != nil {
		c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
	}
	if err != nil {
		return nil
	}
	pe := &udpPeer{c: c, last: now}
	pe.f = p.track(from, iu.use.at, udpAddrPortOf(c.LocalAddr()), to, "udp", func() { c.Close() })
	if pe.f != nil {
		pe.f.SetIdleTimeout(udpPeerIdle)
	}
	iu.peers[from] = pe
	p.Stats.InboundTotal.Add(1)
	p.Stats.InboundActive.Add(1)
	go iu.back(from, pe)
	return pe
}

// back sends the subscriber's answers to the peer until the relay idles
// out or the socket closes.
func (iu *inboundUDP) back(to netip.AddrPort, pe *udpPeer) {
	defer iu.pool.Stats.InboundActive.Add(-1)
	buf := make([]byte, 65535)
	for {
		pe.c.SetReadDeadline(time.Now().Add(udpPeerIdle))
		n, err := pe.c.Read(buf)
		if err != nil {
			iu.mu.Lock()
			idle := time.Since(pe.last) >= udpPeerIdle
			if ne, ok := err.(net.Error); ok && ne.Timeout() && !idle {
				iu.mu.Unlock()
				continue
			}
			if iu.peers[to] == pe {
				delete(iu.peers, to)
			}
			iu.mu.Unlock()
			pe.c.Close()
			if pe.f != nil {
				iu.pool.set.Table.Remove(pe.f)
			}
			return
		}
		iu.mu.Lock()
		pe.last = time.Now()
		iu.mu.Unlock()
		if _, err := iu.conn.WriteToUDPAddrPort(buf[:n], to); err == nil && pe.f != nil {
			note(pe.f, false, n)
		}
	}
}
