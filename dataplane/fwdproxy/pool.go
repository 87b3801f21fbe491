package fwdproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
)

// The requests the proxy does not proxy: those naming one of the
// profile's host-names (the proxy's own names), and those a rule's
// HTTP::proxy disable turned away, go to the virtual's pool as on a
// reverse proxy, on one connection kept for the client [M].

// errNoPool is the failure of a request that is not proxied on a virtual
// without a pool.
var errNoPool = errors.New("the virtual has no pool")

// ownName reports whether req names one of the proxy's host-names: its
// absolute URI's host, its CONNECT authority, or the Host of an
// origin-form request; the port does not count [M].
func (p *Proxy) ownName(req *http.Request) bool {
	h := req.Host
	if req.Method != http.MethodConnect && req.URL.IsAbs() && req.URL.Host != "" {
		h = req.URL.Host
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	for _, n := range p.cfg.HostNames {
		if strings.EqualFold(h, n) {
			return true
		}
	}
	return false
}

// poolOrigin is the client's kept connection to the virtual's pool, or a
// new one to the member the pool chooses.
func (s *Session) poolOrigin() (*origin, bool, error) {
	s.mu.Lock()
	o := s.pool
	s.mu.Unlock()
	if o != nil {
		return o, false, nil
	}
	if s.o.Pool == nil {
		return nil, false, errNoPool
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.o.ConnectTimeout)
	c, d, err := s.o.Pool(ctx)
	cancel()
	if err != nil {
		return nil, false, err
	}
	o = s.newOrigin(c, d)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return nil, false, net.ErrClosed
	}
	s.pool = o
	s.mu.Unlock()
	return o, true, nil
}

// dropHopByHopForPool removes the hop-by-hop fields, but for
// Proxy-Authorization, which a proxy in the pool may be owed [M].
func dropHopByHopForPool(h http.Header) {
	pa := h["Proxy-Authorization"]
	dropHopByHop(h)
	if pa != nil {
		h["Proxy-Authorization"] = pa
	}
}

// toPool sends req to the virtual's pool as the client sent it (an
// absolute URI stays absolute, so that a pool of proxies can take it),
// and relays the answer; it reports whether the client connection goes
// on. No member: 503 with service-unavailable-message.
func (s *Session) toPool(req *http.Request) bool {
	if req.Method == http.MethodConnect {
		return s.poolConnect(req)
	}
	clientClose, ok := s.prepare(req, dropHopByHopForPool) // proxy.go
	if !ok {
		return false
	}
	req.Close = false
	resp, o, err := s.exchange(req, s.poolOrigin, req.URL.IsAbs())
	if err != nil {
		if resp == nil && o == nil {
			closeAfter := clientClose || hasBody(req)
			return s.reply(http.StatusServiceUnavailable, s.p.cfg.ServiceUnavailable, closeAfter) == nil && !closeAfter
		}
		code := http.StatusBadGateway
		if isTimeout(err) {
			code = http.StatusGatewayTimeout
		}
		s.reply(code, s.p.cfg.BadResponse, true)
		return false
	}
	return s.relay(req, resp, o, clientClose)
}

// poolConnect sends a CONNECT to the pool's member (a proxy) and passes
// its answer on, after HTTP_PROXY_RESPONSE: a 2xx makes the tunnel,
// through the member; another answer goes to the client as any answer.
func (s *Session) poolConnect(req *http.Request) bool {
	o, _, err := s.poolOrigin()
	if err != nil {
		return s.reply(http.StatusServiceUnavailable, s.p.cfg.ServiceUnavailable, req.Close) == nil && !req.Close
	}
	return s.connectVia(req, o)
}

// connectVia sends a CONNECT to o, a proxy's connection (the pool's
// member, or a chained proxy), and passes its answer on, after
// HTTP_PROXY_RESPONSE: a 2xx makes o the tunnel, another answer goes to
// the client as any answer and o stays kept.
func (s *Session) connectVia(req *http.Request, o *origin) bool {
	dropHopByHopForPool(req.Header)
	clientClose := req.Close
	req.Close = false
	err := req.Write(o.bw)
	if err == nil {
		err = o.bw.Flush()
	}
	var resp *http.Response
	if err == nil {
		resp, err = s.readFinal(o, req)
	}
	if err != nil {
		s.dropOrigin(o)
		s.reply(http.StatusBadGateway, s.p.cfg.BadResponse, true)
		return false
	}
	if s.o.Rules != nil {
		if goOn, keep := s.ruleProxyResponse(req, resp, o.addr); !goOn {
			s.dropOrigin(o)
			return keep
		}
	}
	if resp.StatusCode/100 != 2 {
		return s.relay(req, resp, o, clientClose)
	}
	// The proxy's connection becomes the tunnel.
	s.mu.Lock()
	if s.pool == o {
		s.pool = nil
	}
	if s.origins[o.addr] == o {
		delete(s.origins, o.addr)
	}
	closed := s.closed
	if !closed {
		s.tunnel = o.c
	}
	s.mu.Unlock()
	if closed {
		o.c.Close()
		return false
	}
	if writeEstablished(s.bw, resp) != nil {
		return false
	}
	var rest []byte
	if n := o.br.Buffered(); n > 0 {
		rest, _ = o.br.Peek(n)
	}
	s.splice(o.c, rest)
	return false
}
