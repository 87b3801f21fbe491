package dataplane

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAdaptContexts: ADAPT::context_create chains two ICAP services on
// one request, each exchange followed by its ADAPT_REQUEST_RESULT with
// ADAPT::context_current naming it; the contexts last for the
// connection, one created in ADAPT_REQUEST_RESULT runs after the one
// whose result it was, a disabled one is skipped, and
// ADAPT::context_delete_all gives the profile's context back. A
// response side's context runs RESPMOD through the service it selects
// in the profile's place.
func TestAdaptContexts(t *testing.T) {
	startEchoMember(t, "127.163.1.11:80")
	a := icapListen(t, "127.163.1.21:1344", icaptest.Config{Header: "X-Scan", Value: "by-a"})
	b := icapListen(t, "127.163.1.22:1344", icaptest.Config{Header: "X-Echo-Scan", Value: "by-b"})
	rule := `when HTTP_REQUEST {
	switch -glob [HTTP::uri] {
		"/chain" {
			ADAPT::context_delete_all
			set c1 [ADAPT::context_create first]
			ADAPT::select $c1 ivs_a
			set c2 [ADAPT::context_create second]
			ADAPT::select $c2 ivs_b
		}
		"/grow" {
			ADAPT::context_delete_all
			set c1 [ADAPT::context_create first]
		}
		"/off" {
			ADAPT::context_delete_all
			set c1 [ADAPT::context_create first]
			ADAPT::enable $c1 0
			set c2 [ADAPT::context_create second]
			ADAPT::select $c2 ivs_b
		}
		"/static" { ADAPT::context_delete_all }
		"/state" {
			set s [ADAPT::context_static]
			HTTP::respond 200 content "[ADAPT::context_current] $s [ADAPT::context_name $s] [ADAPT::context_static response]"
		}
		"/bad" {
			if {[catch {ADAPT::select adapt_ctx_999 ivs_b} e]} { HTTP::respond 200 content $e }
		}
		"/resp" {
			ADAPT::context_delete_all
			set r [ADAPT::context_create response scan]
			ADAPT::select $r ivs_a
		}
	}
}
when ADAPT_REQUEST_RESULT {
	set cur [ADAPT::context_current]
	HTTP::header replace X-Result "[HTTP::header X-Result]<[ADAPT::context_name $cur]=[ADAPT::result]>"
	if {[HTTP::uri] eq "/grow" && [ADAPT::context_name $cur] eq "first"} {
		set c3 [ADAPT::context_create third]
		ADAPT::select $c3 ivs_b
	}
}
when ADAPT_RESPONSE_RESULT {
	HTTP::header insert X-Resp-Result "[ADAPT::context_name [ADAPT::context_current]]=[ADAPT::result]"
}`
	uri := "icap://${SERVER_IP}:${SERVER_PORT}/av"
	targets := map[string]*mblb.AdaptTarget{
		"/Common/ivs_a": {Internal: "/Common/ivs_a", Pool: "/Common/icap_pool", Service: icap.Service{URI: uri}},
		"/Common/ivs_b": {Internal: "/Common/ivs_b", Pool: "/Common/icap_pool_b", Service: icap.Service{URI: uri}},
	}
	targets["ivs_a"], targets["ivs_b"] = targets["/Common/ivs_a"], targets["/Common/ivs_b"]
	ad := adapt(mblb.AdaptReset, 0)
	ad.Internal, ad.Targets = "/Common/ivs_a", targets
	rd := adapt(mblb.AdaptIgnore, 0)
	rd.Profile, rd.Internal, rd.Pool, rd.Targets = "/Common/rav", "/Common/ivs_b", "/Common/icap_pool_b", targets
	p, lg := newPlane(t)
	cfg := adaptConfig(t, "127.163.1.1:80", "127.163.1.11:80", ad, rd, "127.163.1.21:1344")
	cfg.Pools["/Common/icap_pool_b"] = &Pool{Name: "/Common/icap_pool_b", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.163.1.22", Addr: ap("127.163.1.22:1344")}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.163.1.1:80")
	const hdrs = "Host: a\r\nX-Scan: raw\r\nX-Echo-Scan: raw\r\n\r\n"
	for _, tc := range []struct {
		name, req      string
		scan, body     string // the response's X-Scan (B's mark, echoed) and body
		reqA, reqB     int64  // REQMOD to A and to B
		respA, respB   int64  // RESPMOD to A and to B
		respResult     string
		bodyIsExactly  bool
		skipRespChecks bool
	}{
		{name: "static", req: "GET /static HTTP/1.1\r\n" + hdrs, scan: "raw", body: "member X-Scan=by-a body= X-Result=</Common/av=modify>", reqA: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "two contexts chained", req: "GET /chain HTTP/1.1\r\n" + hdrs, scan: "by-b", body: "member X-Scan=by-a body= X-Result=<first=modify><second=modify>", reqA: 1, reqB: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "the chain lasts for the connection", req: "GET /again HTTP/1.1\r\n" + hdrs, scan: "by-b", body: "member X-Scan=by-a body= X-Result=<first=modify><second=modify>", reqA: 1, reqB: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "created in ADAPT_REQUEST_RESULT", req: "GET /grow HTTP/1.1\r\n" + hdrs, scan: "by-b", body: "member X-Scan=by-a body= X-Result=<first=modify><third=modify>", reqA: 1, reqB: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "a disabled context is skipped", req: "GET /off HTTP/1.1\r\n" + hdrs, scan: "by-b", body: "member X-Scan=raw body= X-Result=<second=modify>", reqB: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "delete_all: the profile's again", req: "GET /static HTTP/1.1\r\n" + hdrs, scan: "raw", body: "member X-Scan=by-a body= X-Result=</Common/av=modify>", reqA: 1, respB: 1, respResult: "/Common/rav=bypass"},
		{name: "handles", req: "GET /state HTTP/1.1\r\nHost: a\r\n\r\n", body: "adapt_ctx_request_static adapt_ctx_request_static /Common/av adapt_ctx_response_static", bodyIsExactly: true, skipRespChecks: true},
		{name: "unknown handle", req: "GET /bad HTTP/1.1\r\nHost: a\r\n\r\n", body: `ADAPT::select: no adaptation context "adapt_ctx_999" on this connection`, bodyIsExactly: true, skipRespChecks: true},
		{name: "response context", req: "GET /resp HTTP/1.1\r\n" + hdrs, scan: "by-a", body: "member X-Scan=by-a body= X-Result=</Common/av=modify>", reqA: 1, respA: 1, respResult: "scan=modify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra, rb := a.Stats.ReqMod.Load(), b.Stats.ReqMod.Load()
			pa, pb := a.Stats.RespMod.Load(), b.Stats.RespMod.Load()
			r, body, err := c.do(tc.req)
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != 200 || tc.bodyIsExactly && body != tc.body || !tc.bodyIsExactly && !strings.HasPrefix(body, tc.body) {
				t.Fatalf("%d %q, want %q (log %s)", r.StatusCode, body, tc.body, lg)
			}
			if tc.skipRespChecks {
				return
			}
			if got := r.Header.Get("X-Scan"); got != tc.scan {
				t.Fatalf("X-Scan %q, want %q", got, tc.scan)
			}
			if got := r.Header.Get("X-Resp-Result"); got != tc.respResult {
				t.Fatalf("X-Resp-Result %q, want %q", got, tc.respResult)
			}
			if x, y := a.Stats.ReqMod.Load()-ra, b.Stats.ReqMod.Load()-rb; x != tc.reqA || y != tc.reqB {
				t.Fatalf("%d REQMOD to A and %d to B, want %d and %d", x, y, tc.reqA, tc.reqB)
			}
			if x, y := a.Stats.RespMod.Load()-pa, b.Stats.RespMod.Load()-pb; x != tc.respA || y != tc.respB {
				t.Fatalf("%d RESPMOD to A and %d to B, want %d and %d", x, y, tc.respA, tc.respB)
			}
		})
	}
	t.Run("curl", func(t *testing.T) {
		curl, err := exec.LookPath("curl")
		if err != nil {
			t.Skip("curl is not installed")
		}
		out, err := exec.Command(curl, "-sS", "--max-time", "10", "-D", "-", "-H", "X-Scan: raw", "-H", "X-Echo-Scan: raw",
			"http://127.163.1.1/chain").CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		s := string(out)
		for _, want := range []string{"X-Scan: by-b", "member X-Scan=by-a", "<first=modify><second=modify>"} {
			if !strings.Contains(s, want) {
				t.Fatalf("curl got:\n%s\nwant %q (log %s)", s, want, lg)
			}
		}
	})
}
