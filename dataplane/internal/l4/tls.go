package l4

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// tlsFlow is a flow of a standard (L4) virtual with a client-ssl or
// server-ssl profile: TLS is terminated from the client and/or originated
// to the member, and the plaintext between them is copied by one
// goroutine per direction. Member choice, persistence, SNAT, counting and
// the flow table entry are the plain flows' (flow); only the byte moving
// differs, since crypto/tls needs a net.Conn and cannot run on the event
// loops or splice.
type tlsFlow struct {
	flow
	raw    *net.TCPConn // the client's socket
	client net.Conn     // raw, or TLS over it
	server net.Conn     // the member's socket, or TLS over it
	sc     serverConn

	legsLeft atomic.Int32
	ended    atomic.Bool
}

// serveTLS runs one client of a TLS virtual to its end: the client
// handshake (client-ssl), the member choice and connect, the server
// handshake (server-ssl), then both directions.
func (e *Engine) serveTLS(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn) {
	t := &tlsFlow{raw: c, client: c}
	t.init(e, vs, snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()), t.end)
	e.env.Table.Add(&t.Flow)
	tc := snap.Cfg.TLS
	if tc.Client != nil {
		conn := tls.Server(c, tc.Client)
		c.SetDeadline(time.Now().Add(tc.Handshake()))
		if err := conn.Handshake(); err != nil {
			t.finish(true)
			return
		}
		c.SetDeadline(time.Time{})
		t.client = conn
	}
	if err := t.connect(); err != nil {
		t.finish(true)
		return
	}
	t.legsLeft.Store(2)
	go t.copy(t.server, t.client, false)
	t.copy(t.client, t.server, true)
}

// serverName is the SNI the client sent, passed on to members by a
// server-ssl profile without a server-name of its own.
func (t *tlsFlow) serverName() string {
	if c, ok := t.client.(*tls.Conn); ok {
		return c.ConnectionState().ServerName
	}
	return ""
}

// connect chooses a member, connects and, with server-ssl, handshakes;
// a member that fails either is passed over as reselect-tries allows.
func (t *tlsFlow) connect() error {
	pool := t.pool
	if pool == nil {
		return errNoPool
	}
	tries := 0
	if ps := pool.Snap.Load(); ps != nil {
		tries = ps.Cfg.ReselectTries
	}
	tc := t.snap.Cfg.TLS
	pd, persists := t.persistKey()
	var failed []*state.Member
	for attempt := 0; attempt <= tries; attempt++ {
		m, p := t.choose(pool, netip.AddrPort{}, attempt, failed, &pd, persists)
		if m == nil {
			return errNoMember
		}
		dst := t.target(m)
		raw, err := t.e.Dial(t.source(dst), dst)
		if err == nil {
			m.ConnectSucceeded()
			var conn net.Conn = raw
			if tc.Server != nil {
				sconn := tls.Client(raw, tc.Server.ForServerName(t.serverName()))
				raw.SetDeadline(time.Now().Add(tc.Handshake()))
				if err = sconn.Handshake(); err == nil {
					raw.SetDeadline(time.Time{})
					conn = sconn
				} else {
					reset(raw)
				}
			}
			if err == nil {
				t.sc.conn = raw
				t.opened(&t.sc, m, p, p.Snap.Load(), rawsock.AddrPortOf(raw.LocalAddr()), dst, &pd, persists)
				t.AddLeg(&t.sc.leg)
				t.server = conn
				t.srv.Store(&t.sc)
				if t.ended.Load() {
					return errFlowEnded
				}
				return nil
			}
		}
		if raw == nil {
			m.ConnectFailed()
		}
		m.Release()
		failed = append(failed, m)
	}
	return errConnect
}

// copy moves plaintext from src to dst until src ends: an orderly end is
// passed on as a half-close (close_notify and FIN), anything else resets
// the flow.
func (t *tlsFlow) copy(src, dst net.Conn, up bool) {
	defer t.finishLeg()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		if t.idle > 0 {
			src.SetReadDeadline(idleDeadline(t.idle, time.Now().UnixNano()))
		}
		n, err := src.Read(buf)
		if n > 0 {
			t.countAt(n, up, &t.sc, time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				t.end(true)
				return
			}
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && t.active() {
			continue
		}
		if errors.Is(err, io.EOF) {
			closeWrite(dst)
			return
		}
		t.end(true)
		return
	}
}

// active decides on an expired read deadline, as stillActive does for
// plain flows: traffic on either side within the idle timeout goes on.
func (t *tlsFlow) active() bool {
	return t.idle > 0 && !idleExpired(t.idle, t.LastActive(), time.Now().UnixNano())
}

// closeWrite half-closes c: a TLS connection sends close_notify, then the
// socket under it a FIN.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		tc.CloseWrite()
		c = tc.NetConn()
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// end closes both sides at once: with resets (reset true), or, for drop,
// the server side with a reset and the client side quietly.
func (t *tlsFlow) end(resetBoth bool) {
	if !t.ended.CompareAndSwap(false, true) {
		return
	}
	if sc := t.srv.Load(); sc != nil {
		reset(sc.conn)
	}
	if resetBoth {
		reset(t.raw)
	} else {
		t.raw.Close()
	}
}

func (t *tlsFlow) finishLeg() {
	if t.legsLeft.Add(-1) == 0 {
		t.finish(false)
	}
}

// finish closes what is left and gives back the flow's counts and table
// entry; resetClient says how a flow that never got a server side ends.
func (t *tlsFlow) finish(resetClient bool) {
	if t.ended.CompareAndSwap(false, true) {
		if resetClient {
			reset(t.raw)
		} else {
			t.raw.Close()
		}
		if sc := t.srv.Load(); sc != nil {
			sc.conn.Close()
		}
	}
	t.retire()
}
