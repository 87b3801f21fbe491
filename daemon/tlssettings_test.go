package daemon

import (
	"fmt"
	"strings"
	"testing"
)

// TestSSLProfileSettingsTranslate: ssl-sign-hash, maximum-record-size and
// log-publisher are acted on (no "not acted on" warning), and what the
// commit refuses of them leaves no virtual behind.
func TestSSLProfileSettingsTranslate(t *testing.T) {
	t.Setenv("GODEBUG", "")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool p members add { 127.55.3.11:80 }",
		"create sys log-config publisher tls_pub destinations replace-all-with { local-syslog }",
	)
	for i, tc := range []struct {
		name, client, server, want string
	}{
		{"sign-hash sha384 both sides", "ssl-sign-hash sha384", "ssl-sign-hash sha256", ""},
		{"record size 1024", "maximum-record-size 1024", "", ""},
		{"record size default", "maximum-record-size 16384", "", ""},
		{"log-publisher both sides", "log-publisher tls_pub", "log-publisher tls_pub", ""},
		{"sign-hash sha1 without tlssha1", "ssl-sign-hash sha1", "", "GODEBUG=tlssha1=1"},
		{"record size too small", "maximum-record-size 255", "", "maximum-record-size 255 is out of range (256 to 16384)"},
		{"record size too large", "maximum-record-size 16385", "", "out of range"},
		{"no such publisher", "log-publisher nosuch_pub", "", "The requested log publisher (/Common/nosuch_pub) was not found"},
		{"no such publisher, server-ssl", "", "log-publisher nosuch_pub", "The requested log publisher (/Common/nosuch_pub) was not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, ss := fmt.Sprintf("cs_set%d", i), fmt.Sprintf("ss_set%d", i)
			for _, c := range []string{"client-ssl " + cs + " " + tc.client, "server-ssl " + ss + " " + tc.server} {
				out, err := run(t, s, "create ltm profile "+c)
				if strings.Contains(out+err, "not acted on") {
					t.Fatalf("%s: %s%s", c, out, err)
				}
				if err != "" {
					if tc.want == "" || !strings.Contains(err, tc.want) {
						t.Fatalf("create ltm profile %s: %s", c, err)
					}
					return // refused with the profile
				}
			}
			vs := fmt.Sprintf("vs_set%d", i)
			_, err := run(t, s, fmt.Sprintf("create ltm virtual %s destination 127.55.3.10:%d pool p profiles replace-all-with { tcp %s %s }", vs, 2000+i, cs, ss))
			switch {
			case tc.want == "" && err != "":
				t.Fatalf("refused: %s", err)
			case tc.want != "" && !strings.Contains(err, tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
			if tc.want != "" {
				if out, _ := run(t, s, "list ltm virtual "+vs); strings.Contains(out, vs) {
					t.Fatalf("refused, yet created: %s", out)
				}
			}
		})
	}
}
