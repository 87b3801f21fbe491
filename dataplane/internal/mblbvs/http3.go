package mblbvs

import (
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// HTTP/3 clients (the quic and http3 profiles on a UDP virtual): each
// QUIC connection dataplane/http3 accepts is a client of the virtual's
// HTTP engine, as an HTTP/2 client is (http2.go): one flow record and
// one rules state, CLIENT_ACCEPTED once, then each request on an
// in-memory pipe (h2gw.Pipe), a lane, whose engine session stands for
// the client, so HTTP_REQUEST and HTTP_RESPONSE, persistence and
// per-request balancing are the HTTP/1.1 path's. Lanes after the first
// start from what CLIENT_ACCEPTED chose (pool, persist setting).

// H3Client is one QUIC connection's side in the engine.
type H3Client struct {
	mv    *VS
	f     *mblbFlow
	first *mblb.ClientConn
	opts  mblb.ClientOptions
	reset func()
	// untrackLSN forgets the client for LSN:: steering (lsn.go).
	untrackLSN func()

	mu       sync.Mutex
	gw       net.Conn // the first lane's gateway end, until dialled
	firstEng net.Conn // its engine end
	sessions []*mblb.ClientConn
	wg       sync.WaitGroup
	closed   bool
}

// HTTP3Client admits nothing itself: the listener took the virtual's
// connection count (state.Virtual.Admit). It makes the client's flow
// record and runs CLIENT_ACCEPTED; false when the virtual has no engine
// or a rule rejected or dropped the client (the count is given back).
// It is asked at the client's hello (hello, read by the SSL:: commands of
// CLIENTSSL_CLIENTHELLO, which runs after CLIENT_ACCEPTED as on a TCP
// virtual); Handshake follows once QUIC's handshake is done. reset ends
// the QUIC connection (a rule's reject). ifx is the interface the
// client's handshake arrived on (0: not known), kept as a TCP client's
// for a VLAN-limited SNAT's choice of its member connections' source
// (arrival.go).
func (s *Set) HTTP3Client(vs *state.Virtual, snap *state.VirtualSnap, client, local netip.AddrPort, ifx int, hello *tls.ClientHelloInfo, reset func()) (*H3Client, bool) {
	mv := s.For(vs)
	if mv == nil {
		vs.Leave(snap.Addr)
		return nil, false
	}
	f, opts := mv.newFlow(snap, client, local)
	f.Protocol = "udp"
	opts.Client = client // the engine reads no address from the lanes' UDP RemoteAddr
	f.Arrival = int32(ifx)
	mv.noteArrival(snap, f, nil, &opts) // arrival.go: one boolean test without a VLAN list
	gw, eng := h2gw.Pipe()
	first := mv.eng.NewClientConn(&h3EngineConn{Conn: eng, local: local, remote: client, reset: reset}, opts)
	f.sess = first
	f.Closer = func(rst bool) {
		if rst {
			reset()
		}
		first.Close(rst)
	}
	mv.env.Table.Add(&f.Flow)
	// LSN:: steering and SA_PICKED for its member connections (lsn.go).
	untrack := mv.trackLSN(f, snap)
	if f.rr != nil && (!f.rr.accepted() || hello != nil && !f.rr.clientHello(hello)) { // clientHello: tls.go
		untrack()
		first.Close(false)
		gw.Close()
		f.finish()
		return nil, false
	}
	if f.rr != nil {
		f.rr.h3 = true // HTTP::version says 3.0 (http.go)
	}
	c := &H3Client{mv: mv, f: f, first: first, opts: opts, reset: reset, untrackLSN: untrack, gw: gw, sessions: []*mblb.ClientConn{first}}
	if hr, _ := opts.HTTPRule.(*httpRules); hr != nil {
		f.setLanes(&h2Lanes{first: first, lane: h2gw.LaneOf(eng)}) // http2.go: which lane a request event is on
	}
	c.firstEng = eng
	return c, true
}

// Handshake runs, once QUIC's handshake with the client is done,
// CLIENTSSL_CLIENTCERT (when the client sent a certificate) and
// CLIENTSSL_HANDSHAKE, whose SSL:: commands read cs, as every later
// event's do; false when a rule ended the client (the listener then
// closes it and calls Close).
func (c *H3Client) Handshake(cs *tls.ConnectionState) bool {
	r := c.f.rr
	if r == nil {
		c.f.quicTLS = cs // no rule reads it; kept for the record's sake
		return true
	}
	r.mu.Lock()
	c.f.quicTLS = cs
	r.mu.Unlock()
	if cs != nil && len(cs.PeerCertificates) > 0 && !r.sslEvent(rules.ClientSSLClientCert) {
		return false
	}
	return r.sslEvent(rules.ClientSSLHandshake)
}

// run serves one lane's session until its gateway end closes.
func (c *H3Client) run(sess *mblb.ClientConn, eng net.Conn, lr *laneRule) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		sess.Run()
		eng.Close()
		if lr != nil && lr.seen != nil {
			c.f.lanes.m.Delete(lr.seen)
		}
	}()
}

