package daemon

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPoolAllowSNAT: allow-snat no on a pool keeps the client's address
// on the connections to its members, over the virtual's
// source-address-translation, on L4 and HTTP virtuals alike; yes (the
// default) translates again.
func TestPoolAllowSNAT(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	fromMember(t, "127.4.7.11:9000", fromHost, false)
	ln, err := net.Listen("tcp", "127.4.7.12:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm snatpool sp members add { 127.4.7.50 }",
		"create ltm pool p_l4 allow-snat no members add { 127.4.7.11:9000 }",
		"create ltm pool p_http allow-snat no members add { 127.4.7.12:8080 }",
		"create ltm virtual v_l4 destination 127.4.7.1:9000 pool p_l4 source-address-translation { type automap } profiles replace-all-with { tcp { } }",
		"create ltm virtual v_http destination 127.4.7.2:80 pool p_http source-address-translation { type snat pool sp } profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	httpSource := func() string {
		c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		r, err := c.Get("http://127.4.7.2/")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	for _, tc := range []struct {
		allow, l4, http string
	}{
		{"no", "127.0.0.1", "127.0.0.1"},
		{"yes", "127.4.7.1", "127.4.7.50"},
		{"no", "127.0.0.1", "127.0.0.1"},
	} {
		for _, p := range []string{"p_l4", "p_http"} {
			if _, err := run(t, s, "modify ltm pool "+p+" allow-snat "+tc.allow); err != "" {
				t.Fatal(err)
			}
		}
		if got := sourceSeen(t, "127.4.7.1:9000"); got != tc.l4 {
			t.Errorf("allow-snat %s, L4: the member saw %s, want %s", tc.allow, got, tc.l4)
		}
		if got := httpSource(); got != tc.http {
			t.Errorf("allow-snat %s, HTTP: the member saw %s, want %s", tc.allow, got, tc.http)
		}
	}
	if _, err := run(t, s, "modify ltm pool p_l4 allow-snat maybe"); !strings.Contains(err, "maybe") {
		t.Errorf("allow-snat maybe: %q", err)
	}
}
