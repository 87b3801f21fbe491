package fwdproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// poolFixture is a proxy on 127.34.x with its own nameserver, whose
// sessions are ended through done.
type poolFixture struct {
	addr  string
	proxy *Proxy
	ended chan struct{} // one value per session that ended
	logs  chan string
}

// startPoolProxy starts a proxy on ip with a nameserver on dnsIP, rules
// and SessionOptions o (Dial, Idle and Rules filled when unset).
func startPoolProxy(t *testing.T, ip, dnsIP string, cfg Config, o SessionOptions, records ...string) *poolFixture {
	t.Helper()
	d := startDNS(t, dnsIP, records...)
	cfg.Resolver = ResolverConfig{Zones: []Zone{{Name: ".", Nameservers: []netip.AddrPort{d.addr}}}, UDP: true, TCP: true}
	f := &poolFixture{proxy: New(cfg), ended: make(chan struct{}, 64), logs: make(chan string, 64)}
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { l.Close() })
	f.addr = l.Addr().String()
	if o.Dial == nil {
		o.Dial = func(ctx context.Context, dst netip.AddrPort) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "tcp", dst.String())
		}
	}
	if o.Idle == 0 {
		o.Idle = 10 * time.Second
	}
	o.Logf = func(format string, args ...any) {
		select {
		case f.logs <- fmt.Sprintf(format, args...):
		default:
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var live []*Session
	t.Cleanup(func() {
		mu.Lock()
		for _, s := range live {
			s.Close(true)
		}
		mu.Unlock()
		wg.Wait()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s := f.proxy.NewSession(c, o)
			mu.Lock()
			live = append(live, s)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Run()
				f.ended <- struct{}{}
			}()
		}
	}()
	return f
}

// poolDial is SessionOptions.Pool for a pool of one member at addr.
func poolDial(addr string) func(ctx context.Context) (net.Conn, netip.AddrPort, error) {
	return func(ctx context.Context) (net.Conn, netip.AddrPort, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, netip.AddrPort{}, err
		}
		return c, netip.MustParseAddrPort(addr), nil
	}
}

// switchRules turns proxying off or on by the request's path, as
// HTTP::proxy disable|enable would, and edits or refuses the answer to
// a CONNECT in HTTP_PROXY_RESPONSE.
type switchRules struct{}

func (switchRules) Request(x *RuleEvent) error {
	line, _, _ := bytes.Cut(x.Head, []byte("\r\n"))
	switch {
	case bytes.Contains(line, []byte("/local")), bytes.Contains(line, []byte("CONNECT chain.test")):
		x.ToPool = true
	case bytes.Contains(line, []byte("/enable")):
		x.ToPool = false
	}
	return nil
}

func (switchRules) Proxy(x *RuleEvent, connect bool) error {
	if line, _, _ := bytes.Cut(x.Head, []byte("\r\n")); bytes.Contains(line, []byte("/late")) {
		x.ToPool = true
	}
	return nil
}

func (switchRules) Response(*RuleEvent) error { return nil }

func (switchRules) ProxyResponse(x *RuleEvent) error {
	if x.Hop.Port() == 9443 {
		x.Answer, x.KeepAlive = []byte("HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\n\r\nno 443"), true
		return nil
	}
	x.Edited = bytes.Replace(x.Head, []byte("\r\n\r\n"), []byte("\r\nX-Tunnel: "+x.Hop.String()+"\r\n\r\n"), 1)
	return nil
}

// poolMember starts the virtual's pool member on addr: it answers
// "POOL method uri host pa=Proxy-Authorization pc=Proxy-Connection".
func poolMember(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skip(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "POOL %s %s %s pa=%q pc=%q\n", r.Method, r.RequestURI, r.Host, r.Header.Get("Proxy-Authorization"), r.Header.Get("Proxy-Connection"))
	})}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
}

