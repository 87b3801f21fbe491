package fwdproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// testDNS is a nameserver on loopback answering from a table of names,
// counting the questions it gets.
type testDNS struct {
	addr    netip.AddrPort
	mu      sync.Mutex
	records map[string][]dns.RR // by lower-case FQDN
	asked   atomic.Int32
	srv     *dns.Server
}

func startDNS(t *testing.T, ip string, records ...string) *testDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s (udp): %v", ip, err)
	}
	d := &testDNS{addr: netip.MustParseAddrPort(pc.LocalAddr().String()), records: map[string][]dns.RR{}}
	for _, r := range records {
		rr, err := dns.NewRR(r)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.ToLower(rr.Header().Name)
		d.records[n] = append(d.records[n], rr)
	}
	d.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	started := make(chan struct{})
	d.srv.NotifyStartedFunc = func() { close(started) }
	go d.srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { d.srv.Shutdown() })
	return d
}

func (d *testDNS) serve(w dns.ResponseWriter, q *dns.Msg) {
	d.asked.Add(1)
	m := new(dns.Msg)
	m.SetReply(q)
	name := strings.ToLower(q.Question[0].Name)
	d.mu.Lock()
	rrs := d.records[name]
	d.mu.Unlock()
	if len(rrs) == 0 {
		m.Rcode = dns.RcodeNameError
		soa, _ := dns.NewRR("test. 60 IN SOA ns.test. admin.test. 1 60 60 60 30")
		m.Ns = append(m.Ns, soa)
	}
	for _, rr := range rrs {
		if rr.Header().Rrtype == q.Question[0].Qtype || rr.Header().Rrtype == dns.TypeCNAME {
			m.Answer = append(m.Answer, rr)
			if c, ok := rr.(*dns.CNAME); ok {
				d.mu.Lock()
				for _, x := range d.records[strings.ToLower(c.Target)] {
					if x.Header().Rrtype == q.Question[0].Qtype {
						m.Answer = append(m.Answer, x)
					}
				}
				d.mu.Unlock()
			}
		}
	}
	w.WriteMsg(m)
}

func TestResolver(t *testing.T) {
	d := startDNS(t, "127.22.1.53",
		"a.test. 300 IN A 127.22.1.10",
		"a.test. 300 IN A 127.22.1.11",
		"www.test. 600 IN CNAME a.test.",
		"short.test. 0 IN A 127.22.1.12",
		"v6.test. 300 IN AAAA ::1",
	)
	// A nameserver that never answers.
	mute, err := net.ListenPacket("udp", "127.22.1.54:0")
	if err != nil {
		t.Skip(err)
	}
	defer mute.Close()
	muteAddr := netip.MustParseAddrPort(mute.LocalAddr().String())
	r := NewResolver(ResolverConfig{
		Zones: []Zone{
			{Name: ".", Nameservers: []netip.AddrPort{d.addr}},
			{Name: "slow.test.", Nameservers: []netip.AddrPort{muteAddr}},
		},
		UDP: true, Timeout: 200 * time.Millisecond,
	})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	for _, tc := range []struct {
		host   string
		ipv6   bool
		want   string // addresses joined by spaces
		err    error
		asked  int32 // questions the nameserver got, counted from the start
		advSec int   // seconds the clock moves before the lookup
	}{
		{host: "a.test", want: "127.22.1.10 127.22.1.11", asked: 1},
		{host: "A.TEST.", want: "127.22.1.10 127.22.1.11", asked: 1}, // cached, any case
		{host: "www.test", want: "127.22.1.10 127.22.1.11", asked: 2},
		{host: "a.test", want: "127.22.1.10 127.22.1.11", asked: 3, advSec: 301}, // expired
		{host: "short.test", want: "127.22.1.12", asked: 4},
		{host: "short.test", want: "127.22.1.12", asked: 5}, // TTL 0: not kept
		{host: "none.test", err: ErrNoName, asked: 6},
		{host: "none.test", err: ErrNoName, asked: 6}, // negative answer kept (SOA minimum 30 s)
		{host: "none.test", err: ErrNoName, asked: 7, advSec: 31},
		{host: "v6.test", err: ErrNoName, asked: 8},
		{host: "v6.test", ipv6: true, want: "::1", asked: 10}, // A (no data and no SOA: not kept), then AAAA
		{host: "127.22.1.99", want: "127.22.1.99", asked: 10},
		{host: "[::1]", err: ErrNoName, asked: 10},
		{host: "[::1]", ipv6: true, want: "::1", asked: 10},
		{host: "x.slow.test", err: ErrDNSTimeout, asked: 10},
	} {
		now = now.Add(time.Duration(tc.advSec) * time.Second)
		addrs, err := r.Lookup(context.Background(), tc.host, tc.ipv6)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if err != tc.err || strings.Join(got, " ") != tc.want {
			t.Errorf("Lookup(%q, %v) = %v, %v; want %s, %v", tc.host, tc.ipv6, got, err, tc.want, tc.err)
		}
		if n := d.asked.Load(); n != tc.asked {
			t.Errorf("after %q: nameserver asked %d times, want %d", tc.host, n, tc.asked)
		}
	}
}

