// Package fwdproxy is the http profile's explicit forward proxy
// (proxy-type explicit): clients name the origin in each request
// (`GET http://host/path`, `CONNECT host:443`), the proxy resolves it
// through the profile's net dns-resolver and connects there itself, so
// the virtual needs no pool.
package fwdproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the explicit-proxy block of an http profile, resolved by the
// daemon. It is plain data, compared between commits.
type Config struct {
	// Resolver is the profile's dns-resolver.
	Resolver ResolverConfig
	// ConnectAllow is default-connect-handling allow: CONNECT requests
	// are tunnelled; deny answers them 403.
	ConnectAllow bool
	// IPv6 lets names resolve to IPv6 addresses (ipv6 yes).
	IPv6 bool
	// The bodies of the proxy's own answers ("" takes the built-in
	// page): connect-error-message (CONNECT refused, or the origin could
	// not be reached), dns-error-message (the name did not resolve),
	// bad-request-message (not a proxy request), bad-response-message
	// (the origin's answer was not HTTP).
	ConnectError, DNSError, BadRequest, BadResponse string
	// GatewayError (gateway-error-message) is the body of the proxy's
	// 504s (no nameserver answered, an origin that did not connect or
	// answer in time); "" keeps the message of the case [M].
	// ServiceUnavailable (service-unavailable-message) answers a request
	// that is not proxied when the virtual's pool has no member for it
	// (503).
	GatewayError, ServiceUnavailable string
	// HostNames (host-names, lower case, without a port) are the names
	// the proxy answers for itself: a request naming one (in its URI, its
	// CONNECT authority, or the Host of an origin-form request) is not
	// proxied but goes to the virtual's pool [M].
	HostNames []string
	// ServerAgent is the Server header of those answers (none: "").
	ServerAgent string
	// MaxHeaderSize bounds a request's head (the http profile's
	// enforcement max-header-size; 0: 32768).
	MaxHeaderSize int
}

// The pages sent when the profile leaves a message at none [M].
const (
	defaultConnectError = "<html><head><title>Connection Error</title></head><body><h2>Unable to connect to host</h2></body></html>"
	defaultDNSError     = "<html><head><title>DNS Resolution Error</title></head><body><h2>Cannot resolve hostname</h2></body></html>"
	defaultBadRequest   = "<html><head><title>Bad Request</title></head><body><h2>Invalid request</h2></body></html>"
	defaultBadResponse  = "<html><head><title>Bad Response</title></head><body><h2>Invalid response</h2></body></html>"
	defaultUnavailable  = "<html><head><title>Service Unavailable</title></head><body><h2>Service unavailable</h2></body></html>"
)

// lookupTimeout bounds a name's resolution, every nameserver included.
const lookupTimeout = 5 * time.Second

// Proxy is one virtual's explicit proxy: its settings and its resolver,
// whose cache its clients share.
type Proxy struct {
	cfg Config
	res *Resolver
}

// New makes the proxy of c, with a resolver (and cache) of its own, and
// fills the built-in pages of the messages left empty.
func New(c Config) *Proxy {
	if c.MaxHeaderSize <= 0 {
		c.MaxHeaderSize = 32768
	}
	if c.ConnectError == "" {
		c.ConnectError = defaultConnectError
	}
	if c.DNSError == "" {
		c.DNSError = defaultDNSError
	}
	if c.BadRequest == "" {
		c.BadRequest = defaultBadRequest
	}
	if c.BadResponse == "" {
		c.BadResponse = defaultBadResponse
	}
	if c.ServiceUnavailable == "" {
		c.ServiceUnavailable = defaultUnavailable
	}
	return &Proxy{cfg: c, res: NewResolver(c.Resolver)}
}

// Meter is told the bytes a client connection carries, for the virtual's
// and the connection table's counters.
type Meter interface {
	Received(n int)
	Sent(n int)
}

