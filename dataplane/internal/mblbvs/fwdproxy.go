package mblbvs

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// The explicit forward proxy (http profile proxy-type explicit): its
// clients are served by dataplane/fwdproxy on goroutines instead of the
// HTTP engine, since each request names its own origin and no pool member
// is chosen. The client's TLS (client-ssl), the connection table, the
// virtual's counters, SNAT (an lsn pool's translations too) and the
// server-side tcp settings are the virtual's as for any other client.

// serveExplicit runs one client of an explicit-proxy virtual to its end.
func (mv *VS) serveExplicit(snap *state.VirtualSnap, c *net.TCPConn, head []byte) {
	f, _ := mv.newFlow(snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()))
	mv.noteArrival(snap, f, c, nil)                      // arrival.go
	f.rr = nil                                           // the explicit proxy's rules run through fwdRules
	fr := newFwdRules(f, irules.Program(snap.Cfg.Rules)) // fwdrules.go
	var rh fwdproxy.Rules
	if fr != nil {
		rh = fr
	}
	tc := snap.Cfg.TLS
	var icpt *fwdproxy.Intercept
	if tc != nil && tc.Forward != nil {
		// SSL forward proxy: the client-ssl profile is for the tunnels'
		// TLS; the proxy's own connection stays plaintext.
		icpt = &fwdproxy.Intercept{Proxy: tc.Forward, Server: tc.Server.ForServerName, Handshake: tc.Handshake()}
		tc = nil
	}
	conn := clientTLS(c, head, tc, nil, nil) // tls.go
	f.front, _ = conn.(*frontConn)
	if snap.BWC != nil {
		conn = f.paced(conn, snap.BWC, snap.RateClass) // bwc.go: requests, responses and CONNECT tunnels
	}
	client := f.Client
	opts := fwdproxy.SessionOptions{
		Intercept: icpt,
		Dial: func(ctx context.Context, dst netip.AddrPort) (net.Conn, error) {
			s := mv.vs.Snap.Load()
			if lp, want := mv.lsnChoice(s, client); lp != nil {
				return mv.dialOrigin(ctx, s, lp, want, client, dst) // lsn.go
			}
			sc, hold, err := mv.dialHeld(s, client, dst, nil) // snathold.go
			if err != nil {
				return nil, err
			}
			if hold != nil {
				return &snatTCPConn{TCPConn: sc, hold: hold}, nil
			}
			return sc, nil
		},
		ConnectTimeout: mv.env.ConnectTimeout,
		Idle:           snap.Idle,
		Touch:          f.Touch,
		Meter:          f,
		Rules:          rh,
		Close:          fwdCloseTimers(snap.Cfg.TCPClose),
	}
	if snap.Pool != nil {
		// A request that is not proxied (host-names, HTTP::proxy
		// disable): the virtual's pool, as on a reverse proxy. Without
		// a pool such requests are answered 503.
		opts.Pool = func(ctx context.Context) (net.Conn, netip.AddrPort, error) {
			m, err := mv.choose(mblb.Choice{Client: client, Tag: f})
			if err != nil {
				return nil, netip.AddrPort{}, err
			}
			sc, err := mv.dial(ctx, client, m)
			if err != nil {
				mv.memberFailed(m, err)
				return nil, netip.AddrPort{}, err
			}
			return sc, m.Addr, nil
		}
	}
	if opts.Close != nil {
		opts.Logf = mv.logInfof
	}
	if snap.Clone != nil || fr != nil && fr.prog.Clones() {
		// clone.go: the virtual's clone pools from the start, a rule's
		// clone from CLIENT_ACCEPTED; closed by f.finish.
		f.ruleClone.Store(snap.Clone.Start())
		opts.Copy = fwdCopy{f}
		if fr != nil {
			fr.snap = snap
		}
	}
	sess := mv.fwd.NewSession(conn, opts)

	f.Closer = sess.Close
	mv.env.Table.Add(&f.Flow)
	defer func() {
		if fr != nil {
			fr.end()
		}
		f.finish()
		f.vs.Prof.HTTP.ConnEnded(sess.Requests()) // profilestats
	}()
	defer mv.trackTLS(f, tc)() // tls.go
	if f.front != nil && !f.handshake(conn, tc) {
		sess.Close(true)
		return
	}
	if fr != nil {
		if ok, reset := fr.accepted(); !ok {
			sess.Close(reset)
			return
		}
	}
	sess.Run()
}

// fwdCloseTimers is what of a virtual's close handling the explicit
// proxy runs (fwdproxy/close.go): close-wait-timeout on its tunnels and
// its half-closed clients, fin-wait-timeout on its tunnels,
// zero-window-timeout on every socket; nil when none is set. loose-close, reset-on-client-fin and client-timeout are fastl4's.
func fwdCloseTimers(c *sockopt.Close) *fwdproxy.CloseTimers {
	if c == nil || (c.AfterFIN <= 0 && c.FinWait <= 0 && c.ZeroWindow <= 0) {
		return nil
	}
	return &fwdproxy.CloseTimers{AfterFIN: c.AfterFIN, FINWait: c.FinWait, ZeroWindow: c.ZeroWindow}
}

// logInfof logs a line of the virtual's explicit proxy (what its close
// timers reset).
func (mv *VS) logInfof(format string, args ...any) {
	mv.env.Log.Info(fmt.Sprintf(format, args...))
}
