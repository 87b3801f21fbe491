// Package rulelisten holds the related listeners an iRule's listen
// command opens: a listening socket that takes one connection, within a
// timeout, from the peer the rule allows, and hands it to the proxy.
// BIG-IP uses them for a protocol's second channel, whose destination
// the rule has just told a client (a passive FTP data port, an RTSP
// transport) but whose source is not known in advance.
//
// The package owns only the socket and its wait; what the accepted
// connection becomes (a flow of the virtual server, proxied to the
// rule's server) is the L4 engine's (dataplane/internal/l4/listen.go),
// and how many listeners a client connection may hold is the rules'
// (rules/commands_listen.go).
package rulelisten

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// MaxStrays bounds the connections from peers the rule does not allow
// that one listener turns away (each with a reset) before it gives up:
// a listener is for one peer, and must not be held open by others [M].
const MaxStrays = 16

// MaxOpen bounds the listeners waiting at once, all virtual servers
// together: each is a socket and a goroutine until its timeout, so rules
// must not be able to pile them up [M].
const MaxOpen = 4096

// open counts the listeners waiting.
var open atomic.Int32

// Spec is what one listener waits for.
type Spec struct {
	// Bind is the address to listen on; port 0 lets the system choose.
	Bind netip.AddrPort
	// Allow, when valid, is the only address a connection is taken
	// from; AllowPort, when not 0, the only source port.
	Allow     netip.Addr
	AllowPort uint16
	// Timeout is how long the listener waits for its connection.
	Timeout time.Duration
	// IdleAt, when set, is a UDP relay's idle timeout for the address
	// the listener bound (a timer policy's rule for its port, known
	// only once bound when Bind's port is 0), in place of OpenUDP's
	// idle; 0 is none (the relay lasts until deleted or a socket fails).
	IdleAt func(local netip.AddrPort) time.Duration
	// Arrival: a TCP listener keeps its connection's arrival
	// interface (IP_PKTINFO, as the virtuals' listeners do while a SNAT
	// or NAT has a VLAN list), for rawsock.ArrivalIf to read; a UDP
	// one reads its first datagram's and gives it to the source choice.
	Arrival bool
}

// Listener is one open related listener.
type Listener struct {
	ln   io.Closer // the *net.TCPListener, or the *net.UDPConn
	addr netip.AddrPort
	once sync.Once
	done chan struct{}
}

// ErrNoConnection is a listener that closed without its connection.
var ErrNoConnection = errors.New("rulelisten: no connection")

// Open binds spec.Bind and waits, on a goroutine of its own, for the one
// connection spec allows; serve is called with it on that goroutine (and
// owns it). The listener closes when it took its connection, when the
// timeout passes, or when Close is called, whichever comes first.
func Open(spec Spec, serve func(*net.TCPConn)) (*Listener, error) {
	if open.Add(1) > MaxOpen {
		open.Add(-1)
		return nil, fmt.Errorf("%d related listeners are waiting already", MaxOpen)
	}
	lc := net.ListenConfig{KeepAlive: -1}
	if spec.Arrival {
		// Plain TCP: Go's default Multipath TCP listener does not keep
		// the arrival interface.
		lc.SetMultipathTCP(false)
	}
	nl, err := lc.Listen(context.Background(), "tcp", spec.Bind.String())
	if err != nil {
		open.Add(-1)
		return nil, err
	}
	ln := nl.(*net.TCPListener)
	if spec.Arrival {
		if rc, err := ln.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { sockopt.Listener{Arrival: true}.ApplyListener(int(fd)) })
		}
	}
	l := &Listener{ln: ln, addr: addrOf(ln.Addr()), done: make(chan struct{})}
	ln.SetDeadline(time.Now().Add(spec.Timeout))
	go func() {
		defer close(l.done)
		c, err := l.accept(spec)
		l.Close()
		open.Add(-1)
		if err == nil {
			serve(c)
		}
	}()
	return l, nil
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Close closes the listener unless it took its connection already;
// calling it again, or after, does nothing.
func (l *Listener) Close() error {
	l.once.Do(func() { l.ln.Close() })
	return nil
}

// Waiting is how many listeners wait for their connection.
func Waiting() int { return int(open.Load()) }

// Done is closed when the listener stopped waiting (and serve returned,
// if it took a connection).
func (l *Listener) Done() <-chan struct{} { return l.done }

// accept takes the first connection spec allows; others are reset.
func (l *Listener) accept(spec Spec) (*net.TCPConn, error) {
	ln := l.ln.(*net.TCPListener)
	for range MaxStrays + 1 {
		c, err := ln.AcceptTCP()
		if err != nil {
			return nil, ErrNoConnection
		}
		if Allows(spec, addrOf(c.RemoteAddr())) {
			return c, nil
		}
		c.SetLinger(0)
		c.Close()
	}
	return nil, ErrNoConnection
}

// Allows reports whether spec takes a connection from peer.
func Allows(spec Spec, peer netip.AddrPort) bool {
	if spec.Allow.IsValid() && peer.Addr() != spec.Allow.Unmap() {
		return false
	}
	return spec.AllowPort == 0 || peer.Port() == spec.AllowPort
}

func addrOf(a net.Addr) netip.AddrPort {
	var ap netip.AddrPort
	switch t := a.(type) {
	case *net.TCPAddr:
		ap = t.AddrPort()
	case *net.UDPAddr:
		ap = t.AddrPort()
	default:
		return ap
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
