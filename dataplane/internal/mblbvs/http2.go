package mblbvs

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
)

// HTTP/2 clients (the http2 profile). A client of an HTTP virtual with
// the profile is served on goroutines (the acceptor does not give it to
// an event loop): after CLIENT_ACCEPTED and the TLS handshake, a client
// that negotiated h2, or with activation-modes always a cleartext client
// whose first bytes are the HTTP/2 preface, is served by dataplane/h2gw.
// Its streams reach the virtual's engine as HTTP/1.1 requests on
// in-memory pipes (h2gw.Pipe), the gateway's lanes, one stream at a time
// on each; their engine sessions stand for the client: the client's
// address, the virtual's address, its flow record and its rules'
// connection state, so HTTP_REQUEST runs per stream as on BIG-IP, and
// no stream waits for another's response. Other clients go on as
// HTTP/1.

// http2Client reports whether the client on conn speaks HTTP/2, and the
// connection to serve it on (cleartext: one that gives back the bytes
// read to tell).
func http2Client(h *config.HTTP2, conn net.Conn, fc *frontConn, raw *net.TCPConn, idle time.Duration) (bool, net.Conn) {
	if h == nil {
		return false, conn
	}
	if fc != nil && !fc.clear {
		return h.ALPN && fc.tls.ConnectionState().NegotiatedProtocol == "h2", fc.tls
	}
	if !h.Always || fc != nil {
		return false, conn
	}
	// Cleartext: read until the bytes part from the preface or hold it
	// whole. An HTTP/1 request parts at its first byte.
	if idle > 0 {
		raw.SetReadDeadline(time.Now().Add(idle))
		defer raw.SetReadDeadline(time.Time{})
	}
	var got []byte
	buf := make([]byte, len(h2gw.Preface))
	for len(got) < len(h2gw.Preface) {
		n, err := raw.Read(buf[:len(h2gw.Preface)-len(got)])
		got = append(got, buf[:n]...)
		if !bytes.HasPrefix([]byte(h2gw.Preface), got) || err != nil {
			break
		}
	}
	pc := &prefixConn{TCPConn: raw, head: got}
	return len(got) == len(h2gw.Preface) && string(got) == h2gw.Preface, pc
}

// prefixConn gives back the bytes read to tell HTTP/2 from HTTP/1 before
// the rest of the connection; it is the socket for everything else
// (closing, linger, the rules' socket options).
type prefixConn struct {
	*net.TCPConn
	head []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(b, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.TCPConn.Read(b)
}

// WriteTo gives back head first too: the embedded connection's own
// (io.Copy's splice path, a tunnel's) would skip it.
func (c *prefixConn) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if len(c.head) > 0 {
		k, err := w.Write(c.head)
		n += int64(k)
		c.head = c.head[k:]
		if err != nil {
			return n, err
		}
	}
	k, err := c.TCPConn.WriteTo(w)
	return n + k, err
}

