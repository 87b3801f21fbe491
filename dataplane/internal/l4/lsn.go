package l4

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// errLSN: the virtual's lsn pool gave the flow no translation (no free
// port or block, the subscriber's connection limit): the client is reset
// and the pool counts the failure.
var errLSN = errors.New("lsn translation failed")

// errSNAT: the flow's ltm snat gave no source (every translation address
// at its connection limit, or preserve-strict's port in use); the
// client is reset with the cause recorded (proxy.go source, dialSource).
var errSNAT = errors.New("snat translation refused")

// lsnTries bounds the ports one connect tries when the host refuses
// the translation's port (another program holds it).
const lsnTries = 4

// lsnPool is the lsn pool the flow's server sides take translations
// of, and the rules' wishes for them: the virtual's, or the one the
// rules' LSN:: commands chose; nil when they disabled it, a rule chose a
// snat or snatpool (which replaces the translation), or there is none.
func (pr *proxied) lsnPool() (*lsn.Pool, *lsn.Want) {
	lp := pr.snap.LSN
	var want *lsn.Want
	if pr.rs != nil && pr.rs.lsnUsed.Load() {
		var off bool
		lp, want, off = pr.rs.lsnChoice(lp) // rulelsn.go
		if off {
			lp = nil
		}
	}
	if lp != nil && pr.rs != nil && pr.rs.SNAT.Set {
		lp = nil
	}
	return lp, want
}

// dialServer opens the server side to dst, a member of pool: from the
// virtual's lsn pool's translation address and port when it has one
// (and no rule chose a snat or disabled the translation), else as
// source says. A virtual without an lsn pool pays the nil check.
func (pr *proxied) dialServer(dst netip.AddrPort, pool *state.Pool) (*net.TCPConn, error) {
	lp, want := pr.lsnPool()
	if lp == nil {
		return pr.dialSource(pr.source(dst, pool), dst)
	}
	if old := pr.lsn.Swap(nil); old != nil { // a reselect: the next member gets a translation of its own
		old.Release()
	}
	t, err := lp.Translate(pr.Client, dst, false, want)
	if err != nil {
		pr.because(rstcause.LSNPort)
		return nil, errLSN
	}
	if pr.rs != nil && pr.handles(config.EventSAPicked) { // XLAT::src_addr and src_port read it there
		pr.lsn.Store(t)
		if !pr.runEvent(config.EventSAPicked) {
			pr.lsn.Store(nil)
			t.Release()
			return nil, errFlowEnded
		}
	}
	to := dst
	if h, ok := lp.Hairpin(dst, false); ok { // hairpin-mode: the subscriber inside
		to = h
	}
	for i := 0; ; i++ {
		c, err := pr.e.dialExact(t.Addr, to, pr.serverSide(), true)
		if err == nil {
			pr.lsn.Store(t)
			t.Attach(c) // zombie-timeout closes it
			return c, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		pr.lsn.CompareAndSwap(t, nil) // stored for SA_PICKED
		t.Release()
		return nil, err
	}
}

// dialExtra opens another server side of the flow to dst, a member of
// pool, beside the one dialServer opened (a diameter profile's
// connections to the other members): from a translation of its own of
// the lsn pool dialServer would use (the rules' LSN:: choice, unless a
// rule chose a snat), for the flow's client, which the caller gives back
// with the connection (serverConn.xlat); else as source says, the ltm
// snat-translation address held by the connection (hold, given back
// with it: serverConn.snat; snatobj.ErrFull when every address is at
// its limit), from exactly the client's port under source-port
// preserve-strict (errSNAT when the translation address has it in use
// towards dst). A translation the pool cannot give fails this
// connection only (the pool counts it).
func (pr *proxied) dialExtra(dst netip.AddrPort, pool *state.Pool) (_ *net.TCPConn, _ *lsn.Translation, hold *snatobj.Addr, _ error) {
	lp, want := pr.lsnPool()
	if lp == nil {
		h := pr.extraSource(dst, pool)
		if h.Err != nil {
			return nil, nil, nil, h.Err
		}
		var c *net.TCPConn
		var err error
		if h.Strict { // source-port preserve-strict: exactly the client's port (a distinct four-tuple per member), or not this connection
			c, err = pr.e.dialExact(h.Src, dst, pr.serverSide(), false)
			if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL) {
				err = errSNAT
			}
		} else {
			c, err = pr.e.DialSide(h.Src, dst, pr.serverSide())
		}
		if err != nil && h.Hold != nil {
			h.Hold.Release()
			h.Hold = nil
		}
		return c, nil, h.Hold, err
	}
	c, t, err := pr.e.dialTranslated(lp, pr.Client, dst, want, pr.serverSide())
	return c, t, nil, err
}

