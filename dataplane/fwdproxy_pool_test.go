package dataplane

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
)

// fwdPoolRule sends /pool/ requests to the virtual's pool and judges
// the answers to CONNECTs.
const fwdPoolRule = `
when HTTP_REQUEST {
    if { [HTTP::uri] contains "/pool/" } { HTTP::proxy disable }
    log local0. "proxying [HTTP::uri] [HTTP::proxy]"
}
when HTTP_PROXY_RESPONSE {
    if { [HTTP::proxy port] == 8080 } {
        HTTP::respond 403 content "tunnel to [IP::server_addr] refused"
    } else {
        HTTP::header insert X-Tunnel "[HTTP::status] [HTTP::proxy addr]"
    }
}
`

// TestExplicitProxyPoolRules: through a Plane, a compiled rule's
// HTTP::proxy disable sends a request to the virtual's pool member while
// the others reach the origin they name; a host-names request goes there
// too; HTTP_PROXY_RESPONSE edits the tunnel's answer or refuses the
// tunnel.
func TestExplicitProxyPoolRules(t *testing.T) {
	startL7Member(t, "127.34.6.32:80", "O1")
	startL7Member(t, "127.34.6.33:8080", "O2")
	pool := startL7Member(t, "127.34.6.40:80", "P1")
	ns := startNameserver(t, "127.34.6.53:0", map[string]string{"o1.test.": "127.34.6.32", "o2.test.": "127.34.6.33"})
	cfg := l7Config(t, "127.34.6.10:3128", false, mblb.HTTPOptions{}, fwdPoolRule, "127.34.6.40:80")
	rs, lg := compileRules(t, fwdPoolRule)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true, HostNames: []string{"wpad.test"},
		Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	c, err := net.DialTimeout("tcp", "127.34.6.10:3128", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		name, req string
		status    int
		want      string // in the body
		tunnel    string // X-Tunnel
	}{
		{"proxied", "GET http://o1.test/a HTTP/1.1\r\nHost: o1.test\r\n\r\n", 200, "O1 GET /a ", ""},
		{"disabled: the pool", "GET http://o1.test/pool/b HTTP/1.1\r\nHost: o1.test\r\n\r\n", 200, "P1 GET http://o1.test/pool/b ", ""},
		{"host-names: the pool", "GET /wpad.dat HTTP/1.1\r\nHost: wpad.test\r\n\r\n", 200, "P1 GET /wpad.dat ", ""},
		{"tunnel refused in HTTP_PROXY_RESPONSE", "CONNECT o2.test:8080 HTTP/1.1\r\nHost: o2.test:8080\r\n\r\n", 403, "tunnel to 127.34.6.33 refused", ""},
		{"tunnel answer edited", "CONNECT o1.test:80 HTTP/1.1\r\nHost: o1.test:80\r\n\r\n", 200, "", "200 127.34.6.32"},
	} {
		io.WriteString(c, tc.req)
		method, _, _ := strings.Cut(tc.req, " ")
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var b []byte
		if method != "CONNECT" || resp.StatusCode != 200 {
			b, _ = io.ReadAll(resp.Body)
		}
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) || resp.Header.Get("X-Tunnel") != tc.tunnel {
			t.Errorf("%s: = %d %q X-Tunnel %q, want %d %q %q", tc.name, resp.StatusCode, b, resp.Header.Get("X-Tunnel"), tc.status, tc.want, tc.tunnel)
		}
	}
	// Through the tunnel: the origin.
	io.WriteString(c, "GET /inside HTTP/1.1\r\nHost: o1.test\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "O1 GET /inside ") {
		t.Errorf("through the tunnel: %q", b)
	}
	if n := pool.reqs.Load(); n != 2 {
		t.Errorf("the pool's member got %d requests, want 2", n)
	}
	if !strings.Contains(lg.String(), "proxying http://o1.test/pool/b disable") {
		t.Errorf("log:\n%s", lg.String())
	}
}