// Copier is given the bytes of a client connection to copy (the
// virtual's clone pools and a rule's clone, dataplane/clone): Client
// as the client sent them, Server as its origins, the pool's member or
// a tunnel's far end get them. It must not keep p.
type Copier interface {
	Client(p []byte)
	Server(p []byte)
}

// SessionOptions are what the plane gives one client connection: the
// package knows nothing of SNAT, tcp profiles or the connection table.
type SessionOptions struct {
	// Dial connects to an origin (with the virtual's SNAT and server-side
	// settings).
	Dial func(ctx context.Context, dst netip.AddrPort) (net.Conn, error)
	// ConnectTimeout bounds Dial (0: 10 s).
	ConnectTimeout time.Duration
	// Idle closes a connection, or a tunnel, quiet for this long (0:
	// never).
	Idle time.Duration
	// Touch marks the connection active at now (Unix nanoseconds: the
	// connection table's idle clock); nil: nothing.
	Touch func(now int64)
	// Meter counts the bytes; nil: nothing.
	Meter Meter
	// Intercept, when set, is the SSL forward proxy of the virtual's
	// client-ssl and server-ssl profiles: a CONNECT tunnel's TLS is
	// terminated and originated again (intercept.go) unless its bypass
	// lists let it through.
	Intercept *Intercept
	// Rules, when set, runs the virtual's iRules over each request and
	// answer (rules.go); nil: none.
	Rules Rules
	// Pool, when set, connects to a member of the virtual's pool, for the
	// requests the proxy does not proxy (host-names, HTTP::proxy
	// disable); nil: the virtual has no pool, and they are answered 503.
	Pool func(ctx context.Context) (net.Conn, netip.AddrPort, error)
	// Close, when set, are the tcp profile's close timers (close.go).
	Close *CloseTimers
	// Copy, when set, is given what the client sends and what each
	// origin gets (request heads as rewritten, bodies, tunnel bytes);
	// nil: nothing, a nil test per read and write.
	Copy Copier
	// Logf logs what the close timers reset; nil: nothing.
	Logf func(format string, args ...any)
}

// Session is one client connection of the proxy, with the origin
// connections it keeps alive and its tunnel, so that closing it from
// outside ends them all.
type Session struct {
	p    *Proxy
	c    net.Conn
	o    SessionOptions
	br   *bufio.Reader
	bw   *bufio.Writer
	reqs atomic.Uint64
	// headLeft is what a request's head may still read from the socket
	// while it is being read; -1 while a body is read.
	headLeft int

	mu      sync.Mutex
	closed  bool
	origins map[netip.AddrPort]*origin
	tunnel  net.Conn
	// pool is the connection to the virtual's pool member, kept for the
	// client's requests that are not proxied (as an HTTP virtual without
	// OneConnect keeps its member).
	pool *origin
	// timers are the close timers' state, nil without them (close.go).
	timers *closeState
	// route is how the current request leaves, as its rules chose
	// (zero without rules).
	route Route
}

// origin is a kept-alive connection to one origin address.
type origin struct {
	c    net.Conn
	addr netip.AddrPort
	br   *bufio.Reader
	bw   *bufio.Writer
}

// NewSession takes a client connection; Run serves it, and Close may
// end it from another goroutine meanwhile.
func (p *Proxy) NewSession(c net.Conn, o SessionOptions) *Session {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	s := &Session{p: p, c: c, o: o, origins: map[netip.AddrPort]*origin{}, headLeft: -1}
	s.br = bufio.NewReaderSize(countReader{s}, 16<<10)
	s.bw = bufio.NewWriterSize(countWriter{s}, 16<<10)
	return s
}

// Requests is how many requests the client sent (CONNECT included), for
// the http profile's requests-per-connection counts.
func (s *Session) Requests() uint64 { return s.reqs.Load() }

type countReader struct{ s *Session }

// errHeadTooLarge ends a client whose request head passes MaxHeaderSize.
var errHeadTooLarge = errors.New("request head too large")