// serveHTTP2Capable runs one accepted client of a virtual with the
// http2 profile to its end, on goroutines, as Set.Serve runs others. Its
// engine session starts on a pipe, for CLIENT_ACCEPTED and the
// handshake; an HTTP/1 client's session then moves onto the client's
// connection (mblb.ClientConn.Rebind), an HTTP/2 client's stays for the
// gateway's first engine connection. head is what a virtual server that
// handed the client on read of it (Set.ServeHanded).
func (mv *VS) serveHTTP2Capable(snap *state.VirtualSnap, c *net.TCPConn, head []byte) {
	f, opts := mv.newFlow(snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()))
	mv.noteArrival(snap, f, c, &opts)                        // arrival.go
	conn := clientTLS(c, head, snap.Cfg.TLS, f.rr, f.sslTag) // tls.go
	f.front, _ = conn.(*frontConn)
	gw, eng := h2gw.Pipe()
	first := mv.eng.NewClientConn(&engineConn{Conn: eng, client: c}, opts)
	f.sess = first
	f.Closer = func(reset bool) {
		if reset {
			c.SetLinger(0)
		}
		c.Close() // the session, or the gateway, ends with the client
		first.Close(reset)
	}
	mv.env.Table.Add(&f.Flow)
	defer f.finish()
	defer mv.trackTLS(f, snap.Cfg.TLS)() // tls.go
	defer mv.trackLSN(f, snap)()         // lsn.go
	if (f.rr != nil && !f.rr.accepted()) || (f.front != nil && !f.handshake(conn, snap.Cfg.TLS)) {
		// The rule reset the client (through engineConn) or dropped it,
		// or the handshake failed (and reset it).
		first.Close(false)
		gw.Close()
		c.Close()
		return
	}
	h2, conn := http2Client(snap.Cfg.HTTP2, conn, f.front, c, snap.Idle)
	if h2 && f.rr != nil && f.rr.h2off.Load() {
		// HTTP2::disable: a cleartext client's preface is refused (over
		// TLS, h2 was not offered).
		refuseHTTP2(conn, c)
		first.Close(false)
		gw.Close()
		c.Close()
		return
	}
	if needsPace(f, snap.BWC) {
		conn = f.paced(conn, snap.BWC, snap.RateClass) // bwc.go: HTTP/2 and HTTP/1 clients alike
	}
	if !h2 {
		gw.Close()
		eng.Close()
		first.Rebind(conn)
		f.Closer = func(reset bool) { first.Close(reset) }
		first.Run()
		return
	}
	if f.front != nil && !snap.Cfg.HTTP2.PermitProhibitedCiphers && !h2gw.TLSAdequate(f.front.tls.ConnectionState()) {
		// enforce-tls-requirements: HTTP/2 over what RFC 7540 forbids
		// is refused (BIG-IP sends INADEQUATE_SECURITY [M: openltm
		// resets the connection]).
		first.Close(false)
		gw.Close()
		c.SetLinger(0)
		c.Close()
		return
	}
	if f.rr != nil {
		f.rr.h2 = true // HTTP::version says 2.0 (http.go)
	}
	mv.serveHTTP2(f, opts, conn, c, snap.Cfg.HTTP2, gw, eng, first)
}

// serveHTTP2 serves an HTTP/2 client on conn until it ends; its first
// engine connection is gw, whose other end eng first's session reads.
// The gateway asks for more (its lanes, one stream at a time on each,
// so that no stream waits for another's response): each is a session
// of its own on the same flow record and rules state, starting from
// what CLIENT_ACCEPTED set on first (its pool, member or node, its
// persist setting). Without OneConnect each lane keeps the member its
// first request went to, as each concurrent stream of a BIG-IP HTTP/2
// client has a server-side connection of its own [M].
func (mv *VS) serveHTTP2(f *mblbFlow, opts mblb.ClientOptions, conn net.Conn, c *net.TCPConn, h *config.HTTP2, gw, eng net.Conn, first *mblb.ClientConn) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	sessions := []*mblb.ClientConn{first}
	target, targetSet := first.Current()
	persist := first.PersistSetting()
	hr, _ := opts.HTTPRule.(*httpRules)
	if hr != nil {
		f.setLanes(&h2Lanes{first: first, lane: h2gw.LaneOf(eng)})
	}
	run := func(sess *mblb.ClientConn, eng net.Conn, lr *laneRule) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess.Run()
			eng.Close()
			if lr != nil && lr.seen != nil {
				f.lanes.m.Delete(lr.seen) // the lane is done
			}
		}()
	}
	dial := func() (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if gw != nil { // the session CLIENT_ACCEPTED ran with
			g := gw
			gw = nil
			f.lanes.laneOf(first, eng)
			run(first, eng, nil)
			return g, nil
		}
		g, e := h2gw.Pipe()
		o := opts
		var lr *laneRule
		if hr != nil {
			lr = &laneRule{httpRules: hr}
			o.HTTPRule = lr
		}
		sess := mv.eng.NewClientConn(&engineConn{Conn: e, client: c}, o)
		if lr != nil {
			lr.sess = sess
			f.lanes.laneOf(sess, e)
		}
		if targetSet {
			sess.SetTarget(target)
		}
		if f.ruleClone.Load() != nil {
			sess.SetClone(f.cloneRule) // a rule's clone copies every stream (clone.go)
		}
		sess.SetPersist(persist)
		if line, ok := first.HSTS(); ok {
			sess.SetHSTS(line) // HTTP::hsts acts on the whole client connection
		}
		sessions = append(sessions, sess)
		run(sess, e, lr)
		return g, nil
	}
	// The tcp profile's close timers: the engine's sessions read pipes,
	// so the client's socket is watched here (nil when none is set).
	var st *mblb.SocketTimers
	if mv.close != (mblb.CloseTimers{}) {
		st = mv.eng.WatchSocket(c, c.RemoteAddr().String(), func() {
			c.SetLinger(0)
			c.Close() // the gateway's reads and writes fail: it ends
		})
	}
	var settle func()
	if st != nil {
		settle = st.Settle // what the client is owed leaves, or the timer resets it
	}
	h2gw.ServeSettle(conn, &h.Config, dial, settle)
	st.Stop()
	c.Close()
	mu.Lock()
	if gw != nil { // no stream came
		gw.Close()
		first.Close(false)
	}
	mu.Unlock()
	wg.Wait()
	n := uint64(0)
	for _, s := range sessions {
		n += s.Stats().Requests
	}
	f.h2Requests = n
}