// dialPassive opens a passive FTP data connection to the member's dst
// from the control connection's address: when that is an lsn
// translation, from a translation of the same pool on the same address
// (FTP servers refuse a data connection from another address than the
// control connection's), its port the pool's and held until release [M:
// BIG-IP does not say how its FTP ALG takes data ports under LSN];
// otherwise from any port of the control connection's address, as
// before. An active data connection's listener takes its port from the
// pool the same way (listenActive).
func (x *ftpFlow) dialPassive(dst netip.AddrPort) (_ *net.TCPConn, release func(), _ error) {
	pr := x.pr
	ct := pr.lsn.Load()
	if ct == nil {
		c, err := pr.e.Dial(netip.AddrPortFrom(x.server, 0), dst)
		return c, func() {}, err
	}
	c, t, err := pr.e.dialTranslated(ct.Pool(), pr.Client, dst, &lsn.Want{Addr: x.server}, pr.serverSide())
	if err != nil {
		return nil, nil, err // errLSN: the pool counts it; the client's data connection is reset
	}
	return c, t.Release, nil
}

// listenActive opens the listener of an active FTP data connection on
// the member's side, on the control connection's server-side address:
// when that is an lsn translation, on a translation of the same pool on
// the same address, its port the pool's and held until the returned
// translation is released (when the data connection ends, or the
// listener closes unused), with no inbound listener of the pool's
// sharing it (the member's connection must reach this one) [M: BIG-IP
// does not say how its FTP ALG takes data ports under LSN]; otherwise on
// a port the host chooses, the translation nil. errLSN: the pool gave
// none (and counted it).
func (x *ftpFlow) listenActive() (*net.TCPListener, *lsn.Translation, error) {
	pr := x.pr
	ct := pr.lsn.Load()
	if ct == nil {
		ln, err := ftpalg.Listen(x.server)
		return ln, nil, err
	}
	t, err := ct.Pool().Translate(pr.Client, netip.AddrPortFrom(x.member, 0), false, &lsn.Want{Addr: x.server, Inbound: "disabled"})
	if err != nil {
		return nil, nil, errLSN
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
			return cerr
		}
		return err
	}}
	for i := 0; ; i++ {
		ln, err := lc.Listen(context.Background(), "tcp", t.Addr.String())
		if err == nil {
			return ln.(*net.TCPListener), t, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, nil, err
	}
}

// rtspPairTries bounds the translations an RTSP channel's member side
// tries for an even RTP port with the next one free for RTCP.
const rtspPairTries = 16

// rtspChannel opens the member side of a SETUP's UDP transport (RTP,
// and RTCP on the next port when the client asked for two) on the
// control connection's server-side address: when that is an lsn
// translation, on translations of the same pool on that address, an
// even port and the next one, held until the channel closes (TEARDOWN,
// idle-timeout, a SETUP that failed), with no inbound socket of the
// pool's on them (an unconnected socket sharing the port would share the
// member's datagrams) [M: BIG-IP does not say how its RTSP ALG takes
// media ports under LSN]; otherwise on the client's ports when free,
// else ports the host chooses (rtsp.NewChannel).
func (x *rtspFlow) rtspChannel(client netip.Addr, want rtsp.Ports) (*rtsp.Channel, error) {
	pr := x.pr
	ct := pr.lsn.Load()
	if ct == nil {
		return rtsp.NewChannel(x.server, client, want)
	}
	lp, n := ct.Pool(), want.Count()
	dst := netip.AddrPortFrom(x.member.Addr(), 0)
	var spare []*lsn.Translation // odd ports, or an even one whose next was not free
	defer func() {
		for _, t := range spare {
			t.Release()
		}
	}()
	for range rtspPairTries {
		t, err := lp.Translate(pr.Client, dst, true, &lsn.Want{Addr: x.server, Inbound: "disabled"})
		if err != nil {
			return nil, errLSN
		}
		ts := []*lsn.Translation{t}
		if n == 2 {
			if p := t.Addr.Port(); p%2 != 0 || p >= lp.Cfg().PortHigh { // RTCP's port the next, in the pool's range
				spare = append(spare, t)
				continue
			}
			t2, err := lp.Translate(pr.Client, dst, true, &lsn.Want{Addr: t.Addr.Addr(), Port: t.Addr.Port() + 1, Inbound: "disabled"})
			if err != nil {
				spare = append(spare, t)
				return nil, errLSN
			}
			ts = append(ts, t2)
			if t2.Addr.Port() != t.Addr.Port()+1 {
				spare = append(spare, ts...)
				continue
			}
		}
		var cs []*net.UDPConn
		for _, t := range ts {
			c, err := lsn.ListenUDPShared(t.Addr)
			if err != nil {
				break
			}
			t.Attach(c) // zombie-timeout closes it
			cs = append(cs, c)
		}
		if len(cs) < len(ts) {
			for _, c := range cs {
				c.Close()
			}
			spare = append(spare, ts...)
			continue
		}
		return rtsp.NewChannelOn(cs, client, want, func() {
			for _, t := range ts {
				t.Release()
			}
		}), nil
	}
	return nil, errLSN
}

