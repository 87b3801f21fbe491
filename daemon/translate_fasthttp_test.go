package daemon

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestFastHTTPTranslated: a fasthttp virtual runs on the HTTP path with
// the profile's own pool (max-reuse 0 is no limit), its message settings
// and its idle timeout; the ntlm profile turns the binding on for an
// http virtual with one-connect only.
func TestFastHTTPTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.121.3.11:80 }",
		`create ltm profile fasthttp fh connpool-max-size 7 connpool-max-reuse 3 connpool-idle-timeout-override 9 insert-xforwarded-for enabled header-insert "X-A: b" max-header-size 4096 max-requests 5 force-http-10-response enabled idle-timeout 60`,
		"create ltm virtual v_fh destination 127.121.3.1:80 pool p profiles replace-all-with { fh }",
		"create ltm virtual v_builtin destination 127.121.3.2:80 pool p profiles replace-all-with { fasthttp }",
		"create ltm virtual v_ntlm destination 127.121.3.3:80 pool p profiles replace-all-with { tcp http oneconnect ntlm }",
		"create ltm virtual v_http destination 127.121.3.4:80 pool p profiles replace-all-with { tcp http oneconnect }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "does not act on") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	for _, c := range []struct {
		name                        string
		size, reuse, maxHdr, maxReq int
		idleOverride, idle          time.Duration
		xff, h10                    bool
		insert                      string
	}{
		{"/Common/v_fh", 7, 3, 4096, 5, 9 * time.Second, 60 * time.Second, true, true, "X-A: b\r\n"},
		{"/Common/v_builtin", 2048, math.MaxInt32, 32768, 0, 0, 300 * time.Second, false, false, ""},
	} {
		v := dc.Virtuals[c.name]
		if v == nil || v.MBLB == nil || v.MBLB.OneConnect == nil {
			t.Fatalf("%s: %+v", c.name, v)
		}
		oc, h := v.MBLB.OneConnect, v.MBLB.Request.HTTP
		if oc.MaxSize != c.size || oc.MaxReuse != c.reuse || oc.IdleTimeoutOverride != c.idleOverride {
			t.Errorf("%s: pool %+v", c.name, oc)
		}
		if h.MaxHeaderSize != c.maxHdr || h.MaxRequests != c.maxReq || h.InsertXFF != c.xff || h.ForceHTTP10 != c.h10 || string(h.HeaderInsert) != c.insert || h.NTLM {
			t.Errorf("%s: http %+v", c.name, h)
		}
		if v.IdleTimeout != c.idle {
			t.Errorf("%s: idle %v, want %v", c.name, v.IdleTimeout, c.idle)
		}
	}
	if !dc.Virtuals["/Common/v_ntlm"].MBLB.Request.HTTP.NTLM || dc.Virtuals["/Common/v_http"].MBLB.Request.HTTP.NTLM {
		t.Errorf("ntlm: %v, without: %v", dc.Virtuals["/Common/v_ntlm"].MBLB.Request.HTTP.NTLM, dc.Virtuals["/Common/v_http"].MBLB.Request.HTTP.NTLM)
	}
}

// TestFastHTTPRefused: fasthttp beside tcp, http, one-connect or ntlm,
// or on UDP, and ntlm without http or one-connect, are refused with the
// reason, and nothing is changed.
func TestFastHTTPRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.121.3.11:80 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct{ profiles, extra, want string }{
		{"tcp fasthttp", "", "cannot be used with tcp profile /Common/tcp"},
		{"fasthttp http", "", "cannot be used with http profile /Common/http"},
		{"fasthttp oneconnect", "", "cannot be used with one-connect profile /Common/oneconnect"},
		{"fasthttp ntlm", "", "cannot be used with ntlm profile /Common/ntlm"},
		{"fasthttp", "ip-protocol udp", "requires ip-protocol tcp"},
		{"tcp http ntlm", "", "(ntlm) requires an http profile and a one-connect profile"},
		{"tcp oneconnect ntlm", "", "(ntlm) requires an http profile and a one-connect profile"},
	} {
		cmd := "create ltm virtual v destination 127.121.3.5:80 " + c.extra + " pool p profiles replace-all-with { " + c.profiles + " }"
		if _, err := run(t, s, cmd); !strings.Contains(err, c.want) {
			t.Errorf("%s: error %q, want %q", c.profiles, err, c.want)
		}
		if out, _ := run(t, s, "list ltm virtual v"); strings.Contains(out, "ltm virtual v") {
			t.Errorf("%s: the virtual was created", c.profiles)
		}
	}
}
