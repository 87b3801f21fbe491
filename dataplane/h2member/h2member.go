// Package h2member is BIG-IP's http2 profile on the server side (the
// HTTP/2 full proxy, with the httprouter profile): the HTTP engine
// (dataplane/mblb) keeps speaking HTTP/1.1 on its member connections,
// and each of those connections is an in-memory pipe to a bridge that
// turns every request it reads into a stream on an HTTP/2 connection to
// the member, shared by all the engine connections to that member from
// the same source address, cleartext with prior knowledge or TLS with
// ALPN h2.
//
// Why a bridge behind the engine's member connection rather than HTTP/2
// inside the engine: load balancing, persistence, the rules'
// HTTP_REQUEST and HTTP_RESPONSE, the http profile's header edits and
// the response queue in request order all work on HTTP/1.1 messages, and
// keep working unchanged; the bridge adds only the mapping of a request
// to a stream. The cost is a parse and a serialisation per request on
// this path, and the engine's order: the responses of one HTTP/1.1
// client's pipelined requests reach it in the order it asked, as with
// HTTP/1.1 members, though the member may answer their streams in any
// order. An HTTP/2 client's streams do not wait for each other: each
// comes on an engine connection (a lane of dataplane/h2gw) that carries
// one at a time, and so on a bridge of its own. A request's body and
// its response go both ways at once (x/net's RoundTrip returns with the
// response's head while the body is still sent), so a gRPC
// bidirectional call works through the bridge.
//
// The HTTP/2 codec is golang.org/x/net/http2's client (Transport and
// ClientConn): flow control, stream limits, trailers, RST_STREAM and
// GOAWAY are its job.
package h2member

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"golang.org/x/net/http2"
)

//lint:file-ignore SA1019 x/net's client is deprecated for net/http's, whose ClientConn dials its own connections and does its own TLS; the pool must speak HTTP/2 over a connection it dialed (SNAT source, server-ssl's handshake, counters and ALPN h2), which x/net's NewClientConn takes as it is.

// Config is an http2 profile as the server side applies it.
type Config struct {
	// Profile is the profile's full path, for its statistics.
	Profile string
	// MaxConcurrentStreams is concurrent-streams-per-connection: beyond
	// it (or the member's own limit, whichever is lower) another
	// connection to the member is opened; 0 is the member's limit.
	MaxConcurrentStreams uint32
	// IdleTimeout is connection-idle-timeout: a member connection
	// without a stream for this long is closed; 0 never.
	IdleTimeout time.Duration
	// HeaderTableSize is header-table-size, the HPACK tables kept with
	// the member; 0 is HTTP/2's default, 4096.
	HeaderTableSize uint32
	// ReceiveWindow is receive-window in bytes: each stream's
	// flow-control window, SETTINGS_INITIAL_WINDOW_SIZE as the member
	// is told, so that a member cannot send more of a response than the
	// proxy holds for it; the connection's window is that times
	// MaxConcurrentStreams, as the client side sizes its own, and at
	// least 128 KiB (x/net's floor) [M]. 0 keeps x/net's windows (4 MiB
	// a stream, 1 GiB the connection).
	ReceiveWindow int32
	// Stats, when set, counts the profile's member connections and
	// streams.
	Stats *Stats
}

// Stats are the server side's counters of an http2 profile, for `show
// ltm profile http2`.
type Stats struct {
	Connections, TotalConnections atomic.Int64
	Streams, TotalStreams         atomic.Int64
	// Failed counts requests answered 502 because their stream or its
	// connection failed before the member's response.
	Failed atomic.Int64
}

// Reset zeroes the totals, keeping what is current.
func (s *Stats) Reset() {
	s.TotalConnections.Store(s.Connections.Load())
	s.TotalStreams.Store(s.Streams.Load())
	s.Failed.Store(0)
}

// Dialer opens a transport connection to the member that speaks HTTP/2
// with prior knowledge: TCP for a cleartext member, or TLS whose
// handshake is done and negotiated h2.
type Dialer func(ctx context.Context) (net.Conn, error)