func TestResolverZones(t *testing.T) {
	ns := func(s string) []netip.AddrPort { return []netip.AddrPort{netip.MustParseAddrPort(s)} }
	r := NewResolver(ResolverConfig{Zones: []Zone{
		{Name: ".", Nameservers: ns("127.22.1.1:53")},
		{Name: "corp.test.", Nameservers: ns("127.22.1.2:53")},
		{Name: "eu.corp.test.", Nameservers: ns("127.22.1.3:53")},
	}})
	only := NewResolver(ResolverConfig{Zones: []Zone{{Name: "corp.test.", Nameservers: ns("127.22.1.2:53")}}})
	for _, tc := range []struct {
		r    *Resolver
		name string
		want string
	}{
		{r, "www.example.", "127.22.1.1:53"},
		{r, "corp.test.", "127.22.1.2:53"},
		{r, "www.corp.test.", "127.22.1.2:53"},
		{r, "x.eu.corp.test.", "127.22.1.3:53"},
		{r, "xcorp.test.", "127.22.1.1:53"},
		{only, "www.example.", ""},
		{only, "a.corp.test.", "127.22.1.2:53"},
	} {
		got := ""
		if s := tc.r.zoneFor(tc.name); len(s) > 0 {
			got = s[0].String()
		}
		if got != tc.want {
			t.Errorf("zoneFor(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// proxyFixture is a proxy listening on loopback, a nameserver and the
// origins its names point at.
type proxyFixture struct {
	addr    string
	dns     *testDNS
	proxy   *Proxy
	dialled atomic.Int32
}

func startProxy(t *testing.T, cfg Config, records ...string) *proxyFixture {
	return startProxyIdle(t, cfg, 10*time.Second, records...)
}

func startProxyIdle(t *testing.T, cfg Config, idle time.Duration, records ...string) *proxyFixture {
	t.Helper()
	return startProxyRules(t, cfg, idle, nil, records...)
}

func startProxyRules(t *testing.T, cfg Config, idle time.Duration, rules Rules, records ...string) *proxyFixture {
	t.Helper()
	f := &proxyFixture{dns: startDNS(t, "127.22.1.53", records...)}
	cfg.Resolver = ResolverConfig{Zones: []Zone{{Name: ".", Nameservers: []netip.AddrPort{f.dns.addr}}}, UDP: true, TCP: true}
	f.proxy = New(cfg)
	l, err := net.Listen("tcp", "127.22.1.1:0")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { l.Close() })
	f.addr = l.Addr().String()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := f.proxy.NewSession(c, SessionOptions{
					Dial: func(ctx context.Context, dst netip.AddrPort) (net.Conn, error) {
						f.dialled.Add(1)
						var d net.Dialer
						return d.DialContext(ctx, "tcp", dst.String())
					},
					Idle:  idle,
					Rules: rules,
				})
				s.Run()
			}()
		}
	}()
	return f
}

// startOrigin starts an HTTP origin on addr, answering "name path host" and
// counting its connections.
func startOrigin(t *testing.T, addr, name string, useTLS bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skip(err)
	}
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s ua=%q pc=%q body=%s\n", name, r.Method, r.RequestURI, r.Host, r.Header.Get("User-Agent"), r.Header.Get("Proxy-Connection"), b)
	}))
	s.Listener.Close()
	s.Listener = l
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &conns
}

