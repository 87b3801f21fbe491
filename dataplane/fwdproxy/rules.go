package fwdproxy

import (
	"bufio"
	"bytes"
	"net/http"
	"net/netip"
	"strconv"
)

// Rules is the seam to the iRules of an explicit proxy's virtual: the
// package knows nothing of Tcl. Each method runs one event over the
// RuleEvent and records there what the rules decided; a returned error is
// a rule failure, which resets the client. A session without Rules
// (SessionOptions.Rules nil) pays one nil check per request.
type Rules interface {
	// Request runs HTTP_REQUEST over the request as the client sent it
	// (absolute URI, or CONNECT's authority), before anything is resolved.
	Request(x *RuleEvent) error
	// Proxy runs HTTP_PROXY_REQUEST (HTTP_PROXY_CONNECT for a CONNECT)
	// once the origin is resolved, before the proxy connects: x.Hop is
	// where it goes.
	Proxy(x *RuleEvent, connect bool) error
	// Response runs HTTP_RESPONSE over the origin's final answer, before
	// it is passed on.
	Response(x *RuleEvent) error
	// ProxyResponse runs HTTP_PROXY_RESPONSE over the answer to a
	// CONNECT: the tunnel's 200 once the origin is connected, or what the
	// pool's member (a proxy) answered, before the client gets it.
	ProxyResponse(x *RuleEvent) error
}

// RuleEvent is one event's message and the rules' decision about it.
type RuleEvent struct {
	// Head is the message's head, ending in its blank line.
	Head []byte
	// Hop is the origin's address (HTTP_PROXY_*, HTTP_RESPONSE); invalid
	// before it is resolved.
	Hop netip.AddrPort
	// Edited, when set, replaces Head (header, URI or host edits); the
	// message's framing stays the one it arrived with [M].
	Edited []byte
	// Answer, when set, is a complete response the proxy sends instead
	// of going on (HTTP::respond, HTTP::redirect): a request goes
	// nowhere, a CONNECT is not tunnelled, an origin's answer is
	// discarded. KeepAlive says whether the client connection stays.
	Answer    []byte
	KeepAlive bool
	// Reset ends the client with a reset (reject, a failed rule); Close
	// closes it at once, without an answer (drop); CloseAfter closes it
	// once the answer to this request is written (HTTP::close,
	// TCP::close).
	Reset, Close, CloseAfter bool
	// ToPool is whether the request is not proxied but goes to the
	// virtual's pool: in, what host-names decided; out, what the rules
	// left (HTTP::proxy disable, enable). Request and Proxy only.
	ToPool bool
	// Route is how a proxied request leaves: in, what an earlier event
	// of the request chose; out, what the rules leave. Request and Proxy
	// only.
	Route Route
}

// Route is how a proxied request leaves the proxy, as its rules chose
// (HTTP::proxy chain, iptuple, uri-rewrite), so that a rule can send
// some traffic through a parent proxy or to another address without a
// second virtual of its own. The zero Route is the default: the origin
// the request names, resolved, sent in origin form.
type Route struct {
	// Chain, when valid, is the next proxy: the request goes to it in
	// absolute form (a CONNECT as a CONNECT), and the origin's name is
	// not resolved by this proxy when it was chosen before
	// HTTP_PROXY_REQUEST [M].
	Chain netip.AddrPort
	// Hop, when valid, is where the request is sent instead of its
	// name's addresses; its URI and Host stay the client's.
	Hop netip.AddrPort
	// Absolute keeps the absolute URI on the request sent to the origin
	// (uri-rewrite disable) instead of its origin form.
	Absolute bool
}

