package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// lbSelectedRule sends the request elsewhere in LB_SELECTED by its path,
// and tags it with what LB::server names there (the last run's: the
// request's final choice).
const lbSelectedRule = `
when HTTP_REQUEST { set to [HTTP::path] }
when LB_SELECTED {
    log local0. "$to [LB::server pool] [LB::server addr] [LB::server port]"
    HTTP::header replace X-Tag "[LB::server pool] [LB::server addr]"
    switch -- $to {
        "/pool" { pool p2 }
        "/member" { pool p2 member 127.69.44.12 80 }
        "/node" { node 127.69.44.13 80 }
        "/reselect" { LB::reselect pool p2 }
        "/reselect-node" { LB::reselect node 127.69.44.13 }
    }
}`

func lbSelectedConfig(t *testing.T, vs string, oc bool) (*Config, *ruleLog) {
	t.Helper()
	m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	if oc {
		m.OneConnect = &OneConnect{MaxSize: 4}
	}
	cfg := mblbConfig(vs, m, "127.69.44.11:80")
	withPool(cfg, "/Common/p2", "127.69.44.12:80")
	rs, lg := compileRules(t, lbSelectedRule)
	cfg.Virtuals["/Common/vs"].Rules = rs
	return cfg, lg
}

// TestHTTPLBSelectedDecisions: on an http virtual, a pool, member or
// node decision (or LB::reselect) in LB_SELECTED sends the request to
// the new target instead of the member chosen, as BIG-IP does;
// LB_SELECTED runs again for the new choice and LB::server names it
// there. The member passed over counts no request. Before, the message
// engine refused the decision and reset the client.
func TestHTTPLBSelectedDecisions(t *testing.T) {
	startHTTPServer(t, "127.69.44.11:80", "WEB")
	startHTTPServer(t, "127.69.44.12:80", "API")
	startHTTPServer(t, "127.69.44.13:80", "NODE")
	for _, tc := range []struct {
		name, vs string
		oc       bool
	}{{"oneconnect", "127.69.44.1:80", true}, {"per-connection", "127.69.44.2:80", false}} {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := newPlane(t)
			cfg, lg := lbSelectedConfig(t, tc.vs, tc.oc)
			lg.showOnFailure(t)
			mustApply(t, p, cfg)
			cases := []struct{ path, body, log string }{
				{"/keep", "WEB host=h xff= tag=/Common/pool 127.69.44.11 /keep",
					"/keep /Common/pool 127.69.44.11 80"},
				{"/pool", "API host=h xff= tag=/Common/p2 127.69.44.12 /pool",
					"/pool /Common/pool 127.69.44.11 80|/pool /Common/p2 127.69.44.12 80"},
				{"/member", "API host=h xff= tag=/Common/p2 127.69.44.12 /member",
					"/member /Common/pool 127.69.44.11 80|/member /Common/p2 127.69.44.12 80"},
				{"/node", "NODE host=h xff= tag=127.69.44.13 /node",
					"/node /Common/pool 127.69.44.11 80|/node  127.69.44.13 80"},
				{"/reselect", "API host=h xff= tag=/Common/p2 127.69.44.12 /reselect",
					"/reselect /Common/pool 127.69.44.11 80|/reselect /Common/p2 127.69.44.12 80"},
				{"/reselect-node", "NODE host=h xff= tag=127.69.44.13 /reselect-node",
					"/reselect-node /Common/pool 127.69.44.11 80|/reselect-node  127.69.44.13 80"},
			}
			for _, c := range cases {
				// A connection per request: without OneConnect only a
				// connection's first request is balanced.
				h := dialHTTPVS(t, tc.vs)
				before := len(lg.Lines())
				_, body, err := h.do(httpReq("h", c.path))
				h.c.Close()
				if err != nil || body != c.body {
					t.Fatalf("%s: %q, %v; want %q\n%s", c.path, body, err, c.body, logs)
				}
				var got []string
				for _, l := range lg.Lines()[before:] {
					got = append(got, l[strings.LastIndex(l, ": ")+2:])
				}
				if g := strings.Join(got, "|"); g != c.log {
					t.Errorf("%s: LB_SELECTED runs %q, want %q", c.path, g, c.log)
				}
			}
			web := memberStat(t, p, "/Common/pool", "/Common/127.69.44.11:80")
			api := memberStat(t, p, "/Common/p2", "/Common/127.69.44.12:80")
			if web.TotRequests != 1 || api.TotRequests != 3 {
				t.Errorf("requests: WEB %d, API %d; want 1 (/keep) and 3", web.TotRequests, api.TotRequests)
			}
			if ps, _ := p.Pool("/Common/pool"); ps.TotRequests != 1 {
				t.Errorf("the virtual's pool counts %d requests, want 1", ps.TotRequests)
			}
		})
	}
}

