package ftpalg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// AcceptTimeout is how long a data listener waits for its one connection
// before it closes [M: BIG-IP's value is not documented; pyftpdlib, a
// common member, waits 30 s for its own passive connection].
const AcceptTimeout = 30 * time.Second

// maxStrays bounds the connections from a foreign address one data
// listener turns away before it gives up: a listener is for one peer.
const maxStrays = 16

// ErrNoData is a data listener that closed without its connection (the
// timeout, too many strays, or the control connection ended).
var ErrNoData = errors.New("ftpalg: no data connection")

// Listen opens a data listener on addr, on a port the system chooses:
// BIG-IP documents no range for the ports its passive answers name [M:
// an ephemeral port].
func Listen(addr netip.Addr) (*net.TCPListener, error) { return ListenRange(addr, 0, 0) }

// ListenRange opens a data listener on addr on the first free port from
// first to last (FTP::port, a firewall's opening for passive data),
// the first try rotating through the range so that successive
// transfers do not all probe the same taken ports [M]; first 0 lets the
// system choose.
func ListenRange(addr netip.Addr, first, last uint16) (*net.TCPListener, error) {
	lc := net.ListenConfig{Control: sockopt.FreeBind6} // an IPv6 network's unassigned address
	if first == 0 {
		l, err := lc.Listen(context.Background(), "tcp", netip.AddrPortFrom(addr, 0).String())
		if err != nil {
			return nil, err
		}
		return l.(*net.TCPListener), nil
	}
	if last < first {
		last = first
	}
	n := int(last-first) + 1
	start := int(rangeNext.Add(1)) % n
	var err error
	for i := range n {
		port := first + uint16((start+i)%n)
		var l net.Listener
		if l, err = lc.Listen(context.Background(), "tcp", netip.AddrPortFrom(addr, port).String()); err == nil {
			return l.(*net.TCPListener), nil
		}
	}
	return nil, fmt.Errorf("ftpalg: no free data port in %d-%d: %w", first, last, err)
}

// rangeNext spreads ListenRange's first try over the range.
var rangeNext atomic.Uint32

// AddrOf is a listener's or connection's address as a netip.AddrPort.
func AddrOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// AcceptFrom takes the one connection a data listener is for: the first
// from peer's address before deadline. Connections from other addresses
// are reset, so that a listener cannot be taken by whoever guesses its
// port [M]. The listener is closed either way.
func AcceptFrom(ln *net.TCPListener, peer netip.Addr, deadline time.Time) (*net.TCPConn, error) {
	defer ln.Close()
	ln.SetDeadline(deadline)
	for range maxStrays {
		c, err := ln.AcceptTCP()
		if err != nil {
			return nil, ErrNoData
		}
		if AddrOf(c.RemoteAddr()).Addr() == peer.Unmap() {
			return c, nil
		}
		c.SetLinger(0)
		c.Close()
	}
	return nil, ErrNoData
}

// DialData opens a data connection to dst from src. With a source port
// (the profile's data port, 20 by default) the socket may reuse it while
// earlier transfers' connections linger in TIME-WAIT, as FTP servers'
// port-20 sockets do; when the port cannot be had (below 1024 without
// the privilege, or taken) the connection goes from a port the system
// chooses and keptPort is false [M].
func DialData(src, dst netip.AddrPort, timeout time.Duration) (c *net.TCPConn, keptPort bool, err error) {
	if src.Port() != 0 {
		c, err = dialFrom(src, dst, timeout)
		if err == nil || !isBindError(err) {
			return c, err == nil, err
		}
	}
	c, err = dialFrom(netip.AddrPortFrom(src.Addr(), 0), dst, timeout)
	return c, false, err
}

func dialFrom(src, dst netip.AddrPort, timeout time.Duration) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: net.TCPAddrFromAddrPort(src), Control: sockopt.FreeBind6}
	if src.Port() != 0 {
		d.Control = func(network, addr string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			}); err != nil {
				return err
			}
			if serr != nil {
				return serr
			}
			return sockopt.FreeBind6(network, addr, rc)
		}
	}
	c, err := d.DialContext(context.Background(), "tcp", dst.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// isBindError reports an error of binding the source, not of reaching
// the destination.
func isBindError(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) ||
		errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

// joinBuf is one direction's copy buffer.
const joinBuf = 32 << 10

var joinPool = sync.Pool{New: func() any { b := make([]byte, joinBuf); return &b }}

// Join moves a data connection's bytes between a and b, both ways, until
// both directions have ended: a FIN is passed on as a half-close, an
// error resets both. A transfer goes one way, so the other direction is
// silent: the pair is idle only when neither moved a byte for idle (0:
// never). count, if not nil, is told every chunk moved (fromA: a to b).
func Join(a, b *net.TCPConn, idle time.Duration, count func(n int, fromA bool)) {
	j := &join{idle: idle, count: count}
	j.last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		j.pipe(b, a, false)
	}()
	j.pipe(a, b, true)
	<-done
	a.Close()
	b.Close()
}

// join is the state the two directions of a Join share.
type join struct {
	idle   time.Duration
	count  func(int, bool)
	last   atomic.Int64 // when a byte last moved, either way
	failed atomic.Bool
}

// pipe copies src to dst until src ends or the pair fails or idles.
func (j *join) pipe(src, dst *net.TCPConn, fromA bool) {
	bp := joinPool.Get().(*[]byte)
	defer joinPool.Put(bp)
	buf := *bp
	for !j.failed.Load() {
		if j.idle > 0 {
			src.SetReadDeadline(time.Unix(0, j.last.Load()).Add(j.idle))
		}
		n, err := src.Read(buf)
		if n > 0 {
			j.last.Store(time.Now().UnixNano())
			if j.idle > 0 {
				dst.SetWriteDeadline(time.Now().Add(j.idle))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				j.fail(src, dst)
				return
			}
			if j.count != nil {
				j.count(n, fromA)
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, j.last.Load())) < j.idle:
			// The other direction moved meanwhile: not idle.
		case errors.Is(err, net.ErrClosed) && j.failed.Load():
			return
		case errors.Is(err, os.ErrDeadlineExceeded) || !isEOF(err):
			j.fail(src, dst)
			return
		default:
			dst.CloseWrite()
			return
		}
	}
}

// fail resets both connections: the other direction's read ends too.
func (j *join) fail(a, b *net.TCPConn) {
	if j.failed.CompareAndSwap(false, true) {
		a.SetLinger(0)
		b.SetLinger(0)
		a.Close()
		b.Close()
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
