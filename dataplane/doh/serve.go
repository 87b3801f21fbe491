package doh

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// Mode is which doh profile a virtual has.
type Mode uint8

const (
	// Server is the doh-server profile: the virtual's dns profile
	// answers.
	Server Mode = iota + 1
	// Proxy is the doh-proxy profile: a member of the virtual's pool
	// answers (through the dns profile's steps when it has one [M]).
	Proxy
)

// Service is one virtual's DoH of one commit, in its snapshot where a
// dns profile's service would be (state.DNSService): the connections it
// takes are served here, so other virtuals pay nothing more.
type Service struct {
	mode  Mode
	dns   *dnsvs.Service // the virtual's dns profile; nil for none (doh-proxy)
	st    *Stats
	tls   *tls.Config // the client-ssl profiles with ALPN; nil in cleartext
	proto http.Protocols
	up    *Upstream // doh-proxy with server-ssl: DoH to the members; nil: DNS
}

// New makes the service of a virtual with a doh profile in mode; dns is
// its dns profile's service (nil for none), st the profile's counters,
// client the virtual's client-ssl (nil: cleartext), alpn and h2c its
// http2 profile's activation-modes (h2 offered in ALPN; a cleartext
// client's HTTP/2 preface taken); server is a doh-proxy's server-ssl
// profile (nil: none), whose members are then DoH servers (Upstream).
func New(mode Mode, dns *dnsvs.Service, st *Stats, client, server *tls.Config, alpn, h2c bool) *Service {
	s := &Service{mode: mode, dns: dns, st: st}
	if mode == Proxy && server != nil {
		s.up = NewUpstream(server, st, dnsvs.ForwardTimeout)
		s.up.handshake = memberHandshake
	}
	s.proto.SetHTTP1(true)
	s.proto.SetHTTP2(alpn && client != nil)
	s.proto.SetUnencryptedHTTP2(h2c && client == nil)
	if client != nil {
		protos := []string{"http/1.1"}
		if alpn {
			protos = []string{"h2", "http/1.1"}
		}
		s.tls = tlsprof.WithALPN(client, protos...)
	}
	return s
}

// ServeUDP implements state.DNSService; a doh virtual is TCP only (the
// configuration refuses another protocol), so a datagram is dropped.
func (s *Service) ServeUDP(*state.Virtual, *state.VirtualSnap, *net.UDPConn, netip.AddrPort, netip.AddrPort, []byte, int) {
}

// handshakeTimeout bounds each request's head [M] (the TLS handshake
// has the client-ssl profile's handshake-timeout).
const handshakeTimeout = 10 * time.Second

// ServeTCP implements state.DNSService: it serves one client connection
// to its end, as HTTP/2 (ALPN h2, or the cleartext preface with http2
// activation-modes always) or HTTP/1.1. ifx, the connection's arrival
// interface (the TCP accept's; 0 when not read, without a VLAN-limited
// SNAT or NAT), goes with each of its queries to the member query's
// SNAT choice (state.SNATSourceHeldOn), as a dns virtual's TCP client's.
func (s *Service) ServeTCP(vs *state.Virtual, snap *state.VirtualSnap, c *net.TCPConn, ifx int) {
	defer c.Close()
	client, local := addrPort(c.RemoteAddr()), addrPort(c.LocalAddr())
	idle := snap.FlowIdle(local) // a service-policy's timer policy (state/timers.go)
	if idle <= 0 {
		idle = 300 * time.Second
	}
	var cp *dnsvs.DoHCopies
	if s.dns != nil && (snap.Clone != nil || snap.Cfg.Rules != nil) {
		cp = s.dns.DoHCopies(vs, snap) // the queries' copies (clone pools, a rule's clone); nil for none
		defer cp.Close()
	} else if s.dns == nil && snap.Clone != nil {
		cp = dnsvs.ProxyCopies(vs, snap) // a doh-proxy's own: its clone pools'
		defer cp.Close()
	}
	h := &Handler{Stats: s.st, Answer: func(q *dns.Msg, wire []byte) (*dns.Msg, int) {
		return s.answer(vs, snap, q, wire, client, local, ifx, cp)
	}}
	// (Metered under TLS: net/http must see the *tls.Conn to take ALPN h2.)
	var conn net.Conn = &meteredConn{Conn: c, st: &vs.Stats}
	if t := snap.Cfg.TLS; s.tls != nil && t != nil {
		// The client-ssl profiles' handshake, counted and logged as on
		// any virtual (show ltm profile client-ssl, log.ssl.level).
		raw, cfg := t.WatchClient(conn, s.tls)
		tc := tls.Server(raw, cfg)
		c.SetDeadline(time.Now().Add(t.Handshake()))
		var held state.SSLHeld
		defer held.Release()
		if err := snap.NoteClientTLS(tc, t.ClientHandshake(tc.Handshake), &held); err != nil {
			return
		}
		c.SetDeadline(time.Time{})
		conn = tc
	}
	l := &oneConn{c: conn, done: make(chan struct{})}
	srv := &http.Server{Handler: h, IdleTimeout: idle, ReadHeaderTimeout: handshakeTimeout, ErrorLog: quietLog, Protocols: &s.proto,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				l.finish()
			}
		}}
	srv.Serve(l)
}