// requestHead writes req's head as the proxy received it (hop-by-hop
// fields included), for the rules to read.
func requestHead(req *http.Request) []byte {
	var b bytes.Buffer
	uri := req.RequestURI
	if uri == "" {
		uri = req.URL.String()
	}
	b.WriteString(req.Method + " " + uri + " " + req.Proto + "\r\n")
	if req.Host != "" {
		b.WriteString("Host: " + req.Host + "\r\n")
	}
	req.Header.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// responseHead writes resp's head as the origin sent it.
func responseHead(resp *http.Response) []byte {
	var b bytes.Buffer
	b.WriteString(resp.Proto + " " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode) + "\r\n")
	if resp.ContentLength >= 0 && resp.Header.Get("Content-Length") == "" && len(resp.TransferEncoding) == 0 {
		b.WriteString("Content-Length: " + strconv.FormatInt(resp.ContentLength, 10) + "\r\n")
	}
	if len(resp.TransferEncoding) > 0 {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	resp.Header.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// applyRequest takes a rule's edited head into req: method, URI, host
// and fields; the body and its framing stay req's.
func applyRequest(req *http.Request, head []byte) error {
	n, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return err
	}
	req.Method, req.URL, req.RequestURI, req.Host = n.Method, n.URL, n.RequestURI, n.Host
	req.Header = n.Header
	req.Close = req.Close || n.Close
	return nil
}

// applyResponse takes a rule's edited head into resp: status and fields;
// the body and its framing stay resp's.
func applyResponse(resp *http.Response, head []byte) error {
	n, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), resp.Request)
	if err != nil {
		return err
	}
	if n.StatusCode != resp.StatusCode {
		resp.Status = n.Status
	}
	resp.StatusCode, resp.Header = n.StatusCode, n.Header
	return nil
}

// ruleRequest runs HTTP_REQUEST (proxy false) or HTTP_PROXY_* (proxy
// true) over req and applies the rules' edits. It reports whether the
// request goes on (go) and, when it does not, whether the client
// connection does (keep).
func (s *Session) ruleRequest(req *http.Request, hop netip.AddrPort, proxy bool, toPool *bool) (goOn, keep bool) {
	x := &RuleEvent{Head: requestHead(req), Hop: hop, ToPool: *toPool, Route: s.route}
	var err error
	if proxy {
		err = s.o.Rules.Proxy(x, req.Method == http.MethodConnect)
	} else {
		err = s.o.Rules.Request(x)
	}
	if err == nil && x.Edited != nil && x.Answer == nil && !x.Reset {
		err = applyRequest(req, x.Edited)
	}
	if x.CloseAfter {
		req.Close = true
	}
	*toPool = x.ToPool
	s.route = x.Route
	return s.ruleVerdict(req, x, err)
}

// ruleVerdict carries out a rule's reset, close or answer; goOn reports
// that there was none.
func (s *Session) ruleVerdict(req *http.Request, x *RuleEvent, err error) (goOn, keep bool) {
	if err != nil || x.Reset {
		s.Close(true)
		return false, false
	}
	if x.Answer != nil {
		s.bw.Write(x.Answer)
		werr := s.bw.Flush()
		keep = werr == nil && x.KeepAlive && !x.CloseAfter && !req.Close && !hasBody(req)
		return false, keep
	}
	if x.Close {
		s.Close(false)
		return false, false
	}
	return true, true
}

// ruleResponse runs HTTP_RESPONSE over resp, from hop; it reports
// whether resp is passed on, and when not, whether the client connection
// goes on (a rule's answer was sent instead).
func (s *Session) ruleResponse(req *http.Request, resp *http.Response, hop netip.AddrPort) (goOn, keep bool) {
	return s.ruleAnswer(req, resp, hop, s.o.Rules.Response)
}

// ruleProxyResponse is ruleResponse for HTTP_PROXY_RESPONSE, over the
// answer to a CONNECT.
func (s *Session) ruleProxyResponse(req *http.Request, resp *http.Response, hop netip.AddrPort) (goOn, keep bool) {
	return s.ruleAnswer(req, resp, hop, s.o.Rules.ProxyResponse)
}

// ruleAnswer runs ev over resp and applies the rules' edits.
func (s *Session) ruleAnswer(req *http.Request, resp *http.Response, hop netip.AddrPort, ev func(*RuleEvent) error) (goOn, keep bool) {
	x := &RuleEvent{Head: responseHead(resp), Hop: hop}
	err := ev(x)
	if err == nil && x.Edited != nil && x.Answer == nil && !x.Reset {
		err = applyResponse(resp, x.Edited)
	}
	if x.CloseAfter {
		resp.Close = true
	}
	return s.ruleVerdict(req, x, err)
}