// Target is a member as the pool reaches it.
type Target struct {
	// Key names the connections that may be shared: the same member,
	// source address and TLS settings.
	Key string
	// Remote is the member's address, the engine connection's remote.
	Remote net.Addr
	// TLS says the streams' scheme is https.
	TLS bool
	// Dial opens a new connection when none can take another stream.
	Dial Dialer
}

// Pool keeps the HTTP/2 connections of one virtual server to its
// members.
type Pool struct {
	cfg Config
	tr  *http2.Transport
	// byIdle: time.Duration -> *http2.Transport, the clients of the
	// member connections with an idle timeout of their own (IdleTimer).
	byIdle sync.Map
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	groups map[string]*group
	closed bool
}

// New returns an empty pool.
func New(cfg Config) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{cfg: cfg, tr: newTransport(cfg), ctx: ctx, cancel: cancel, groups: map[string]*group{}}
}

// newTransport is the x/net client cfg's member connections speak
// through: its IdleConnTimeout is the connections' idle timeout.
func newTransport(cfg Config) *http2.Transport {
	tr := &http2.Transport{
		// The engine forwards what members send: no gzip of its own.
		DisableCompression:        true,
		IdleConnTimeout:           cfg.IdleTimeout,
		MaxEncoderHeaderTableSize: cfg.HeaderTableSize,
		MaxDecoderHeaderTableSize: cfg.HeaderTableSize,
		// A member that stops answering is found by a PING, so that
		// its streams fail instead of waiting forever.
		ReadIdleTimeout: 30 * time.Second,
		PingTimeout:     15 * time.Second,
	}
	if cfg.ReceiveWindow > 0 {
		tr = withWindows(tr, cfg)
	}
	return tr
}

// IdleTimer is a member connection a Dialer returns that carries its
// own idle timeout (an ltm snat-translation's tcp-idle-timeout on the
// address it comes from), which replaces the profile's
// connection-idle-timeout for it, longer or shorter: it is closed once
// no stream has been open on it for that long. 0 keeps the profile's.
type IdleTimer interface {
	IdleTimeout() time.Duration
}

// transport is the x/net client of a member connection c: the pool's,
// or one whose idle timeout is c's own (one per distinct timeout, made
// on first use and kept by the pool).
func (p *Pool) transport(c net.Conn) *http2.Transport {
	it, ok := c.(IdleTimer)
	if !ok {
		return p.tr
	}
	d := it.IdleTimeout()
	if d <= 0 || d == p.cfg.IdleTimeout {
		return p.tr
	}
	if tr, ok := p.byIdle.Load(d); ok {
		return tr.(*http2.Transport)
	}
	cfg := p.cfg
	cfg.IdleTimeout = d
	tr, _ := p.byIdle.LoadOrStore(d, newTransport(cfg))
	return tr.(*http2.Transport)
}

// withWindows is tr with cfg's receive windows. x/net takes a client's
// windows only from net/http's HTTP2Config, through the net/http
// Transport it is configured from; that Transport dials nothing here
// (the pool hands x/net the connections it dialed).
func withWindows(tr *http2.Transport, cfg Config) *http2.Transport {
	// x/net opens the connection's window by MaxReceiveBufferPerConnection
	// beyond HTTP/2's initial 65535, and takes no less than 65535 more.
	const initial = 65535
	conn := int64(cfg.ReceiveWindow) * int64(max(cfg.MaxConcurrentStreams, 1))
	more := min(max(conn-initial, initial), 1<<31-1)
	t1 := &http.Transport{HTTP2: &http.HTTP2Config{
		MaxReceiveBufferPerStream:     int(cfg.ReceiveWindow),
		MaxReceiveBufferPerConnection: int(more),
	}}
	t2, err := http2.ConfigureTransports(t1)
	if err != nil {
		return tr // a fresh Transport is never configured twice
	}
	t2.DisableCompression = tr.DisableCompression
	t2.IdleConnTimeout = tr.IdleConnTimeout
	t2.MaxEncoderHeaderTableSize = tr.MaxEncoderHeaderTableSize
	t2.MaxDecoderHeaderTableSize = tr.MaxDecoderHeaderTableSize
	t2.ReadIdleTimeout = tr.ReadIdleTimeout
	t2.PingTimeout = tr.PingTimeout
	return t2
}

