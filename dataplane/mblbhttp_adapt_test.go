package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
	"github.com/openltm/openltm/dataplane/mblb"
)

// startEchoMember is an HTTP member answering with the X-Scan header
// and the body it received, so a test sees what adaptation passed on.
func startEchoMember(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/chunked" {
			// Two flushed parts: the answer goes chunked.
			if v := r.Header.Get("X-Echo-Scan"); v != "" {
				w.Header().Set("X-Scan", v)
			}
			io.WriteString(w, "part one, ")
			w.(http.Flusher).Flush()
			io.WriteString(w, "part two")
			return
		}
		if v := r.Header.Get("X-Echo-Scan"); v != "" {
			w.Header().Set("X-Scan", v)
		}
		fmt.Fprintf(w, "member X-Scan=%s body=%s", r.Header.Get("X-Scan"), b)
		for _, f := range []string{"X-Result", "X-Headers-Event"} {
			if v := r.Header.Get(f); v != "" {
				fmt.Fprintf(w, " %s=%s", f, v)
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// adaptConfig is an HTTP virtual at vs over the member, with the ICAP
// servers in pool /Common/icap_pool.
func adaptConfig(t *testing.T, vs, member string, req, resp *mblb.Adapt, icaps ...string) *Config {
	cfg := l7Config(t, vs, false, mblb.HTTPOptions{RequestAdapt: req, ResponseAdapt: resp}, "", member)
	q := &Pool{Name: "/Common/icap_pool", LBMode: RoundRobin}
	for _, a := range icaps {
		q.Members = append(q.Members, Member{Node: "/Common/" + ap(a).Addr().String(), Addr: ap(a)})
	}
	cfg.Pools[q.Name] = q
	return cfg
}

func adapt(down mblb.AdaptDown, preview int) *mblb.Adapt {
	return &mblb.Adapt{Profile: "/Common/av", Pool: "/Common/icap_pool", Down: down,
		Service: &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", Preview: preview, Timeout: 5 * time.Second}}
}

// icapListen runs an ICAP server of the tests (icaptest) on addr until
// the test ends.
func icapListen(t *testing.T, addr string, cfg icaptest.Config) *icaptest.Server {
	t.Helper()
	s, err := icaptest.Listen(addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRequestAdapt: requests through REQMOD on a real HTTP virtual: the
// member sees the ICAP server's changes, a blocked request gets its
// page, a clean one passes as it was (204), previews included, and
// HTTP/1.0 passes unadapted without allow-http-10.
func TestRequestAdapt(t *testing.T) {
	startEchoMember(t, "127.64.15.11:80")
	srv := icapListen(t, "127.64.15.21:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean"})
	p, lg := newPlane(t)
	mustApply(t, p, adaptConfig(t, "127.64.15.1:80", "127.64.15.11:80", adapt(mblb.AdaptReset, 8), nil, "127.64.15.21:1344"))
	c := dialHTTPVS(t, "127.64.15.1:80")
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name, req  string
		status     int
		body       string
		icapBefore int64  // REQMOD exchanges the request makes
		counted    string // where show ltm profile request-adapt counts it
	}{
		{"modified header", "GET /a HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n", 200, "member X-Scan=clean body=", 1, "modified"},
		{"unchanged (204)", "GET /b HTTP/1.1\r\nHost: a\r\n\r\n", 200, "member X-Scan= body=", 1, "unmodified"},
		{"body past the preview", "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n" + long, 200, "member X-Scan= body=" + long, 1, "unmodified"},
		{"chunked body, modified", "POST /d HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 200, "member X-Scan=clean body=hello", 1, "modified"},
		{"blocked in the preview", "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nEICAR....", 403, "blocked by the ICAP service", 1, "answered"},
		{"blocked after 100 Continue", "POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 105\r\n\r\n" + long + "EICAR", 403, "blocked by the ICAP service", 1, "answered"},
		{"Expect: 100-continue", "POST /h HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nbody", 200, "member X-Scan=clean body=body", 1, "modified"},
		{"HTTP/1.0 not adapted", "GET /g HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\nX-Scan: raw\r\n\r\n", 200, "member X-Scan=raw body=", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Stats.ReqMod.Load()
			was := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			r, body, err := c.do(tc.req)
			if err == nil && r.StatusCode == 100 {
				// The member's interim answer passes: the final one follows.
				if r, err = http.ReadResponse(c.br, nil); err == nil {
					var b []byte
					b, err = io.ReadAll(r.Body)
					body = string(b)
				}
			}
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != tc.status || !strings.Contains(body, tc.body) {
				t.Fatalf("%d %q, want %d %q", r.StatusCode, body, tc.status, tc.body)
			}
			if n := srv.Stats.ReqMod.Load() - before; n != tc.icapBefore {
				t.Fatalf("%d REQMOD, want %d", n, tc.icapBefore)
			}
			now := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt
			if got := adaptCounted(was, now); got != tc.counted {
				t.Fatalf("counted as %q (%+v to %+v), want %q", got, was, now, tc.counted)
			}
		})
	}
	if srv.Stats.Continues.Load() < 2 {
		t.Errorf("%d 100 Continue from the ICAP server, want the previews' two", srv.Stats.Continues.Load())
	}
}

// adaptCounted is the one outcome whose count went up from was to now,
// "" when none did, "several" when more than one.
func adaptCounted(was, now AdaptProfileStats) string {
	var out []string
	for _, c := range []struct {
		name     string
		was, now uint64
	}{{"unmodified", was.Unmodified, now.Unmodified}, {"modified", was.Modified, now.Modified},
		{"answered", was.Answered, now.Answered}, {"failed", was.Failed, now.Failed}} {
		if c.now == c.was+1 {
			out = append(out, c.name)
		} else if c.now != c.was {
			out = append(out, "several")
		}
	}
	if len(out) > 1 {
		return "several"
	}
	return strings.Join(out, "")
}

// TestResponseAdapt: member responses through RESPMOD, balanced over
// the ICAP pool round robin.
func TestResponseAdapt(t *testing.T) {
	startEchoMember(t, "127.64.15.12:80")
	var srvs []*icaptest.Server
	for _, a := range []string{"127.64.15.22:1344", "127.64.15.23:1344"} {
		s := icapListen(t, a, icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "checked"})
		srvs = append(srvs, s)
	}
	p, lg := newPlane(t)
	mustApply(t, p, adaptConfig(t, "127.64.15.2:80", "127.64.15.12:80", nil, adapt(mblb.AdaptIgnore, 0), "127.64.15.22:1344", "127.64.15.23:1344"))
	c := dialHTTPVS(t, "127.64.15.2:80")
	for _, tc := range []struct {
		name, req, scan string
		status          int
		body            string
	}{
		{"unchanged (204)", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "", 200, "member X-Scan= body="},
		{"response header rewritten", "GET / HTTP/1.1\r\nHost: a\r\nX-Echo-Scan: raw\r\n\r\n", "checked", 200, "member"},
		{"response blocked", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nEICAR", "", 403, "blocked by the ICAP service"},
		{"after a block, the next", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "", 200, "member"},
		{"chunked, unchanged", "GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n", "", 200, "part one, part two"},
		{"chunked, rewritten", "GET /chunked HTTP/1.1\r\nHost: a\r\nX-Echo-Scan: raw\r\n\r\n", "checked", 200, "part one, part two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, body, err := c.do(tc.req)
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != tc.status || !strings.Contains(body, tc.body) || r.Header.Get("X-Scan") != tc.scan {
				t.Fatalf("%d X-Scan=%q %q, want %d %q %q", r.StatusCode, r.Header.Get("X-Scan"), body, tc.status, tc.scan, tc.body)
			}
		})
	}
	if a, b := srvs[0].Stats.RespMod.Load(), srvs[1].Stats.RespMod.Load(); a != 3 || b != 3 {
		t.Errorf("RESPMOD per ICAP server %d and %d, want 3 and 3 (round robin)", a, b)
	}
	if st := p.ProfileStats(ProfileRespAdapt, "/Common/av", []string{"/Common/vs"}).Adapt; st != (AdaptProfileStats{Unmodified: 3, Modified: 3}) {
		t.Errorf("response-adapt stats %+v, want 3 unmodified and 3 modified (the blocking page replaces a response)", st)
	}
}

// TestAdaptServiceDown: no ICAP server answering, each
// service-down-action.
func TestAdaptServiceDown(t *testing.T) {
	startEchoMember(t, "127.64.15.13:80")
	for i, tc := range []struct {
		name     string
		down     mblb.AdaptDown
		answered bool
		icap     []string // the pool's members (none listening)
	}{
		{"ignore", mblb.AdaptIgnore, true, []string{"127.64.15.29:1344"}},
		{"ignore, empty pool", mblb.AdaptIgnore, true, nil},
		{"drop", mblb.AdaptDrop, false, []string{"127.64.15.29:1344"}},
		{"reset", mblb.AdaptReset, false, []string{"127.64.15.29:1344"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.64.15.%d:80", 3+i)
			p, lg := newPlane(t)
			mustApply(t, p, adaptConfig(t, vs, "127.64.15.13:80", adapt(tc.down, 0), nil, tc.icap...))
			c := dialHTTPVS(t, vs)
			r, body, err := c.do("GET / HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n")
			users := []string{"/Common/vs"}
			if st := p.ProfileStats(ProfileReqAdapt, "/Common/av", users).Adapt; st != (AdaptProfileStats{Failed: 1}) {
				t.Errorf("request-adapt stats %+v, want one failed exchange", st)
			}
			p.ResetProfileStats(ProfileReqAdapt, "/Common/av", users)
			if st := p.ProfileStats(ProfileReqAdapt, "/Common/av", users).Adapt; st != (AdaptProfileStats{}) {
				t.Errorf("request-adapt stats %+v after reset-stats, want none", st)
			}
			if tc.answered {
				if err != nil || r.StatusCode != 200 || body != "member X-Scan=raw body=" {
					t.Fatalf("%v %q (log %s)", err, body, lg)
				}
				return
			}
			if err == nil {
				t.Fatalf("answered %d %q, want the connection ended", r.StatusCode, body)
			}
			if !strings.Contains(lg.String(), "service-down-action") {
				t.Fatalf("log %s", lg)
			}
		})
	}
}

// TestAdaptRules: ADAPT::enable and ADAPT::service_down_action in
// HTTP_REQUEST decide for that request (and its answer) only.
func TestAdaptRules(t *testing.T) {
	startEchoMember(t, "127.64.15.14:80")
	srv := icapListen(t, "127.64.15.24:1344", icaptest.Config{Header: "X-Scan", Value: "clean"})
	rule := `when HTTP_REQUEST {
	switch -glob [HTTP::uri] {
		"/skip" { ADAPT::enable request false }
		"/noresp" { ADAPT::enable response 0 }
		"/state" { HTTP::respond 200 content "[ADAPT::enable request] [ADAPT::enable response] [ADAPT::service_down_action]" }
	}
}`
	p, lg := newPlane(t)
	cfg := adaptConfig(t, "127.64.15.10:80", "127.64.15.14:80", adapt(mblb.AdaptReset, 0), adapt(mblb.AdaptReset, 0), "127.64.15.24:1344")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.64.15.10:80")
	for _, tc := range []struct {
		path, body      string
		reqmod, respmod int64
	}{
		{"/skip", "member X-Scan=raw body=", 0, 1},
		{"/a", "member X-Scan=clean body=", 1, 1},
		{"/noresp", "member X-Scan=clean body=", 1, 0},
		{"/state", "1 1 reset", 0, 0},
		{"/b", "member X-Scan=clean body=", 1, 1},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rq, rs := srv.Stats.ReqMod.Load(), srv.Stats.RespMod.Load()
			r, body, err := c.do("GET " + tc.path + " HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n")
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != 200 || body != tc.body {
				t.Fatalf("%d %q, want %q", r.StatusCode, body, tc.body)
			}
			if a, b := srv.Stats.ReqMod.Load()-rq, srv.Stats.RespMod.Load()-rs; a != tc.reqmod || b != tc.respmod {
				t.Fatalf("%d REQMOD and %d RESPMOD, want %d and %d", a, b, tc.reqmod, tc.respmod)
			}
		})
	}
}

