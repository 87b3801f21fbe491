package l4

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

// An ftp profile on a plain TCP virtual makes its flows FTP control
// connections (BIG-IP's FTP ALG). Such flows are served on goroutines
// (state.Plain is false for them) by serveFTP instead of the copy loops:
// each direction is read line by line and handed to the gateway
// (dataplane/ftpalg), which rewrites the data addresses; the data
// connections it announces are accepted and joined here.
//
// Passive: the member's 227/229 makes a listener on the virtual's
// address, the client is told that one, and the client's data connection
// is joined to one opened to the member's address (the control
// connection's, not the one in the answer [M]) at the announced port,
// from the control connection's server-side address (its SNAT, automap
// or not). Active: the client's PORT/EPRT makes a listener on the
// server-side address (on a port of its lsn pool when the control
// connection is translated, lsn.go), the member is told that one, and when the member
// connects the proxy connects to the client's address (again the control
// connection's, which keeps the gateway from being turned on third
// parties, RFC 2577's bounce attack [M]) at the announced port, from the
// virtual's address and the profile's data port.

// ftpLineMax bounds a control line the gateway parses; a longer one (a
// long path name) passes unparsed.
const ftpLineMax = 8 << 10

// ftpNoDataLine is the client's answer when the proxy cannot open its
// side of a data connection [M: RFC 959's 425].
const ftpNoDataLine = "425 Can't open data connection.\r\n"

// dataPortWarned keeps the warning about an unbindable data port to one
// per process.
var dataPortWarned atomic.Bool

// ftpFlow is one control connection's gateway state.
type ftpFlow struct {
	pr  *proxied
	sc  *serverConn
	opt *ftpalg.Options
	// member is the member's address, server the server side's own
	// (where the member sees the control connection come from).
	member, server netip.Addr

	mu  sync.Mutex // serializes ctl and the listeners
	ctl *ftpalg.Control
	// passive and active are the listeners awaiting their connection; a
	// new announcement of the same mode replaces one.
	passive, active *net.TCPListener

	pass    atomic.Bool   // AUTH accepted: the bytes pass untouched
	authAns chan bool     // the member's answer to a forwarded AUTH
	down    chan struct{} // closed when the member-to-client pump ends
	left    atomic.Int32
}

// FTP implements rules.FTPConn: the settings FTP:: commands change, from
// the profile's, until the gateway starts (after SERVER_CONNECTED). The
// rule lock is held.
func (pr *proxied) FTP() (*rules.FTPSettings, error) {
	opt := pr.snap.Cfg.FTP
	rs := pr.rs
	switch {
	case opt == nil:
		return nil, errors.New("the virtual server does not run the FTP gateway (no ftp profile, or one it passes through)")
	case rs.ftpStarted:
		return nil, errors.New("the FTP gateway has started on this connection (FTP:: settings apply in CLIENT_ACCEPTED, LB_SELECTED and SERVER_CONNECTED)")
	case rs.ftp == nil:
		mode := "disallow"
		if opt.AllowFTPS {
			mode = "allow"
		}
		rs.ftp = &rules.FTPSettings{Enabled: true, AllowActive: true, FTPSMode: mode}
	}
	return rs.ftp, nil
}

