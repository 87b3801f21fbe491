package mblbvs

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// HTTP/2 to members (an http2 profile on the server side, with the
// httprouter profile). The engine's member connections are bridges of
// dataplane/h2member: each request the engine writes goes to the member
// as a stream on an HTTP/2 connection shared by every client whose
// server side has the same source address (SNAT) and member, cleartext
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
func (mv *VS) dialHTTP2(ctx context.Context, snap *state.VirtualSnap, client netip.AddrPort, m mblb.Member) (net.Conn, error) {
	src := mv.sourceFor(snap, client, m)
	src = netip.AddrPortFrom(src.Addr(), 0) // a shared connection keeps no client's port
	t := snap.Cfg.TLS
	var tc *tls.Config
	if t != nil && t.Server != nil && m.ID&plainBit == 0 {
		tc = mv.h2.alpn(t.Server.Config)
	}
	key := fmt.Sprintf("%s>%s/%p", src.Addr(), m.Addr, tc)
	return mv.h2.pool.Open(ctx, h2member.Target{Key: key, Remote: net.TCPAddrFromAddrPort(m.Addr), TLS: tc != nil,
		Dial: func(ctx context.Context) (net.Conn, error) {
			c, err := mv.dialSide(snap, src, m.Addr) // tcpopts.go
			if err != nil {
				return nil, err
			}
			mv.serverOpts(m, c) // tcpopts.go
			if tc == nil {
				return c, nil
			}
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
				return nil, err
			}
			return sc, nil
		}})
}