func (r countReader) Read(b []byte) (int, error) {
	if r.s.headLeft >= 0 {
		if r.s.headLeft == 0 {
			return 0, errHeadTooLarge
		}
		b = b[:min(len(b), r.s.headLeft)]
	}
	if r.s.o.Idle > 0 {
		r.s.c.SetReadDeadline(time.Now().Add(r.s.o.Idle))
	}
	n, err := r.s.c.Read(b)
	if n > 0 {
		r.s.received(n)
		if r.s.o.Copy != nil {
			r.s.o.Copy.Client(b[:n])
		}
		if r.s.headLeft >= 0 {
			r.s.headLeft -= n
		}
	}
	return n, err
}

type countWriter struct{ s *Session }

func (w countWriter) Write(b []byte) (int, error) {
	if w.s.o.Idle > 0 {
		w.s.c.SetWriteDeadline(time.Now().Add(w.s.o.Idle))
	}
	n, err := w.s.c.Write(b)
	if n > 0 {
		w.s.sent(n)
	}
	return n, err
}

func (s *Session) received(n int) {
	if s.o.Meter != nil {
		s.o.Meter.Received(n)
	}
	if s.o.Touch != nil {
		s.o.Touch(time.Now().UnixNano())
	}
}

func (s *Session) sent(n int) {
	if s.o.Meter != nil {
		s.o.Meter.Sent(n)
	}
	if s.o.Touch != nil {
		s.o.Touch(time.Now().UnixNano())
	}
}

// Close ends the session from outside (delete sys connection, the idle
// sweep): the client, its origins and its tunnel; reset resets the
// client.
func (s *Session) Close(reset bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	origins, tun, c, pool := s.origins, s.tunnel, s.c, s.pool
	s.origins, s.pool = nil, nil
	timers := s.timers
	s.mu.Unlock()
	if timers != nil {
		timers.stop()
	}
	if pool != nil {
		pool.c.Close()
	}
	if tc, ok := c.(*net.TCPConn); ok && reset {
		tc.SetLinger(0)
	}
	c.Close()
	for _, o := range origins {
		o.c.Close()
	}
	if tun != nil {
		tun.Close()
	}
}

// Run serves the client's requests until it leaves, an answer closes the
// connection, or a CONNECT tunnel ends.
func (s *Session) Run() {
	defer s.Close(false)
	s.startTimers() // close.go
	for {
		s.headLeft = s.p.cfg.MaxHeaderSize
		req, err := http.ReadRequest(s.br)
		s.headLeft = -1
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isTimeout(err) && !errors.Is(err, net.ErrClosed) {
				s.reply(400, s.p.cfg.BadRequest, true)
			}
			return
		}
		s.reqs.Add(1)
		toPool := len(s.p.cfg.HostNames) > 0 && s.p.ownName(req)
		if s.o.Rules != nil {
			s.route = Route{}
			// HTTP_REQUEST, before the proxy looks at the request.
			goOn, keep := s.ruleRequest(req, netip.AddrPort{}, false, &toPool)
			if !goOn {
				if !keep {
					return
				}
				continue
			}
		}
		var keep bool
		if toPool {
			keep = s.toPool(req)
		} else if req.Method == http.MethodConnect {
			keep = s.connect(req)
		} else {
			keep = s.forward(req)
		}
		if !keep {
			return
		}
	}
}

