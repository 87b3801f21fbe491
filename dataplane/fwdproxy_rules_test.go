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

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
)

// fwdRule is an access-control rule of an explicit proxy: blocked hosts
// are answered 403 by the proxy, each request is logged, a field is
// removed and others inserted toward the origin (the member echoes X-LB
// and X-Send), HTTP_PROXY_REQUEST reads where the request goes, and the
// origin's answer is edited.
const fwdRule = `
when HTTP_REQUEST {
    log local0. "req [HTTP::method] [HTTP::host] [HTTP::uri] proxy=[HTTP::proxy exists]"
    switch -glob [string tolower [HTTP::host]] {
        "blocked.test*" { HTTP::respond 403 content "blocked [HTTP::host]" }
        "gone.test*" { reject }
        "moved.test*" { HTTP::redirect "http://o1.test/new" }
    }
    HTTP::header remove X-Secret
    HTTP::header insert X-LB "rule-[HTTP::request_num]"
}
when HTTP_PROXY_REQUEST {
    HTTP::header insert X-Send "[HTTP::proxy addr]:[HTTP::proxy port]"
    if { [HTTP::uri] ends_with "/late-block" } { HTTP::respond 403 content "late [IP::server_addr]" }
}
when HTTP_PROXY_CONNECT {
    if { [HTTP::proxy port] != 80 } { HTTP::respond 403 content "port [HTTP::proxy port] refused" }
}
when HTTP_RESPONSE {
    HTTP::header remove X-Member
    HTTP::header insert X-Origin [IP::server_addr]
}
`

// TestExplicitProxyRules: iRules on an explicit proxy answer, refuse,
// log and edit requests and answers, through real clients and origins.
func TestExplicitProxyRules(t *testing.T) {
	origin := startL7Member(t, "127.22.3.32:80", "O1")
	startL7Member(t, "127.22.3.33:8080", "O2")
	ns := startNameserver(t, "127.22.3.53:0", map[string]string{
		"o1.test.": "127.22.3.32", "o2.test.": "127.22.3.33", "blocked.test.": "127.22.3.32",
		"gone.test.": "127.22.3.32", "moved.test.": "127.22.3.32"})
	cfg := l7Config(t, "127.22.3.10:3128", false, mblb.HTTPOptions{}, fwdRule)
	rs, lg := compileRules(t, fwdRule)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true,
		Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	pu, _ := url.Parse("http://127.22.3.10:3128")
	tr := &http.Transport{Proxy: http.ProxyURL(pu)}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		name   string
		url    string
		status int
		want   string // in the body
		header string // X-Origin, Location
		err    bool   // the proxy resets the client
	}{
		{name: "passed, edited both ways", url: "http://o1.test/a", status: 200, want: "O1 GET /a body= lb=rule-1 send=127.22.3.32:80 ", header: "127.22.3.32"},
		{name: "blocked host", url: "http://blocked.test/x", status: 403, want: "blocked blocked.test"},
		{name: "connection kept after an answer", url: "http://o2.test:8080/b", status: 200, want: "O2 GET /b body= lb=rule-3 send=127.22.3.33:8080 ", header: "127.22.3.33"},
		{name: "redirect", url: "http://moved.test/old", status: 302, header: "http://o1.test/new"},
		{name: "HTTP_PROXY_REQUEST answers", url: "http://o1.test/late-block", status: 403, want: "late 127.22.3.32"},
		{name: "rejected", url: "http://gone.test/", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", tc.url, nil)
			req.Header.Set("X-Secret", "s3cret")
			resp, err := client.Do(req)
			if tc.err {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got %d, want the connection reset", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("= %d %q, want %d %q", resp.StatusCode, b, tc.status, tc.want)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Errorf("X-Secret reached the origin: %q", b)
			}
			got := resp.Header.Get("X-Origin")
			if tc.status == 302 {
				got = resp.Header.Get("Location")
			}
			if got != tc.header || resp.Header.Get("X-Member") != "" {
				t.Errorf("X-Origin/Location %q, X-Member %q; want %q and none", got, resp.Header.Get("X-Member"), tc.header)
			}
		})
	}
	if n := origin.reqs.Load(); n != 1 {
		t.Errorf("o1 got %d requests, want 1 (the others were answered by the rule)", n)
	}
	logged := lg.String()
	for _, w := range []string{"req GET o1.test http://o1.test/a proxy=0", "req GET blocked.test http://blocked.test/x proxy=0"} {
		if !strings.Contains(logged, w) {
			t.Errorf("log lacks %q:\n%s", w, logged)
		}
	}

	// CONNECT: HTTP_REQUEST sees it; a refusal of HTTP_PROXY_CONNECT
	// answers instead of the tunnel, on the same connection.
	c, err := net.DialTimeout("tcp", "127.22.3.10:3128", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		target string
		status int
		want   string
	}{
		{"blocked.test:443", 403, "blocked blocked.test:443"},
		{"o2.test:8080", 403, "port 8080 refused"},
		{"o1.test:80", 200, ""},
	} {
		io.WriteString(c, "CONNECT "+tc.target+" HTTP/1.1\r\nHost: "+tc.target+"\r\n\r\n")
		resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
		if err != nil {
			t.Fatalf("CONNECT %s: %v", tc.target, err)
		}
		var b []byte
		if resp.StatusCode != 200 {
			b, _ = io.ReadAll(resp.Body)
		}
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("CONNECT %s = %d %q, want %d %q", tc.target, resp.StatusCode, b, tc.status, tc.want)
		}
	}
	io.WriteString(c, "GET /inside HTTP/1.1\r\nHost: o1.test\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "O1 GET /inside ") || resp.Header.Get("X-Member") != "O1" {
		t.Errorf("through the tunnel (no HTTP events inside): %q %v", b, resp.Header)
	}
	if !strings.Contains(lg.String(), "req CONNECT o1.test:80 o1.test:80 proxy=0") {
		t.Errorf("CONNECT not logged:\n%s", lg.String())
	}
}
