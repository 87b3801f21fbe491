package daemon

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holdJS keeps each hold call's answer until a release notify comes, so
// that a test can see other clients served while a rule waits on it.
const holdJS = `var f5 = require('f5-nodejs');
var ilx = new f5.ILXServer();
var held = [];
ilx.addMethod('hold', function(req, res) { held.push(res); });
ilx.addMethod('release', function(req, res) {
  held.forEach(function(r) { r.reply('released ' + req.params()[0]); });
  held = [];
});
ilx.addMethod('greet', function(req, res) { res.reply(['hello', req.params()[0]]); });
ilx.listen();
`

// TestILXThroughVirtual: curl through an http virtual whose iRule calls
// an extension: the reply becomes the answer; while one request's rule
// waits for the extension (ILX::call), other clients of the virtual are
// served, and the waiting one is answered when an ILX::notify releases
// it.
func TestILXThroughVirtual(t *testing.T) {
	for _, tool := range []string{"node", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian nodejs, curl): the extension or the client cannot run", tool)
		}
	}
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)

	ln, err := net.Listen("tcp", "127.165.1.11:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "member %s\n", r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	if _, err := run(t, s, "create ilx workspace ws extension ext"); err != "" {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ilx/workspaces/Common/ws/extensions/ext/index.js"), []byte(holdJS), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"create ilx plugin pl from-workspace ws extensions { ext { concurrency-mode single } }",
		"create ltm pool p members add { " + ln.Addr().String() + " }",
		`create ltm rule r {
when HTTP_REQUEST {
    set h [ILX::init pl ext]
    switch [HTTP::path] {
        "/hold" { HTTP::respond 200 content "[ILX::call $h -timeout 60000 hold]\n" }
        "/release" { ILX::notify $h release now; HTTP::respond 200 content "sent\n" }
        "/greet" { HTTP::respond 200 content "[lindex [ILX::call $h greet [IP::client_addr]] 1]\n" }
    }
}
}`,
		"create ltm virtual v destination 127.165.1.10:80 pool p rules { r } profiles replace-all-with { tcp http }",
	} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	curl := func(ctx context.Context, path string) (string, error) {
		out, err := exec.CommandContext(ctx, "curl", "-sS", "--max-time", "60", "http://127.165.1.10"+path).CombinedOutput()
		return string(out), err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := curl(ctx, "/greet")
		if err == nil && out == "127.0.0.1\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("greet through the virtual: %q, %v", out, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	held := make(chan string, 1)
	go func() {
		out, err := curl(ctx, "/hold")
		if err != nil {
			out += err.Error()
		}
		held <- out
	}()
	// The held request's rule waits; other requests go on meanwhile.
	for i := range 5 {
		out, err := curl(ctx, fmt.Sprintf("/plain%d", i))
		if err != nil || out != fmt.Sprintf("member /plain%d\n", i) {
			t.Fatalf("a request while another waits on the extension: %q, %v", out, err)
		}
	}
	select {
	case out := <-held:
		t.Fatalf("the held request was answered before its release: %q", out)
	default:
	}
	// Release it (the hold may still be on its way to the extension:
	// release again until it is answered).
	var out string
	for done := false; !done; {
		if o, err := curl(ctx, "/release"); err != nil || o != "sent\n" {
			t.Fatalf("release: %q, %v", o, err)
		}
		select {
		case out = <-held:
			done = true
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("the held request was never answered")
		}
	}
	if !strings.HasPrefix(out, "released now") {
		t.Errorf("the held request: %q", out)
	}
}

// relayJS relays both ways and tags the member's answers.
const relayJS = `var f5 = require('f5-nodejs');
var plugin = new f5.ILXPlugin();
plugin.on('connect', function (flow) {
  flow.client.on('data', function (d) { flow.server.write(d); });
  flow.server.on('data', function (d) { flow.client.write('[' + d + ']'); });
});
plugin.start();
`

// TestILXStreamingVirtual: a virtual with an ilx profile streams through
// the extension to the pool CLIENT_ACCEPTED chose; a configuration change
// elsewhere keeps an open flow going; deleting the plugin the profile
// names is refused while it is used.
func TestILXStreamingVirtual(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (Debian nodejs): the extension cannot run")
	}
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	member := func(addr, name string) string {
		ln := serveEach(t, addr, func(c net.Conn) {
			buf := make([]byte, 512)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				fmt.Fprintf(c, "%s:%s", name, buf[:n])
			}
		})
		return ln.Addr().String()
	}
	a, b := member("127.174.1.11:0", "a"), member("127.174.1.12:0", "b")
	if _, err := run(t, s, "create ilx workspace ws extension ext"); err != "" {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ilx/workspaces/Common/ws/extensions/ext/index.js"), []byte(relayJS), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"create ilx plugin pl from-workspace ws extensions { ext { concurrency-mode single } }",
		"create ltm pool pa members add { " + a + " }",
		"create ltm pool pb members add { " + b + " }",
		"create ltm rule to_b { when CLIENT_ACCEPTED { pool pb } }",
		"create ltm profile ilx ip plugin pl",
		"create ltm virtual v destination 127.174.1.10:9000 pool pa rules { to_b } profiles replace-all-with { tcp ip }",
	} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	var c net.Conn
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		if c, err = net.DialTimeout("tcp", "127.174.1.10:9000", time.Second); err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			fmt.Fprint(c, "one")
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			if string(buf[:n]) == "[b:one]" {
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer through the ilx virtual from pool pb")
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer c.Close()
	// A change elsewhere: the open flow goes on.
	if _, err := run(t, s, "create ltm pool other members add { 127.174.1.13:9000 }"); err != "" {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "two")
	buf := make([]byte, 64)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "[b:two]" {
		t.Fatalf("the open flow after a change: %q, %v", buf[:n], err)
	}
	if _, err := run(t, s, "delete ilx plugin pl"); err == "" {
		t.Fatal("deleting the plugin an ilx profile names was allowed")
	}
}
