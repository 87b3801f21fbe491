package state

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/httpcompress"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/dataplane/xmlcbr"
)

// ProfileCounters are what a virtual counts for the shows of its
// profiles (show ltm profile tcp|udp|http|client-ssl|server-ssl). They
// live with the virtual, so that a profile's figures are the sum over the
// virtuals using it and no two virtuals share a cache line on the
// per-request paths; each group resets on its own (reset-stats ltm
// profile KIND), apart from the virtual's counters.
type ProfileCounters struct {
	Conns     ConnCounters
	HTTP      HTTPCounters
	Compress  CompressCounters
	ServerSSL SSLCounters
	// RequestAdapt and ResponseAdapt are the ICAP exchanges of the
	// virtual's adapt profiles (show ltm profile request-adapt).
	RequestAdapt, ResponseAdapt mblb.AdaptCounts
	// MQTT are the packets of the virtual's mqtt profile.
	MQTT mqtt.Counts
	// FIX are the messages of the virtual's fix profile.
	FIX fix.Counts
	// Diameter are the messages of the virtual's diameter profile, and
	// DiameterPersist its persist-avp records.
	Diameter        diameter.Counts
	DiameterPersist diameter.Table
	// RTSP are the control messages and data channels of the virtual's
	// rtsp profile.
	RTSP rtsp.Counts
	// MRF are the messages of the virtual's generic protocol and router
	// profiles, kept across the routers its commits make.
	MRF mrf.Counters
	// XML are the request bodies the virtual's xml profile inspected.
	XML xmlcbr.Counts
	// FastHTTPBase and NTLMBase are the virtual's engine counters
	// (mblb.Stats) when reset-stats last zeroed its fasthttp or ntlm
	// profile's figures, which are counted from there; nil: never.
	FastHTTPBase, NTLMBase atomic.Pointer[mblb.Stats]
	// FastHTTPAccepts is the virtual's total connections at that reset.
	FastHTTPAccepts atomic.Uint64

	// clientSSL are the counters of each client-ssl profile the virtual
	// has had, by name: with several (SNI), each handshake counts at the
	// profile that served it. Kept across commits, as the virtual is.
	mu        sync.Mutex
	clientSSL map[string]*SSLCounters
}

// ClientSSL is the virtual's counters of client-ssl profile name, nil
// when it never had it.
func (p *ProfileCounters) ClientSSL(name string) *SSLCounters {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clientSSL[name]
}

// ClientSSLOf is the counters of each of t's client-ssl profiles, in the
// order of t.ClientProfiles, made on first use: a commit's snapshot
// keeps them (VirtualSnap.ClientSSL).
func (p *ProfileCounters) ClientSSLOf(t *config.TLS) []*SSLCounters {
	if t == nil || len(t.ClientProfiles) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clientSSL == nil {
		p.clientSSL = map[string]*SSLCounters{}
	}
	out := make([]*SSLCounters, len(t.ClientProfiles))
	for i, n := range t.ClientProfiles {
		c := p.clientSSL[n]
		if c == nil {
			c = &SSLCounters{}
			p.clientSSL[n] = c
		}
		out[i] = c
	}
	return out
}

