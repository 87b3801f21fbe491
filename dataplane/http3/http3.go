// Package http3 is BIG-IP's quic and http3 profiles on the client side:
// a UDP virtual server's socket speaks QUIC (TLS 1.3 from the virtual's
// client-ssl profile, ALPN h3), and each HTTP/3 request goes on as an
// HTTP/1.1 request into the virtual's HTTP engine (dataplane/mblb) over
// one of the client's engine connections, its lanes, exactly as
// dataplane/h2gw does for HTTP/2: the http profile's edits, the iRules'
// HTTP events, persistence and balancing are the HTTP/1.1 path's own.
//
// QUIC and HTTP/3 framing are quic-go's (github.com/quic-go/quic-go and
// its http3 package); this package owns the listener, the lanes and the
// translation of a request and its response between the two versions.
package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Config is a virtual's quic and http3 profiles as the listener applies
// them.
type Config struct {
	// Profile and QUICProfile are the http3 and quic profiles' full
	// paths, for their statistics.
	Profile, QUICProfile string
	// MaxBidiStreams is bidi-concurrent-streams-per-connection: the
	// requests a client may have open at once (and so the most lanes a
	// connection dials); 0 is 100.
	MaxBidiStreams int64
	// MaxUniStreams is uni-concurrent-streams-per-connection; 0 is 10.
	MaxUniStreams int64
	// IdleTimeout is the udp profile's idle-timeout: a QUIC connection
	// with no packet for this long ends; 0 is quic-go's 30 s, negative
	// (indefinite) a day [M], and below a second (immediate) a second
	// [M: a QUIC connection cannot end as soon as it idles: its
	// handshake alone has pauses].
	IdleTimeout time.Duration
	// Early is the client-ssl profile's data-0rtt: whether resuming
	// clients may send requests in 0-RTT (TLS 1.3 early data, RFC 9001
	// section 4.6), and whether a session ticket is taken for 0-RTT
	// once only. The zero value offers none.
	Early Early
	// Stats and QUICStats, when set, count the profiles' connections and
	// requests.
	Stats     *Stats
	QUICStats *QUICStats
}

// Early is a client-ssl profile's data-0rtt setting as QUIC acts on it.
// 0-RTT saves a returning client a round trip, at the price that its
// first flight can be replayed by whoever captured it (RFC 8446 section
// 8): so only requests that are safe to repeat (GET, HEAD) are passed
// on before the handshake completes, each with Early-Data: 1 (RFC 8470
// section 5.1) so that a member may still answer 425; any other early
// request waits for the handshake (which a replayed flight cannot
// finish) [M: RFC 8470 section 5.1 leaves the server to wait or answer
// 425; waiting costs a QUIC server no buffering, and a client then needs
// no retry].
type Early uint8

const (
	// EarlyOff (disabled, BIG-IP's default) issues tickets without early
	// data: a resuming client sends its requests after the handshake.
	EarlyOff Early = iota
	// EarlyAntiReplay (enabled-with-anti-replay) takes each session
	// ticket's early data once (RFC 8446 section 8.1's single-use
	// tickets): the same ticket offered again, a replay or the client's
	// own second try, resumes without 0-RTT.
	EarlyAntiReplay
	// EarlyNoAntiReplay (enabled-no-anti-replay) takes early data on
	// every resumption of a ticket; the method rule above still holds
	// [M: F5 does not say what its variant without anti-replay lets
	// through].
	EarlyNoAntiReplay
)

// Stats are an http3 profile's counters for `show ltm profile http3`.
type Stats struct {
	Requests, Responses atomic.Int64
	// Failed counts requests answered 502 because no engine connection
	// answered them.
	Failed atomic.Int64
	// EarlyForwarded counts requests passed on in 0-RTT, before the
	// handshake completed (with Early-Data: 1); EarlyHeld those that
	// came in 0-RTT and waited for the handshake (not GET or HEAD).
	EarlyForwarded, EarlyHeld atomic.Int64
}

// Reset zeroes the counters.
func (s *Stats) Reset() {
	s.Requests.Store(0)
	s.Responses.Store(0)
	s.Failed.Store(0)
	s.EarlyForwarded.Store(0)
	s.EarlyHeld.Store(0)
}