// TestAdaptRuleServiceDown: ADAPT::service_down_action overrides the
// profile's for one request.
func TestAdaptRuleServiceDown(t *testing.T) {
	startEchoMember(t, "127.64.15.15:80")
	p, lg := newPlane(t)
	cfg := adaptConfig(t, "127.64.15.16:80", "127.64.15.15:80", adapt(mblb.AdaptReset, 0), nil, "127.64.15.29:1344")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST { if {[HTTP::uri] eq "/ignore"} { ADAPT::service_down_action request ignore } }`)
	mustApply(t, p, cfg)
	for _, tc := range []struct {
		path     string
		answered bool
	}{{"/ignore", true}, {"/other", false}} {
		c := dialHTTPVS(t, "127.64.15.16:80")
		r, body, err := c.do("GET " + tc.path + " HTTP/1.1\r\nHost: a\r\n\r\n")
		if got := err == nil && r.StatusCode == 200 && strings.HasPrefix(body, "member"); got != tc.answered {
			t.Errorf("%s: answered %v, want %v (%v %q; log %s)", tc.path, got, tc.answered, err, body, lg)
		}
	}
}

// TestAdaptEvents: ADAPT_REQUEST_HEADERS after a modified request,
// ADAPT_REQUEST_RESULT and ADAPT_RESPONSE_RESULT after every exchange
// with ADAPT::result, their header edits and HTTP::respond.
func TestAdaptEvents(t *testing.T) {
	startEchoMember(t, "127.64.15.17:80")
	icapListen(t, "127.64.15.25:1344", icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "clean"})
	rule := `when ADAPT_REQUEST_HEADERS { HTTP::header insert X-Headers-Event [HTTP::header X-Scan] }
when ADAPT_REQUEST_RESULT {
	if {[ADAPT::result] eq "respond"} { HTTP::respond 451 content "held by rule" } else { HTTP::header insert X-Result [ADAPT::result] }
}
when ADAPT_RESPONSE_RESULT { HTTP::header insert X-Resp-Result [ADAPT::result] }`
	p, lg := newPlane(t)
	cfg := adaptConfig(t, "127.64.15.18:80", "127.64.15.17:80", adapt(mblb.AdaptReset, 0), adapt(mblb.AdaptReset, 0), "127.64.15.25:1344")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.64.15.18:80")
	for _, tc := range []struct {
		name, req  string
		status     int
		body, resp string
	}{
		{"modified", "GET / HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\n\r\n", 200, "member X-Scan=clean body= X-Result=modify X-Headers-Event=clean", "bypass"},
		{"bypass", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200, "member X-Scan= body= X-Result=bypass", "bypass"},
		{"response modified", "GET / HTTP/1.1\r\nHost: a\r\nX-Echo-Scan: raw\r\n\r\n", 200, "member X-Scan= body= X-Result=bypass", "modify"},
		{"respond replaced by the rule", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nEICAR", 451, "held by rule", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, body, err := c.do(tc.req)
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != tc.status || body != tc.body || r.Header.Get("X-Resp-Result") != tc.resp {
				t.Fatalf("%d %q X-Resp-Result=%q, want %d %q %q", r.StatusCode, body, r.Header.Get("X-Resp-Result"), tc.status, tc.body, tc.resp)
			}
		})
	}
}

// TestAdaptRuleTimeoutPreview: ADAPT::timeout and ADAPT::preview_size
// in HTTP_REQUEST change one request's exchange: a timeout shorter than
// the profile's gives up on an ICAP server that never answers (and
// service-down-action ignore lets the request through), and
// preview_size 0 sends the body without a preview.
func TestAdaptRuleTimeoutPreview(t *testing.T) {
	startEchoMember(t, "127.64.15.17:80")
	srv := icapListen(t, "127.64.15.25:1344", icaptest.Config{Header: "X-Scan", Value: "clean"})
	// An ICAP server that accepts and never answers.
	mute, err := net.Listen("tcp", "127.64.15.26:1344")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	defer func() {
		mute.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	rule := `when HTTP_REQUEST {
	switch -glob [HTTP::uri] {
		"/state" { HTTP::respond 200 content "[ADAPT::timeout] [ADAPT::preview_size] [ADAPT::timeout response]" }
		"/quick" { ADAPT::timeout request 100 }
		"/nopreview" { ADAPT::preview_size request 0 }
		"/set" { ADAPT::timeout 250 ; ADAPT::preview_size 4 ; HTTP::respond 200 content "[ADAPT::timeout request] [ADAPT::preview_size request]" }
	}
}`
	long := strings.Repeat("y", 50)
	for _, tc := range []struct {
		name, icap, path string
		body             string
		want             string
		previews         int64 // previews the ICAP server saw
		down             bool  // the exchange failed (service-down-action ignore)
	}{
		{"state", "127.64.15.25:1344", "/state", "", "0 8 0", 0, false}, // no response-adapt profile: 0
		{"set and read back", "127.64.15.25:1344", "/set", "", "250 4", 0, false},
		{"preview of the profile", "127.64.15.25:1344", "/p", long, "member X-Scan=clean body=" + long, 1, false},
		{"preview_size 0: none", "127.64.15.25:1344", "/nopreview", long, "member X-Scan=clean body=" + long, 0, false},
		{"timeout shortened, server mute", "127.64.15.26:1344", "/quick", long, "member X-Scan=raw body=" + long, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No timeout of the profile's: only the rule's ends the wait on
			// the mute server.
			a := adapt(mblb.AdaptIgnore, 8)
			a.Service.Timeout = 0
			a.PreviewSize, a.PreviewLength = 8, 1024
			p, lg := newPlane(t)
			cfg := adaptConfig(t, "127.64.15.7:80", "127.64.15.17:80", a, nil, tc.icap)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
			mustApply(t, p, cfg)
			c := dialHTTPVS(t, "127.64.15.7:80")
			before := srv.Stats.Previews.Load()
			r, body, err := c.do(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: a\r\nX-Scan: raw\r\nContent-Length: %d\r\n\r\n%s", tc.path, len(tc.body), tc.body))
			if err != nil {
				t.Fatalf("%v (log %s)", err, lg)
			}
			if r.StatusCode != 200 || body != tc.want {
				t.Fatalf("%d %q, want %q (log %s)", r.StatusCode, body, tc.want, lg)
			}
			if n := srv.Stats.Previews.Load() - before; n != tc.previews {
				t.Errorf("%d previews, want %d", n, tc.previews)
			}
			failed := p.ProfileStats(ProfileReqAdapt, "/Common/av", []string{"/Common/vs"}).Adapt.Failed
			if (failed == 1) != tc.down || !strings.Contains(lg.String(), "service-down-action") != !tc.down {
				t.Errorf("failed exchanges %d, want down %v (log %s)", failed, tc.down, lg)
			}
		})
	}
}
