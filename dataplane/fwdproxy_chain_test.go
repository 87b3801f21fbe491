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

// fwdChainRule chooses each request's next hop by its path.
const fwdChainRule = `
when HTTP_REQUEST {
    if { [HTTP::uri] contains "/up/" } { HTTP::proxy chain host 127.84.6.40 80 }
    if { [HTTP::uri] contains "/self/" } { HTTP::proxy chain vs }
    if { [HTTP::uri] contains "/none/" } { HTTP::proxy chain nosuch_vs }
    if { [HTTP::uri] contains "/abs/" } { HTTP::proxy uri-rewrite disable }
    if { [HTTP::uri] contains "/late/" } { set late 1 }
}
when HTTP_PROXY_REQUEST {
    if { [HTTP::uri] contains "/pin/" } { HTTP::proxy iptuple 127.84.6.33 8080 }
    log local0. "next [HTTP::uri] chain=[HTTP::proxy chain] hop=[HTTP::proxy iptuple] rewrite=[HTTP::proxy uri-rewrite]"
}
when HTTP_RESPONSE {
    if { [info exists late] } { HTTP::proxy chain host 127.84.6.40 80 }
}
`

// TestExplicitProxyChainRules: through a Plane, a compiled rule's
// HTTP::proxy chain host, iptuple and uri-rewrite send each request where
// it says, and a chain to a missing virtual, to the virtual itself, or
// after the request has gone, fails the rule (the client reset).
func TestExplicitProxyChainRules(t *testing.T) {
	startL7Member(t, "127.84.6.32:80", "O1")
	startL7Member(t, "127.84.6.33:8080", "O2")
	parent := startL7Member(t, "127.84.6.40:80", "UP")
	ns := startNameserver(t, "127.84.6.53:0", map[string]string{"o1.test.": "127.84.6.32"})
	cfg := l7Config(t, "127.84.6.10:3128", false, mblb.HTTPOptions{}, fwdChainRule)
	rs, lg := compileRules(t, fwdChainRule)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs"].MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true,
		Resolver: fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	for _, tc := range []struct {
		name, uri string
		want      string // the answer's body prefix; "": the client is reset
		log       string
	}{
		{"direct", "http://o1.test/a", "O1 GET /a ", "next http://o1.test/a chain= hop=127.84.6.32 80 rewrite=enable"},
		{"chained by address, not resolved", "http://far.test/up/b", "UP GET http://far.test/up/b ", "next http://far.test/up/b chain=127.84.6.40:80 hop=127.84.6.40 80 rewrite=enable"},
		{"absolute URI kept", "http://o1.test/abs/c", "O1 GET http://o1.test/abs/c ", "rewrite=disable"},
		{"next hop by address", "http://o1.test/pin/d", "O2 GET /pin/d ", "next http://o1.test/pin/d chain= hop=127.84.6.33 8080"},
		{"chain to itself", "http://o1.test/self/e", "", "a virtual server cannot chain through itself"},
		{"chain to a missing virtual", "http://o1.test/none/f", "", "HTTP::proxy chain /Common/nosuch_vs: no such virtual server"},
		{"chain once the request has gone", "http://o1.test/late/g", "", "in HTTP_RESPONSE the request has gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", "127.84.6.10:3128", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, "GET "+tc.uri+" HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if tc.want == "" {
				if err == nil {
					t.Errorf("answered %d, want the client reset", resp.StatusCode)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if b, _ := io.ReadAll(resp.Body); !strings.HasPrefix(string(b), tc.want) {
				t.Errorf("= %d %q, want %q", resp.StatusCode, b, tc.want)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(lg.String(), tc.log) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(lg.String(), tc.log) {
				t.Errorf("the log has no %q", tc.log)
			}
		})
	}
	if n := parent.reqs.Load(); n != 1 {
		t.Errorf("the parent got %d requests, want 1", n)
	}
}
