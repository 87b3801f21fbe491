package mblbvs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// HTTP/2 to members (an http2 profile on the server side, with the
// httprouter profile). The engine's member connections are bridges of
// dataplane/h2member: each request the engine writes goes to the member
// as a stream on an HTTP/2 connection shared by every client whose
// server side has the same source address (SNAT) and member (with an
// lsn pool, by the subscriber's requests only: dialHTTP2), cleartext
// with prior knowledge, or over the server-ssl profile with ALPN h2. So
// the engine runs on goroutines (no DialFD), and its connection record
// shows one server-side leg per client and member, with the shared
// connection's addresses.

// memberHTTP2 is the VS's pool of HTTP/2 member connections, nil when
// its members speak HTTP/1.1.
type memberHTTP2 struct {
	pool *h2member.Pool
	tls  sync.Map // *tls.Config of server-ssl -> its copy offering h2
}

func newMemberHTTP2(cfg *config.MBLB) *memberHTTP2 {
	if cfg.MemberHTTP2 == nil {
		return nil
	}
	return &memberHTTP2{pool: h2member.New(*cfg.MemberHTTP2)}
}

func (h *memberHTTP2) close() {
	if h != nil {
		h.pool.Close()
	}
}

// alpn is server-ssl's configuration offering only h2: a member that
// does not choose it fails the handshake, and the request is answered
// 502 (BIG-IP's server side would not fall back to HTTP/1.1 on an
// HTTP/2 pool either [M]).
func (h *memberHTTP2) alpn(c *tls.Config) *tls.Config {
	if v, ok := h.tls.Load(c); ok {
		return v.(*tls.Config)
	}
	cc := c.Clone()
	cc.NextProtos = []string{"h2"}
	v, _ := h.tls.LoadOrStore(c, cc)
	return v.(*tls.Config)
}

// dialHTTP2 is the engine's Dial for members that speak HTTP/2.
//
// With an lsn pool (source-address-translation type lsn, or a client's
// LSN::pool) the member connection is made from a translation of the
// subscriber's address, as an HTTP/1.1 member connection is, and shared
// only by that subscriber's requests through the same pool with the
// same LSN:: wishes [M: BIG-IP does not say how its HTTP/2 server side
// pools connections under CGNAT; a connection shared between
// subscribers would show the member one subscriber's translation for
// another's requests]. The translation is held while the connection
// lasts (x/net closes it at connection-idle-timeout, GOAWAY or an
// error), not while one engine leg does. A virtual without an lsn pool
// and without LSN:: steering pays lsnChoice's nil checks.
func (mv *VS) dialHTTP2(ctx context.Context, snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (net.Conn, error) {
	t := snap.Cfg.TLS
	var tc *tls.Config
	if t != nil && t.Server != nil && m.ID&plainBit == 0 {
		tc = mv.h2.alpn(t.Server.Config)
	}
	lp, want := mv.lsnChoice(snap, client) // lsn.go
	var src netip.AddrPort
	var key string
	held := false // the source is chosen, counted and held at the dial (snathold.go)
	var choice *state.SNATChoice
	local, ifx := snap.Cfg.Destination, 0
	if m.Via.IsValid() { // automap from the address the client reached (sourceHeld)
		local = netip.AddrPortFrom(m.Via, local.Port())
	}
	if lp != nil {
		key = lsnKey(lp, want, client.Addr(), m.Addr, tc)
	} else {
		var init *initChoice
		var rule bool
		if src, init, rule = mv.ruleSource(snap, client, m); !rule || init != nil {
			// The connections are shared by requests: the key's source
			// is not counted; the dial counts and holds its own.
			if init != nil {
				choice, local = &init.snat, init.local
			} else {
				ifx = mv.arrival(snap, client)
			}
			src, held = state.SNATSourceUncountedOn(mv.vs, snap, client, local, m.Addr, choice, poolOf(m), ifx), true
		}
		src = netip.AddrPortFrom(src.Addr(), 0) // a shared connection keeps no client's port
		key = fmt.Sprintf("%s>%s/%p", src.Addr(), m.Addr, tc)
	}
	return mv.h2.pool.Open(ctx, h2member.Target{Key: key, Remote: net.TCPAddrFromAddrPort(m.Addr), TLS: tc != nil,
		Dial: func(ctx context.Context) (net.Conn, error) {
			var c *net.TCPConn
			var lt *lsn.Translation
			var hold *snatobj.Addr
			var err error
			if lp != nil {
				c, lt, err = mv.dialTranslated(ctx, snap, lp, want, client, m) // lsn.go
			} else {
				from := src
				if held {
					h := state.SNATSourceHeldOn(mv.vs, snap, client, local, m.Addr, choice, poolOf(m), ifx) // snathold.go
					if h.Err != nil {
						return nil, refused(h.Err) // snathold.go
					}
					from, hold = netip.AddrPortFrom(h.Src.Addr(), 0), h.Hold
				}
				c, err = mv.dialSide(snap, from, m.Addr) // tcpopts.go
				if err != nil && hold != nil {
					hold.Release()
				}
			}
			if err != nil {
				return nil, err
			}
			mv.serverOpts(m, c) // tcpopts.go
			var out net.Conn = c
			if tc != nil {
				hctx, cancel := context.WithTimeout(ctx, t.Handshake())
				defer cancel()
				sc := tls.Client(t.WatchMember(c, tc), tc)
				err = t.ServerHandshake(func() error { return sc.HandshakeContext(hctx) })
				if err == nil && sc.ConnectionState().NegotiatedProtocol != "h2" {
					err = fmt.Errorf("member %s did not choose h2 in ALPN over server-ssl (an http2 profile on the server side needs HTTP/2 members)", m.Addr)
				}
				if err := mv.vs.Prof.ServerSSL.Note(sc, t.ServerFailed(sc, err)); err != nil {
					c.SetLinger(0)
					c.Close()
					lt.Release()
					if hold != nil {
						hold.Release()
					}
					return nil, err
				}
				out = sc
			}
			if hold != nil {
				return &snatConn{Conn: out, hold: hold}, nil
			}
			if lt == nil {
				return out, nil
			}
			mv.lsnShared.Store(lt.Addr, lt)
			return &lsnConn{Conn: out, lsnHold: lsnHold{mv: mv, t: lt}}, nil
		}})
}

// lsnKey names the HTTP/2 member connections a subscriber's requests
// share: its address, the pool and the rule's wishes, the member and
// the server-ssl settings.
func lsnKey(lp *lsn.Pool, want *lsn.Want, sub netip.Addr, member netip.AddrPort, tc *tls.Config) string {
	var w lsn.Want
	if want != nil {
		w = *want
	}
	return fmt.Sprintf("lsn %s %s %+v>%s/%p", lp.Name, sub.Unmap(), w, member, tc)
}

// snatConn is an HTTP/2 member connection whose ltm snat-translation
// address it holds while it lasts, given back once, at its first Close.
// The translation's tcp-idle-timeout is the connection's idle timeout
// (h2member.IdleTimer), in place of the profile's
// connection-idle-timeout.
type snatConn struct {
	net.Conn
	hold *snatobj.Addr
	once sync.Once
}

// IdleTimeout is the held address's tcp-idle-timeout, 0 when it has
// none (the profile's connection-idle-timeout then).
func (c *snatConn) IdleTimeout() time.Duration {
	d, _ := c.hold.TCPIdle()
	return d
}

func (c *snatConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.hold.Release)
	return err
}

// lsnConn is an HTTP/2 member connection made from an lsn translation,
// which it gives back when it closes.
type lsnConn struct {
	net.Conn
	lsnHold
}

func (c *lsnConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
