package lsn

import (
	"context"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
)

// Inbound connections: with inbound-connections automatic, every
// translation address and port in use (TCP) listens, and a connection
// arriving there is sent to the subscriber address and port it maps to,
// from the connecting peer's address when this host can bind it
// (loopback), else from the host's choice [M: BIG-IP keeps the peer's
// address; a proxy can only where the address is local]. explicit
// listens only for translations a rule opened with LSN::inbound enable
// [M]. A UDP translation takes inbound datagrams the same way
// (inbound_udp.go).

// ReusePort sets SO_REUSEADDR and SO_REUSEPORT on a socket, so that a
// translation's server side and its inbound listener can share the
// address and port, whichever binds first.
func ReusePort(fd int) error {
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return err
	}
	return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, soReusePort, 1)
}

const soReusePort = 15 // SO_REUSEPORT on Linux

// ListenUDPShared is an unconnected UDP socket on exactly at, with
// ReusePort, so that a translation's own sockets (a TFTP leg's, an RTSP
// media channel's) can share its address and port with the dials made
// from it.
func ListenUDPShared(at netip.AddrPort) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	c, err := lc.ListenPacket(context.Background(), "udp", at.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

type inbound struct {
	ln   net.Listener
	pool *Pool
	use  *portUse
	udp  *inboundUDP // a UDP translation's (inbound_udp.go); ln is nil
}

// dialTimeout bounds the connect to a subscriber.
const dialTimeout = 5 * time.Second

// openInbound listens on u's address and port when the pool (or the
// rule, want) lets inbound connections in. The caller holds p.mu.
func (p *Pool) openInbound(u *portUse, want *Want) {
	on := p.cfg.Inbound == config.LSNInboundAutomatic
	if want != nil && want.Inbound != "" {
		on = want.Inbound == "enabled" && p.cfg.Inbound != config.LSNInboundDisabled
	}
	pcpOnly := want != nil && want.pcp && !on
	if want != nil && want.pcp {
		on = true // a PCP MAP mapping (pcp.go)
	}
	if !on || u.in != nil {
		return
	}
	u.pcpIn = pcpOnly
	if u.udp {
		p.openInboundUDP(u) // inbound_udp.go
		return
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "tcp", u.at.String())
	if err != nil {
		return // another program holds it: no inbound for this one
	}
	in := &inbound{ln: ln, pool: p, use: u}
	u.in = in
	go in.serve()
}

func (in *inbound) close() {
	if in.udp != nil {
		in.udp.close()
		return
	}
	in.ln.Close()
}

func (in *inbound) serve() {
	for {
		c, err := in.ln.Accept()
		if err != nil {
			return
		}
		tc := c.(*net.TCPConn)
		if ok, last := in.pool.admit(in.use, addrPortOf(c.RemoteAddr())); !ok {
			in.pool.Stats.InboundRefused.Add(1)
			tc.SetLinger(0)
			tc.Close()
			continue
		} else if last { // XLAT::listen -single-connection: this one only
			in.ln.Close()
		}
		go in.relay(tc)
	}
}

// relay sends one inbound connection to the subscriber.
func (in *inbound) relay(c *net.TCPConn) {
	p := in.pool
	p.mu.Lock()
	to := in.use.client
	p.mu.Unlock()
	peer := addrPortOf(c.RemoteAddr())
	d := net.Dialer{Timeout: dialTimeout}
	if a := peer.Addr(); a.IsLoopback() && a.Is4() == to.Addr().Is4() {
		d.LocalAddr = &net.TCPAddr{IP: a.AsSlice()}
	}
	s, err := d.Dial("tcp", to.String())
	if err != nil && d.LocalAddr != nil {
		d.LocalAddr = nil
		s, err = d.Dial("tcp", to.String())
	}
	if err != nil {
		p.Stats.InboundRefused.Add(1)
		c.SetLinger(0)
		c.Close()
		return
	}
	p.Stats.InboundTotal.Add(1)
	p.Stats.InboundActive.Add(1)
	defer p.Stats.InboundActive.Add(-1)
	sc := s.(*net.TCPConn)
	var cw, sw io.Writer = sc, c // the bytes' ways: counted when tracked
	if f := p.track(peer, addrPortOf(c.LocalAddr()), addrPortOf(sc.LocalAddr()), to, "tcp", func() {
		c.SetLinger(0)
		sc.SetLinger(0)
		c.Close()
		sc.Close()
	}); f != nil {
		defer p.set.Table.Remove(f)
		cw, sw = &countWriter{w: sc, f: f, in: true}, &countWriter{w: c, f: f}
	}
	done := make(chan struct{})
	go func() {
		io.Copy(cw, c)
		sc.CloseWrite()
		close(done)
	}()
	io.Copy(sw, sc)
	c.CloseWrite()
	<-done
	c.Close()
	sc.Close()
}

// admit reports whether an inbound peer may come in (an XLAT::listen
// entry's allow, entries.go), and whether it is the last the listener
// takes (-single-connection).
func (p *Pool) admit(u *portUse, peer netip.AddrPort) (ok, last bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a := u.allow; a.Addr().IsValid() {
		if peer.Addr().Unmap() != a.Addr().Unmap() || a.Port() != 0 && peer.Port() != a.Port() {
			return false, false
		}
	}
	return true, u.single
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	return netip.AddrPort{}
}

// track puts an inbound relay in the set's connection table (nil when it
// has none): the outside peer and the translation address it reached on
// the client side, the relay's source and the subscriber on the server
// side, under no virtual server [M: it is the pool's, reached from
// outside]; closer ends it (delete sys connection).
func (p *Pool) track(peer, at, src, to netip.AddrPort, proto string, closer func()) *flows.Flow {
	t := p.set.Table
	if t == nil {
		return nil
	}
	f := &flows.Flow{Client: peer, Local: at, Protocol: proto}
	f.Closer = func(bool) { closer() }
	f.AddLeg(&flows.Leg{Client: src, Server: to})
	t.Add(f)
	return f
}

// countWriter counts what an inbound relay writes on its flow: in, the
// peer's bytes toward the subscriber; else the subscriber's answers.
type countWriter struct {
	w  io.Writer
	f  *flows.Flow
	in bool
}

func (cw *countWriter) Write(b []byte) (int, error) {
	n, err := cw.w.Write(b)
	note(cw.f, cw.in, n)
	return n, err
}

// note counts n bytes on f's sides (in: from the peer to the subscriber).
func note(f *flows.Flow, in bool, n int) {
	f.Touch(time.Now().UnixNano())
	leg := f.Legs()[0]
	if in {
		f.BytesIn.Add(uint64(n))
		f.PktsIn.Add(1)
		leg.BytesOut.Add(uint64(n))
		leg.PktsOut.Add(1)
		return
	}
	f.BytesOut.Add(uint64(n))
	f.PktsOut.Add(1)
	leg.BytesIn.Add(uint64(n))
	leg.PktsIn.Add(1)
}
