package rulelisten

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// A UDP related listener (proto 17) has no connection to accept: its
// "connection" is the first datagram from a peer the rule allows. From
// then on the listener's socket relays that peer's datagrams to the
// server, through a socket of their own from the source the proxy
// chooses (its SNAT), and the server's answers back to the peer from the
// listener's address, until neither side sent anything for idle.
// Datagrams from other peers are dropped. The relay counts as a waiting
// listener (MaxOpen) until it ends [M]. With a Track, the relay is a
// flow of the connection table while it lasts (show sys connection:
// the peer and the listener's address on the client side, the relay's
// source and the server on the server side, its age and idle time;
// delete sys connection ends it) and is counted in the counters the
// Track names (the virtual server's Ephemeral column).

// maxDatagram is the largest datagram relayed.
const maxDatagram = 64 << 10

// Track lists a relay in a connection table, so that an operator sees
// and can end it as any flow of the virtual server that opened it.
type Track struct {
	// Table is the plane's connection table.
	Table *flows.Table
	// Virtual is the virtual server's full path (the flow's).
	Virtual string
	// Counts takes the relay's connection and datagrams; nil: none.
	Counts flows.Counter
}

// Source is the server side's source a relay's peer is given, as the
// proxy's SNAT chooses it.
type Source struct {
	// Src is the source address and port (invalid: the kernel chooses).
	Src netip.AddrPort
	// Hold is the ltm snat-translation address the relay holds while it
	// lasts (given back, Release, when it ends) and whose
	// udp-idle-timeout, when set, replaces the relay's idle timeout;
	// nil: none.
	Hold *snatobj.Addr
	// Err refuses the relay (every translation address at its
	// connection limit): the peer's datagrams are dropped and the
	// listener closes.
	Err error
	// Strict is source-port preserve-strict: the relay leaves from
	// exactly Src's port (the peer's), or is not made (the port in use
	// on that address: refused as Err is), as the other UDP paths do.
	Strict bool
}

// OpenUDP binds spec.Bind for UDP and relays the first allowed peer's
// datagrams to server as above; source gives the server side's source
// for that peer (see Source), given the interface its first datagram
// arrived on (0: not read; read while spec.Arrival). track, when not
// nil, lists the relay in its table while it lasts. idle (or
// spec.IdleAt's) 0 or less keeps the relay until it is deleted or a
// socket fails (a timer policy's indefinite).
func OpenUDP(spec Spec, server netip.AddrPort, source func(peer netip.AddrPort, ifx int) Source, idle time.Duration, track *Track) (*Listener, error) {
	if open.Add(1) > MaxOpen {
		open.Add(-1)
		return nil, errors.New("too many related listeners are waiting already")
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(spec.Bind))
	if err != nil {
		open.Add(-1)
		return nil, err
	}
	var oob []byte // the datagrams' control messages, while spec.Arrival
	if spec.Arrival {
		if rc, err := c.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { rawsock.SetArrival(int(fd), true) })
		}
		oob = make([]byte, rawsock.ArrivalCmsgLen)
	}
	l := &Listener{ln: c, addr: addrOf(c.LocalAddr()), done: make(chan struct{})}
	if spec.IdleAt != nil {
		idle = spec.IdleAt(l.addr)
	}
	go func() {
		defer close(l.done)
		defer open.Add(-1)
		defer l.Close()
		buf := make([]byte, maxDatagram)
		c.SetReadDeadline(time.Now().Add(spec.Timeout))
		var peer netip.AddrPort
		var n, ifx int
		for strays := 0; ; strays++ {
			var from netip.AddrPort
			var err error
			if oob != nil {
				var oobn int
				n, oobn, _, from, err = c.ReadMsgUDPAddrPort(buf, oob)
				ifx = rawsock.PktinfoIf(oob[:oobn])
			} else {
				n, from, err = c.ReadFromUDPAddrPort(buf)
			}
			if err != nil || strays > MaxStrays {
				return
			}
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			if Allows(spec, from) {
				peer = from
				break
			}
		}
		src := source(peer, ifx)
		if src.Err != nil {
			return
		}
		if src.Hold != nil {
			defer src.Hold.Release()
			if d, ok := src.Hold.UDPIdle(); ok {
				idle = d
			}
		}
		var up *net.UDPConn
		var err error
		if src.Strict { // exactly the peer's port, or no relay
			up, err = net.DialUDP("udp", net.UDPAddrFromAddrPort(src.Src), net.UDPAddrFromAddrPort(server))
		} else {
			up, err = sockopt.DialUDP(src.Src, server)
		}
		if err != nil {
			return
		}
		defer up.Close()
		var f *flows.Flow
		if track != nil {
			f = track.begin(c, up, peer, l.addr, server, idle)
			defer track.end(f)
		}
		relay(c, up, peer, buf[:n], idle, f, track.counts())
	}()
	return l, nil
}