// answer is the answer to one query: the dns profile's (doh-server, and
// doh-proxy with one), else a member's: over DoH with a server-ssl
// profile (askDoH), else over UDP and again over TCP when it is
// truncated. ifx is the client connection's arrival interface (0: not
// known), for a VLAN-limited SNAT's choice of the member query's source.
func (s *Service) answer(vs *state.Virtual, snap *state.VirtualSnap, q *dns.Msg, wire []byte, client, local netip.AddrPort, ifx int, cp *dnsvs.DoHCopies) (*dns.Msg, int) {
	var m *dns.Msg
	status := http.StatusServiceUnavailable
	switch {
	case s.dns != nil:
		// The profile's pool step comes back to AskPool below when the
		// members are DoH servers.
		if a, ok := s.dns.AnswerDoH(vs, snap, q, wire, client, local, ifx, cp); ok {
			m, status = a, http.StatusOK
		}
	case s.mode != Proxy: // a doh-server asks its pool only through its dns profile
	case s.up != nil:
		cp.Copy(wire, wire) // the member's DoH request carries the query as the client sent it
		m, status = s.askDoH(vs, snap, q, wire, client, local)
	default:
		cp.Copy(wire, wire) // as is, to the member (dnsvs.AskPool)
		m = dnsvs.AskPool(vs, snap, q, wire, client, local, true, ifx)
		if m != nil && m.Truncated {
			m = dnsvs.AskPool(vs, snap, q, wire, client, local, false, ifx)
		}
		if m != nil {
			status = http.StatusOK
		}
	}
	return m, status
}

// AskPool implements dnsvs.PoolAsker: a doh-proxy with a server-ssl
// profile and a dns profile sends the profile's pool queries to its DoH
// members; handled is false for the others (DNS to the members).
func (s *Service) AskPool(vs *state.Virtual, snap *state.VirtualSnap, r *dns.Msg, wire []byte, client, local netip.AddrPort) (m *dns.Msg, handled bool) {
	if s.up == nil {
		return nil, false
	}
	m, _ = s.askDoH(vs, snap, r, wire, client, local)
	return m, true
}

// askDoH sends wire (q) to a member of the virtual's pool as a DoH
// request, chosen by the pool's load balancing and monitors as its other
// traffic is, translated as the virtual says; a member that fails is
// passed over for one more.
func (s *Service) askDoH(vs *state.Virtual, snap *state.VirtualSnap, q *dns.Msg, wire []byte, client, local netip.AddrPort) (*dns.Msg, int) {
	if snap.Pool == nil {
		return nil, http.StatusServiceUnavailable
	}
	var failed []*state.Member
	var last *state.Member
	ctx := context.WithValue(context.Background(), queryKey{}, queryOf{vs, snap})
	return s.up.AskContext(ctx, q, wire, func(int) (Member, bool) {
		if last != nil {
			failed = append(failed, last)
		}
		mem, _, _ := state.Choose(snap.Pool, state.Target{}, nil, failed, state.Chooser{})
		if mem == nil {
			return Member{}, false
		}
		last = mem
		mem.Stats.Requests.Add(1)
		return Member{Addr: state.Translate(snap.Cfg, mem.Cfg.Load().Addr, local), Done: func(ok bool, in, out int) {
			mem.Stats.Out(out, 1)
			if ok {
				mem.Stats.In(in, 1)
			}
		}}, true
	})
}

// queryKey finds, in a member connection's dial context, the virtual
// whose query dialled it.
type queryKey struct{}

type queryOf struct {
	vs   *state.Virtual
	snap *state.VirtualSnap
}

// memberHandshake is a DoH member connection's TLS handshake as the
// virtual's server-ssl profile runs any: within its
// max-active-handshakes, a failure logged (sys db log.ssl.level, or the
// profile's log-publisher), and counted on the virtual's server-ssl
// counters (`show ltm profile server-ssl`). The connection is then kept
// for the virtual's next queries (OneConnect-like), so it is not held in
// the profile's current connections [M].
func memberHandshake(ctx context.Context, tc *tls.Conn) error {
	qo, ok := ctx.Value(queryKey{}).(queryOf)
	if !ok || qo.snap.Cfg.TLS == nil {
		return tc.HandshakeContext(ctx)
	}
	t := qo.snap.Cfg.TLS
	return qo.vs.Prof.ServerSSL.Note(tc, t.ServerFailed(tc, t.ServerHandshake(func() error { return tc.HandshakeContext(ctx) })))
}

func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// meteredConn counts a client's bytes on the virtual (show ltm virtual's
// clientside bytes and packets): what the connection carried, its TLS
// records and HTTP framing with the DNS messages in them, as BIG-IP
// counts a virtual's client-side payload [M: an http virtual of
// openltm's counts the bytes its engine reads, under TLS].
type meteredConn struct {
	net.Conn
	st *state.Counters
}

func (c *meteredConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.st.In(n, state.Packets(n))
	}
	return n, err
}

func (c *meteredConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.st.Out(n, state.Packets(n))
	}
	return n, err
}

// oneConn is a listener of one connection, for http.Server.Serve: its
// second Accept waits until the connection is done.
type oneConn struct {
	mu   sync.Mutex
	c    net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.c
	l.c = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) finish()        { l.once.Do(func() { close(l.done) }) }
func (l *oneConn) Close() error   { l.finish(); return nil }
func (l *oneConn) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "doh" }
