package rulelisten

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// A UDP related listener (proto 17) has no connection to accept: its
// "connection" is the first datagram from a peer the rule allows. From
// then on the listener's socket relays that peer's datagrams to the
// server, through a socket of their own from the source the proxy
// chooses (its SNAT), and the server's answers back to the peer from the
// listener's address, until neither side sent anything for idle.
// Datagrams from other peers are dropped. The relay counts as a waiting
// listener (MaxOpen) until it ends [M].

// maxDatagram is the largest datagram relayed.
const maxDatagram = 64 << 10

// OpenUDP binds spec.Bind for UDP and relays the first allowed peer's
// datagrams to server as above; source gives the server side's source
// for that peer (an invalid one lets the kernel choose).
func OpenUDP(spec Spec, server netip.AddrPort, source func(peer netip.AddrPort) netip.AddrPort, idle time.Duration) (*Listener, error) {
	if open.Add(1) > MaxOpen {
		open.Add(-1)
		return nil, errors.New("too many related listeners are waiting already")
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(spec.Bind))
	if err != nil {
		open.Add(-1)
		return nil, err
	}
	l := &Listener{ln: c, addr: addrOf(c.LocalAddr()), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer open.Add(-1)
		defer l.Close()
		buf := make([]byte, maxDatagram)
		c.SetReadDeadline(time.Now().Add(spec.Timeout))
		var peer netip.AddrPort
		var n int
		for strays := 0; ; strays++ {
			var from netip.AddrPort
			var err error
			if n, from, err = c.ReadFromUDPAddrPort(buf); err != nil || strays > MaxStrays {
				return
			}
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			if Allows(spec, from) {
				peer = from
				break
			}
		}
		up, err := sockopt.DialUDP(source(peer), server)
		if err != nil {
			return
		}
		defer up.Close()
		relay(c, up, peer, buf[:n], idle)
	}()
	return l, nil
}

// relay moves datagrams between peer (on c) and the server (up), first
// passing first on, until neither side sent for idle or a socket fails.
func relay(c, up *net.UDPConn, peer netip.AddrPort, first []byte, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	if _, err := up.Write(first); err != nil {
		return
	}
	quiet := func() bool { return time.Since(time.Unix(0, last.Load())) >= idle }
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, maxDatagram)
		for {
			up.SetReadDeadline(time.Unix(0, last.Load()).Add(idle))
			n, err := up.Read(b)
			if err != nil {
				if isTimeout(err) && !quiet() {
					continue
				}
				c.Close()
				return
			}
			last.Store(time.Now().UnixNano())
			c.WriteToUDPAddrPort(b[:n], peer)
		}
	}()
	b := first[:cap(first)]
	for {
		c.SetReadDeadline(time.Unix(0, last.Load()).Add(idle))
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
		up.Write(b[:n])
	}
	up.Close()
	<-done
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
