package dataplane

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
)

// startNameserver answers A questions for names (FQDN -> address) on
// addr (udp), NXDOMAIN for the others.
func startNameserver(t *testing.T, addr string, names map[string]string) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if a, ok := names[strings.ToLower(q.Question[0].Name)]; ok && q.Question[0].Qtype == dns.TypeA {
			rr, _ := dns.NewRR(q.Question[0].Name + " 60 IN A " + a)
			m.Answer = append(m.Answer, rr)
		} else if !ok {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

// TestExplicitProxyVirtual: an HTTP virtual with an explicit proxy sends
// absolute-URI requests and CONNECT tunnels to the origins the client
// names, resolved through its nameserver, never to its pool's member; the
// client connection is in the connection table and the virtual's counters.
func TestExplicitProxyVirtual(t *testing.T) {
	poolMember := startL7Member(t, "127.22.2.31:80", "POOL")
	origin := startL7Member(t, "127.22.2.32:80", "O1")
	ns := startNameserver(t, "127.22.2.53:0", map[string]string{"o1.test.": "127.22.2.32"})
	cfg := l7Config(t, "127.22.2.10:3128", false, mblb.HTTPOptions{}, "", "127.22.2.31:80")
	cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true,
		Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	pu, _ := url.Parse("http://127.22.2.10:3128")
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, tc := range []struct {
		url    string
		status int
		want   string
	}{
		{"http://o1.test/a", 200, "O1 GET /a "},
		{"http://o1.test/b?q=1", 200, "O1 GET /b?q=1 "},
		{"http://none.test/", 502, "Cannot resolve hostname"},
	} {
		resp, err := client.Get(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s = %d %q, want %d %q", tc.url, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	if client, _ := countFlows(p); client != 1 {
		t.Errorf("%d client connections in the table, want the one kept alive", client)
	}

	// A tunnel: the request inside it reaches the origin as sent.
	c, err := net.DialTimeout("tcp", "127.22.2.10:3128", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "CONNECT o1.test:80 HTTP/1.1\r\nHost: o1.test:80\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, "GET /inside HTTP/1.1\r\nHost: o1.test\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "O1 GET /inside ") {
		t.Errorf("through the tunnel: %q", b)
	}

	if n := poolMember.reqs.Load(); n != 0 {
		t.Errorf("the pool's member got %d requests, want none", n)
	}
	if n := origin.reqs.Load(); n != 3 {
		t.Errorf("the origin got %d requests, want 3", n)
	}
	if vs, ok := p.Virtual("/Common/vs"); !ok || vs.ClientSide.BitsIn == 0 || vs.ClientSide.BitsOut == 0 || vs.ClientSide.TotConns != 2 {
		t.Errorf("virtual's client side: %+v", vs.ClientSide)
	}
}