// ftpRuleOptions is the gateway's options for this connection: the
// profile's, as its rules' FTP:: commands changed them, and whether the
// gateway runs at all (FTP::disable). Rules cannot change them after.
func (pr *proxied) ftpRuleOptions() (*ftpalg.Options, bool) {
	opt := pr.snap.Cfg.FTP
	rs := pr.rs
	if rs == nil {
		return opt, true
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.ftpStarted = true
	st := rs.ftp
	if st == nil {
		return opt, true
	}
	o := *opt
	o.PassiveFirst, o.PassiveLast = st.PortFirst, st.PortLast
	o.NoActive = !st.AllowActive
	o.AllowFTPS, o.RequireFTPS = st.FTPSMode != "disallow", st.FTPSMode == "require"
	return &o, st.Enabled
}

// serveFTPRules runs a control connection whose virtual has rules (none
// that read the flow's data: CLIENT_DATA and SERVER_DATA are refused
// beside the gateway). CLIENT_ACCEPTED has run; LB_SELECTED and
// SERVER_CONNECTED run as the member is connected, and then the gateway
// starts with the settings the rules left, or, after FTP::disable, the
// flow passes as a plain one.
func (pr *proxied) serveFTPRules() {
	if !pr.bind() { // ruleflow.go; SERVER_CONNECTED runs there
		pr.finishLeg()
		return
	}
	sc := pr.srv.Load()
	opt, on := pr.ftpRuleOptions()
	if !on {
		pr.legsLeft.Add(1)
		go pr.pump(false, sc)
		pr.pump(true, nil)
		return
	}
	pr.serveFTPWith(sc, opt)
}

// serveFTP runs a control connection whose server side sc is connected.
func (pr *proxied) serveFTP(sc *serverConn) { pr.serveFTPWith(sc, pr.snap.Cfg.FTP) }

// serveFTPWith runs a control connection with the gateway options opt.
func (pr *proxied) serveFTPWith(sc *serverConn, opt *ftpalg.Options) {
	x := &ftpFlow{pr: pr, sc: sc, opt: opt,
		member:  ftpalg.AddrOf(sc.conn.RemoteAddr()).Addr(),
		server:  ftpalg.AddrOf(sc.conn.LocalAddr()).Addr(),
		authAns: make(chan bool, 1), down: make(chan struct{})}
	x.ctl = ftpalg.NewControl(*opt, pr.Local.Addr().Unmap().Is4(), x.member.Is4())
	pr.legsLeft.Store(2)
	x.left.Store(2)
	go x.pump(false)
	x.pump(true)
}

// pump reads one direction (up: the client's commands) line by line
// until it ends.
func (x *ftpFlow) pump(up bool) {
	pr := x.pr
	src, dst := x.sc.conn, pr.client
	if up {
		src, dst = pr.client, x.sc.conn
	}
	defer x.pumpDone(up)
	br := bufio.NewReaderSize(src, ftpLineMax)
	var partial []byte
	raw := false // the rest of an over-long line passes unparsed
	for {
		if x.pass.Load() {
			x.relay(br, src, dst, up)
			return
		}
		pr.armIdle(src, pr.LastActive())
		chunk, err := br.ReadSlice('\n')
		partial = append(partial, chunk...)
		if len(chunk) > 0 {
			pr.count(len(chunk), up, x.sc)
			if up && pr.clone != nil {
				pr.clone.Client(chunk) // clone.go; serverside: write
			}
		}
		switch {
		case err == nil:
			line := string(partial)
			partial = partial[:0]
			if raw {
				raw = false
				if !x.write(dst, line) {
					return
				}
				continue
			}
			if !x.handle(line, up) {
				return
			}
		case errors.Is(err, bufio.ErrBufferFull) || len(partial) >= ftpLineMax:
			raw = true
			if !x.write(dst, string(partial)) {
				return
			}
			partial = partial[:0]
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src):
		case errors.Is(err, io.EOF):
			if len(partial) > 0 && !x.write(dst, string(partial)) {
				return
			}
			if !pr.gone(x.sc) {
				dst.CloseWrite()
			}
			return
		default:
			pr.lost(x.sc)
			return
		}
	}
}

// pumpDone ends a direction: the last one closes the listeners still
// waiting (transfers under way finish on their own) before the flow's
// leg is counted.
func (x *ftpFlow) pumpDone(up bool) {
	if !up {
		close(x.down)
	}
	if x.left.Add(-1) == 0 {
		x.mu.Lock()
		closeListener(&x.passive)
		closeListener(&x.active)
		x.mu.Unlock()
	}
	x.pr.finishLeg()
}