// reply answers the client from the proxy itself.
func (s *Session) reply(code int, body string, closeAfter bool) error {
	if code == http.StatusGatewayTimeout && s.p.cfg.GatewayError != "" {
		body = s.p.cfg.GatewayError
	}
	fmt.Fprintf(s.bw, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
	if s.p.cfg.ServerAgent != "" {
		fmt.Fprintf(s.bw, "Server: %s\r\n", s.p.cfg.ServerAgent)
	}
	fmt.Fprintf(s.bw, "Content-Type: text/html\r\nContent-Length: %d\r\n", len(body))
	if closeAfter {
		s.bw.WriteString("Connection: close\r\n")
	}
	s.bw.WriteString("\r\n")
	s.bw.WriteString(body)
	return s.bw.Flush()
}

// hasBody reports whether req carries a body the proxy would have to
// read past to keep the connection.
func hasBody(req *http.Request) bool {
	return req.ContentLength != 0 || len(req.TransferEncoding) > 0
}

// resolveError answers a failed resolution: 504 when no nameserver
// answered, 502 otherwise, with dns-error-message.
func (s *Session) resolveError(req *http.Request, err error) bool {
	code := http.StatusBadGateway
	if errors.Is(err, ErrDNSTimeout) {
		code = http.StatusGatewayTimeout
	}
	closeAfter := req.Close || hasBody(req)
	return s.reply(code, s.p.cfg.DNSError, closeAfter) == nil && !closeAfter
}

// target is the origin a request names: its host and port.
func target(hostport, defPort string) (host string, port uint16, ok bool) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		if defPort == "" || strings.Contains(strings.Trim(hostport, "[]"), ":") && !strings.HasPrefix(hostport, "[") {
			return "", 0, false
		}
		h, p = strings.Trim(hostport, "[]"), defPort
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || h == "" {
		return "", 0, false
	}
	return h, uint16(n), true
}

// resolve is the addresses to try for host:port.
func (s *Session) resolve(host string, port uint16) ([]netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := s.p.res.Lookup(ctx, host, s.p.cfg.IPv6)
	if err != nil {
		if ctx.Err() != nil {
			err = ErrDNSTimeout
		}
		return nil, err
	}
	out := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		out[i] = netip.AddrPortFrom(a, port)
	}
	return out, nil
}

// dial connects to the first of dsts that takes the connection.
func (s *Session) dial(dsts []netip.AddrPort) (net.Conn, netip.AddrPort, error) {
	var err error
	for _, d := range dsts {
		ctx, cancel := context.WithTimeout(context.Background(), s.o.ConnectTimeout)
		var c net.Conn
		c, err = s.o.Dial(ctx, d)
		cancel()
		if err == nil {
			return c, d, nil
		}
	}
	return nil, netip.AddrPort{}, err
}

// hopByHop are the fields a proxy does not pass on (RFC 9110 §7.6.1),
// besides those Connection names.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "Te", "Trailer", "Upgrade"}

// dropHopByHop removes the hop-by-hop fields of h.
func dropHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				h.Del(t)
			}
		}
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
}

// forward sends an absolute-URI request to its origin in origin form and
// relays the answer; it reports whether the client connection goes on.
func (s *Session) forward(req *http.Request) bool {
	u := req.URL
	if !u.IsAbs() || !strings.EqualFold(u.Scheme, "http") || u.Host == "" {
		s.reply(400, s.p.cfg.BadRequest, true)
		return false
	}
	host, port, ok := target(u.Host, "80")
	if !ok {
		s.reply(400, s.p.cfg.BadRequest, true)
		return false
	}
	pa := req.Header["Proxy-Authorization"] // for the pool, if a rule sends it there
	clientClose, ok := s.prepare(req, dropHopByHop)
	if !ok {
		return false
	}
	req.Close = false
	routed := s.route.next().IsValid()
	dsts, keep := s.destinations(req, host, port) // chain.go
	if dsts == nil {
		return keep
	}
	if s.o.Rules != nil {
		toPool := false
		if goOn, keep := s.ruleRequest(req, dsts[0], true, &toPool); !goOn {
			return keep
		}
		if toPool {
			if pa != nil {
				req.Header["Proxy-Authorization"] = pa
			}
			req.Close = clientClose
			return s.toPool(req)
		}
		dropHopByHop(req.Header) // what a rule inserted
		if dsts, keep = s.reroute(req, host, port, dsts, routed); dsts == nil {
			return keep
		}
		if s.route.Chain.IsValid() && pa != nil {
			req.Header["Proxy-Authorization"] = pa // as to a pool of proxies [M]
		}
	}
	absolute := s.route.Chain.IsValid() || s.route.Absolute
	resp, o, err := s.exchange(req, func() (*origin, bool, error) { return s.originFor(dsts) }, absolute)
	if err != nil {
		if resp == nil && o == nil {
			// No origin took the connection.
			code := http.StatusBadGateway
			if isTimeout(err) {
				code = http.StatusGatewayTimeout
			}
			closeAfter := clientClose || hasBody(req)
			return s.reply(code, s.p.cfg.ConnectError, closeAfter) == nil && !closeAfter
		}
		code := http.StatusBadGateway
		if isTimeout(err) {
			code = http.StatusGatewayTimeout // the origin said nothing for the idle timeout [M]
		}
		s.reply(code, s.p.cfg.BadResponse, true)
		return false
	}
	return s.relay(req, resp, o, clientClose)
}