// QUICStats are a quic profile's counters for `show ltm profile quic`.
type QUICStats struct {
	Connections, TotalConnections atomic.Int64
	// Refused counts connections the virtual did not admit (disabled, a
	// connection limit, a rule's reject or drop in CLIENT_ACCEPTED,
	// CLIENTSSL_CLIENTHELLO or CLIENTSSL_HANDSHAKE).
	Refused atomic.Int64
	// ZeroRTT counts connections whose 0-RTT was accepted; Replayed the
	// 0-RTT attempts refused because their ticket had been used for
	// early data already (EarlyAntiReplay).
	ZeroRTT, Replayed atomic.Int64
}

// Reset zeroes the totals, keeping what is current.
func (s *QUICStats) Reset() {
	s.TotalConnections.Store(s.Connections.Load())
	s.Refused.Store(0)
	s.ZeroRTT.Store(0)
	s.Replayed.Store(0)
}

// Conn is a QUIC client connection as the virtual admits it: at its
// ClientHello, before the server answers (BIG-IP's order: the client is
// accepted, CLIENT_ACCEPTED and CLIENTSSL_CLIENTHELLO run, then the
// handshake goes on).
type Conn struct {
	Remote, Local netip.AddrPort
	// Arrival is the interface its handshake arrived on, read while the
	// listener's SetArrival is on (0: not known), for a VLAN-limited
	// SNAT's or NAT's choice of its member connections' source.
	Arrival int
	// Hello is the client's hello while Accept runs (nil after).
	Hello *tls.ClientHelloInfo

	qc       atomic.Pointer[quic.Conn]
	rejected atomic.Bool // Reset before the handshake was done

	mu     sync.Mutex
	client Client // what Accept gave
	taken  bool   // serveConn, or the end of a connection whose handshake failed, has it
}

// TLS is the connection's handshake once done (nil while Accept runs: the
// hello is all there is then).
func (c *Conn) TLS() *tls.ConnectionState {
	qc := c.qc.Load()
	if qc == nil {
		return nil
	}
	cs := qc.ConnectionState().TLS
	return &cs
}

// Reset ends the client's connection at once (a rule's reject): QUIC has
// no reset, so it is closed with H3_REQUEST_REJECTED; before the
// handshake is done, the handshake fails instead.
func (c *Conn) Reset() {
	c.rejected.Store(true)
	if qc := c.qc.Load(); qc != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
	}
}

// take hands the connection's client to its one owner: the first caller
// gets it, the others nil.
func (c *Conn) take() Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taken {
		return nil
	}
	c.taken = true
	return c.client
}

// Handshaker is a Client told of the finished handshake (CLIENTSSL_HANDSHAKE);
// false ends the connection (a rule's reject or drop).
type Handshaker interface {
	Handshake(cs *tls.ConnectionState) bool
}

// errRefused fails the handshake of a connection Accept refused.
var errRefused = errors.New("http3: the virtual server refused the connection")

// connKey finds a handshake's Conn in its context.
type connKey struct{}

// Client is one admitted QUIC connection's side in the HTTP engine.
type Client interface {
	// Dial opens an engine connection (a lane) for the client: the
	// listener writes HTTP/1.1 requests on it, one at a time, and reads
	// their responses. Dial may be called from several goroutines.
	Dial() (net.Conn, error)
	// Close is called once, after the connection ended and every lane
	// dialled was closed.
	Close()
}

// Accept admits a new QUIC connection of the virtual at its ClientHello
// (its connection count, CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO) and
// returns its engine side; false refuses it: the handshake fails. It runs
// on the connection's QUIC goroutine, so a slow rule holds that one
// connection only.
type Accept func(c *Conn) (Client, bool)

// Listener serves HTTP/3 on one UDP socket.
type Listener struct {
	tr     *quic.Transport
	ac     *arrivalConn // the socket, with its arrivals (arrival.go); nil: pc was not a *net.UDPConn
	ln     *quic.EarlyListener
	outer  *tls.Config // what the transport was given: its ticket keys seal the tickets
	seen   ticketLog   // the tickets 0-RTT was taken on (EarlyAntiReplay)
	srv    *http3.Server
	accept Accept
	cfg    atomic.Pointer[Config]
	conns  sync.Map // *quic.Conn -> *client
	wg     sync.WaitGroup
	closed atomic.Bool
}

