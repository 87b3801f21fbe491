package daemon

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPolicyCommandsTraffic: real requests through a virtual with two
// policies, one matching and one not, and an iRule that reports, in a
// header the member echoes, which policies and rules matched each
// request of a kept-alive connection.
func TestPolicyCommandsTraffic(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	for _, m := range []struct{ addr, label string }{{"127.109.0.11:8080", "WEB"}, {"127.109.0.12:8080", "API"}} {
		ln, err := net.Listen("tcp", m.addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", m.label, r.Header.Get("X-Policy"))
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool web members add { 127.109.0.11:8080 }",
		"create ltm pool api members add { 127.109.0.12:8080 }",
		"create ltm policy route legacy requires add { http } rules add { api { ordinal 1 conditions add { 0 { http-uri path starts-with values { /api/ } } } actions add { 0 { forward select pool api } } } static { ordinal 2 conditions add { 0 { http-uri path starts-with values { /static/ } } } actions add { 0 { http-header insert name X-Static value 1 } } } }",
		"create ltm policy posts legacy requires add { http } rules add { post { conditions add { 0 { http-method values { POST } } } actions add { 0 { http-reply redirect location /posted } } } }",
		`create ltm rule report { when HTTP_REQUEST {
    set r "[POLICY::names matched]|[POLICY::rules matched route]|[POLICY::names unmatched]|[POLICY::rules route]|[POLICY::controls]|[POLICY::targets]|[POLICY::targets forward]"
    log local0. "policy: $r"
    HTTP::header insert X-Policy $r
} }`,
		"create ltm virtual vs destination 127.109.0.1:80 pool web profiles replace-all-with { tcp http } source-address-translation { type automap } policies add { route posts } rules { report }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := client.Get("http://127.109.0.1" + path)
			if err == nil {
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode == 200 {
					return string(b)
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v", path, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	const static = "|api static|forwarding|forward http-header http-reply|1"
	for _, c := range []struct{ path, want string }{
		{"/api/users", "API /Common/route|api|/Common/posts" + static},
		{"/index.html", "||/Common/route /Common/posts" + static},
		{"/static/a.css", "/Common/route|static|/Common/posts" + static},
		{"/api/again", "API /Common/route|api|/Common/posts" + static},
	} {
		// The requests share a kept-alive connection, whose pool stays the
		// one last chosen: only those the policy sends to api say where
		// they went.
		got := get(c.path)
		if !strings.HasPrefix(c.want, "API ") {
			_, got, _ = strings.Cut(got, " ")
		}
		if got != c.want {
			t.Errorf("GET %s: %q, want %q", c.path, got, c.want)
		}
	}

	// A virtual with the same policies whose iRules do not ask runs the
	// policies' rules that record nothing.
	for _, c := range []string{
		"create ltm rule plain { when HTTP_REQUEST { HTTP::header insert X-Plain 1 } }",
		"create ltm virtual vs2 destination 127.109.0.2:80 pool web profiles replace-all-with { tcp http } policies add { route posts } rules { plain }",
		"create ltm virtual vs3 destination 127.109.0.3:80 pool web profiles replace-all-with { tcp http } policies add { route posts }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	tr := e.translate(e.Config())
	seen := 0
	for v, rl := range tr.rules {
		seen++
		if got, want := strings.Contains(rl.key, "_matched"), v.Name == "/Common/vs"; got != want {
			t.Errorf("virtual %s: its policies record their matches: %v, want %v", v.Name, got, want)
		}
	}
	if seen != 3 {
		t.Errorf("%d virtuals with rules, want 3", seen)
	}
}
