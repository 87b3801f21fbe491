package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestSSLPersistenceTranslated: ssl persistence runs as the default
// persistence of a standard TCP virtual server, with its profile's
// timeout, with iRules too, and on a standard or http virtual ending TLS
// (the client-ssl session's name is the key); where openltm cannot read
// the hellos yet (http without client-ssl, fallback) the virtual server
// is kept, saying why.
func TestSSLPersistenceTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.47.2.11:443 }",
		"create ltm persistence ssl s_long defaults-from ssl timeout 900",
		"create ltm rule r { when CLIENT_ACCEPTED { log local0. hi } }",
		"create ltm virtual v_ok destination 127.47.2.1:443 pool p persist replace-all-with { s_long { default yes } }",
		"create ltm virtual v_http destination 127.47.2.2:443 pool p profiles replace-all-with { tcp http } persist replace-all-with { ssl { default yes } }",
		"create ltm virtual v_rule destination 127.47.2.3:443 pool p rules { r } persist replace-all-with { ssl { default yes } }",
		"create ltm virtual v_rdp destination 127.47.2.5:3389 pool p persist replace-all-with { msrdp { default yes } }",
		"create ltm persistence msrdp rdp_dir defaults-from msrdp has-session-dir yes",
		"create ltm virtual v_rdp_dir destination 127.47.2.7:3389 pool p persist replace-all-with { rdp_dir { default yes } }",
		"create ltm virtual v_rdp_rule destination 127.47.2.6:3389 pool p rules { r } persist replace-all-with { msrdp { default yes } }",
		"create ltm virtual v_cssl destination 127.28.2.1:443 pool p profiles replace-all-with { tcp clientssl } persist replace-all-with { ssl { default yes } }",
		"create ltm virtual v_cssl_http destination 127.28.2.2:443 pool p profiles replace-all-with { tcp http clientssl } persist replace-all-with { ssl { default yes } }",
		"create ltm virtual v_fb destination 127.47.2.4:443 pool p persist replace-all-with { source_addr { default yes } } fallback-persistence ssl",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v_ok"]
	if v == nil || v.Persist == nil || v.Persist.Method != dataplane.PersistSSL || v.Persist.Timeout.Seconds() != 900 {
		t.Fatalf("v_ok: %+v", v)
	}
	// A standard virtual ending TLS keys on the client-ssl session (the
	// engine's translation has its default certificate).
	tr := e.translate(e.Config())
	if v := tr.dc.Virtuals["/Common/v_cssl"]; v == nil || v.Persist == nil || v.Persist.Method != dataplane.PersistSSL || v.TLS == nil {
		t.Fatalf("v_cssl: %+v\n%q", v, tr.kept)
	}
	// So does an http virtual ending TLS (dataplane/internal/mblbvs).
	if v := tr.dc.Virtuals["/Common/v_cssl_http"]; v == nil || v.Persist == nil || v.Persist.Method != dataplane.PersistSSL || v.TLS == nil || v.MBLB == nil {
		t.Fatalf("v_cssl_http: %+v\n%q", v, tr.kept)
	}
	if v := dc.Virtuals["/Common/v_rdp"]; v == nil || v.Persist == nil || v.Persist.Method != dataplane.PersistMSRDP || v.Persist.SessionDir {
		t.Fatalf("v_rdp: %+v", v)
	}
	if v := dc.Virtuals["/Common/v_rdp_dir"]; v == nil || v.Persist == nil || !v.Persist.SessionDir {
		t.Fatalf("v_rdp_dir: %+v", v)
	}
	for _, n := range []string{"/Common/v_rule", "/Common/v_rdp_rule"} { // the rules read the same first bytes
		if v := dc.Virtuals[n]; v == nil || v.Persist == nil || v.Rules == nil {
			t.Errorf("%s: %+v", n, v)
		}
	}
	if strings.Contains(strings.Join(skipped, "\n"), "has-session-dir") {
		t.Errorf("has-session-dir is acted on, not kept: %q", skipped)
	}
	for _, want := range []string{
		"ltm virtual /Common/v_http: persistence profile /Common/ssl: openltm runs ssl persistence only on a standard TCP virtual server",
		"ltm virtual /Common/v_fb: persistence profile /Common/ssl: ssl persistence runs as a virtual server's default persistence only",
	} {
		if !strings.Contains(strings.Join(skipped, "\n"), want) {
			t.Errorf("skipped %q\nwant one with %q", skipped, want)
		}
	}
}