// begin puts the relay's flow in the table: its Closer closes both
// sockets, which ends the relay.
func (t *Track) begin(c, up *net.UDPConn, peer, local, server netip.AddrPort, idle time.Duration) *flows.Flow {
	f := &flows.Flow{Client: peer, Local: local, Virtual: t.Virtual, Protocol: "udp"}
	f.SetIdleTimeout(idle)
	f.Closer = func(bool) {
		c.Close()
		up.Close()
	}
	f.AddLeg(&flows.Leg{Client: addrOf(up.LocalAddr()), Server: server})
	if t.Counts != nil {
		t.Counts.TryOpen(0)
	}
	t.Table.Add(f)
	return f
}

// end takes the relay's flow out of the table.
func (t *Track) end(f *flows.Flow) {
	t.Table.Remove(f)
	if t.Counts != nil {
		t.Counts.Close()
	}
}

// counts is t's Counter; nil for no Track.
func (t *Track) counts() flows.Counter {
	if t == nil {
		return nil
	}
	return t.Counts
}

// note counts one datagram of n bytes on f (nil: untracked): toServer
// is the peer's, in on the client side and out on the server side.
func note(f *flows.Flow, cnt flows.Counter, toServer bool, n int) {
	if f == nil {
		return
	}
	f.Touch(time.Now().UnixNano())
	var leg *flows.Leg
	if legs := f.Legs(); len(legs) > 0 {
		leg = legs[0]
	}
	if toServer {
		f.BytesIn.Add(uint64(n))
		f.PktsIn.Add(1)
		if leg != nil {
			leg.BytesOut.Add(uint64(n))
			leg.PktsOut.Add(1)
		}
		if cnt != nil {
			cnt.In(n, 1)
		}
		return
	}
	f.BytesOut.Add(uint64(n))
	f.PktsOut.Add(1)
	if leg != nil {
		leg.BytesIn.Add(uint64(n))
		leg.PktsIn.Add(1)
	}
	if cnt != nil {
		cnt.Out(n, 1)
	}
}

// relay moves datagrams between peer (on c) and the server (up), first
// passing first on, until neither side sent for idle or a socket fails.
func relay(c, up *net.UDPConn, peer netip.AddrPort, first []byte, idle time.Duration, f *flows.Flow, cnt flows.Counter) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	if _, err := up.Write(first); err != nil {
		return
	}
	note(f, cnt, true, len(first))
	quiet := func() bool { return idle > 0 && time.Since(time.Unix(0, last.Load())) >= idle }
	// deadline is when the relay ends if nothing comes: none for idle 0.
	deadline := func() time.Time {
		if idle <= 0 {
			return time.Time{}
		}
		return time.Unix(0, last.Load()).Add(idle)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, maxDatagram)
		for {
			up.SetReadDeadline(deadline())
			n, err := up.Read(b)
			if err != nil {
				if isTimeout(err) && !quiet() {
					continue
				}
				c.Close()
				return
			}
			last.Store(time.Now().UnixNano())
			note(f, cnt, false, n)
			c.WriteToUDPAddrPort(b[:n], peer)
		}
	}()
	b := first[:cap(first)]
	for {
		c.SetReadDeadline(deadline())
		n, from, err := c.ReadFromUDPAddrPort(b)
		if err != nil {
			if isTimeout(err) && !quiet() {
				continue
			}
			break
		}
		if netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != peer {
			continue // another peer's: dropped
		}
		last.Store(time.Now().UnixNano())
		note(f, cnt, true, n)
		up.Write(b[:n])
	}
	up.Close()
	<-done
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