// Close closes every member connection: their streams fail, and the
// bridges answer 502.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	groups := p.groups
	p.groups = map[string]*group{}
	p.mu.Unlock()
	p.cancel()
	for _, g := range groups {
		g.mu.Lock()
		for _, m := range g.conns {
			m.cc.Close()
		}
		g.conns = nil
		g.mu.Unlock()
	}
}

var errClosed = errors.New("h2member: the virtual server's HTTP/2 member pool is closed")

// Open returns the engine's end of a new member connection to t: the
// HTTP/1.1 requests written on it go to the member as HTTP/2 streams,
// and their responses come back on it as HTTP/1.1, in order. A member
// connection is dialed first when none can take a stream, so that a
// member that cannot be reached fails the dial, as a TCP connect would.
func (p *Pool) Open(ctx context.Context, t Target) (net.Conn, error) {
	g, err := p.group(t.Key)
	if err != nil {
		return nil, err
	}
	m, err := g.get(ctx, p, t)
	if err != nil {
		return nil, err
	}
	gw, eng := h2gw.Pipe()
	b := newBridge(p, g, t, gw)
	go b.serve()
	return &engineConn{Conn: eng, local: m.local, remote: t.Remote}, nil
}

// group returns the connections of key, made on first use.
func (p *Pool) group(key string) (*group, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	g := p.groups[key]
	if g == nil {
		g = &group{}
		p.groups[key] = g
	}
	return g, nil
}

// group is the connections to one member from one source.
type group struct {
	mu    sync.Mutex // held while dialing: one dial at a time per member
	conns []*memberConn
}

// memberConn is one HTTP/2 connection to a member.
type memberConn struct {
	cc    *http2.ClientConn
	local net.Addr
}

// get returns a connection that can take another stream, dialing one
// when none can. Connections that can take no more (GOAWAY, closed)
// are forgotten; x/net closes them once their streams are done.
func (g *group) get(ctx context.Context, p *Pool, t Target) (*memberConn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	live := g.conns[:0]
	var pick *memberConn
	for _, m := range g.conns {
		if !m.cc.CanTakeNewRequest() {
			continue
		}
		live = append(live, m)
		if pick == nil && p.room(m.cc) {
			pick = m
		}
	}
	clear(g.conns[len(live):])
	g.conns = live
	if pick != nil {
		return pick, nil
	}
	c, err := t.Dial(ctx)
	if err != nil {
		return nil, err
	}
	tr := p.transport(c) // before countedConn hides an IdleTimer
	if st := p.cfg.Stats; st != nil {
		st.Connections.Add(1)
		st.TotalConnections.Add(1)
		c = &countedConn{Conn: c, st: st}
	}
	cc, err := tr.NewClientConn(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	m := &memberConn{cc: cc, local: c.LocalAddr()}
	g.conns = append(g.conns, m)
	return m, nil
}

// room reports whether cc may take another stream under the profile's
// concurrent-streams-per-connection (the member's own limit makes
// x/net wait for a free stream).
func (p *Pool) room(cc *http2.ClientConn) bool {
	limit := p.cfg.MaxConcurrentStreams
	if limit == 0 {
		return true
	}
	st := cc.State()
	return st.StreamsActive+st.StreamsReserved+st.StreamsPending < int(limit)
}

// countedConn counts a member connection until it is closed.
type countedConn struct {
	net.Conn
	st   *Stats
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.st.Connections.Add(-1) })
	return c.Conn.Close()
}

// engineConn is the engine's end of a bridge: it names the member and
// the shared connection's source, for the engine's connection record.
type engineConn struct {
	net.Conn
	local, remote net.Addr
}

func (c *engineConn) LocalAddr() net.Addr {
	if c.local == nil {
		return c.Conn.LocalAddr()
	}
	return c.local
}

func (c *engineConn) RemoteAddr() net.Addr {
	if c.remote == nil {
		return c.Conn.RemoteAddr()
	}
	return c.remote
}