// TestProxyNotProxied: requests naming a host-names name, and those a
// rule stops proxying, go to the virtual's pool as the client sent them;
// enable proxies a host-names request again; no pool answers 503.
func TestProxyNotProxied(t *testing.T) {
	startOrigin(t, "127.34.1.20:8080", "O1", false)
	poolMember(t, "127.34.1.40:8080")
	recs := []string{"one.test. 60 IN A 127.34.1.20", "proxy.test. 60 IN A 127.34.1.20"}
	cfg := Config{HostNames: []string{"proxy.test"}, ServiceUnavailable: "no pool here"}
	withPool := startPoolProxy(t, "127.34.1.1", "127.34.1.53", cfg, SessionOptions{Rules: switchRules{}, Pool: poolDial("127.34.1.40:8080")}, recs...)
	noPool := startPoolProxy(t, "127.34.1.2", "127.34.1.54", cfg, SessionOptions{Rules: switchRules{}}, recs...)
	for _, tc := range []struct {
		name   string
		f      *poolFixture
		req    string
		status int
		body   string // a prefix of the answer's body
	}{
		{"proxied", withPool, "GET http://one.test:8080/a HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", 200, "O1 GET /a one.test:8080"},
		{"host-names, absolute URI", withPool, "GET http://proxy.test/proxy.pac HTTP/1.1\r\nHost: proxy.test\r\n\r\n", 200, "POOL GET http://proxy.test/proxy.pac proxy.test"},
		{"host-names, origin form", withPool, "GET /proxy.pac HTTP/1.1\r\nHost: Proxy.Test:3128\r\n\r\n", 200, "POOL GET /proxy.pac Proxy.Test:3128"},
		{"host-names with a trailing dot", withPool, "GET http://proxy.test./x HTTP/1.1\r\nHost: proxy.test.\r\n\r\n", 200, "POOL GET http://proxy.test./x"},
		{"disabled in HTTP_REQUEST", withPool, "GET http://one.test:8080/local HTTP/1.1\r\nHost: one.test:8080\r\nProxy-Authorization: Basic dTpw\r\nProxy-Connection: keep-alive\r\n\r\n", 200, `POOL GET http://one.test:8080/local one.test:8080 pa="Basic dTpw" pc=""`},
		{"disabled in HTTP_PROXY_REQUEST", withPool, "GET http://one.test:8080/late HTTP/1.1\r\nHost: one.test:8080\r\nProxy-Authorization: Basic dTpw\r\n\r\n", 200, `POOL GET http://one.test:8080/late one.test:8080 pa="Basic dTpw"`},
		{"enabled again over host-names", withPool, "GET http://proxy.test:8080/enable HTTP/1.1\r\nHost: proxy.test:8080\r\n\r\n", 200, "O1 GET /enable proxy.test:8080"},
		{"origin form, not an own name", withPool, "GET /x HTTP/1.1\r\nHost: other.test\r\n\r\n", 400, "<html>"},
		{"no pool", noPool, "GET http://proxy.test/proxy.pac HTTP/1.1\r\nHost: proxy.test\r\n\r\n", 503, "no pool here"},
		{"no pool, disabled", noPool, "GET http://one.test:8080/local HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", 503, "no pool here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, c, _ := rawExchange(t, tc.f.addr, tc.req)
			c.Close()
			if resp.StatusCode != tc.status || !strings.HasPrefix(body, tc.body) {
				t.Errorf("= %d %q, want %d %q", resp.StatusCode, body, tc.status, tc.body)
			}
		})
	}
}

// TestProxyConnectResponse: HTTP_PROXY_RESPONSE over the answer to a
// CONNECT: edited (the client sees the header, then the tunnel works),
// or replaced by the rule's answer (no tunnel, the client kept); and a
// CONNECT a rule sends to the pool, whose member is another proxy: its
// 200 makes the tunnel through it, its refusal reaches the client.
func TestProxyConnectResponse(t *testing.T) {
	startOrigin(t, "127.34.2.20:8080", "O1", false)
	startOrigin(t, "127.34.2.20:9443", "O2", false)
	// The pool's member: a proxy of its own that allows CONNECT to
	// chain.test, and one that refuses every CONNECT.
	upstream := startPoolProxy(t, "127.34.2.40", "127.34.2.54", Config{ConnectAllow: true}, SessionOptions{}, "chain.test. 60 IN A 127.34.2.20")
	refusing := startPoolProxy(t, "127.34.2.41", "127.34.2.55", Config{ConnectError: "upstream says no"}, SessionOptions{})
	recs := []string{"one.test. 60 IN A 127.34.2.20"}
	viaUp := startPoolProxy(t, "127.34.2.1", "127.34.2.53", Config{ConnectAllow: true}, SessionOptions{Rules: switchRules{}, Pool: poolDial(upstream.addr)}, recs...)
	viaRefusing := startPoolProxy(t, "127.34.2.2", "127.34.2.56", Config{ConnectAllow: true}, SessionOptions{Rules: switchRules{}, Pool: poolDial(refusing.addr)}, recs...)
	for _, tc := range []struct {
		name    string
		f       *poolFixture
		target  string
		status  int
		tunnel  string // the X-Tunnel the rule added
		through string // what a GET through the tunnel gets ("" : no tunnel)
		body    string
	}{
		{"direct, edited", viaUp, "one.test:8080", 200, "127.34.2.20:8080", "O1 GET /t", ""},
		{"direct, refused by the rule", viaUp, "one.test:9443", 403, "", "", "no 443"},
		{"through the pool's proxy", viaUp, "chain.test:8080", 200, upstream.addr, "O1 GET /t chain.test", ""},
		{"the pool's proxy refuses", viaRefusing, "chain.test:8080", 403, refusing.addr, "", "upstream says no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", tc.f.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			io.WriteString(c, "CONNECT "+tc.target+" HTTP/1.1\r\nHost: "+tc.target+"\r\n\r\n")
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || resp.Header.Get("X-Tunnel") != tc.tunnel {
				t.Fatalf("= %d X-Tunnel %q, want %d %q", resp.StatusCode, resp.Header.Get("X-Tunnel"), tc.status, tc.tunnel)
			}
			if tc.through == "" {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				if !strings.Contains(string(b), tc.body) {
					t.Errorf("body %q, want %q", b, tc.body)
				}
				// The client connection goes on after a refusal.
				io.WriteString(c, "GET http://one.test:8080/after HTTP/1.1\r\nHost: one.test:8080\r\n\r\n")
				resp, err = http.ReadResponse(br, nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("after the refusal: %v", err)
				}
				return
			}
			host, _, _ := strings.Cut(tc.target, ":")
			io.WriteString(c, "GET /t HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if !strings.HasPrefix(string(b), tc.through) {
				t.Errorf("through the tunnel: %q, want %q", b, tc.through)
			}
		})
	}
}
