package dataplane

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/lb"
)

// proxied is one client connection and its server connection: the flow
// table entry and everything its two copy loops share, in one allocation.
type proxied struct {
	flows.Flow
	p      *Plane
	vs     *vsRT
	client *net.TCPConn
	server *net.TCPConn
	leg    flows.Leg
	member *memberRT
	pool   *poolRT
	idle   time.Duration
	rules  Rules

	legsLeft  atomic.Int32
	ended     atomic.Bool
	awaiting  atomic.Bool // fastest-node: a request is outstanding
	fastest   bool
	selPool   *poolRT
	selMember netip.AddrPort
	reject    bool
	dropReq   bool
}

// reset closes c with a TCP reset.
func reset(c *net.TCPConn) {
	c.SetLinger(0)
	c.Close()
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// serve runs one accepted client connection to its end.
func (p *Plane) serve(vs *vsRT, c *net.TCPConn) {
	if vs == nil {
		reset(c)
		return
	}
	snap := vs.snap.Load()
	cfg := snap.cfg
	client := addrPortOf(c.RemoteAddr())
	if !cfg.Enabled || (cfg.Source.IsValid() && cfg.Source.Bits() > 0 && !cfg.Source.Contains(client.Addr())) {
		reset(c) // disabled virtual or foreign source: immediate reset
		return
	}
	if !vs.stats.tryOpen(cfg.ConnectionLimit) {
		reset(c)
		return
	}
	vs.stats.requests.Add(1)
	pr := &proxied{p: p, vs: vs, client: c, idle: snap.idle, rules: cfg.Rules, pool: snap.pool}
	pr.Client = client
	pr.Local = addrPortOf(c.LocalAddr())
	pr.Virtual = vs.name
	pr.Protocol = "tcp"
	pr.IdleTimeout = snap.idle
	pr.Closer = pr.end
	p.table.Add(&pr.Flow)

	if pr.rules != nil && pr.rules.Handles(EventClientAccepted) {
		if !pr.runRule(EventClientAccepted) {
			return
		}
	}
	if err := pr.connect(snap); err != nil {
		pr.finish(true)
		return
	}
	if pr.rules != nil && pr.rules.Handles(EventServerConnected) {
		if !pr.runRule(EventServerConnected) {
			return
		}
	}
	pr.legsLeft.Store(2)
	go pr.copy(pr.server, pr.client, false)
	pr.copy(pr.client, pr.server, true)
}

// runRule runs an event and reports whether the flow goes on.
func (pr *proxied) runRule(ev Event) bool {
	err := pr.rules.Run(ev, pr)
	if err != nil {
		pr.p.log.Error("TCL error: " + pr.Virtual + " <" + string(ev) + "> - " + err.Error())
	}
	if err != nil || pr.reject || pr.dropReq {
		pr.finish(err != nil || pr.reject)
		return false
	}
	return true
}

// connect chooses a member and opens the server side, trying other members
// on failure as reselect-tries allows.
func (pr *proxied) connect(snap *vsSnap) error {
	pool := pr.pool
	if pr.selPool != nil {
		pool = pr.selPool
	}
	if pool == nil {
		return errors.New("no pool")
	}
	pr.pool = pool
	ps := pool.snap.Load()
	tries := 0
	if ps != nil {
		tries = ps.cfg.ReselectTries
	}
	var failed []*memberRT
	for attempt := 0; attempt <= tries; attempt++ {
		var m *memberRT
		if pr.selMember.IsValid() && attempt == 0 {
			for _, x := range ps.members {
				if x.cfg.Load().Addr == pr.selMember && x.cfg.Load().State != StateUserDown && !x.node.forced() {
					m = x
					break
				}
			}
		}
		if m == nil {
			for guard := 0; guard < 4 && m == nil; guard++ {
				m = pool.pick(failed)
				if m != nil && !m.reserve() {
					m = nil // a limit was reached meanwhile; choose again
				}
			}
		} else if !m.reserve() {
			m = nil
		}
		if m == nil {
			return errors.New("no member available")
		}
		dst := pr.target(m, snap)
		sc, err := pr.p.dial(pr.source(dst, snap), dst)
		if err == nil {
			pr.server, pr.member = sc, m
			pool.stats.tryOpen(0)
			pool.stats.requests.Add(1)
			m.stats.requests.Add(1)
			m.node.stats.requests.Add(1)
			pr.fastest = ps.alg == lb.Fastest
			pr.leg = flows.Leg{Client: addrPortOf(sc.LocalAddr()), Server: dst, Pool: pool.name, Member: m.name, Owner: m}
			pr.AddLeg(&pr.leg)
			return nil
		}
		m.release()
		failed = append(failed, m)
	}
	return errors.New("connect failed")
}

// target is where the server side connects: the member, or the client's
// original destination parts when translation is off or the port is any.
func (pr *proxied) target(m *memberRT, snap *vsSnap) netip.AddrPort {
	a := m.cfg.Load().Addr
	addr, port := a.Addr(), a.Port()
	if !snap.cfg.TranslateAddress {
		addr = pr.Local.Addr()
	}
	if port == 0 || !snap.cfg.TranslatePort {
		port = pr.Local.Port()
	}
	return netip.AddrPortFrom(addr, port)
}

// source is the server side's source address per source-address-translation;
// its port is the client's, to be kept when free (0: any port). An invalid
// result means "let the kernel choose".
func (pr *proxied) source(dst netip.AddrPort, snap *vsSnap) netip.AddrPort {
	family := func(a netip.Addr) bool { return a.Is4() == dst.Addr().Is4() }
	var addr netip.Addr
	switch snap.cfg.SNAT.Type {
	case SNATAutomap:
		for _, a := range snap.selfIPs {
			if family(a) {
				addr = a
				break
			}
		}
		if !addr.IsValid() && family(pr.Local.Addr()) {
			addr = pr.Local.Addr()
		}
	case SNATPool:
		n := len(snap.snatPool)
		start := int(pr.vs.snatNext.Add(1))
		for i := 0; i < n; i++ {
			if a := snap.snatPool[(start+i)%n]; family(a) {
				addr = a
				break
			}
		}
	default:
		if family(pr.Client.Addr()) {
			addr = pr.Client.Addr()
		}
		if addr.IsLoopback() {
			// A client on this machine holds its own address and port, so
			// keeping the port would always fail: any port will do.
			return netip.AddrPortFrom(addr, 0)
		}
	}
	if !addr.IsValid() {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(addr, pr.Client.Port())
}

// dial connects to dst from src (see source), keeping src's port (if not
// 0) when the kernel allows and falling back to any port otherwise.
func (p *Plane) dial(src, dst netip.AddrPort) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: p.opts.ConnectTimeout, KeepAlive: -1}
	keep := src.Port() != 0
	if src.IsValid() {
		d.Control = bindControl(src, keep)
	}
	c, err := d.DialContext(context.Background(), "tcp", dst.String())
	if err != nil && keep && (errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EADDRINUSE)) {
		d.Control = bindControl(src, false)
		c, err = d.DialContext(context.Background(), "tcp", dst.String())
	}
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}

