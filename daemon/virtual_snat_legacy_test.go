package daemon

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sourceSeen is the source address the member saw for one connection
// through the virtual at vip.
func sourceSeen(t *testing.T, vip string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", vip, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("%s: %v", vip, err)
	}
	return strings.TrimSpace(string(b))
}

// TestLegacySNAT: BIG-IP 10's snat automap, snat none and snatpool NAME
// on a virtual are read as source-address-translation (as BIG-IP 11 and
// later load them), listed and acted on that way; both forms at once, a
// value snat does not take, or a snatpool that does not exist are
// refused with nothing changed.
func TestLegacySNAT(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.4.6.11:9000", fromHost, false)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.4.6.11:9000 }",
		"create ltm snatpool sp members add { 127.4.6.50 }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for i, tc := range []struct {
		legacy, list, source string
	}{
		// automap with no self IP: the virtual's address.
		{"snat automap", "source-address-translation {\n        type automap\n    }", "127.4.6.1"},
		{"snatpool sp", "source-address-translation {\n        pool sp\n        type snat\n    }", "127.4.6.50"},
		{"snat none", "source-address-translation {\n        type none\n    }", "127.0.0.1"},
		{"snatpool none", "source-address-translation {\n        type none\n    }", "127.0.0.1"},
	} {
		name := "v" + string(rune('a'+i))
		vip := "127.4.6." + string(rune('1'+i)) + ":9000"
		if _, err := run(t, s, "create ltm virtual "+name+" destination "+vip+" pool p "+tc.legacy+" profiles replace-all-with { tcp { } }"); err != "" {
			t.Fatalf("%s: %s", tc.legacy, err)
		}
		out, _ := run(t, s, "list ltm virtual "+name)
		if !strings.Contains(out, tc.list) || strings.Contains(out, "snatpool") || strings.Contains(out, " snat ") {
			t.Errorf("%s: list:\n%s", tc.legacy, out)
		}
		if got := sourceSeen(t, vip); got != tc.source {
			t.Errorf("%s: the member saw %s, want %s", tc.legacy, got, tc.source)
		}
	}
	// modify with the old form replaces the translation.
	if _, err := run(t, s, "modify ltm virtual vc snatpool sp"); err != "" {
		t.Fatal(err)
	}
	if got := sourceSeen(t, "127.4.6.3:9000"); got != "127.4.6.50" {
		t.Errorf("after modify snatpool sp: the member saw %s", got)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"modify ltm virtual va snat automap source-address-translation { type none }", "give one"},
		{"modify ltm virtual va snat automap snatpool sp", "give one"},
		{"modify ltm virtual va snat sp", "automap or none"},
		{"modify ltm virtual va snatpool nosuch", "nosuch"},
		{"modify ltm virtual va snat", "needs a value"},
	} {
		if _, err := run(t, s, tc.cmd); !strings.Contains(err, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.cmd, err, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm virtual va source-address-translation"); !strings.Contains(out, "type automap") {
		t.Errorf("refused modifies changed va:\n%s", out)
	}
	// A BIG-IP 10 file loads converted.
	conf := filepath.Join(t.TempDir(), "v10.conf")
	os.WriteFile(conf, []byte("ltm virtual /Common/v10 {\n    destination /Common/127.4.6.9:9000\n    pool /Common/p\n    snatpool /Common/sp\n}\n"), 0o600)
	if _, err := run(t, s, "load sys config merge file "+conf); err != "" {
		t.Fatal(err)
	}
	if got := sourceSeen(t, "127.4.6.9:9000"); got != "127.4.6.50" {
		t.Errorf("loaded v10: the member saw %s", got)
	}
}
