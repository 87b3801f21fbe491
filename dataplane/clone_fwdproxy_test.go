package dataplane

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestCloneExplicitProxy: an explicit proxy's client connection is
// copied as a standard virtual's is, by its clone pools and by a rule's
// clone in CLIENT_ACCEPTED: clientside the requests as the client sent
// them (absolute-form), serverside as the origin got them (origin-form,
// the rule's header), on one clone connection for the client. A clone
// in HTTP_REQUEST comes after the request's head was read: skipped and
// counted as dropped, nothing copied.
func TestCloneExplicitProxy(t *testing.T) {
	for i, tc := range []struct {
		name, rule string
		pools      bool // the virtual's clone-pools, not a rule
		cloned     bool
	}{
		{"rule", "when CLIENT_ACCEPTED { clone pool /Common/ids_cs\n serverside { clone pool /Common/ids_ss } }", false, true},
		{"clone pools", "", true, true},
		{"late", "when HTTP_REQUEST { clone pool /Common/ids_cs }", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.197.5" + string(rune('1'+i)) + "."
			vs, origin := base+"1:3128", base+"2:9000"
			startL7Member(t, origin, "O1")
			cs := startCloneCollector(t, base+"3:9001")
			ss := startCloneCollector(t, base+"4:9001")
			rule := tc.rule + "\nwhen HTTP_PROXY_REQUEST { HTTP::header insert X-Tap yes }"
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, rule)
			v := cfg.Virtuals["/Common/vs"]
			v.MBLB.ExplicitProxy = &fwdproxy.Config{}
			addClonePool(cfg, "/Common/ids_cs", base+"3:9001")
			addClonePool(cfg, "/Common/ids_ss", base+"4:9001")
			if tc.pools {
				v.Clone = []ClonePool{{Pool: "/Common/ids_cs"}, {Pool: "/Common/ids_ss", Server: true}}
			}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)

			c := dialHTTPVS(t, vs)
			reqs := []string{
				"GET http://" + origin + "/one HTTP/1.1\r\nHost: " + origin + "\r\n\r\n",
				"POST http://" + origin + "/two HTTP/1.1\r\nHost: " + origin + "\r\nContent-Length: 5\r\n\r\nhello",
			}
			for _, r := range reqs {
				resp, body, err := c.do(r)
				if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "O1 ") {
					t.Fatalf("request through the proxy: %v %q", err, body)
				}
			}
			c.c.Close() // the client's end ends its clone connections
			if !tc.cloned {
				eventually(t, "the skipped clone counted", func() bool {
					st, _ := p.Virtual("/Common/vs")
					return st.Clone != nil && st.Clone.Dropped == 2 && st.Clone.Conns == 0
				})
				if ps, _ := p.Pool("/Common/ids_cs"); ps.ServerSide.TotConns != 0 {
					t.Errorf("ids_cs: %d connections, want none", ps.ServerSide.TotConns)
				}
				return
			}
			if got := cs.wait(t, 1); len(got) != 1 || got[0] != strings.Join(reqs, "") {
				t.Errorf("clientside copy = %q, want the two requests as the client sent them", got)
			}
			got := ss.wait(t, 1)
			if len(got) != 1 || !strings.HasPrefix(got[0], "GET /one HTTP/1.1\r\n") || strings.Count(got[0], "\r\nX-Tap: yes\r\n") != 2 ||
				!strings.Contains(got[0], "POST /two HTTP/1.1\r\n") || !strings.HasSuffix(got[0], "\r\n\r\nhello") {
				t.Errorf("serverside copy = %q, want both requests as the origin got them", got)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 2 && st.Clone.Dropped == 0
			})
		})
	}
}

// TestCloneExplicitProxyTunnel: a CONNECT tunnel's bytes are copied too:
// clientside the CONNECT and what went through the tunnel, serverside
// what the tunnel's far end got (not the CONNECT, which the proxy
// answers itself).
func TestCloneExplicitProxyTunnel(t *testing.T) {
	vs, origin := "127.197.59.1:3128", "127.197.59.2:9000"
	startL7Member(t, origin, "O1")
	cs := startCloneCollector(t, "127.197.59.3:9001")
	ss := startCloneCollector(t, "127.197.59.4:9001")
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, "")
	v := cfg.Virtuals["/Common/vs"]
	v.MBLB.ExplicitProxy = &fwdproxy.Config{ConnectAllow: true}
	addClonePool(cfg, "/Common/ids_cs", "127.197.59.3:9001")
	addClonePool(cfg, "/Common/ids_ss", "127.197.59.4:9001")
	v.Clone = []ClonePool{{Pool: "/Common/ids_cs"}, {Pool: "/Common/ids_ss", Server: true}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	c := dialHTTPVS(t, vs)
	connect := "CONNECT " + origin + " HTTP/1.1\r\nHost: " + origin + "\r\n\r\n"
	c.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.c.Write([]byte(connect)); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(c.br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	get := "GET /in-tunnel HTTP/1.1\r\nHost: " + origin + "\r\n\r\n"
	if resp, body, err := c.do(get); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "O1 GET /in-tunnel") {
		t.Fatalf("through the tunnel: %v %q", err, body)
	}
	c.c.Close()
	if got := cs.wait(t, 1); len(got) != 1 || got[0] != connect+get {
		t.Errorf("clientside copy = %q, want the CONNECT and the tunnel's bytes", got)
	}
	if got := ss.wait(t, 1); len(got) != 1 || got[0] != get {
		t.Errorf("serverside copy = %q, want the tunnel's bytes", got)
	}
}
