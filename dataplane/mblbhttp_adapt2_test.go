package dataplane

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAdaptSelectAllow: ADAPT::select sends one request to another
// internal virtual server's ICAP pool, ADAPT::allow http_v1.0 adapts an
// HTTP/1.0 request the profile would pass, and neither carries over to
// the next request.
func TestAdaptSelectAllow(t *testing.T) {
	startEchoMember(t, "127.66.15.11:80")
	a := icapListen(t, "127.66.15.21:1344", icaptest.Config{Header: "X-Scan", Value: "by-a"})
	b := icapListen(t, "127.66.15.22:1344", icaptest.Config{Header: "X-Scan", Value: "by-b"})
	rule := `when HTTP_REQUEST {
	switch -glob [HTTP::uri] {
		"/b*" { ADAPT::select request ivs_b }
		"/state" { HTTP::respond 200 content "[ADAPT::select] [ADAPT::allow http_v1.0] [ADAPT::allow http_v1.0 response]" }
		"/unknown" { if {[catch {ADAPT::select nosuch} e]} { HTTP::respond 200 content "[ADAPT::select] $e" } }
		"/prop" { if {[catch {ADAPT::allow http_v2} e]} { HTTP::respond 200 content $e } }
		"/old" { ADAPT::allow http_v1.0 request yes }
	}
}`
	uri := "icap://${SERVER_IP}:${SERVER_PORT}/av"
	targets := map[string]*mblb.AdaptTarget{
		"/Common/ivs_a": {Internal: "/Common/ivs_a", Pool: "/Common/icap_pool", Service: icap.Service{URI: uri}},
		"/Common/ivs_b": {Internal: "/Common/ivs_b", Pool: "/Common/icap_pool_b", Service: icap.Service{URI: uri}},
	}
	targets["ivs_a"], targets["ivs_b"] = targets["/Common/ivs_a"], targets["/Common/ivs_b"]
	ad := adapt(mblb.AdaptReset, 0)
	ad.Internal, ad.Targets = "/Common/ivs_a", targets
	p, lg := newPlane(t)
	cfg := adaptConfig(t, "127.66.15.1:80", "127.66.15.11:80", ad, nil, "127.66.15.21:1344")
	cfg.Pools["/Common/icap_pool_b"] = &Pool{Name: "/Common/icap_pool_b", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.66.15.22", Addr: ap("127.66.15.22:1344")}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.66.15.1:80")
	for _, tc := range []struct {
		name, req string
		body      string
		toA, toB  int64
	}{
		{"the profile's", "GET /a HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n", "member X-Scan=by-a body=", 1, 0},
		{"selected", "GET /b HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n", "member X-Scan=by-b body=", 0, 1},
		{"not carried over", "GET /a2 HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n", "member X-Scan=by-a body=", 1, 0},
		{"state", "GET /state HTTP/1.1\r\nHost: a\r\n\r\n", "/Common/ivs_a 0 0", 0, 0},
		{"unknown virtual", "GET /unknown HTTP/1.1\r\nHost: a\r\n\r\n", `/Common/ivs_a ADAPT::select: "nosuch" is not an internal virtual server with an icap profile`, 0, 0},
		{"unknown property", "GET /prop HTTP/1.1\r\nHost: a\r\n\r\n", `ADAPT::allow: "http_v2" is not a property (http_v1.0)`, 0, 0},
		{"HTTP/1.0 allowed", "GET /old HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nX-Scan: raw\r\n\r\n", "member X-Scan=by-a body=", 1, 0},
		{"HTTP/1.0 not allowed", "GET /new HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nX-Scan: raw\r\n\r\n", "member X-Scan=raw body=", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra, rb := a.Stats.ReqMod.Load(), b.Stats.ReqMod.Load()
			r, body, err := c.do(tc.req)
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != 200 || body != tc.body {
				t.Fatalf("%d %q, want %q (log %s)", r.StatusCode, body, tc.body, lg)
			}
			if x, y := a.Stats.ReqMod.Load()-ra, b.Stats.ReqMod.Load()-rb; x != tc.toA || y != tc.toB {
				t.Fatalf("%d REQMOD to A and %d to B, want %d and %d", x, y, tc.toA, tc.toB)
			}
		})
	}
}

// TestAdaptKeepAliveOptions: through a real virtual, exchanges share
// one ICAP connection and one OPTIONS; the server's Preview is used
// when the profile leaves it to the server, and an extension it lists
// in Transfer-Ignore is not sent (and passes unmodified).
func TestAdaptKeepAliveOptions(t *testing.T) {
	startEchoMember(t, "127.66.15.12:80")
	srv := icapListen(t, "127.66.15.23:1344", icaptest.Config{Header: "X-Scan", Value: "clean", Preview: 8, Ignore: "jpg, png"})
	ad := adapt(mblb.AdaptReset, 0)
	ad.PreviewSize, ad.Service.ServerPreview = 1024, 1024 // preview-length 0: the server's
	ad.Service.Client = &icap.Client{}                    // OPTIONS learnt afresh on each run
	p, lg := newPlane(t)
	mustApply(t, p, adaptConfig(t, "127.66.15.2:80", "127.66.15.12:80", ad, nil, "127.66.15.23:1344"))
	c := dialHTTPVS(t, "127.66.15.2:80")
	long := strings.Repeat("z", 64)
	for _, tc := range []struct {
		path            string
		want            string
		reqmod, preview int64
		counted         string
	}{
		{"/one", "member X-Scan=clean body=" + long, 1, 1, "modified"},
		{"/two", "member X-Scan=clean body=" + long, 1, 1, "modified"},
		{"/pic.JPG", "member X-Scan=raw body=" + long, 0, 0, "unmodified"},
		{"/three?x=a.jpg", "member X-Scan=clean body=" + long, 1, 1, "modified"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rq, pv := srv.Stats.ReqMod.Load(), srv.Stats.Previews.Load()
			was := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			r, body, err := c.do(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\nContent-Length: %d\r\n\r\n%s", tc.path, len(long), long))
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != 200 || body != tc.want {
				t.Fatalf("%d %q, want %q", r.StatusCode, body, tc.want)
			}
			if x, y := srv.Stats.ReqMod.Load()-rq, srv.Stats.Previews.Load()-pv; x != tc.reqmod || y != tc.preview {
				t.Fatalf("%d REQMOD, %d previews; want %d, %d", x, y, tc.reqmod, tc.preview)
			}
			now := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			if got := adaptCounted(was, now); got != tc.counted {
				t.Fatalf("counted as %q, want %q", got, tc.counted)
			}
		})
	}
	if n, o := srv.Stats.Conns.Load(), srv.Stats.Options.Load(); n != 1 || o != 1 {
		t.Fatalf("%d connections and %d OPTIONS to the ICAP server, want 1 and 1", n, o)
	}
}