// NoteClientTLS counts a client-ssl handshake on conn that ended with err
// at the profile that served it (the one its server name chose, of
// several), and returns err, as SSLCounters.Note does. A handshake that
// succeeded is held in that profile's current connections by h until
// h.Release, when the client's connection ends.
func (s *VirtualSnap) NoteClientTLS(conn *tls.Conn, err error, h *SSLHeld) error {
	if len(s.ClientSSL) == 0 {
		if err != nil {
			s.SSLLog.HandshakeFailed(conn, true, err) // sys db log.ssl.level
		}
		return err
	}
	i := 0
	if len(s.ClientSSL) > 1 && conn != nil {
		if j := s.Cfg.TLS.ClientIndex(conn.ConnectionState().ServerName); j >= 0 && j < len(s.ClientSSL) {
			i = j
		}
	}
	c := s.ClientSSL[i]
	if err != nil {
		// The profile's log-publisher, when it names one, takes the
		// lines the ltm log would get (at sys db log.ssl.level).
		if conn != nil && i < len(s.Cfg.TLS.ClientBuilt) && s.Cfg.TLS.ClientBuilt[i].Log.Publishes() {
			s.Cfg.TLS.ClientBuilt[i].Log.Failed(conn, false, err)
		} else {
			s.SSLLog.HandshakeFailed(conn, true, err)
		}
	}
	// The watch is up before the handshake is counted: whoever sees the
	// count (a show, a test) and then ends the client must find its end
	// watched, or the end would go uncounted.
	if err == nil && conn != nil && s.Cfg.TLS.ClientEnds {
		if w := tlsprof.WatchOf(conn); w != nil {
			w.Up(&c.Premature)
		}
	}
	if err = c.Note(conn, err); err == nil && conn != nil {
		h.Hold(c)
	}
	return err
}

// SSLHeld is one TLS connection's place in its profile's current
// connections (SSLCounters.Cur), taken when its handshake completes and
// given back exactly once, by whichever end of the connection comes
// first: Release may be called on every path that ends it. The zero
// value holds nothing.
type SSLHeld struct {
	c atomic.Pointer[SSLCounters]
}

// Hold counts a connection established at c: its current, maximum and
// total connections. A connection already held is not counted again.
func (h *SSLHeld) Hold(c *SSLCounters) {
	if !h.c.CompareAndSwap(nil, c) {
		return
	}
	c.Tot.Add(1)
	cur := c.Cur.Add(1)
	for {
		m := c.Max.Load()
		if cur <= m || c.Max.CompareAndSwap(m, cur) {
			return
		}
	}
}

// Counters is the profile the connection is held in, for a count of
// its own (alert-timeout); nil once released or never held.
func (h *SSLHeld) Counters() *SSLCounters { return h.c.Load() }

// Release gives the connection's place back, once.
func (h *SSLHeld) Release() {
	if c := h.c.Swap(nil); c != nil {
		c.Cur.Add(-1)
	}
}

// ConnCounters are the tcp (or, on a UDP virtual, udp) profile's figures
// beyond the virtual's current connections, which are the virtual's own.
type ConnCounters struct {
	// Max is the most concurrent client connections (flows) since the
	// last reset, Tot the connections (flows) admitted.
	Max atomic.Int64
	Tot atomic.Uint64
	// Datagrams in from clients, out to clients, and client datagrams
	// dropped (no member could take them, or past UDP::hold's bounds): UDP
	// virtuals only.
	DgIn, DgOut, DgDropped atomic.Uint64
}

// Opened counts a connection admitted while cur were open (its own
// included).
func (c *ConnCounters) Opened(cur int64) {
	c.Tot.Add(1)
	for {
		m := c.Max.Load()
		if cur <= m || c.Max.CompareAndSwap(m, cur) {
			return
		}
	}
}

// Reset zeroes the counters; cur, the connections open now, becomes the
// new maximum.
func (c *ConnCounters) Reset(cur int64) {
	c.Max.Store(max(cur, 0))
	c.Tot.Store(0)
	c.DgIn.Store(0)
	c.DgOut.Store(0)
	c.DgDropped.Store(0)
}

// CompressCounters are the http-compression profile's figures.
type CompressCounters struct {
	// Gzip and Deflate count the responses compressed in each coding,
	// Pre and Post their body bytes before and after compression.
	Gzip, Deflate, Pre, Post atomic.Uint64
	// Bypassed counts the responses to clients that accept a coding
	// that went uncompressed: the profile's lists or min-size, a rule,
	// or the response itself (encoded already, no-transform, a status
	// that is not compressed) kept them as they were.
	Bypassed atomic.Uint64
}