// ipBindAddressNoPort lets the kernel pick the port at connect time, per
// destination, instead of at bind time (so one source address serves more
// than 28k flows).
const ipBindAddressNoPort = 24

func bindControl(src netip.AddrPort, keepPort bool) func(string, string, syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		var berr error
		err := rc.Control(func(fd uintptr) {
			var sa syscall.Sockaddr
			if src.Addr().Is4() {
				sa = &syscall.SockaddrInet4{Addr: src.Addr().As4()}
			} else {
				sa = &syscall.SockaddrInet6{Addr: src.Addr().As16()}
			}
			if keepPort {
				setPort(sa, int(src.Port()))
				if berr = syscall.Bind(int(fd), sa); berr == nil {
					return
				}
				setPort(sa, 0)
			}
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
			berr = syscall.Bind(int(fd), sa)
		})
		if err != nil {
			return err
		}
		return berr
	}
}

func setPort(sa syscall.Sockaddr, port int) {
	switch s := sa.(type) {
	case *syscall.SockaddrInet4:
		s.Port = port
	case *syscall.SockaddrInet6:
		s.Port = port
	}
}

const bufSize = 16 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// spliceChunk is how much a bulk transfer moves through the kernel's
// zero-copy path between counter updates.
const spliceChunk = 1 << 20

