package daemon

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// TestPolicyTargetsSwitch: `POLICY::targets TARGET disable` in one
// request's rule switches the policy's actions on that target off for
// the later requests of the connection, enable switches them back, and
// a target no policy has is a rule error the client sees as a reset.
// The client is curl, whose requests share one kept-alive connection.
func TestPolicyTargetsSwitch(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	e, _ := openWithPlane(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.163.2.11:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s X-Policy=%s\n", r.URL.Path, r.Header.Get("X-Policy"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool web members add { 127.163.2.11:8080 }",
		"create ltm policy mark legacy requires add { http } rules add { all { actions add { 0 { http-header insert name X-Policy value 1 } } } }",
		`create ltm rule switch { when HTTP_REQUEST {
    switch [HTTP::path] {
        "/off" { POLICY::targets http-header disable }
        "/on" { POLICY::targets http-header enable }
        "/bad" { POLICY::targets forward disable }
    }
} }`,
		"create ltm virtual vs destination 127.163.2.1:80 pool web profiles replace-all-with { tcp http } source-address-translation { type automap } policies add { mark } rules { switch }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// Wait for the virtual to answer.
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("http://127.163.2.1/ready")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the virtual does not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	client.CloseIdleConnections()
	var args []string
	for _, p := range []string{"/a", "/off", "/b", "/on", "/c"} {
		args = append(args, "http://127.163.2.1"+p)
	}
	out, err := exec.Command(curl, append([]string{"-sS", "--max-time", "10"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	// The policy runs before the rule: /off still has the header, /on not yet.
	want := "/a X-Policy=1\n/off X-Policy=1\n/b X-Policy=\n/on X-Policy=\n/c X-Policy=1\n"
	if string(out) != want {
		t.Fatalf("curl got:\n%s\nwant:\n%s", out, want)
	}
	out, err = exec.Command(curl, "-sS", "--max-time", "10", "http://127.163.2.1/bad").CombinedOutput()
	if err == nil {
		t.Fatalf("GET /bad: %s, want the connection reset by the rule's error", out)
	}
}
