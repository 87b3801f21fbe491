package fwdproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chainRules chooses the route by the request's path or authority, as
// HTTP::proxy chain, iptuple and uri-rewrite would.
type chainRules struct{ parent, dead, hop netip.AddrPort }

func (r chainRules) Request(x *RuleEvent) error {
	line, _, _ := bytes.Cut(x.Head, []byte("\r\n"))
	switch {
	case bytes.Contains(line, []byte("/chain")), bytes.HasPrefix(line, []byte("CONNECT far.test")):
		x.Route.Chain = r.parent
	case bytes.Contains(line, []byte("/unchain")):
		x.Route.Chain = r.parent // taken back in HTTP_PROXY_REQUEST
	case bytes.Contains(line, []byte("/dead")):
		x.Route.Chain = r.dead
	case bytes.Contains(line, []byte("/abs")):
		x.Route.Absolute = true
	case bytes.Contains(line, []byte("/hop")):
		x.Route.Hop = r.hop
	}
	return nil
}

func (r chainRules) Proxy(x *RuleEvent, connect bool) error {
	if bytes.Contains(x.Head, []byte("/late")) {
		x.Route.Chain = r.parent // after the name was resolved
	}
	if bytes.Contains(x.Head, []byte("/unchain")) {
		if x.Hop != r.parent {
			return fmt.Errorf("HTTP_PROXY_REQUEST saw %v, not the parent", x.Hop)
		}
		x.Route.Chain = netip.AddrPort{}
	}
	return nil
}

func (chainRules) Response(x *RuleEvent) error {
	x.Edited = bytes.Replace(x.Head, []byte("\r\n\r\n"), []byte("\r\nX-Hop: "+x.Hop.String()+"\r\n\r\n"), 1)
	return nil
}

func (chainRules) ProxyResponse(x *RuleEvent) error {
	x.Edited = bytes.Replace(x.Head, []byte("\r\n\r\n"), []byte("\r\nX-Hop: "+x.Hop.String()+"\r\n\r\n"), 1)
	return nil
}

// startParent starts a parent proxy on addr: it answers a request itself
// with "PARENT method uri host pa=Proxy-Authorization", and tunnels a
// CONNECT to the address tunnels maps its authority to (403 for another).
// It counts its client connections.
func startParent(t *testing.T, addr string, tunnels map[string]string) *atomic.Int32 {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skip(err)
	}
	var conns atomic.Int32
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			fmt.Fprintf(w, "PARENT %s %s %s pa=%q\n", r.Method, r.RequestURI, r.Host, r.Header.Get("Proxy-Authorization"))
			return
		}
		to, ok := tunnels[r.Host]
		if !ok {
			http.Error(w, "parent refuses", http.StatusForbidden)
			return
		}
		oc, err := net.DialTimeout("tcp", to, 5*time.Second)
		if err != nil {
			http.Error(w, "parent cannot connect", http.StatusBadGateway)
			return
		}
		defer oc.Close()
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 Parent tunnel\r\n\r\n")
		go func() {
			io.Copy(oc, brw)
			oc.(*net.TCPConn).CloseWrite()
		}()
		io.Copy(c, oc)
	}), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return &conns
}