// copy moves bytes from src to dst until either side ends. up is the
// client-to-server direction. While idle it holds no buffer: it waits for
// readability first and only then takes a pooled buffer; a read that fills
// the buffer switches to splice for the rest of the burst.
func (pr *proxied) copy(src, dst *net.TCPConn, up bool) {
	defer pr.finishLeg()
	rc, err := src.SyscallConn()
	if err != nil {
		pr.end(true)
		return
	}
	if pr.idle > 0 {
		src.SetReadDeadline(time.Now().Add(pr.idle))
	}
	var (
		buf  *[]byte
		n    int
		rerr error
	)
	readFn := func(fd uintptr) bool {
		buf = bufPool.Get().(*[]byte)
		for {
			n, rerr = syscall.Read(int(fd), *buf)
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			bufPool.Put(buf)
			buf = nil
			return false
		}
		return true
	}
	var lr *io.LimitedReader
	for {
		err := rc.Read(readFn)
		if err != nil {
			if buf != nil {
				bufPool.Put(buf)
				buf = nil
			}
			if errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src) {
				continue
			}
			pr.end(true)
			return
		}
		if rerr != nil || n <= 0 {
			bufPool.Put(buf)
			buf = nil
			if rerr == nil {
				// EOF: pass the half-close on.
				dst.CloseWrite()
				return
			}
			pr.end(true) // reset (or error) from src: reset the other side
			return
		}
		pr.count(n, up)
		_, werr := dst.Write((*buf)[:n])
		full := n == len(*buf)
		bufPool.Put(buf)
		buf = nil
		if werr != nil {
			pr.end(true)
			return
		}
		if full {
			if lr == nil {
				lr = &io.LimitedReader{}
			}
			for {
				lr.R, lr.N = src, spliceChunk
				m, err := dst.ReadFrom(lr)
				if m > 0 {
					pr.count(int(m), up)
				}
				if err != nil {
					if errors.Is(err, os.ErrDeadlineExceeded) && (m > 0 || pr.stillActive(src)) {
						src.SetReadDeadline(time.Now().Add(pr.idle))
						continue
					}
					pr.end(true)
					return
				}
				if m < spliceChunk {
					break // EOF or a pause: back to the buffer loop
				}
			}
		}
	}
}

// stillActive decides on an expired read deadline: if the flow saw traffic
// within its idle timeout (on either side) the deadline moves on; otherwise
// the flow is idle and is reset.
func (pr *proxied) stillActive(src *net.TCPConn) bool {
	if pr.idle <= 0 {
		return false
	}
	last := time.Unix(0, pr.LastActive())
	if time.Since(last) < pr.idle {
		src.SetReadDeadline(last.Add(pr.idle))
		return true
	}
	return false
}

// count adds n bytes moved in one direction to the flow, its virtual, and
// its member, pool and node.
func (pr *proxied) count(n int, up bool) {
	pk := packets(n)
	pr.Touch(time.Now().UnixNano())
	m := pr.member
	if up {
		pr.BytesIn.Add(uint64(n))
		pr.PktsIn.Add(pk)
		pr.vs.stats.in(n, pk)
		pr.leg.BytesOut.Add(uint64(n))
		pr.leg.PktsOut.Add(pk)
		m.stats.out(n, pk)
		pr.pool.stats.out(n, pk)
		m.node.stats.out(n, pk)
		if pr.fastest && pr.awaiting.CompareAndSwap(false, true) {
			m.node.outstanding.Add(1)
		}
		return
	}
	pr.BytesOut.Add(uint64(n))
	pr.PktsOut.Add(pk)
	pr.vs.stats.out(n, pk)
	pr.leg.BytesIn.Add(uint64(n))
	pr.leg.PktsIn.Add(pk)
	m.stats.in(n, pk)
	pr.pool.stats.in(n, pk)
	m.node.stats.in(n, pk)
	if pr.fastest && pr.awaiting.CompareAndSwap(true, false) {
		m.node.outstanding.Add(-1)
	}
}

// end closes both sides: with resets (reset true), or, for drop, the server
// side with a reset and the client side quietly.
func (pr *proxied) end(resetBoth bool) {
	if !pr.ended.CompareAndSwap(false, true) {
		return
	}
	if pr.server != nil {
		reset(pr.server)
	}
	if resetBoth {
		reset(pr.client)
	} else {
		pr.client.Close()
	}
}

func (pr *proxied) finishLeg() {
	if pr.legsLeft.Add(-1) == 0 {
		pr.finish(false)
	}
}

// finish releases the flow's counts and table entry; resetClient says how a
// flow that never got a server side is closed.
func (pr *proxied) finish(resetClient bool) {
	if pr.ended.CompareAndSwap(false, true) {
		if resetClient {
			reset(pr.client)
		} else {
			pr.client.Close()
		}
		if pr.server != nil {
			pr.server.Close()
		}
	}
	if pr.rules != nil && pr.rules.Handles(EventClientClosed) {
		if err := pr.rules.Run(EventClientClosed, pr); err != nil {
			pr.p.log.Error("TCL error: " + pr.Virtual + " <" + string(EventClientClosed) + "> - " + err.Error())
		}
	}
	pr.p.table.Remove(&pr.Flow)
	pr.vs.stats.close()
	pr.vs.durs.note(uint64(time.Since(pr.Created()) / time.Millisecond))
	if m := pr.member; m != nil {
		m.release()
		pr.pool.stats.close()
		if pr.fastest && pr.awaiting.Load() {
			m.node.outstanding.Add(-1)
		}
	}
}