// relay passes the final answer resp of o to req on to the client, after
// HTTP_RESPONSE; it reports whether the client connection goes on.
func (s *Session) relay(req *http.Request, resp *http.Response, o *origin, clientClose bool) bool {
	var err error
	originClose := resp.Close
	if s.o.Rules != nil && req.Method != http.MethodConnect { // (HTTP_PROXY_RESPONSE ran)
		if goOn, keep := s.ruleResponse(req, resp, o.addr); !goOn {
			resp.Body.Close()
			s.dropOrigin(o) // its body was not read
			return keep
		}
		if resp.Close {
			clientClose = true // HTTP::close in HTTP_RESPONSE
		}
	}
	dropHopByHop(resp.Header)
	resp.Close = clientClose
	err = resp.Write(s.bw)
	if err == nil {
		err = s.bw.Flush()
	}
	resp.Body.Close()
	if originClose || err != nil {
		s.dropOrigin(o)
	}
	return err == nil && !resp.Close
}

// exchange writes req to the origin get gives (a kept one first; in
// absolute form when absolute) and reads
// its final answer, passing interim ones to the client. A kept
// connection the origin closed meanwhile is replaced once, when the
// request has no body. On error, o is nil when no connection was made.
func (s *Session) exchange(req *http.Request, get func() (*origin, bool, error), absolute bool) (resp *http.Response, o *origin, err error) {
	for try := 0; try < 2; try++ {
		var fresh bool
		o, fresh, err = get()
		if err != nil {
			return nil, nil, err
		}
		if absolute {
			err = req.WriteProxy(o.bw)
		} else {
			err = req.Write(o.bw)
		}
		if err == nil {
			err = o.bw.Flush()
		}
		if err == nil {
			resp, err = s.readFinal(o, req)
		}
		if err == nil {
			return resp, o, nil
		}
		s.dropOrigin(o)
		if fresh || hasBody(req) {
			break
		}
	}
	return nil, o, err
}

// readFinal reads an origin's answer to req, passing 1xx interim answers
// (but 101) to the client.
func (s *Session) readFinal(o *origin, req *http.Request) (*http.Response, error) {
	for i := 0; i < 16; i++ {
		resp, err := http.ReadResponse(o.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == 101 {
			if resp.StatusCode == 101 {
				// The Upgrade field was not passed on: not a switch the
				// client asked this hop for.
				return nil, errors.New("unrequested protocol switch")
			}
			return resp, nil
		}
		if resp.StatusCode != 100 {
			resp.Write(s.bw)
			if err := s.bw.Flush(); err != nil {
				return nil, err
			}
		}
	}
	return nil, errors.New("too many interim answers")
}

// originFor is a kept connection to one of dsts, or a new one.
func (s *Session) originFor(dsts []netip.AddrPort) (*origin, bool, error) {
	s.mu.Lock()
	for _, d := range dsts {
		if o := s.origins[d]; o != nil {
			s.mu.Unlock()
			return o, false, nil
		}
	}
	s.mu.Unlock()
	c, d, err := s.dial(dsts)
	if err != nil {
		return nil, false, err
	}
	o := s.newOrigin(c, d)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return nil, false, net.ErrClosed
	}
	if old := s.origins[d]; old != nil {
		old.c.Close()
	}
	s.origins[d] = o
	s.mu.Unlock()
	return o, true, nil
}

