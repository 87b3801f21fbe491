package daemon

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServiceDownImmediateAction: while every member of its pool is down
// (here forced offline), a virtual with service-down-immediate-action
// reset or drop refuses a new connection before reading it; with none it
// reads the request and answers it as without a member (the http
// profile's fallback redirect). Members back, connections are served.
func TestServiceDownImmediateAction(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.4.9.11:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.4.9.11:8080 }",
		"create ltm profile http h_fb defaults-from http fallback-host http://sorry.example.com/",
		"create ltm virtual v destination 127.4.9.1:80 pool p profiles replace-all-with { tcp { } h_fb { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// answer is what a client of v gets for one request: the start of
	// the answer, or "reset".
	answer := func() string {
		c, err := net.DialTimeout("tcp", "127.4.9.1:80", 2*time.Second)
		if errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: www\r\nConnection: close\r\n\r\n"); errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			return "reset" // the write took the reset: the read would see only the end
		}
		b, err := io.ReadAll(c)
		switch {
		case errors.Is(err, syscall.ECONNRESET):
			return "reset"
		case err != nil:
			t.Fatal(err)
		}
		line, _, _ := strings.Cut(string(b), "\r\n")
		return line
	}
	for _, tc := range []struct {
		action, member, want string
	}{
		{"none", "user-down", "HTTP/1.0 302 Found"},
		{"reset", "user-down", "reset"},
		{"drop", "user-down", "reset"},
		{"reset", "user-up", "HTTP/1.1 200 OK"},
	} {
		for _, c := range []string{
			"modify ltm virtual v service-down-immediate-action " + tc.action,
			"modify ltm pool p members modify { 127.4.9.11:8080 { state " + tc.member + " } }",
		} {
			if _, err := run(t, s, c); err != "" {
				t.Fatalf("%s: %s", c, err)
			}
		}
		if got := answer(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s, member %s: %q, want %q", tc.action, tc.member, got, tc.want)
		}
	}
	if _, err := run(t, s, "modify ltm virtual v service-down-immediate-action reselect"); !strings.Contains(err, "reselect") {
		t.Errorf("reselect: %q", err)
	}
}