// handle acts on one whole line; false ends the pump.
func (x *ftpFlow) handle(line string, up bool) bool {
	pr := x.pr
	x.mu.Lock()
	if up {
		d := x.ctl.FromClient(line)
		switch d.Action {
		case ftpalg.Reply:
			x.mu.Unlock()
			return x.write(pr.client, d.Line)
		case ftpalg.OpenActive:
			ln, t, err := x.listenActive() // lsn.go
			if err != nil {
				x.ctl.Abandon()
				x.mu.Unlock()
				return x.write(pr.client, ftpNoDataLine)
			}
			cmd := x.ctl.ActiveCommand(ftpalg.AddrOf(ln.Addr()))
			closeListener(&x.active)
			x.active = ln
			x.mu.Unlock()
			go x.activeData(ln, d.Addr.Port(), t, x.passOver(ln))
			return x.write(x.sc.conn, cmd)
		}
		x.mu.Unlock()
		if !x.write(x.sc.conn, d.Line) {
			return false
		}
		if d.Await {
			return x.awaitAuth()
		}
		return true
	}
	wasAuth := x.ctl.AuthPending()
	d := x.ctl.FromMember(line)
	answered := wasAuth && !x.ctl.AuthPending()
	switch d.Action {
	case ftpalg.OpenPassive:
		ln, err := ftpalg.ListenRange(pr.Local.Addr(), x.opt.PassiveFirst, x.opt.PassiveLast)
		if err != nil {
			x.ctl.Abandon()
			x.mu.Unlock()
			return x.write(pr.client, ftpNoDataLine)
		}
		ans := x.ctl.PassiveAnswer(ftpalg.AddrOf(ln.Addr()))
		closeListener(&x.passive)
		x.passive = ln
		release := x.passOver(ln)
		x.mu.Unlock()
		go x.passiveData(ln, d.Addr.Port(), release)
		return x.write(pr.client, ans)
	case ftpalg.CancelActive:
		closeListener(&x.active)
	}
	x.mu.Unlock()
	ok := x.write(pr.client, d.Line)
	if d.Action == ftpalg.PassThrough {
		x.pass.Store(true)
	}
	if answered {
		select {
		case x.authAns <- d.Action == ftpalg.PassThrough:
		default:
		}
	}
	return ok
}

// awaitAuth holds the client's direction after a forwarded AUTH until
// the member's answer is relayed (the client's next bytes may be a TLS
// handshake), the member's direction ends, or the flow idles.
func (x *ftpFlow) awaitAuth() bool {
	idle := x.pr.IdleTimeout()
	if idle <= 0 {
		idle = defaultIdleTimeout
	}
	t := time.NewTimer(idle)
	defer t.Stop()
	select {
	case <-x.authAns:
		return true
	case <-x.down:
		return true
	case <-t.C:
		x.pr.lost(x.sc)
		return false
	}
}

// write sends s to dst within the flow's idle timeout; false when the
// flow was ended for it.
func (x *ftpFlow) write(dst *net.TCPConn, s string) bool {
	if idle := x.pr.IdleTimeout(); idle > 0 {
		dst.SetWriteDeadline(time.Now().Add(idle))
	}
	if _, err := io.WriteString(dst, s); err != nil {
		x.pr.lost(x.sc)
		return false
	}
	if x.pr.clone != nil && dst == x.sc.conn {
		x.pr.clone.Server([]byte(s)) // clone.go: the command as the member got it
	}
	return true
}

// relay passes a direction's bytes untouched (after AUTH TLS), those
// the line reader holds first, until it ends.
func (x *ftpFlow) relay(br *bufio.Reader, src, dst *net.TCPConn, up bool) {
	pr := x.pr
	buf := make([]byte, 16<<10)
	for {
		pr.armIdle(src, pr.LastActive())
		n, err := br.Read(buf)
		if n > 0 {
			pr.count(n, up, x.sc)
			if up && pr.clone != nil {
				pr.clone.Client(buf[:n]) // clone.go; serverside: write
			}
			if !x.write(dst, string(buf[:n])) {
				return
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src):
		case errors.Is(err, io.EOF):
			if !pr.gone(x.sc) {
				dst.CloseWrite()
			}
			return
		default:
			pr.lost(x.sc)
			return
		}
	}
}

// passOver makes the steering of a virtual on every port pass over ln's
// port (the virtual takes every other port of its address), so that the
// data connection reaches ln; the returned release undoes it once ln
// accepted or closed. On a virtual on one port it is nil: one boolean
// test per data listener.
func (x *ftpFlow) passOver(ln *net.TCPListener) (release func()) {
	pr := x.pr
	if !pr.snap.Cfg.AnyPort() || pr.e.env.Pass == nil {
		return nil
	}
	return pr.e.env.Pass(ftpalg.AddrOf(ln.Addr()), false)
}

// passiveData waits for the client's data connection on ln and joins it
// to one opened to the member's announced port; release (nil: none)
// gives back ln's port to the steering once ln accepted or closed.
func (x *ftpFlow) passiveData(ln *net.TCPListener, port uint16, release func()) {
	pr := x.pr
	c, err := ftpalg.AcceptFrom(ln, pr.Client.Addr(), time.Now().Add(ftpalg.AcceptTimeout))
	if release != nil {
		release()
	}
	if err != nil {
		return
	}
	m, release, err := x.dialPassive(netip.AddrPortFrom(x.member, port)) // lsn.go
	if err != nil {
		reset(c)
		return
	}
	defer release()
	x.join(c, m)
}