func TestProxyRequests(t *testing.T) {
	_, conns := startOrigin(t, "127.22.1.20:8080", "O1", false)
	tlsOrigin, _ := startOrigin(t, "127.22.1.21:8443", "O2", true)
	f := startProxy(t, Config{ConnectAllow: true, ServerAgent: "BigIP", DNSError: "no such site"},
		"one.test. 60 IN A 127.22.1.20",
		"two.test. 60 IN A 127.22.1.21",
		"dead.test. 60 IN A 127.22.1.22",
	)
	pu, _ := url.Parse("http://" + f.addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: poolOf(tlsOrigin), ServerName: "example.com"}, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, tc := range []struct {
		url, method, body string
		status            int
		want              string
	}{
		{url: "http://one.test:8080/a?x=1", status: 200, want: `O1 GET /a?x=1 one.test:8080 ua="Go-http-client/1.1" pc="" body=` + "\n"},
		{url: "http://one.test:8080/b", method: "POST", body: "hello", status: 200, want: `O1 POST /b one.test:8080 ua="Go-http-client/1.1" pc="" body=hello` + "\n"},
		{url: "http://ONE.test:8080/c", status: 200, want: `O1 GET /c ONE.test:8080 ua="Go-http-client/1.1" pc="" body=` + "\n"},
		{url: "https://two.test:8443/tls", status: 200, want: `O2 GET /tls two.test:8443 ua="Go-http-client/1.1" pc="" body=` + "\n"},
		{url: "http://nowhere.test/", status: 502, want: "no such site"},
		{url: "http://dead.test:8080/", status: 502, want: defaultConnectError},
	} {
		method := tc.method
		if method == "" {
			method = "GET"
		}
		req, _ := http.NewRequest(method, tc.url, strings.NewReader(tc.body))
		if tc.body == "" {
			req.Body = nil
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, tc.url, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(b) != tc.want {
			t.Errorf("%s %s = %d %q, want %d %q", method, tc.url, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	// The three requests to one.test shared one origin connection (the
	// client kept its connection to the proxy, the proxy its own).
	if n := conns.Load(); n != 1 {
		t.Errorf("origin O1 saw %d connections, want 1", n)
	}
}

// rawExchange sends text to the proxy and reads one answer.
func rawExchange(t *testing.T, addr, text string) (*http.Response, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, text)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: strings.Fields(text)[0]})
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	var b []byte
	if resp.StatusCode != 200 || !strings.HasPrefix(text, "CONNECT") {
		b, _ = io.ReadAll(resp.Body)
	}
	return resp, string(b), c, br
}

func TestProxyLocalAnswers(t *testing.T) {
	startOrigin(t, "127.22.1.20:8080", "O1", false)
	deny := startProxy(t, Config{ConnectError: "tunnels are not allowed"}, "one.test. 60 IN A 127.22.1.20")
	for _, tc := range []struct {
		name, text string
		status     int
		body       string
		closes     bool
	}{
		{"connect denied", "CONNECT one.test:8080 HTTP/1.1\r\nHost: one.test:8080\r\n\r\n", 403, "tunnels are not allowed", false},
		{"origin form", "GET /x HTTP/1.1\r\nHost: one.test\r\n\r\n", 400, defaultBadRequest, true},
		{"other scheme", "GET ftp://one.test/x HTTP/1.1\r\nHost: one.test\r\n\r\n", 400, defaultBadRequest, true},
		{"dns error", "GET http://gone.test/ HTTP/1.1\r\nHost: gone.test\r\n\r\n", 502, defaultDNSError, false},
		{"hop-by-hop", "GET http://one.test:8080/h HTTP/1.1\r\nHost: one.test:8080\r\nProxy-Connection: keep-alive\r\n\r\n", 200, `O1 GET /h one.test:8080 ua="" pc="" body=` + "\n", false},
		{"close", "GET http://one.test:8080/h HTTP/1.1\r\nHost: one.test:8080\r\nConnection: close\r\n\r\n", 200, `O1 GET /h one.test:8080 ua="" pc="" body=` + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body, c, _ := rawExchange(t, deny.addr, tc.text)
			defer c.Close()
			if resp.StatusCode != tc.status || body != tc.body || resp.Close != tc.closes {
				t.Errorf("got %d %q close=%v, want %d %q close=%v", resp.StatusCode, body, resp.Close, tc.status, tc.body, tc.closes)
			}
		})
	}
}

func TestProxyConnectTunnel(t *testing.T) {
	l, err := net.Listen("tcp", "127.22.1.23:7000")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	// An echo origin that says hello first and passes on the half close.
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "hello\n")
		io.Copy(c, c)
	}()
	f := startProxy(t, Config{ConnectAllow: true}, "echo.test. 60 IN A 127.22.1.23")
	// The client's first bytes come in the same write as the CONNECT.
	resp, _, c, br := rawExchange(t, f.addr, "CONNECT echo.test:7000 HTTP/1.1\r\nHost: echo.test:7000\r\n\r\nping\n")
	defer c.Close()
	if resp.StatusCode != 200 || resp.Status != "200 Connection established" {
		t.Fatalf("CONNECT answered %q", resp.Status)
	}
	c.(*net.TCPConn).CloseWrite()
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "hello\nping\n" {
		t.Errorf("tunnel carried %q, %v; want hello, ping and the end", rest, err)
	}
}

func poolOf(s *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.Certificate())
	return p
}

func TestProxyOriginSilent(t *testing.T) {
	l, err := net.Listen("tcp", "127.22.1.24:8080")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	// An origin that takes the request and never answers.
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	f := startProxyIdle(t, Config{}, 300*time.Millisecond, "mute.test. 60 IN A 127.22.1.24")
	resp, body, c, _ := rawExchange(t, f.addr, "GET http://mute.test:8080/ HTTP/1.1\r\nHost: mute.test:8080\r\n\r\n")
	defer c.Close()
	if resp.StatusCode != 504 || body != defaultBadResponse || !resp.Close {
		t.Errorf("got %d %q close=%v, want 504 with the bad-response page, closing", resp.StatusCode, body, resp.Close)
	}
}