// h2Lanes tells an HTTP/2 client's engine sessions apart in its rules:
// a request event's commands that act on the client's session (persist
// none, persist cookie) act on the lane the request came on, and
// HTTP_RESPONSE reads the request each response answers (http.go).
type h2Lanes struct {
	first *mblb.ClientConn
	m     sync.Map // *mblb.HTTPEvent (a session's request view) -> *mblb.ClientConn
	// byConn finds a session's lane, lane is the first (what is the
	// connection's), for the HTTP2:: commands (http2rules.go).
	byConn sync.Map // *mblb.ClientConn -> *h2gw.Lane
	lane   *h2gw.Lane
}

// setLanes installs l before the first lane runs, under the rules' lock
// (their events read f.lanes).
func (f *mblbFlow) setLanes(l *h2Lanes) {
	if f.rr != nil {
		f.rr.mu.Lock()
		defer f.rr.mu.Unlock()
	}
	f.lanes = l
}

// enter makes f.sess the session whose request event x is, when the
// client speaks HTTP/2 (l not nil). Under the rules' lock.
func (l *h2Lanes) enter(f *mblbFlow, x *mblb.HTTPEvent) {
	if l == nil {
		return
	}
	if s, ok := l.m.Load(x); ok {
		f.sess = s.(*mblb.ClientConn)
		return
	}
	f.sess = l.first // the first lane's rules are the flow's own
}

// laneRule is the rules of an HTTP/2 client's lane after the first: it
// tells h2Lanes which session the lane's request view belongs to before
// the request events run (on the lane's reader only). Every other
// method, and so every optional handler the engine asks for, is the
// client's httpRules'.
type laneRule struct {
	*httpRules
	sess *mblb.ClientConn
	seen *mblb.HTTPEvent // the request view last told
}

func (l *laneRule) tell(x *mblb.HTTPEvent) {
	if l.seen == x {
		return
	}
	if l.seen != nil {
		l.f.lanes.m.Delete(l.seen)
	}
	l.seen = x
	l.f.lanes.m.Store(x, l.sess)
}

// OnHTTPRequest implements mblb.HTTPRuleHandler.
func (l *laneRule) OnHTTPRequest(x *mblb.HTTPEvent) error {
	l.tell(x)
	return l.httpRules.OnHTTPRequest(x)
}

// OnHTTPRequestData implements mblb.HTTPDataHandler.
func (l *laneRule) OnHTTPRequestData(x *mblb.HTTPEvent) error {
	l.tell(x)
	return l.httpRules.OnHTTPRequestData(x)
}

// engineConn is the engine's side of an HTTP/2 client's pipe: it
// names the client's and the virtual's addresses, so the engine sees the
// client as an HTTP/1 client of the virtual, and a reset of the session
// (a rule's reject) resets the client. Once the gateway has ended this
// engine connection (a lane it closed: the engine read EOF), a reset of
// the session is the session's own (an upload it will never see end) and
// leaves the client and its other streams alone.
type engineConn struct {
	net.Conn
	client *net.TCPConn
	ended  atomic.Bool
}

// Read notes the gateway's end of this engine connection.
func (c *engineConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == io.EOF {
		c.ended.Store(true)
	}
	return n, err
}

func (c *engineConn) LocalAddr() net.Addr  { return c.client.LocalAddr() }
func (c *engineConn) RemoteAddr() net.Addr { return c.client.RemoteAddr() }

// SetLinger(0) comes before the Close of a reset (mblb's resetConn).
func (c *engineConn) SetLinger(sec int) error {
	if sec == 0 && !c.ended.Load() {
		c.client.SetLinger(0)
		c.client.Close()
	}
	return nil
}
