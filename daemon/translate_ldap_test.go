package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/starttls"
)

// TestLDAPProfilesTranslated: client-ldap beside client-ssl and
// server-ldap beside server-ssl reach the plane with their modes, alone
// or together, and with plain server-ssl or client-ssl on the other side.
func TestLDAPProfilesTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir()) // the engine's default.crt for clientssl
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.119.9.11:389 }",
		"create ltm profile client-ldap cl_req defaults-from clientldap activation-mode require",
		"create ltm profile server-ldap sl_none defaults-from serverldap activation-mode none",
		"create ltm virtual v_client destination 127.119.9.1:389 pool p profiles replace-all-with { tcp { } clientssl { context clientside } clientldap { } }",
		"create ltm virtual v_server destination 127.119.9.2:389 pool p profiles replace-all-with { tcp { } serverssl { context serverside } serverldap { } }",
		"create ltm virtual v_both destination 127.119.9.3:389 pool p profiles replace-all-with { tcp { } clientssl { context clientside } serverssl { context serverside } cl_req { } sl_none { } }",
		"create ltm virtual v_ldaps_member destination 127.119.9.4:389 pool p profiles replace-all-with { tcp { } clientssl { context clientside } serverssl { context serverside } clientldap { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, _ := run(t, s, "list ltm profile client-ldap clientldap all-properties")
	if !strings.Contains(out, "activation-mode allow") {
		t.Errorf("clientldap: %q", out)
	}
	tr := e.translate(e.Config()) // with the engine's default certificate
	dc, skipped := tr.dc, tr.skipped
	type want struct {
		client, server string // profile names, "" for none
		cm, sm         starttls.Mode
	}
	for name, w := range map[string]want{
		"/Common/v_client":       {client: "/Common/clientldap", cm: starttls.Allow},
		"/Common/v_server":       {server: "/Common/serverldap", sm: starttls.Allow},
		"/Common/v_both":         {client: "/Common/cl_req", cm: starttls.Require, server: "/Common/sl_none", sm: starttls.None},
		"/Common/v_ldaps_member": {client: "/Common/clientldap", cm: starttls.Allow},
	} {
		v := dc.Virtuals[name]
		if v == nil {
			t.Fatalf("%s left out: %q", name, skipped)
		}
		if (v.STARTTLS == nil) != (w.client == "") || v.STARTTLS != nil && (v.STARTTLS.Profile != w.client || v.STARTTLS.Protocol != starttls.LDAP || v.STARTTLS.Mode != w.cm) {
			t.Errorf("%s: client-ldap %+v, want %+v", name, v.STARTTLS, w)
		}
		if (v.ServerLDAP == nil) != (w.server == "") || v.ServerLDAP != nil && (v.ServerLDAP.Profile != w.server || v.ServerLDAP.Mode != w.sm) {
			t.Errorf("%s: server-ldap %+v, want %+v", name, v.ServerLDAP, w)
		}
	}
}

// TestLDAPProfilesRefused: BIG-IP refuses client-ldap without client-ssl,
// server-ldap without server-ssl, either without tcp or beside http, a
// mode that is not none, allow or require, and LDAP:: commands need one
// of the profiles; nothing is made.
func TestLDAPProfilesRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.119.9.11:389 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, err string }{
		{"create ltm virtual v1 destination 127.119.9.5:389 pool p profiles replace-all-with { tcp { } clientldap { } }", "profile /Common/clientldap (client-ldap) requires a client-ssl profile on the virtual server (/Common/v1)"},
		{"create ltm virtual v2 destination 127.119.9.6:389 pool p profiles replace-all-with { tcp { } serverldap { } }", "profile /Common/serverldap (server-ldap) requires a server-ssl profile on the virtual server (/Common/v2)"},
		{"create ltm virtual v3 destination 127.119.9.7:389 pool p profiles replace-all-with { tcp { } http { } clientssl { context clientside } clientldap { } }", "cannot be used with http profile"},
		{"create ltm virtual v4 destination 127.119.9.8:389 pool p profiles replace-all-with { tcp { } http { } serverssl { context serverside } serverldap { } }", "cannot be used with http profile"},
		{"create ltm virtual v5 destination 127.119.9.9:389 pool p profiles replace-all-with { tcp { } clientssl { context clientside } clientldap { } smtps { } }", "cannot be used with profile"},
		{"create ltm virtual v6 destination 127.119.9.10:389 pool p profiles replace-all-with { tcp { } clientssl { context clientside } serverssl { context serverside } serverldap { } smtps { } }", "cannot be used with smtps profile"},
		{"create ltm profile client-ldap bad defaults-from clientldap activation-mode sometimes", "activation-mode"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	for _, l := range []string{"list ltm virtual v1", "list ltm virtual v2", "list ltm virtual v3", "list ltm virtual v4", "list ltm virtual v5", "list ltm virtual v6", "list ltm profile client-ldap bad"} {
		if _, err := run(t, s, l); err == "" {
			t.Errorf("%s: made", l)
		}
	}
}