// Listen starts QUIC on pc. tlsConf is asked for each handshake (so a
// commit's new client-ssl profile applies to new connections): it must
// return the virtual's client-ssl configuration, nil to refuse the
// handshake. cfg is kept until SetConfig replaces it. Serve must then
// run; Close ends every connection and closes pc.
func Listen(pc net.PacketConn, tlsConf func() *tls.Config, cfg *Config, accept Accept) (*Listener, error) {
	l := &Listener{accept: accept}
	if u, ok := pc.(*net.UDPConn); ok {
		l.ac = newArrivalConn(u)
		pc = l.ac
	}
	l.tr = &quic.Transport{Conn: pc}
	local := addrPort(pc.LocalAddr())
	l.tr.ConnContext = func(ctx context.Context, ci *quic.ClientInfo) (context.Context, error) {
		c := &Conn{Remote: addrPort(ci.RemoteAddr), Local: local}
		if l.ac != nil {
			c.Arrival = l.ac.arrival(c.Remote)
		}
		ctx = context.WithValue(ctx, connKey{}, c)
		// A connection whose handshake fails after Accept admitted it
		// never reaches Serve: its client ends with it.
		context.AfterFunc(ctx, func() {
			if ec := c.take(); ec != nil {
				ec.Close()
			}
		})
		return ctx, nil
	}
	l.cfg.Store(cfg)
	base := &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			if err := l.admit(h); err != nil {
				return nil, err
			}
			c := tlsConf()
			if c == nil {
				return nil, errors.New("http3: the virtual server has no client-ssl profile")
			}
			q := forQUIC(c)
			if l.cfg.Load().Early == EarlyAntiReplay && !q.SessionTicketsDisabled {
				q = l.singleUse(q)
			}
			return q, nil
		},
	}
	qc := &quic.Config{
		GetConfigForClient: func(*quic.ClientInfo) (*quic.Config, error) {
			return l.quicConfig(), nil
		},
	}
	l.srv = &http3.Server{
		Handler: &handler{l: l},
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			if v, ok := l.conns.Load(c); ok {
				return context.WithValue(ctx, clientKey{}, v)
			}
			return ctx
		},
	}
	// ListenEarly hands over each connection before its handshake
	// completes, so that 0-RTT requests are served; serveConn waits for
	// the handshake of a connection that may not send them, so without
	// data-0rtt nothing changes.
	l.outer = http3.ConfigureTLSConfig(base)
	ln, err := l.tr.ListenEarly(l.outer, qc)
	if err != nil {
		l.tr.Close()
		return nil, err
	}
	l.ln = ln
	return l, nil
}

// admit asks Accept about the connection whose hello h is, once (a
// HelloRetryRequest's second hello is not asked again).
func (l *Listener) admit(h *tls.ClientHelloInfo) error {
	c, _ := h.Context().Value(connKey{}).(*Conn)
	if c == nil {
		return errRefused
	}
	c.mu.Lock()
	done := c.client != nil || c.taken
	c.mu.Unlock()
	if done {
		return nil
	}
	c.Hello = h
	ec, ok := l.accept(c)
	c.Hello = nil
	if !ok {
		if st := l.cfg.Load().QUICStats; st != nil {
			st.Refused.Add(1)
		}
		return errRefused
	}
	c.mu.Lock()
	c.client = ec
	taken := c.taken // the connection ended meanwhile
	c.mu.Unlock()
	if taken {
		ec.Close()
		return errRefused
	}
	return nil
}

// forQUIC is a client-ssl configuration as QUIC needs it: TLS 1.3 only
// (RFC 9001), whatever the profile's options allow over TCP [M: a
// profile with no-tlsv1.3 still serves HTTP/3], and ALPN h3.
func forQUIC(c *tls.Config) *tls.Config {
	if c.MinVersion == tls.VersionTLS13 && c.MaxVersion == 0 && len(c.NextProtos) == 1 && c.NextProtos[0] == http3.NextProtoH3 {
		return c
	}
	q := c.Clone()
	q.MinVersion, q.MaxVersion = tls.VersionTLS13, 0
	q.NextProtos = []string{http3.NextProtoH3}
	if pick := c.GetConfigForClient; pick != nil {
		q.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			chosen, err := pick(h)
			if chosen == nil || err != nil {
				return chosen, err
			}
			return forQUIC(chosen), nil
		}
	}
	return q
}

// maxIdle is the idle timeout an indefinite one asks for [M].
const maxIdle = 24 * time.Hour