// newOrigin wraps a new origin connection.
func (s *Session) newOrigin(c net.Conn, d netip.AddrPort) *origin {
	s.watch(c) // close.go
	return &origin{c: c, addr: d, br: bufio.NewReaderSize(idleConn{c: c, idle: s.o.Idle}, 16<<10), bw: bufio.NewWriterSize(idleConn{c: c, idle: s.o.Idle, copy: s.o.Copy}, 16<<10)}
}

// idleConn bounds each read and write of an origin connection by the
// idle timeout, so that an origin that stops answering (or reading) ends
// the client's session as a quiet client does.
type idleConn struct {
	c    net.Conn
	idle time.Duration
	copy Copier // SessionOptions.Copy, on the writing side; nil: none
}

func (c idleConn) Read(b []byte) (int, error) {
	if c.idle > 0 {
		c.c.SetReadDeadline(time.Now().Add(c.idle))
	}
	return c.c.Read(b)
}

func (c idleConn) Write(b []byte) (int, error) {
	if c.idle > 0 {
		c.c.SetWriteDeadline(time.Now().Add(c.idle))
	}
	n, err := c.c.Write(b)
	if n > 0 && c.copy != nil {
		c.copy.Server(b[:n])
	}
	return n, err
}

// dropOrigin closes o and forgets it.
func (s *Session) dropOrigin(o *origin) {
	if o == nil {
		return
	}
	s.mu.Lock()
	for d, x := range s.origins {
		if x == o {
			delete(s.origins, d)
		}
	}
	if s.pool == o {
		s.pool = nil
	}
	s.mu.Unlock()
	o.c.Close()
}

// connect answers a CONNECT: 403 unless default-connect-handling allows
// it; otherwise the origin is resolved and connected, the client told
// 200, and bytes are copied both ways until both sides have closed. It
// reports whether the client connection goes on (only after a refusal).
func (s *Session) connect(req *http.Request) bool {
	if !s.p.cfg.ConnectAllow {
		closeAfter := req.Close || hasBody(req)
		return s.reply(http.StatusForbidden, s.p.cfg.ConnectError, closeAfter) == nil && !closeAfter
	}
	host, port, ok := target(req.Host, "")
	if !ok {
		s.reply(400, s.p.cfg.BadRequest, true)
		return false
	}
	routed := s.route.next().IsValid()
	dsts, keep := s.destinations(req, host, port) // chain.go
	if dsts == nil {
		return keep
	}
	if s.o.Rules != nil {
		toPool := false
		if goOn, keep := s.ruleRequest(req, dsts[0], true, &toPool); !goOn {
			return keep
		}
		if toPool {
			return s.toPool(req)
		}
		if s.route.Chain.IsValid() {
			return s.chainConnect(req) // chain.go
		}
		if dsts, keep = s.reroute(req, host, port, dsts, routed); dsts == nil {
			return keep
		}
	}
	oc, hop, err := s.dial(dsts)
	if err != nil {
		code := http.StatusBadGateway
		if isTimeout(err) {
			code = http.StatusGatewayTimeout
		}
		return s.reply(code, s.p.cfg.ConnectError, false) == nil && !req.Close
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		oc.Close()
		return false
	}
	s.tunnel = oc
	s.mu.Unlock()
	s.watch(oc) // close.go
	established := &http.Response{StatusCode: 200, Status: "200 Connection established", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, ContentLength: -1, Request: req}
	if s.o.Rules != nil {
		// HTTP_PROXY_RESPONSE over the tunnel's answer.
		if goOn, keep := s.ruleProxyResponse(req, established, hop); !goOn {
			s.endTunnel(oc)
			return keep
		}
	}
	if writeEstablished(s.bw, established) != nil {
		return false
	}
	if s.o.Intercept != nil {
		if oc = s.intercept(oc, host, dsts); oc == nil { // intercept.go
			return false
		}
	}
	s.splice(oc, nil)
	return false
}

