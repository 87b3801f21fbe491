package daemon

import (
	"strings"
	"testing"
)

func TestCompletion(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool web members add { 127.0.0.1:80 127.0.0.2:8080 }"); err != "" {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want string }{
		{"", "create list ltm"},
		{"create ltm po", "pool"},
		{"modify ltm pool ", "web"},
		{"modify ltm pool web load-balancing-mode least-c", "least-connections-member least-connections-node"},
		{"modify ltm pool web members ", "add delete modify none replace-all-with"},
		{"modify ltm pool web members modify { ", "all 127.0.0.1:http 127.0.0.2:webcache"},
		{"modify ltm pool web members modify { 127.0.0.1:80 { session ", "monitor-enabled user-disabled user-enabled"},
		{"create ltm virtual v source-address-translation { ", "pool type"},
		{"create ltm profile http h hsts { ", "include-subdomains maximum-age mode preload"},
		{"create ltm profile http h hsts { mode ", "enabled disabled"},
		{"create ltm profile http h explicit-proxy { default-connect-handling ", "allow deny"},
		{"create ltm node n fqdn { ", "address-family autopopulate down-interval interval name"},
		{"create ltm virtual v pool ", "none web"},
		{"show sys ", "config-history connection failover version"},
		{"show ltm pool web ", "members raw field-fmt distribution"},
		{"create ltm policy Drafts/p rules add { r { conditions add { 0 { ", "http-uri http-host tcp request path starts-with values"},
		{"create ltm policy Drafts/p rules add { r { actions add { 0 { ", "forward http-reply select reset redirect pool"},
		{"create ltm policy Drafts/p strategy ", "first-match all-match best-match"},
		{"create ltm virtual v policies ", "add replace-all-with"},
		{"publish ltm ", "policy"},
		{"modify sys db tm.maxrejectrate ", "value reset-to-default"},
	} {
		var got []string
		for _, sg := range s.Complete(tc.line) {
			got = append(got, sg.Text)
		}
		for _, w := range strings.Fields(tc.want) {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("Complete(%q) = %v, want it to offer %q", tc.line, got, w)
			}
		}
	}
}

// Every module help text belongs to a module the schema has, so a
// misspelt key cannot silently drop one.
func TestModuleHelpNamesModules(t *testing.T) {
	for key := range moduleHelp {
		if !schema.IsModulePath(strings.Fields(key)) {
			t.Errorf("moduleHelp has %q, which is no module", key)
		}
	}
}