// TestProxyChain: a rule's route is carried out on real connections: a
// request chained through a parent proxy (in absolute form, with the
// client's Proxy-Authorization, its name not resolved here), a chain
// chosen after the resolution, a CONNECT chained and tunnelled through
// the parent or refused by it, an unreachable parent, an origin-form URI
// kept absolute, a next hop given by address; the chained requests of
// one client share one connection to the parent.
func TestProxyChain(t *testing.T) {
	startOrigin(t, "127.84.1.30:8080", "O1", false)
	startOrigin(t, "127.84.1.31:8080", "O2", false)
	el, err := net.Listen("tcp", "127.84.1.33:7000")
	if err != nil {
		t.Skip(err)
	}
	defer el.Close()
	go func() {
		for i := 0; i < 8; i++ {
			c, err := el.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "hello\n")
				io.Copy(c, c)
			}()
		}
	}()
	parent := netip.MustParseAddrPort("127.84.1.2:3128")
	parentConns := startParent(t, parent.String(), map[string]string{"far.test:7000": "127.84.1.33:7000"})
	rules := chainRules{parent: parent, dead: netip.MustParseAddrPort("127.84.1.9:3128"), hop: netip.MustParseAddrPort("127.84.1.31:8080")}
	// The child's nameserver knows one.test only.
	f := startPoolProxy(t, "127.84.1.1", "127.84.1.53", Config{ConnectAllow: true}, SessionOptions{Rules: rules},
		"one.test. 60 IN A 127.84.1.30")
	for _, tc := range []struct {
		name, req string
		status    int
		body      string // the answer's body, or its prefix for the proxy's own pages
		hop       string // X-Hop: where the answer came from
		kept      bool
	}{
		{name: "direct", req: "GET http://one.test:8080/a HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200,
			body: "O1 GET /a one.test:8080 ua=\"\" pc=\"\" body=\n", hop: "127.84.1.30:8080", kept: true},
		{name: "not resolved without a chain", req: "GET http://far.test/x HTTP/1.1\r\nHost: far.test\r\n\r\n", status: 502, body: "<html>", kept: true},
		{name: "chained, not resolved here", req: "GET http://far.test/chain?q=1 HTTP/1.1\r\nHost: far.test\r\nProxy-Authorization: Basic dTpw\r\nProxy-Connection: keep-alive\r\n\r\n", status: 200,
			body: "PARENT GET http://far.test/chain?q=1 far.test pa=\"Basic dTpw\"\n", hop: "127.84.1.2:3128", kept: true},
		{name: "chained after the resolution", req: "GET http://one.test:8080/late HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200,
			body: "PARENT GET http://one.test:8080/late one.test:8080 pa=\"\"\n", hop: "127.84.1.2:3128", kept: true},
		{name: "chain taken back: resolved then", req: "GET http://one.test:8080/unchain HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200,
			body: "O1 GET /unchain one.test:8080 ", hop: "127.84.1.30:8080", kept: true},
		{name: "chain taken back: not resolved", req: "GET http://far.test/unchain HTTP/1.1\r\nHost: far.test\r\n\r\n", status: 502, body: "<html>", kept: true},
		{name: "parent unreachable", req: "GET http://far.test/dead HTTP/1.1\r\nHost: far.test\r\n\r\n", status: 502, body: "<html>", kept: true},
		{name: "absolute URI kept", req: "GET http://one.test:8080/abs HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200,
			body: "O1 GET http://one.test:8080/abs one.test:8080 ua=\"\" pc=\"\" body=\n", hop: "127.84.1.30:8080", kept: true},
		{name: "next hop by address", req: "GET http://one.test:8080/hop HTTP/1.1\r\nHost: one.test\r\n\r\n", status: 200,
			body: "O2 GET /hop one.test:8080 ua=\"\" pc=\"\" body=\n", hop: "127.84.1.31:8080", kept: true},
		{name: "CONNECT refused by the parent", req: "CONNECT far.test:443 HTTP/1.1\r\nHost: far.test:443\r\n\r\n", status: 403,
			body: "parent refuses\n", hop: "127.84.1.2:3128", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, c, br := rawExchange(t, f.addr, tc.req)
			defer c.Close()
			if resp.StatusCode != tc.status || !strings.HasPrefix(body, tc.body) || resp.Header.Get("X-Hop") != tc.hop {
				t.Errorf("= %d %q X-Hop %q, want %d %q %q", resp.StatusCode, body, resp.Header.Get("X-Hop"), tc.status, tc.body, tc.hop)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, "GET http://one.test:8080/again HTTP/1.1\r\nHost: one.test\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if kept := err == nil && resp.StatusCode == 200; kept != tc.kept {
				t.Errorf("connection kept = %v (%v), want %v", kept, err, tc.kept)
			}
		})
	}

	t.Run("CONNECT tunnelled through the parent", func(t *testing.T) {
		resp, _, c, br := rawExchange(t, f.addr, "CONNECT far.test:7000 HTTP/1.1\r\nHost: far.test:7000\r\n\r\nping\n")
		defer c.Close()
		if resp.StatusCode != 200 || resp.Status != "200 Parent tunnel" || resp.Header.Get("X-Hop") != "127.84.1.2:3128" {
			t.Fatalf("CONNECT answered %q X-Hop %q", resp.Status, resp.Header.Get("X-Hop"))
		}
		c.(*net.TCPConn).CloseWrite()
		rest, err := io.ReadAll(br)
		if err != nil || string(rest) != "hello\nping\n" {
			t.Errorf("tunnel carried %q, %v; want hello, ping and the end", rest, err)
		}
	})

	t.Run("one connection to the parent", func(t *testing.T) {
		before := parentConns.Load()
		c, err := net.DialTimeout("tcp", f.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for i := 0; i < 3; i++ {
			fmt.Fprintf(c, "GET http://far%d.test/chain HTTP/1.1\r\nHost: x\r\n\r\n", i)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if want := fmt.Sprintf("PARENT GET http://far%d.test/chain far%d.test", i, i); !strings.HasPrefix(string(b), want) {
				t.Fatalf("answer %d = %q, want %q", i, b, want)
			}
		}
		if n := parentConns.Load() - before; n != 1 {
			t.Errorf("the parent took %d connections for three requests, want 1", n)
		}
	})
}
