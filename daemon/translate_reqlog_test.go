package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
)

// TestRequestLogTranslated: a request-log profile reaches the virtual's
// HTTP engine with the templates of the sides it enables; an enabled
// side without a template or a pool, a bad protocol, and the profile
// without http are refused, and a variable openltm does not know is
// warned of.
func TestRequestLogTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.3.11:80 }",
		"create ltm pool logs members add { 127.47.3.50:514 }",
		`create ltm profile request-log rl_both request-logging enabled request-log-pool logs request-log-template "$CLIENT_IP $HTTP_REQUEST" response-logging enabled response-log-pool logs response-log-protocol mds-tcp response-log-template "$HTTP_STATCODE $WAM_APPLICATION_NAME"`,
		"create ltm virtual v_rl destination 127.47.3.1:80 pool p profiles replace-all-with { tcp { } http { } rl_both { } }",
		"create ltm virtual v_plain destination 127.47.3.2:80 pool p profiles replace-all-with { tcp { } http { } request-log { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, notes := Translate(e.schema, e.Config())
	if len(notes) != 1 || !strings.Contains(notes[0], "$WAM_APPLICATION_NAME is not a variable openltm knows") {
		t.Fatalf("notes %v", notes)
	}
	rl := dc.Virtuals["/Common/v_rl"].MBLB.Request.HTTP.RequestLog
	if rl == nil || rl.Request == nil || rl.Response == nil || rl.VirtualName != "/Common/v_rl" || rl.PoolName != "/Common/p" {
		t.Fatalf("v_rl request log %+v", rl)
	}
	if len(rl.Response.Unknown) != 1 {
		t.Errorf("unknown names %q", rl.Response.Unknown)
	}
	// The built-in profile logs nothing: both sides disabled.
	if rl := dc.Virtuals["/Common/v_plain"].MBLB.Request.HTTP.RequestLog; rl == nil || rl.Request != nil || rl.Response != nil {
		t.Errorf("v_plain request log %+v", rl)
	}
	for _, c := range []struct{ cmd, err string }{
		{"modify ltm profile request-log rl_both request-log-template none", "request-logging is enabled but request-log-template has no template"},
		{"modify ltm profile request-log rl_both response-log-pool none", "response-logging is enabled but response-log-pool names no pool"},
		{"modify ltm profile request-log rl_both request-log-protocol mds-sctp", `request-log-protocol "mds-sctp" is not mds-udp or mds-tcp`},
		{"create ltm virtual v_tcp destination 127.47.3.3:80 pool p profiles replace-all-with { tcp { } rl_both { } }", "profile /Common/rl_both (request-log) requires an http profile"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			before := e.Config()
			if _, err := run(t, s, c.cmd); err != "" {
				t.Fatal(err)
			}
			_, skipped := Translate(e.schema, e.Config())
			if !strings.Contains(strings.Join(skipped, "\n"), c.err) {
				t.Errorf("skipped %q, want one with %q", skipped, c.err)
			}
			if _, err := e.Replace(context.Background(), "admin", "undo", CommitOptions{}, func(*objects.Config) (*objects.Config, error) { return before, nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRequestLogErrorsTranslated: the error settings reach the engine
// (an error template and sender per side, the proxy response and
// whether to close), only when their side logs; an error side enabled
// without its template or pool is refused. (Translate alone has no
// dataplane, so no senders: the dataplane's tests send.)
func TestRequestLogErrorsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.17.3.11:80 }",
		"create ltm pool logs members add { 127.17.3.50:514 }",
		"create ltm pool errs members add { 127.17.3.51:514 }",
		`create ltm profile request-log rl request-logging enabled request-log-pool logs request-log-template "$HTTP_REQUEST"`,
		"create ltm virtual v destination 127.17.3.1:80 pool p profiles replace-all-with { tcp { } http { } rl { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, c := range []struct {
		name, cmd string
		// err: the change is refused with it; otherwise check.
		err   string
		check func(rl *mblb.RequestLog) bool
	}{
		{name: "none set: no checks", cmd: "modify ltm profile request-log rl description plain",
			check: func(rl *mblb.RequestLog) bool {
				return rl.CheckRequest == nil && rl.RequestError == nil && rl.Respond == nil
			}},
		{name: "request errors logged", cmd: `modify ltm profile request-log rl log-request-logging-errors enabled request-log-error-pool errs request-log-error-protocol mds-tcp request-log-error-template "LOST $HTTP_REQUEST"`,
			check: func(rl *mblb.RequestLog) bool {
				return rl.RequestError != nil && rl.RequestError.Template != nil && rl.Respond == nil
			}},
		{name: "respond and close", cmd: `modify ltm profile request-log rl proxy-respond-on-logging-error enabled proxy-response "<h1>try later</h1>" proxy-close-on-error enabled`,
			check: func(rl *mblb.RequestLog) bool {
				r := string(rl.Respond)
				return rl.CloseOnError && strings.HasPrefix(r, "HTTP/1.1 502 ") &&
					strings.Contains(r, "Connection: close\r\n") && strings.HasSuffix(r, "\r\n\r\n<h1>try later</h1>")
			}},
		{name: "response errors need response logging", cmd: `modify ltm profile request-log rl log-response-logging-error enabled response-log-error-pool errs response-log-error-template "LOST $HTTP_STATUS"`,
			check: func(rl *mblb.RequestLog) bool { return rl.ResponseError == nil && rl.CheckResponse == nil }},
		{name: "response errors logged", cmd: `modify ltm profile request-log rl response-logging enabled response-log-pool logs response-log-template "$HTTP_STATUS"`,
			check: func(rl *mblb.RequestLog) bool { return rl.ResponseError != nil && rl.ResponseError.Template != nil }},
		{name: "error template missing", cmd: "modify ltm profile request-log rl request-log-error-template none",
			err: "log-request-logging-errors is enabled but request-log-error-template has no template"},
		{name: "error pool missing", cmd: "modify ltm profile request-log rl response-log-error-pool none",
			err: "log-response-logging-error is enabled but response-log-error-pool names no pool"},
		{name: "error protocol bad", cmd: "modify ltm profile request-log rl request-log-error-protocol mds-sctp",
			err: `request-log-error-protocol "mds-sctp" is not mds-udp or mds-tcp`},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.Config()
			if _, err := run(t, s, c.cmd); err != "" {
				t.Fatal(err)
			}
			dc, skipped := Translate(e.schema, e.Config())
			if c.err != "" {
				if !strings.Contains(strings.Join(skipped, "\n"), c.err) {
					t.Errorf("skipped %q, want one with %q", skipped, c.err)
				}
				if _, err := e.Replace(context.Background(), "admin", "undo", CommitOptions{}, func(*objects.Config) (*objects.Config, error) { return before, nil }); err != nil {
					t.Fatal(err)
				}
				return
			}
			if rl := dc.Virtuals["/Common/v"].MBLB.Request.HTTP.RequestLog; rl == nil || !c.check(rl) {
				t.Errorf("request log %+v (skipped %q)", rl, skipped)
			}
		})
	}
}
