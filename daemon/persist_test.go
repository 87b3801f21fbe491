package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
)

func TestTranslatePersistence(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.106.11:9000 }",
		"create ltm persistence source-addr wsl_src defaults-from source_addr timeout 3900 mask 255.255.255.0 match-across-services enabled override-connection-limit enabled",
		"create ltm rule own {\nwhen CLIENT_ACCEPTED { pool p }\n}",
		"create ltm rule keyed {\nwhen CLIENT_ACCEPTED { persist uie [IP::client_addr] }\n}",
		"create ltm persistence universal by_rule rule keyed timeout 60 match-across-pools enabled",
		"create ltm virtual v_src destination 127.0.106.1:9000 pool p persist replace-all-with { wsl_src { default yes } }",
		"create ltm virtual v_builtin destination 127.0.106.2:9000 pool p persist replace-all-with { source_addr { default yes } }",
		"create ltm virtual v_uni destination 127.0.106.3:9000 pool p rules { own } persist replace-all-with { by_rule { default yes } }",
		"create ltm virtual v_cookie destination 127.0.106.4:9000 pool p persist replace-all-with { cookie { default yes } } fallback-persistence source_addr",
		"create ltm virtual v_none destination 127.0.106.5:9000 pool p",
		"create ltm persistence dest-addr by_dest mask 255.255.255.0 timeout 30",
		"create ltm virtual v_dest destination 127.0.106.6:9000 pool p persist replace-all-with { by_dest { default yes } } fallback-persistence source_addr",
		"create ltm rule hashed {\nwhen CLIENT_ACCEPTED { persist hash [IP::client_addr] }\n}",
		"create ltm persistence hash by_hash rule hashed timeout 90",
		"create ltm virtual v_hash destination 127.0.106.7:9000 pool p persist replace-all-with { by_hash { default yes } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	dc, skipped := Translate(e.schema, e.Config())
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	v := func(n string) *dataplane.Virtual {
		x := dc.Virtuals["/Common/"+n]
		if x == nil {
			t.Fatalf("virtual %s missing", n)
		}
		return x
	}
	for _, tc := range []struct {
		vs        string
		want      *dataplane.Persistence
		fallback  *dataplane.Persistence
		ruleNames string
	}{
		{"v_src", &dataplane.Persistence{Profile: "/Common/wsl_src", Method: dataplane.PersistSourceAddr, Timeout: 3900 * time.Second,
			Mask: netip.MustParseAddr("255.255.255.0"), MatchAcrossServices: true, OverrideConnectionLimit: true}, nil, ""},
		{"v_builtin", &dataplane.Persistence{Profile: "/Common/source_addr", Method: dataplane.PersistSourceAddr, Timeout: 180 * time.Second}, nil, ""},
		{"v_uni", &dataplane.Persistence{Profile: "/Common/by_rule", Method: dataplane.PersistUniversal, Timeout: 60 * time.Second, MatchAcrossPools: true}, nil,
			"/Common/own /Common/keyed"},
		{"v_cookie", &dataplane.Persistence{Profile: "/Common/cookie", Method: dataplane.PersistCookie, Timeout: 180 * time.Second},
			&dataplane.Persistence{Profile: "/Common/source_addr", Method: dataplane.PersistSourceAddr, Timeout: 180 * time.Second}, ""},
		{"v_none", nil, nil, ""},
		{"v_dest", &dataplane.Persistence{Profile: "/Common/by_dest", Method: dataplane.PersistDestAddr, Timeout: 30 * time.Second,
			Mask: netip.MustParseAddr("255.255.255.0")},
			&dataplane.Persistence{Profile: "/Common/source_addr", Method: dataplane.PersistSourceAddr, Timeout: 180 * time.Second}, ""},
		{"v_hash", &dataplane.Persistence{Profile: "/Common/by_hash", Method: dataplane.PersistHash, Timeout: 90 * time.Second}, nil,
			"/Common/hashed"},
	} {
		t.Run(tc.vs, func(t *testing.T) {
			x := v(tc.vs)
			if (x.Persist == nil) != (tc.want == nil) || (x.Persist != nil && *x.Persist != *tc.want) {
				t.Errorf("persist %+v, want %+v", x.Persist, tc.want)
			}
			if (x.FallbackPersist == nil) != (tc.fallback == nil) || (x.FallbackPersist != nil && *x.FallbackPersist != *tc.fallback) {
				t.Errorf("fallback %+v, want %+v", x.FallbackPersist, tc.fallback)
			}
			if tc.ruleNames != "" {
				var names []string
				for _, r := range dataplane.Program(x.Rules).Rules() {
					names = append(names, r.Name)
				}
				if got := strings.Join(names, " "); got != tc.ruleNames {
					t.Errorf("rules %q, want %q (the profile's rule after the virtual's)", got, tc.ruleNames)
				}
			}
		})
	}

	// A profile that cannot be applied leaves the virtual out, saying why.
	if _, err := run(t, s, "modify ltm persistence source-addr wsl_src mask 255.0.255.0"); err != "" {
		t.Fatal(err)
	}
	dc, skipped = Translate(e.schema, e.Config())
	if dc.Virtuals["/Common/v_src"] != nil || len(skipped) != 1 || !strings.Contains(skipped[0], `mask "255.0.255.0" is not a network mask`) {
		t.Fatalf("skipped %v", skipped)
	}
}

