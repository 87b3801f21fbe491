package rules

import (
	"strings"
	"testing"
)

// PROFILE::clientssl and serverssl compile with any attribute: name, or
// a setting of the profile the handshake used.
func TestProfileSSLCompile(t *testing.T) {
	r := mustCompile(t, "ok", "when HTTP_REQUEST { log local0. \"[PROFILE::clientssl name] [PROFILE::serverssl name] [PROFILE::clientssl mode]\" }")
	if u := r.Unsupported(); len(u) != 0 {
		t.Errorf("unsupported %v", u)
	}
}

// sslProfConn is a TLS connection that lists its virtual's profiles.
type sslProfConn struct {
	*sslFake
	refs []ProfileRef
}

func (c sslProfConn) VirtualProfiles() []ProfileRef { return c.refs }

// TestProfileAttr: PROFILE::<type> ATTR reads the setting as the
// translation filled it (underscores for tmsh's hyphens), the running
// side's profile where there is one per side; a missing profile, an
// unknown setting and a listener without profiles are Tcl errors naming
// them; PROFILE::list lists one type's full paths.
func TestProfileAttr(t *testing.T) {
	refs := []ProfileRef{
		{Type: "tcp", Name: "/Common/tcp-wan", Context: "clientside", Attrs: map[string]string{"idle-timeout": "300", "nagle": "enabled"}},
		{Type: "tcp", Name: "/Common/tcp-lan", Context: "serverside", Attrs: map[string]string{"idle-timeout": "60", "nagle": "disabled"}},
		{Type: "http", Name: "/Common/web", Attrs: map[string]string{"redirect-rewrite": "matching", "fallback-host": "", "enforcement": "{max-header-count 64} {unknown-method allow}"}},
		{Type: "oneconnect", Name: "/App/oc", Attrs: map[string]string{"source-mask": "255.255.255.255"}},
		{Type: "persist", Name: "/Common/cookie", Attrs: map[string]string{"method": "insert", "cookie-name": "BIGipX"}},
		{Type: "stream", Name: "/Common/s1", Attrs: map[string]string{}},
		{Type: "stream", Name: "/Common/s2", Attrs: map[string]string{}},
		{Type: "clientssl", Name: "/Common/cs_app", Attrs: map[string]string{"mode": "enabled", "sni-require": "false"}},
		{Type: "diameter", Name: "/Common/diam", Attrs: map[string]string{"origin-host-to-server": "lb.example.com"}},
		{Type: "tftp", Name: "/Common/tftp", Attrs: map[string]string{"idle-timeout": "30"}},
	}
	c := sslProfConn{&sslFake{fakeConn: newFakeConn()}, refs}
	c.info[ClientSide] = &SSLInfo{Profile: "/Common/cs_app"}
	for _, tc := range []struct {
		ev         Event
		expr, want string
		err        string
	}{
		{ClientAccepted, "PROFILE::tcp idle_timeout", "300", ""},
		{ServerConnected, "PROFILE::tcp idle_timeout", "60", ""},
		{ClientAccepted, "serverside {PROFILE::tcp nagle}", "disabled", ""},
		{ClientAccepted, "PROFILE::tcp idle-timeout", "300", ""},
		{ClientAccepted, "PROFILE::tcp name", "/Common/tcp-wan", ""},
		{HTTPRequest, "PROFILE::http redirect_rewrite", "matching", ""},
		{HTTPRequest, "PROFILE::http fallback_host", "", ""},
		{HTTPRequest, "lindex [PROFILE::http enforcement] 0", "max-header-count 64", ""},
		{ClientAccepted, "PROFILE::oneconnect source_mask", "255.255.255.255", ""},
		{ClientAccepted, "PROFILE::persist cookie_name", "BIGipX", ""},
		{ClientAccepted, "PROFILE::clientssl sni_require", "false", ""},
		{ClientAccepted, "PROFILE::clientssl name", "/Common/cs_app", ""},
		{ClientAccepted, "PROFILE::list stream", "/Common/s1 /Common/s2", ""},
		{ClientAccepted, "PROFILE::diameter origin_host_to_server", "lb.example.com", ""},
		{ClientAccepted, "PROFILE::tftp idle_timeout", "30", ""},
		{ClientAccepted, "PROFILE::list tcp", "/Common/tcp-wan /Common/tcp-lan", ""},
		{ClientAccepted, "PROFILE::list one-connect", "/App/oc", ""},
		{ClientAccepted, "llength [PROFILE::list fastL4]", "0", ""},
		{ClientAccepted, "PROFILE::tcp idle_time", "", `unknown attribute "idle_time" of tcp profile /Common/tcp-wan`},
		{ClientAccepted, "PROFILE::udp idle_timeout", "", "PROFILE::udp: the virtual server has no udp profile"},
		{ClientAccepted, "PROFILE::fastL4 idle_timeout", "", "PROFILE::fastL4: the virtual server has no fastl4 profile"},
		{ClientAccepted, "PROFILE::clientssl bogus", "", `unknown attribute "bogus" of clientssl profile /Common/cs_app`},
		{ClientAccepted, "PROFILE::tcp", "", "wrong # args"},
		{ClientAccepted, "PROFILE::list", "", "wrong # args"},
	} {
		got, err := evalIn(t, c, nil, tc.ev, tc.expr)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %q, %v; want error %q", tc.expr, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s in %s: %q, %v; want %q", tc.expr, tc.ev, got, err, tc.want)
		}
	}
	// A connection that lists no profiles (a DNS listener).
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "PROFILE::tcp idle_timeout"); err == nil || !strings.Contains(err.Error(), "no profiles") {
		t.Errorf("without a profile list: %v", err)
	}
	for _, body := range []string{
		"when SERVER_CONNECTED { log local0. \"[PROFILE::tcp idle_timeout]\" }",
		"when HTTP_REQUEST { if {[PROFILE::http redirect_rewrite] eq \"none\"} { log local0. [PROFILE::list clientssl] } }",
		"when CLIENT_ACCEPTED { log local0. \"[PROFILE::fastl4 idle_timeout] [PROFILE::xml name] [PROFILE::webacceleration name]\" }",
	} {
		r, err := Compile("pa", body)
		if err != nil || len(r.Unsupported()) != 0 {
			t.Errorf("%q: %v, unsupported %v", body, err, r.Unsupported())
		}
	}
}
