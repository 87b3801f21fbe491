package daemon

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestExternalAndInbandMonitorsFromTmsh: an external monitor made the
// tmsh way runs its stored program with the args and user-defined
// variables; the built-in inband monitor marks a dead member down from
// failed connections.
func TestExternalAndInbandMonitorsFromTmsh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	script := filepath.Join(dir, "check.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n[ \"$3\" = \"--strict\" ] && [ -e \"$FLAG\" ] && echo UP\nexit 0\n"), 0o755)
	os.WriteFile(flag, nil, 0o600)
	labelServer(t, "127.0.172.11:9000", "S1 Response")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create sys file external-monitor check.sh source-path file:"+script,
		"create ltm monitor external ext run check.sh args --strict user-defined { FLAG "+flag+" } interval 1 timeout 3",
		"create ltm pool p members add { 127.0.172.11:9000 } monitor ext",
	)
	waitShow := func(cmd, want string) {
		t.Helper()
		var out string
		for i := 0; i < 400; i++ {
			out, _ = run(t, s, cmd)
			if strings.Contains(out, want) {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("%s: no %q in\n%s", cmd, want, out)
	}
	waitShow("show ltm pool p members", "Monitor Status : up")
	os.Remove(flag)
	waitShow("show ltm pool p members", "Monitor Status : down")
	if _, err := run(t, s, "create sys file external-monitor notexe source-path file:"+flag+"x"); !strings.Contains(err, "cannot read") {
		t.Fatalf("a missing program: %q", err)
	}
	if _, err := run(t, s, "create ltm monitor external bad run check.sh user-defined { 1X y }"); !strings.Contains(err, `"1X" is not a variable name`) {
		t.Fatalf("a bad variable: %q", err)
	}
	// bigip.conf writes user-defined variables one per line.
	conf := filepath.Join(dir, "ext.conf")
	os.WriteFile(conf, []byte("ltm monitor external /Common/ext2 {\n    defaults-from /Common/external\n    run /Common/check.sh\n    user-defined FLAG /x\n    user-defined HOST www.example\n}\n"), 0o600)
	mustRun(t, s, "load sys config merge file "+conf)
	if out, _ := run(t, s, "list ltm monitor external ext2 user-defined"); !strings.Contains(out, "user-defined { FLAG /x HOST www.example }") {
		t.Fatalf("user-defined pairs from a file:\n%s", out)
	}

	// inband: failures within failure-interval mark the member down.
	mustRun(t, s,
		"create ltm monitor inband inb failures 2 retry-time 300",
		"create ltm pool q members add { 127.0.172.11:9000 127.0.172.12:9000 } monitor inb reselect-tries 1",
		"create ltm virtual vs destination 127.0.172.10:9000 pool q profiles replace-all-with { tcp }",
	)
	for i := 0; i < 6; i++ {
		if got := askVS(t, "127.0.172.10:9000", "hi"); got != "S1 Response" {
			t.Fatalf("client %d: %q", i, got)
		}
	}
	waitShow("show ltm pool q members", "Monitor Status : down")
}

// TestScriptedAndTCPEchoMonitorsFromTmsh: a scripted monitor made the
// tmsh way holds its conversation with the member (up while the member
// answers what the script expects, down when it answers otherwise), and
// a tcp-echo monitor is up while the node's echo service echoes.
func TestScriptedAndTCPEchoMonitorsFromTmsh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "hello.script")
	os.WriteFile(script, []byte("# the label servers answer every line\nsend \"hello\\n\"\nexpect \"S1 Response\"\n"), 0o600)
	labelServer(t, "127.0.172.21:9000", "S1 Response")
	labelServer(t, "127.0.172.22:9000", "S2 Response")
	ln, err := net.Listen("tcp", "127.0.172.23:7007")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for i := 0; i < 1000; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				io.CopyN(c, c, 1<<10)
			}()
		}
	}()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm monitor scripted hello filename "+script+" interval 1 timeout 3",
		"create ltm pool p members add { 127.0.172.21:9000 127.0.172.22:9000 } monitor hello",
		"create ltm monitor tcp-echo echo destination *:7007 interval 1 timeout 3",
		"create ltm pool q members add { 127.0.172.23:80 } monitor echo",
	)
	waitShow := func(cmd string, want ...string) {
		t.Helper()
		var out string
		for i := 0; i < 400; i++ {
			out, _ = run(t, s, cmd)
			if ok := func() bool {
				for _, w := range want {
					if !regexp.MustCompile(w).MatchString(out) {
						return false
					}
				}
				return true
			}(); ok {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("%s: no %q in\n%s", cmd, want, out)
	}
	waitShow("show ltm pool p members",
		`(?s)127\.0\.172\.21:9000.*?Monitor Status : up`, `(?s)127\.0\.172\.22:9000.*?Monitor Status : down`)
	waitShow("show ltm pool q members", "Monitor Status : up")
	ln.Close()
	waitShow("show ltm pool q members", "Monitor Status : down")
}

// TestSOAPAndMQTTMonitorsFromTmsh: a soap monitor made the tmsh way is
// up while the service returns what it asks for and down once it
// returns otherwise; an mqtt monitor is up on the broker that accepts
// its login and down on the one that refuses it.
func TestSOAPAndMQTTMonitorsFromTmsh(t *testing.T) {
	t.Parallel()
	broker := func(addr string, code byte) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for i := 0; i < 1000; i++ {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					c.SetDeadline(time.Now().Add(5 * time.Second))
					h := make([]byte, 2)
					if _, err := io.ReadFull(c, h); err != nil || h[0] != 0x10 || h[1] >= 128 {
						return
					}
					io.ReadFull(c, make([]byte, h[1]))
					c.Write([]byte{0x20, 2, 0, code})
					io.ReadFull(c, h) // DISCONNECT
				}()
			}
		}()
	}
	broker("127.0.172.31:1883", 0)
	broker("127.0.172.32:1883", 5)
	var status atomic.Value
	status.Store("ready")
	ln, err := net.Listen("tcp", "127.0.172.33:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if r.URL.Path != "/health" || !strings.Contains(string(body), `<Status xmlns="urn:app">`) {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><StatusResponse xmlns="urn:app">`+
			`<StatusResult>`+status.Load().(string)+`</StatusResult></StatusResponse></s:Body></s:Envelope>`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm monitor mqtt mq username mon password pw interval 1 timeout 3",
		"create ltm pool p members add { 127.0.172.31:1883 127.0.172.32:1883 } monitor mq",
		"create ltm monitor soap health url-path /health namespace urn:app method Status return-type string return-value ready interval 1 timeout 3",
		"create ltm pool q members add { 127.0.172.33:8080 } monitor health",
	)
	waitShow := func(cmd string, want ...string) {
		t.Helper()
		var out string
		for i := 0; i < 400; i++ {
			out, _ = run(t, s, cmd)
			ok := true
			for _, w := range want {
				ok = ok && regexp.MustCompile(w).MatchString(out)
			}
			if ok {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("%s: no %q in\n%s", cmd, want, out)
	}
	waitShow("show ltm pool p members",
		`(?s)127\.0\.172\.31:1883.*?Monitor Status : up`, `(?s)127\.0\.172\.32:1883.*?Monitor Status : down`)
	waitShow("show ltm pool q members", "Monitor Status : up")
	status.Store("draining")
	waitShow("show ltm pool q members", "Monitor Status : down")
}
