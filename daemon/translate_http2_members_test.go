package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/objects"
)

// TestHTTP2ServerSideTranslated: an http2 profile on the server side
// (context serverside, or all with the httprouter profile) makes the
// virtual speak HTTP/2 to its members; `http2 { }` without httprouter
// stays the client side's only; what BIG-IP's HTTP/2 full proxy refuses
// is refused.
func TestHTTP2ServerSideTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool p members add { 127.47.2.11:80 }",
		"create ltm profile http2 h2_members concurrent-streams-per-connection 32 connection-idle-timeout 60",
		"create ltm profile http2 h2_clients activation-modes replace-all-with { always }",
		"create ltm virtual v_both destination 127.47.2.1:80 pool p profiles replace-all-with { tcp { } http { } httprouter { } h2_clients { context clientside } h2_members { context serverside } }",
		"create ltm virtual v_all destination 127.47.2.2:80 pool p profiles replace-all-with { tcp { } http { } httprouter { } h2_clients { } }",
		"create ltm virtual v_server destination 127.47.2.3:80 pool p profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } }",
		"create ltm virtual v_client destination 127.47.2.4:80 pool p profiles replace-all-with { tcp { } http { } h2_clients { } }",
	)
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	both := dc.Virtuals["/Common/v_both"]
	if both.HTTP2 == nil || both.HTTP2.Profile != "/Common/h2_clients" {
		t.Errorf("v_both client side: %+v", both.HTTP2)
	}
	if m := both.MBLB.MemberHTTP2; m == nil || m.Profile != "/Common/h2_members" || m.MaxConcurrentStreams != 32 ||
		m.IdleTimeout != 60*time.Second || m.Stats == nil {
		t.Errorf("v_both server side: %+v", m)
	}
	all := dc.Virtuals["/Common/v_all"]
	if all.HTTP2 == nil || all.MBLB.MemberHTTP2 == nil || all.MBLB.MemberHTTP2.Profile != "/Common/h2_clients" {
		t.Errorf("v_all: client %+v server %+v", all.HTTP2, all.MBLB.MemberHTTP2)
	}
	if sv := dc.Virtuals["/Common/v_server"]; sv.HTTP2 != nil || sv.MBLB.MemberHTTP2 == nil {
		t.Errorf("v_server: client %+v server %+v", sv.HTTP2, sv.MBLB.MemberHTTP2)
	}
	if cl := dc.Virtuals["/Common/v_client"]; cl.HTTP2 == nil || cl.MBLB.MemberHTTP2 != nil {
		t.Errorf("v_client: client %+v server %+v (no httprouter: the client side only)", cl.HTTP2, cl.MBLB.MemberHTTP2)
	}

	for _, c := range []struct{ cmd, err string }{
		{"modify ltm virtual v_server profiles replace-all-with { tcp { } http { } h2_members { context serverside } }",
			"requires an httprouter profile on the virtual server (/Common/v_server)"},
		{"modify ltm virtual v_server profiles replace-all-with { tcp { } httprouter { } }",
			"profile httprouter requires an http profile"},
		{"modify ltm virtual v_server profiles replace-all-with { tcp { } http { } oneconnect { } httprouter { } h2_members { context serverside } }",
			"cannot be used with a one-connect profile"},
		{"modify ltm virtual v_server profiles replace-all-with { tcp { } http { } httprouter { } h2_members { context serverside } h2_clients { context serverside } }",
			"two http2 profiles on the server side"},
		{"modify ltm virtual v_server persist replace-all-with { hash { default yes } }",
			"cannot be used with hash persistence"},
	} {
		t.Run(c.cmd, func(t *testing.T) {
			before := e.Config()
			if _, err := run(t, s, c.cmd); err != "" && !strings.Contains(err, c.err) {
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