// quicConfig is the running profile's transport settings.
func (l *Listener) quicConfig() *quic.Config {
	cfg := l.cfg.Load()
	q := &quic.Config{MaxIncomingStreams: 100, MaxIncomingUniStreams: 10}
	if cfg.MaxBidiStreams > 0 {
		q.MaxIncomingStreams = cfg.MaxBidiStreams
	}
	if cfg.MaxUniStreams > 0 {
		q.MaxIncomingUniStreams = cfg.MaxUniStreams
	}
	switch {
	case cfg.IdleTimeout < 0:
		q.MaxIdleTimeout = maxIdle
	case cfg.IdleTimeout > 0:
		q.MaxIdleTimeout = max(cfg.IdleTimeout, time.Second)
	}
	q.Allow0RTT = cfg.Early != EarlyOff
	return q
}

// SetConfig applies a commit's profiles to the connections that come
// next.
func (l *Listener) SetConfig(cfg *Config) { l.cfg.Store(cfg) }

// SetArrival has the listener read, or no longer read, the arrival
// interface of each new connection's handshake (Conn.Arrival), as a
// VLAN-limited SNAT or NAT needs (arrival.go). Off, the cost per batch
// of packets is one atomic load.
func (l *Listener) SetArrival(on bool) {
	if l.ac != nil {
		l.ac.setArrival(on)
	}
}

// Addr is the socket's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Serve accepts QUIC connections until Close.
func (l *Listener) Serve() {
	for {
		qc, err := l.ln.Accept(context.Background())
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.serveConn(qc)
		}()
	}
}

// Close stops accepting, ends every connection (each client is sent
// CONNECTION_CLOSE) and closes the socket, so that its address is free
// when Close returns, then waits for the connections' requests to end:
// their lanes are closed with them, so none waits for the engine.
func (l *Listener) Close() {
	if l.closed.Swap(true) {
		return
	}
	l.ln.Close()
	l.conns.Range(func(k, _ any) bool {
		k.(*quic.Conn).CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
		return true
	})
	l.tr.Close()
	l.tr.Conn.Close()
	l.wg.Wait()
	l.srv.Close()
}

// clientKey finds a request's connection in its context.
type clientKey struct{}

// addrPort is a QUIC address as netip.
func addrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// serveConn runs one QUIC connection to its end.
func (l *Listener) serveConn(qc *quic.Conn) {
	cfg := l.cfg.Load()
	c, _ := qc.Context().Value(connKey{}).(*Conn)
	var ec Client
	if c != nil {
		ec = c.take()
	}
	if ec == nil { // not admitted, or ended already
		qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
		return
	}
	c.qc.Store(qc)
	// A connection that sent 0-RTT is served at once: its handshake
	// finishes meanwhile, and CLIENTSSL_HANDSHAKE runs then (after its
	// early requests' HTTP_REQUEST [M]). Any other waits for its
	// handshake, as before 0-RTT.
	early := qc.ConnectionState().Used0RTT
	if !early {
		select {
		case <-qc.HandshakeComplete():
		case <-qc.Context().Done():
			ec.Close()
			return
		}
	}
	handshake := func() bool {
		if hs, ok := ec.(Handshaker); c.rejected.Load() || ok && !hs.Handshake(c.TLS()) {
			if st := cfg.QUICStats; st != nil {
				st.Refused.Add(1)
			}
			qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeRequestRejected), "")
			return false
		}
		return true
	}
	if !early && !handshake() {
		ec.Close()
		return
	}
	if st := cfg.QUICStats; st != nil {
		st.Connections.Add(1)
		st.TotalConnections.Add(1)
		if early {
			st.ZeroRTT.Add(1)
		}
		defer st.Connections.Add(-1)
	}
	cl := &client{engine: ec, cfg: cfg}
	if early {
		cl.hs = qc.HandshakeComplete()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			select {
			case <-cl.hs:
				handshake()
			case <-qc.Context().Done():
			}
		}()
	}
	l.conns.Store(qc, cl)
	if l.closed.Load() {
		qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	}
	stop := make(chan struct{})
	go func() {
		// A connection that ends (closed by either side, timed out)
		// ends its lanes at once: a request waiting for the engine then
		// returns, and so does ServeQUICConn.
		select {
		case <-qc.Context().Done():
			cl.closeLanes()
		case <-stop:
		}
	}()
	l.srv.ServeQUICConn(qc) // returns once every request's handler did
	close(stop)
	qc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeNoError), "")
	l.conns.Delete(qc)
	cl.closeLanes()
	ec.Close()
}
