package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/rules"
)

// TestSNIPassthroughNeeds: CLIENTSSL_CLIENTHELLO and policies reading the
// hello at ssl-client-hello run on a virtual server with a client-ssl
// profile, or with an ssl persistence profile (its own or one made from
// ssl) that reads the hello of TLS passed through; on any other they are
// refused, from tmsh and from a file alike, and nothing changes.
func TestSNIPassthroughNeeds(t *testing.T) {
	t.Parallel()
	const (
		setup  = "create ltm pool p members add { 127.47.6.11:443 }; create ltm pool api members add { 127.47.6.12:443 }; create ltm persistence ssl sni_ssl defaults-from ssl timeout 600"
		rule   = "create ltm rule hello { when CLIENTSSL_CLIENTHELLO { if { [SSL::extensions -type 0] ends_with \"api.example\" } { pool api } } }"
		accept = "create ltm rule hi { when CLIENT_ACCEPTED { log local0. hi } }"
		pol    = "create ltm policy sni legacy rules add { api { conditions add { 0 { ssl-extension ssl-client-hello server-name starts-with values { api. } } } actions add { 0 { forward ssl-client-hello select pool api } } } }"
		vs     = "create ltm virtual v destination 127.47.6.10:443 pool p profiles replace-all-with { tcp } "
	)
	ruleErr := "01070394:3: CLIENTSSL_CLIENTHELLO event in rule (/Common/hello) requires an associated CLIENTSSL profile, or an SSL persistence profile"
	polErr := "policy /Common/sni reads the client's TLS hello (ssl-client-hello), which needs a client-ssl profile on the virtual server, or an ssl persistence profile"
	for _, c := range []struct {
		name, cmd string
		setup     []string
		err       string // "": accepted, and the virtual's rules handle CLIENTSSL_CLIENTHELLO
	}{
		{"a rule with the built-in ssl persistence", vs + "rules { hello } persist replace-all-with { ssl { default yes } }", []string{rule}, ""},
		{"a rule with a profile made from ssl", vs + "rules { hello } persist replace-all-with { sni_ssl { default yes } }", []string{rule}, ""},
		{"a rule and a CLIENT_ACCEPTED rule", vs + "rules { hi hello } persist replace-all-with { ssl { default yes } }", []string{rule, accept}, ""},
		{"a policy with ssl persistence", vs + "policies add { sni } persist replace-all-with { ssl { default yes } }", []string{pol}, ""},
		{"a policy and a rule", vs + "policies add { sni } rules { hello } persist replace-all-with { sni_ssl { default yes } }", []string{pol, rule}, ""},
		{"a rule without persistence", vs + "rules { hello }", []string{rule}, ruleErr},
		{"a rule with source-address persistence", vs + "rules { hello } persist replace-all-with { source_addr { default yes } }", []string{rule}, ruleErr},
		{"a rule with ssl as fallback only", vs + "rules { hello } persist replace-all-with { source_addr { default yes } } fallback-persistence ssl", []string{rule}, ruleErr},
		{"a rule with msrdp persistence", vs + "rules { hello } persist replace-all-with { msrdp { default yes } }", []string{rule}, ruleErr},
		{"a policy without persistence", vs + "policies add { sni }", []string{pol}, polErr},
		{"a rule from a file", "load:ltm virtual /Common/v {\n    destination /Common/127.47.6.10:443\n    pool /Common/p\n    profiles {\n        /Common/tcp { }\n    }\n    rules {\n        /Common/hello\n    }\n}\n", []string{rule}, ruleErr},
		{"a policy from a file", "load:ltm virtual /Common/v {\n    destination /Common/127.47.6.10:443\n    policies {\n        /Common/sni { }\n    }\n    pool /Common/p\n    profiles {\n        /Common/tcp { }\n    }\n}\n", []string{pol}, polErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			e, _ := openWithPlane(t, dir)
			s := e.NewSession("admin").(*Session)
			for _, l := range append(strings.Split(setup, "; "), c.setup...) {
				if _, err := run(t, s, l); err != "" {
					t.Fatalf("%s: %s", l, err)
				}
			}
			before, _ := run(t, s, "list ltm virtual")
			err := runOrLoad(t, s, dir, c.cmd)
			if c.err != "" {
				if !strings.Contains(err, c.err) {
					t.Fatalf("error %q, want %q", err, c.err)
				}
				if after, _ := run(t, s, "list ltm virtual"); after != before {
					t.Fatalf("a refused command changed the configuration:\n%s", after)
				}
				return
			}
			if err != "" {
				t.Fatalf("refused: %s", err)
			}
			dc, skipped := Translate(e.schema, e.Config())
			v := dc.Virtuals["/Common/v"]
			if v == nil || v.Persist == nil || v.Persist.Method != dataplane.PersistSSL {
				t.Fatalf("virtual %+v, skipped %q", v, skipped)
			}
			if p := dataplane.Program(v.Rules); p == nil || !p.Handles(rules.ClientSSLClientHello) || p.Handles(rules.ClientSSLHandshake) {
				t.Fatalf("the virtual's rules do not run at the hello alone")
			}
			if out, _ := run(t, s, "show ltm virtual v"); strings.Contains(out, "does not run") {
				t.Fatalf("the virtual carries no traffic:\n%s", out)
			}
		})
	}
}