// activeData waits for the member's data connection on ln and joins it
// to one opened to the client's announced port, from the virtual's
// address and the profile's data port; t, the lsn translation ln's port
// is (nil: none), is given back when it ends; release as passiveData's.
func (x *ftpFlow) activeData(ln *net.TCPListener, port uint16, t *lsn.Translation, release func()) {
	defer t.Release()
	pr := x.pr
	m, err := ftpalg.AcceptFrom(ln, x.member, time.Now().Add(ftpalg.AcceptTimeout))
	if release != nil {
		release()
	}
	if err != nil {
		return
	}
	t.Attach(m) // zombie-timeout closes it
	src := netip.AddrPortFrom(pr.Local.Addr(), x.opt.DataPort)
	c, kept, err := ftpalg.DialData(src, netip.AddrPortFrom(pr.Client.Addr(), port), pr.e.env.ConnectTimeout)
	if err != nil {
		reset(m)
		return
	}
	if x.opt.DataPort != 0 && !kept && dataPortWarned.CompareAndSwap(false, true) {
		// Port 20 needs privileges this process may lack, or another
		// transfer holds it: the connection goes from any port [M].
		pr.e.env.Log.Warn("ftp profile " + x.opt.Profile + ": active data connections cannot use source port " +
			strconv.Itoa(int(x.opt.DataPort)) + " (privileged or in use); a port the system chooses is used instead")
	}
	x.join(c, m)
}

// join runs a data connection to its end. It is a flow of the
// connection table of its own while it lasts (the client and the
// virtual's address it reached or came from on the client side, the
// gateway's address and the member's on the server side; delete sys
// connection resets both ends), and counted in the virtual's Ephemeral
// column, not its clients' [M]; the member counts its bytes as any, and
// each byte keeps the control connection from idling during a long
// transfer.
func (x *ftpFlow) join(client, member *net.TCPConn) {
	pr := x.pr
	vs := pr.vs
	df := &flows.Flow{Client: rawsock.AddrPortOf(client.RemoteAddr()), Local: rawsock.AddrPortOf(client.LocalAddr()),
		Virtual: vs.Name, Protocol: "tcp"}
	df.SetIdleTimeout(pr.IdleTimeout())
	df.Closer = func(bool) {
		reset(client)
		reset(member)
	}
	leg := &flows.Leg{Client: rawsock.AddrPortOf(member.LocalAddr()), Server: rawsock.AddrPortOf(member.RemoteAddr())}
	if m := x.sc.member; m != nil {
		leg.Member, leg.Pool = m.Name, x.sc.pool.Name
	}
	df.AddLeg(leg)
	vs.Ephemeral.TryOpen(0)
	pr.e.env.Table.Add(df)
	defer func() {
		pr.e.env.Table.Remove(df)
		vs.Ephemeral.Close()
	}()
	ftpalg.Join(client, member, pr.IdleTimeout(), func(n int, up bool) {
		now := time.Now().UnixNano()
		pk := state.Packets(n)
		pr.Touch(now)
		df.Touch(now)
		if up {
			df.BytesIn.Add(uint64(n))
			df.PktsIn.Add(pk)
			leg.BytesOut.Add(uint64(n))
			leg.PktsOut.Add(pk)
			vs.Ephemeral.In(n, pk)
			if m := x.sc.member; m != nil {
				m.Stats.Out(n, pk)
				x.sc.pool.Stats.Out(n, pk)
				m.Node.Stats.Out(n, pk)
			}
			return
		}
		df.BytesOut.Add(uint64(n))
		df.PktsOut.Add(pk)
		leg.BytesIn.Add(uint64(n))
		leg.PktsIn.Add(pk)
		vs.Ephemeral.Out(n, pk)
		if m := x.sc.member; m != nil {
			m.Stats.In(n, pk)
			x.sc.pool.Stats.In(n, pk)
			m.Node.Stats.In(n, pk)
		}
	})
}

// closeListener closes *l, if any, and forgets it.
func closeListener(l **net.TCPListener) {
	if *l != nil {
		(*l).Close()
		*l = nil
	}
}
