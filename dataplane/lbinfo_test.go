package dataplane

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// Published logging and routing rules read the virtual's name and the
// pool's members and mode: on L4, HTTP and UDP virtuals alike they answer from
// the running configuration.
func TestRulesReadVirtualAndPool(t *testing.T) {
	t.Parallel()
	const info = `[virtual name] [virtual] [LB::mode] [members pool] [members -list pool]`
	t.Run("l4", func(t *testing.T) {
		p, lg := newPlane(t)
		cfg := basic("127.0.137.1:8000", "127.0.137.11:80", "127.0.137.12:80")
		cfg.Pools["/Common/pool"].LBMode = LeastConnectionsMember
		var rl *ruleLog
		cfg.Virtuals["/Common/vs"].Rules, rl = compileRules(t, `
when CLIENT_ACCEPTED { TCP::respond "`+info+`\n" ; TCP::close }`)
		mustApply(t, p, cfg)
		c, err := net.Dial("tcp", "127.0.137.1:8000")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got, err := readAll(t, c)
		want := "/Common/vs /Common/vs least-connections-member 2 {127.0.137.11 80} {127.0.137.12 80}\n"
		if err != nil || got != want {
			t.Fatalf("got %q, %v; want %q (log: %s %v)", got, err, want, lg, rl.Lines())
		}
	})
	t.Run("http", func(t *testing.T) {
		p, lg := newPlane(t)
		cfg := httpRulesConfig(t, "127.0.137.2:80", false, `
when HTTP_REQUEST { HTTP::respond 200 content "`+info+`" }`)
		mustApply(t, p, cfg)
		c := dialHTTPVS(t, "127.0.137.2:80")
		r, body, err := c.do(httpReq("www.example.com", "/"))
		if err != nil {
			t.Fatalf("%v (log: %s)", err, lg)
		}
		want := "/Common/vs /Common/vs round-robin 1 {127.0.130.11 80}"
		if r.StatusCode != 200 || body != want {
			t.Fatalf("%d %q, want %q", r.StatusCode, body, want)
		}
	})
	t.Run("udp", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := udpBasic("127.41.37.1:53", "127.41.37.2:5300")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_DATA { UDP::respond "`+info+`" ; UDP::drop }`)
		mustApply(t, p, cfg)
		want := "/Common/vs /Common/vs round-robin 1 {127.41.37.2 5300}"
		if got := dialUDP(t, "", "127.41.37.1:53").mustAsk("q"); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// LB_FAILED on an HTTP virtual may send the request elsewhere, as on
// BIG-IP: `LB::reselect pool P` and `pool P` there are carried out (the
// pool's only member refuses connections).
func TestHTTPLBFailedReselects(t *testing.T) {
	t.Parallel()
	startHTTPServer(t, "127.0.137.32:80", "BACKUP")
	for i, rule := range []string{
		`when LB_FAILED { LB::reselect pool api_pool }`,
		`when LB_FAILED { pool api_pool }`,
	} {
		vs := fmt.Sprintf("127.0.137.%d:80", 40+i)
		p, lg := newPlane(t)
		cfg := httpRulesConfig(t, vs, false, rule)
		cfg.Pools["/Common/pool"].Members[0].Addr = ap("127.0.137.31:80") // nothing listens
		cfg.Pools["/Common/api_pool"].Members[0].Addr = ap("127.0.137.32:80")
		mustApply(t, p, cfg)
		c := dialHTTPVS(t, vs)
		r, body, err := c.do(httpReq("www.example.com", "/x"))
		if err != nil {
			t.Fatalf("%s: %v (log: %s)", rule, err, lg)
		}
		if r.StatusCode != 200 || !strings.HasPrefix(body, "BACKUP") {
			t.Fatalf("%s: %d %q", rule, r.StatusCode, body)
		}
	}
}