// Dial opens a lane: the first is the session CLIENT_ACCEPTED ran on,
// the others new sessions on the same flow record and rules state.
func (c *H3Client) Dial() (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, net.ErrClosed
	}
	f := c.f
	if c.gw != nil {
		g := c.gw
		c.gw = nil
		if f.lanes != nil {
			f.lanes.laneOf(c.first, c.firstEng)
		}
		c.run(c.first, c.firstEng, nil)
		return g, nil
	}
	g, e := h2gw.Pipe()
	o := c.opts
	var lr *laneRule
	if hr, _ := c.opts.HTTPRule.(*httpRules); hr != nil {
		lr = &laneRule{httpRules: hr}
		o.HTTPRule = lr
	}
	sess := c.mv.eng.NewClientConn(&h3EngineConn{Conn: e, local: f.Local, remote: f.Client, reset: c.reset}, o)
	if lr != nil {
		lr.sess = sess
		f.lanes.laneOf(sess, e)
	}
	if t, ok := c.first.Current(); ok {
		sess.SetTarget(t)
	}
	if f.ruleClone.Load() != nil {
		sess.SetClone(f.cloneRule) // a rule's clone copies every stream (clone.go)
	}
	sess.SetPersist(c.first.PersistSetting())
	if line, ok := c.first.HSTS(); ok {
		sess.SetHSTS(line)
	}
	c.sessions = append(c.sessions, sess)
	c.run(sess, e, lr)
	return g, nil
}

// Close ends the client once its QUIC connection ended and every lane
// was closed: the sessions finish, the flow leaves the table and the
// virtual's count.
func (c *H3Client) Close() {
	c.mu.Lock()
	c.closed = true
	if c.gw != nil { // no request came
		c.gw.Close()
		c.gw = nil
		c.first.Close(false)
	}
	c.mu.Unlock()
	c.wg.Wait()
	var n uint64
	for _, s := range c.sessions {
		n += s.Stats().Requests
	}
	c.f.h2Requests = n
	c.untrackLSN()
	c.f.finish()
}

// h3EngineConn is the engine's side of an HTTP/3 client's lane: it names
// the client's and the virtual's addresses, and a reset of the session
// (a rule's reject) ends the QUIC connection, unless the listener had
// already closed this lane (its own end, as engineConn's).
type h3EngineConn struct {
	net.Conn
	local, remote netip.AddrPort
	reset         func()
	ended         atomic.Bool
}

// Read notes the listener's end of this lane.
func (c *h3EngineConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == io.EOF {
		c.ended.Store(true)
	}
	return n, err
}

func (c *h3EngineConn) LocalAddr() net.Addr  { return net.UDPAddrFromAddrPort(c.local) }
func (c *h3EngineConn) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(c.remote) }

// SetLinger(0) comes before the Close of a reset (mblb's resetConn).
func (c *h3EngineConn) SetLinger(sec int) error {
	if sec == 0 && !c.ended.Load() {
		c.reset()
	}
	return nil
}