// TestHTTPLBSelectedPersist: a persistence record follows the member
// the request went to: LB_SELECTED's `pool p2` leaves a record in p2 for
// its member and none for the member first chosen; `node` leaves none
// (as the L4 path, which records only the member it connects to).
func TestHTTPLBSelectedPersist(t *testing.T) {
	startHTTPServer(t, "127.69.44.21:80", "WEB")
	startHTTPServer(t, "127.69.44.22:80", "API")
	startHTTPServer(t, "127.69.44.23:80", "NODE")
	for _, tc := range []struct {
		name, vs, decision, body string
		want                     []string
	}{
		{"pool", "127.69.44.3:80", "pool p2", "API", []string{"/Common/p2 127.69.44.22:80"}},
		{"node", "127.69.44.4:80", "node 127.69.44.23 80", "NODE", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := newPlane(t)
			cfg := mblbConfig(tc.vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{MaxSize: 4}}, "127.69.44.21:80")
			withPool(cfg, "/Common/p2", "127.69.44.22:80")
			cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/source_addr", Method: PersistSourceAddr, Timeout: 180 * time.Second}
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when LB_SELECTED {
    if {[LB::server pool] eq "/Common/pool"} { `+tc.decision+` }
}`)
			lg.showOnFailure(t)
			mustApply(t, p, cfg)
			h := dialHTTPVS(t, tc.vs)
			for i := 0; i < 2; i++ {
				_, body, err := h.do(httpReq("h", "/x"))
				if err != nil || !strings.HasPrefix(body, tc.body+" ") {
					t.Fatalf("request %d: %q, %v; want %s\n%s", i, body, err, tc.body, logs)
				}
			}
			var got []string
			p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
				got = append(got, r.Pool+" "+r.Member.String())
				return true
			})
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("persistence records %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHTTPDecisionRefusedNamesEvent: a pool decision where an http
// virtual does not act on it (SERVER_CONNECTED) is the rule's error,
// which names the event and says where to make it on that kind.
func TestHTTPDecisionRefusedNamesEvent(t *testing.T) {
	startHTTPServer(t, "127.69.44.31:80", "WEB")
	p, logs := newPlane(t)
	cfg := mblbConfig("127.69.44.5:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.69.44.31:80")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when SERVER_CONNECTED { pool pool }`)
	mustApply(t, p, cfg)
	h := dialHTTPVS(t, "127.69.44.5:80")
	h.do(httpReq("h", "/x"))
	defer func() {
		if t.Failed() {
			t.Log(logs.String(), lg.Lines())
		}
	}()
	eventually(t, "the rule's error in the log", func() bool {
		all := strings.Join(lg.Lines(), "\n")
		return strings.Contains(all, "in SERVER_CONNECTED is not acted on") &&
			strings.Contains(all, "make it in HTTP_REQUEST (or LB_SELECTED, LB_FAILED) on an HTTP virtual")
	})
}

// TestMBLBLBSelectedNode: the same engine on a message-based virtual:
// `node` in LB_SELECTED sends each message to that node, and LB::server
// names it in the LB_SELECTED run for the new choice.
func TestMBLBLBSelectedNode(t *testing.T) {
	startServer(t, "127.69.45.11:9000", "S1")
	startServer(t, "127.69.45.12:9000", "N")
	p, logs := newPlane(t)
	cfg := mblbConfig("127.69.45.1:9000", &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}}, "127.69.45.11:9000")
	rs, lg := compileRules(t, `when LB_SELECTED {
    log local0. "[LB::server addr]"
    if {[LB::server addr] ne "127.69.45.12"} { node 127.69.45.12 9000 }
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	c := dialVS(t, "127.69.45.1:9000")
	for i := 0; i < 2; i++ {
		if got := c.mustAsk("hello"); got != "N Response" {
			t.Fatalf("message %d: %q, want the node's\n%s", i, got, logs)
		}
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.69.45.11:9000"); m.TotRequests != 0 {
		t.Errorf("the member passed over counts %d requests, want 0", m.TotRequests)
	}
	var got []string
	for _, l := range lg.Lines() {
		got = append(got, l[strings.LastIndex(l, ": ")+2:])
	}
	if len(got) < 2 || got[0] != "127.69.45.11" || got[1] != "127.69.45.12" {
		t.Errorf("LB_SELECTED runs %q, want the member then the node", got)
	}
}

// TestHTTPLBSelectedRoundsBounded: a rule that sends every choice
// elsewhere (back and forth between two pools) runs LB_SELECTED at most
// four times per request (three new choices), then its last choice
// stands, as on the L4 path; only that member counts the request.
func TestHTTPLBSelectedRoundsBounded(t *testing.T) {
	startHTTPServer(t, "127.69.44.41:80", "WEB")
	startHTTPServer(t, "127.69.44.42:80", "API")
	p, logs := newPlane(t)
	cfg := mblbConfig("127.69.44.6:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{MaxSize: 4}}, "127.69.44.41:80")
	withPool(cfg, "/Common/p2", "127.69.44.42:80")
	rs, lg := compileRules(t, `when LB_SELECTED {
    log local0. "[LB::server pool]"
    if {[LB::server pool] eq "/Common/pool"} { pool p2 } else { pool pool }
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	h := dialHTTPVS(t, "127.69.44.6:80")
	_, body, err := h.do(httpReq("h", "/x"))
	if err != nil || !strings.HasPrefix(body, "API ") {
		t.Fatalf("%q, %v; want API (the fourth run's member)\n%s", body, err, logs)
	}
	if n := len(lg.Lines()); n != 4 {
		t.Errorf("LB_SELECTED ran %d times, want 4", n)
	}
	web := memberStat(t, p, "/Common/pool", "/Common/127.69.44.41:80")
	api := memberStat(t, p, "/Common/p2", "/Common/127.69.44.42:80")
	if web.TotRequests != 0 || api.TotRequests != 1 {
		t.Errorf("requests: WEB %d, API %d; want 0 and 1", web.TotRequests, api.TotRequests)
	}
}