// Done counts one response: compressed in coding c from pre to post
// bytes, or bypassed (c is httpcompress.None).
func (c *CompressCounters) Done(coding httpcompress.Coding, pre, post int64) {
	switch coding {
	case httpcompress.Gzip:
		c.Gzip.Add(1)
	case httpcompress.Deflate:
		c.Deflate.Add(1)
	default:
		c.Bypassed.Add(1)
		return
	}
	c.Pre.Add(uint64(pre))
	c.Post.Add(uint64(post))
}

// Reset zeroes the counters.
func (c *CompressCounters) Reset() {
	c.Gzip.Store(0)
	c.Deflate.Store(0)
	c.Pre.Store(0)
	c.Post.Store(0)
	c.Bypassed.Store(0)
}

// HTTPCounters are the http profile's request and response figures.
type HTTPCounters struct {
	Requests, Get, Post, Head, Other atomic.Uint64
	// V10 and V11 count requests by HTTP version (HTTP/1.0, HTTP/1.1).
	V10, V11 atomic.Uint64
	// KeepAlive and Close count requests with Connection: keep-alive and
	// Connection: close.
	KeepAlive, Close atomic.Uint64
	// Resp counts server responses by class: 1xx, 2xx, 3xx, 4xx, 5xx
	// (index 0 to 4); Resp[5] the others.
	Resp [6]atomic.Uint64
	// MaxPerConn is the most requests one client connection carried,
	// over the connections that ended.
	MaxPerConn atomic.Uint64
	// Pipelined counts requests that came while an earlier one of the
	// same client was unanswered; CookieInserts the Set-Cookie fields
	// cookie persistence's insert method added.
	Pipelined, CookieInserts atomic.Uint64
}

// NotePipelined counts one pipelined request.
func (c *HTTPCounters) NotePipelined() { c.Pipelined.Add(1) }

// NoteCookieInsert counts one persistence cookie inserted.
func (c *HTTPCounters) NoteCookieInsert() { c.CookieInserts.Add(1) }

// ConnEnded notes a client connection that carried n requests.
func (c *HTTPCounters) ConnEnded(n uint64) {
	for {
		m := c.MaxPerConn.Load()
		if n <= m || c.MaxPerConn.CompareAndSwap(m, n) {
			return
		}
	}
}

// Request counts one client request from its parsed head.
func (c *HTTPCounters) Request(h *httpx.Head) {
	c.Requests.Add(1)
	switch string(h.Method) {
	case "GET":
		c.Get.Add(1)
	case "POST":
		c.Post.Add(1)
	case "HEAD":
		c.Head.Add(1)
	default:
		c.Other.Add(1)
	}
	if h.Minor == 0 {
		c.V10.Add(1)
	} else {
		c.V11.Add(1)
	}
	if h.Close {
		c.Close.Add(1)
	}
	if h.KeepAlive {
		c.KeepAlive.Add(1)
	}
}

// Response counts one server response by its status class.
func (c *HTTPCounters) Response(h *httpx.Head) {
	k := h.Status/100 - 1
	if k < 0 || k > 4 {
		k = 5
	}
	c.Resp[k].Add(1)
}

// Reset zeroes the counters.
func (c *HTTPCounters) Reset() {
	for _, a := range []*atomic.Uint64{&c.Requests, &c.Get, &c.Post, &c.Head, &c.Other, &c.V10, &c.V11, &c.KeepAlive, &c.Close, &c.MaxPerConn, &c.Pipelined, &c.CookieInserts} {
		a.Store(0)
	}
	for i := range c.Resp {
		c.Resp[i].Store(0)
	}
}