// dialTranslated opens a TCP connection to dst from a translation of lp
// for client (want: the wishes it is made with; nil: none), on another
// port of it when the host holds the one given (up to lsnTries); the
// translation is the caller's to give back once the connection ends,
// and zombie-timeout closes the connection. errLSN: the pool gave none
// (and counted it).
func (e *Engine) dialTranslated(lp *lsn.Pool, client, dst netip.AddrPort, want *lsn.Want, side *sockopt.Side) (*net.TCPConn, *lsn.Translation, error) {
	t, err := lp.Translate(client, dst, false, want)
	if err != nil {
		return nil, nil, errLSN
	}
	for i := 0; ; i++ {
		c, err := e.dialExact(t.Addr, dst, side, true)
		if err == nil {
			t.Attach(c)
			return c, t, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, nil, err
	}
}

// dialUDPTranslated is dialTranslated for a UDP flow: a socket bound to
// the translation's address and port, shared with its inbound socket
// (lsn.ReusePort), connected to dst.
func dialUDPTranslated(lp *lsn.Pool, client, dst netip.AddrPort) (*net.UDPConn, *lsn.Translation, error) {
	t, err := lp.Translate(client, dst, true, nil)
	if err != nil {
		return nil, nil, errLSN
	}
	for i := 0; ; i++ {
		d := net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(t.Addr), Control: func(_, _ string, rc syscall.RawConn) error {
			var err error
			if cerr := rc.Control(func(fd uintptr) { err = lsn.ReusePort(int(fd)) }); cerr != nil {
				return cerr
			}
			return err
		}}
		c, err := d.Dial("udp", dst.String())
		if err == nil {
			t.Attach(c)
			return c.(*net.UDPConn), t, nil
		}
		if i < lsnTries && (errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) && t.Retry() {
			continue
		}
		t.Release()
		return nil, nil, err
	}
}

// dialExact is DialSide from exactly src (its address and port): with
// shared, the socket shares the port with the lsn translation's inbound
// listener (lsn.ReusePort); without, it is bound as a SNAT's
// preserve-strict source (rawsock.BindExact, which takes a port whose
// last connections are in TIME_WAIT).
func (e *Engine) dialExact(src, dst netip.AddrPort, side *sockopt.Side, shared bool) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: side.Timeout(e.env.ConnectTimeout), KeepAlive: -1}
	d.Control = func(_, _ string, rc syscall.RawConn) error {
		var cerr error
		err := rc.Control(func(fd uintptr) {
			side.Apply(int(fd))
			side.ApplyPeer(int(fd), dst.Addr())
			if !shared {
				cerr = rawsock.BindExact(int(fd), src)
			} else if cerr = lsn.ReusePort(int(fd)); cerr == nil {
				cerr = bindExact(int(fd), src)
			}
			if cerr != nil {
				return
			}
			cerr = rawsock.StartConnect(fd, dst)
		})
		if err != nil {
			return err
		}
		return cerr
	}
	c, err := d.DialContext(context.Background(), "tcp", dst.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// DialExact is DialSide from exactly src, its port included, with no
// other port tried: EADDRINUSE (or EADDRNOTAVAIL) when it is taken, for
// source-port preserve-strict on the message-based virtuals' server
// connections.
func (e *Engine) DialExact(src, dst netip.AddrPort, side *sockopt.Side) (*net.TCPConn, error) {
	return e.dialExact(src, dst, side, false)
}

// bindExact binds fd to src, its port included: no fallback.
func bindExact(fd int, src netip.AddrPort) error {
	a := src.Addr().Unmap()
	if a.Is4() {
		return syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(src.Port()), Addr: a.As4()})
	}
	return syscall.Bind(fd, &syscall.SockaddrInet6{Port: int(src.Port()), Addr: a.As16()})
}