// writeEstablished writes a CONNECT's 200 answer (with what a rule
// added) and flushes it.
func writeEstablished(bw *bufio.Writer, resp *http.Response) error {
	status := resp.Status
	if status == "" || !strings.HasPrefix(status, strconv.Itoa(resp.StatusCode)) {
		status = strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	bw.WriteString("HTTP/1.1 " + status + "\r\n")
	resp.Header.Write(bw)
	bw.WriteString("\r\n")
	return bw.Flush()
}

// endTunnel forgets a tunnel that is not to be used and closes it.
func (s *Session) endTunnel(oc net.Conn) {
	s.mu.Lock()
	if s.tunnel == oc {
		s.tunnel = nil
	}
	s.mu.Unlock()
	oc.Close()
}

// splice copies bytes between the client and oc until both directions
// have ended: what the client sent after its CONNECT first, and
// fromOrigin (what oc sent after its answer) first the other way. An end on one
// side is passed on as a half close; a tunnel quiet in both directions
// for the idle timeout is closed.
func (s *Session) splice(oc net.Conn, fromOrigin []byte) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pipe(countWriter{s}, oc, fromOrigin, &last)
		closeWrite(s.c)
		s.finSent() // close.go
	}()
	var first []byte
	if n := s.br.Buffered(); n > 0 {
		first, _ = s.br.Peek(n)
	}
	s.pipe(oc, s.c, first, &last)
	closeWrite(oc)
	s.finSent()
	<-done
}

// pipe copies from src to dst (first before anything read), refreshing
// the shared activity clock; a read deadline that passes while the other
// direction was busy is moved on.
func (s *Session) pipe(dst io.Writer, src net.Conn, first []byte, last *atomic.Int64) {
	// The client's bytes into the tunnel go to the copy: clientside as
	// read (first was, when the session's reader read it), serverside
	// as the far end gets them, the same.
	cp := s.o.Copy
	if src != s.c {
		cp = nil
	}
	if len(first) > 0 {
		if _, err := dst.Write(first); err != nil {
			return
		}
		if cp != nil {
			cp.Server(first)
		}
	}
	buf := make([]byte, 32<<10)
	for {
		if s.o.Idle > 0 {
			src.SetReadDeadline(time.Unix(0, last.Load()).Add(s.o.Idle))
		}
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			if src == s.c {
				s.received(n)
			}
			if cp != nil {
				cp.Client(buf[:n])
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				s.abortTunnel()
				return
			}
			if cp != nil {
				cp.Server(buf[:n])
			}
		}
		if err != nil {
			if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < s.o.Idle {
				continue
			}
			if !errors.Is(err, io.EOF) {
				s.abortTunnel()
			}
			return
		}
	}
}

// abortTunnel ends both sides of a tunnel at once (a reset or an idle
// timeout on either).
func (s *Session) abortTunnel() {
	s.mu.Lock()
	tun, c := s.tunnel, s.c
	s.mu.Unlock()
	if tun != nil {
		tun.Close()
	}
	c.Close()
}

// closeWrite half-closes c when it can, and closes it otherwise.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// prepare readies req's head to be forwarded, to an origin or to the
// pool: it reads whether the client asked to close (Connection or
// Proxy-Connection), takes out the hop-by-hop fields (drop), answers
// 100-continue itself, as the body is read from the client while the
// request is written [M], and keeps Request.Write from adding a
// User-Agent the client did not send. ok is false when the client is
// gone.
func (s *Session) prepare(req *http.Request, drop func(http.Header)) (clientClose, ok bool) {
	clientClose = req.Close || strings.EqualFold(req.Header.Get("Proxy-Connection"), "close")
	expect := strings.EqualFold(req.Header.Get("Expect"), "100-continue")
	drop(req.Header)
	if expect {
		req.Header.Del("Expect")
		s.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		if s.bw.Flush() != nil {
			return clientClose, false
		}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // Request.Write adds none then
	}
	return clientClose, true
}