func TestPersistRecordsShowAndDelete(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.0.107.11:9000", "S1 Response")
	labelServer(t, "127.0.107.12:9000", "S2 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.107.11:9000 127.0.107.12:9000 }",
		"create ltm virtual vs destination 127.0.107.1:9000 pool p persist replace-all-with { source_addr { default yes } } profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	ask := func(src string) string {
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", "127.0.107.1:9000")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "hi\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
	a := ask("127.0.107.50")
	for i := 0; i < 3; i++ {
		if got := ask("127.0.107.50"); got != a {
			t.Fatalf("persisted client moved from %q to %q", a, got)
		}
	}
	b := ask("127.0.107.51")
	member := map[string]string{"S1 Response": "127.0.107.11:9000", "S2 Response": "127.0.107.12:9000"}
	out, errs := run(t, s, "show ltm persistence persist-records client-addr 127.0.107.50")
	want := "Sys::Persistent Connections\nsource-address  127.0.107.50  127.0.107.1:9000  " + member[a] + "  (tmm: 0)\nTotal records returned: 1\n"
	if errs != "" || out != want {
		t.Fatalf("show: %q %q\nwant %q", out, errs, want)
	}
	for _, tc := range []struct{ filter, count, err string }{
		{"", "2", ""},
		{"mode source-address", "2", ""},
		{"mode universal", "0", ""},
		{"virtual vs", "2", ""},
		{"pool p", "2", ""},
		{"pool other", "0", ""},
		{"node-addr " + strings.Split(member[b], ":")[0], "", ""},
		{"node-port 9000", "2", ""},
		{"key 127.0.107.51", "1", ""},
		{"mode frob", "", "is not a persistence mode"},
		{"client-addr nowhere", "", "is not an IP address"},
		{"colour red", "", "unknown property"},
		{"key", "", "needs a value"},
	} {
		out, err := run(t, s, strings.TrimSpace("show ltm persistence persist-records "+tc.filter))
		if tc.err != "" {
			if !strings.Contains(err, tc.err) {
				t.Errorf("%q: error %q, want %q", tc.filter, err, tc.err)
			}
			continue
		}
		if err != "" {
			t.Errorf("%q: %s", tc.filter, err)
			continue
		}
		if tc.count != "" && !strings.HasSuffix(out, "Total records returned: "+tc.count+"\n") {
			t.Errorf("%q: %q", tc.filter, out)
		}
	}
	// Deleting one client's record.
	if _, err := run(t, s, "delete ltm persistence persist-records client-addr 127.0.107.50"); err != "" {
		t.Fatal(err)
	}
	if out, _ := run(t, s, "show ltm persistence persist-records"); !strings.Contains(out, "127.0.107.51") || strings.Contains(out, "127.0.107.50") ||
		!strings.HasSuffix(out, "Total records returned: 1\n") {
		t.Fatalf("after delete: %q", out)
	}
	if _, err := run(t, s, "delete ltm persistence persist-records"); err != "" {
		t.Fatal(err)
	}
	if out, _ := run(t, s, "show ltm persistence persist-records"); out != "Sys::Persistent Connections\nTotal records returned: 0\n" {
		t.Fatalf("after delete all: %q", out)
	}
}

func TestTranslateCookieMethods(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool web members add { 127.0.106.11:80 }",
		"create ltm persistence cookie c_insert expiration 1:0:0 always-send enabled secure disabled",
		"create ltm persistence cookie c_rewrite method rewrite cookie-name SRV",
		"create ltm persistence cookie c_passive method passive",
		"create ltm persistence cookie c_hash method hash cookie-name JSESSIONID hash-offset 4 hash-length 8 timeout 600",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// secure (enabled unless c_insert says otherwise) marks the cookie
	// only on a virtual that clients reach over TLS.
	for i, tc := range []struct {
		profile string
		tls     bool
		spec    httpx.CookieSpec
		mode    mblb.CookieMode
	}{
		{"c_insert", false, httpx.CookieSpec{Name: "BIGipServerweb", Expiration: time.Hour, HTTPOnly: true, AlwaysSend: true}, mblb.CookieMode{}},
		{"c_insert", true, httpx.CookieSpec{Name: "BIGipServerweb", Expiration: time.Hour, HTTPOnly: true, AlwaysSend: true}, mblb.CookieMode{}},
		{"c_rewrite", false, httpx.CookieSpec{Name: "SRV", HTTPOnly: true}, mblb.CookieMode{Method: mblb.CookieRewrite}},
		{"c_rewrite", true, httpx.CookieSpec{Name: "SRV", HTTPOnly: true, Secure: true}, mblb.CookieMode{Method: mblb.CookieRewrite}},
		{"c_passive", false, httpx.CookieSpec{Name: "BIGipServerweb", HTTPOnly: true}, mblb.CookieMode{Method: mblb.CookiePassive}},
		{"c_hash", true, httpx.CookieSpec{Name: "JSESSIONID", HTTPOnly: true, Secure: true}, mblb.CookieMode{Method: mblb.CookieHash, HashOffset: 4, HashLength: 8}},
	} {
		t.Run(fmt.Sprintf("%s tls %v", tc.profile, tc.tls), func(t *testing.T) {
			vs := fmt.Sprintf("v_%s_%d", tc.profile, i)
			profiles := "tcp { } http { }"
			if tc.tls {
				profiles += " clientssl { context clientside }"
			}
			c := fmt.Sprintf("create ltm virtual %s destination 127.0.106.%d:80 pool web profiles replace-all-with { %s } persist replace-all-with { %s { default yes } }", vs, 20+i, profiles, tc.profile)
			if _, err := run(t, s, c); err != "" {
				t.Fatalf("%s: %s", c, err)
			}
			tr := e.translate(e.Config()) // with the engine's default certificate
			if len(tr.skipped) != 0 {
				t.Fatalf("skipped %v", tr.skipped)
			}
			x := tr.dc.Virtuals["/Common/"+vs]
			if x == nil || x.MBLB == nil {
				t.Fatalf("virtual %s: %+v", vs, x)
			}
			h := x.MBLB.Request.HTTP
			if h.Cookie != tc.spec || h.CookieMode != tc.mode {
				t.Errorf("cookie %+v %+v, want %+v %+v", h.Cookie, h.CookieMode, tc.spec, tc.mode)
			}
		})
	}
}