// SSLCounters are a client-ssl or server-ssl profile's connection and
// handshake figures.
type SSLCounters struct {
	// Cur is the TLS connections established (handshake complete) and
	// not yet ended, Max the most of them at once since the last reset,
	// Tot those established since the last reset (SSLHeld counts them).
	Cur, Max atomic.Int64
	Tot      atomic.Uint64
	// Full and Resumed count completed handshakes; Failures those that
	// failed, Timeouts the failures for the handshake-timeout and Alerts
	// those the peer ended with a fatal alert.
	Full, Resumed, Failures, Timeouts, Alerts atomic.Uint64
	// Premature counts the connections whose peer ended them without
	// close_notify, on profiles that watch it (unclean-shutdown
	// disabled, strict-resume enabled).
	Premature atomic.Uint64
	// AlertTimeouts counts the connections reset because the peer did not
	// answer the proxy's close_notify within the profile's alert-timeout.
	AlertTimeouts atomic.Uint64
	// Versions counts handshakes by protocol version: TLS 1.0 to 1.3
	// (index 0 to 3), Versions[4] anything else.
	Versions [5]atomic.Uint64
	// Ciphers counts handshakes by cipher suite, indexed as CipherNames.
	Ciphers [len(cipherIDs)]atomic.Uint64
}

// Note counts one handshake on conn that ended with err, and returns
// err, so that a handshake site counts in the line that checks it. A conn
// that is not a *tls.Conn (a side without TLS) counts nothing.
func (c *SSLCounters) Note(conn net.Conn, err error) error {
	tc, ok := conn.(*tls.Conn)
	if err != nil {
		c.Failures.Add(1)
		var oe *net.OpError
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
			c.Timeouts.Add(1)
		case errors.As(err, &oe) && oe.Op == "remote error": // crypto/tls's word for an alert received
			c.Alerts.Add(1)
		}
		return err
	}
	if !ok {
		return nil
	}
	if w, ok := tc.NetConn().(*tlsprof.WatchConn); ok { // a member's end watched (server-ssl)
		w.Up(&c.Premature)
	}
	st := tc.ConnectionState()
	if st.DidResume {
		c.Resumed.Add(1)
	} else {
		c.Full.Add(1)
	}
	v := 4
	switch st.Version {
	case tls.VersionTLS10:
		v = 0
	case tls.VersionTLS11:
		v = 1
	case tls.VersionTLS12:
		v = 2
	case tls.VersionTLS13:
		v = 3
	}
	c.Versions[v].Add(1)
	if i := cipherIndex(st.CipherSuite); i >= 0 {
		c.Ciphers[i].Add(1)
	}
	return nil
}

// Reset zeroes the counters; the connections open now stay counted, and
// are the new maximum.
func (c *SSLCounters) Reset() {
	c.Max.Store(max(c.Cur.Load(), 0))
	c.Tot.Store(0)
	c.Full.Store(0)
	c.Resumed.Store(0)
	c.Failures.Store(0)
	c.Timeouts.Store(0)
	c.Alerts.Store(0)
	c.Premature.Store(0)
	for i := range c.Versions {
		c.Versions[i].Store(0)
	}
	for i := range c.Ciphers {
		c.Ciphers[i].Store(0)
	}
}

// cipherIDs are the suites crypto/tls can negotiate, in a fixed order so
// counting is an array index.
var cipherIDs = [...]uint16{
	tls.TLS_AES_128_GCM_SHA256,
	tls.TLS_AES_256_GCM_SHA384,
	tls.TLS_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
	tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA,
	tls.TLS_ECDHE_RSA_WITH_RC4_128_SHA,
	tls.TLS_RSA_WITH_RC4_128_SHA,
}

func cipherIndex(id uint16) int {
	for i, c := range cipherIDs {
		if c == id {
			return i
		}
	}
	return -1
}

// NumCiphers is how many suites SSLCounters tells apart.
const NumCiphers = len(cipherIDs)

// CipherName is the name of the suite SSLCounters.Ciphers[i] counts.
func CipherName(i int) string { return tls.CipherSuiteName(cipherIDs[i]) }
