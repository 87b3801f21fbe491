package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestExternalMonitor runs a user's script with F5's arguments and
// environment: it prints "up" while a flag file exists.
func TestExternalMonitor(t *testing.T) {
	dir := t.TempDir()
	flag, log := filepath.Join(dir, "flag"), filepath.Join(dir, "log")
	script := filepath.Join(dir, "check.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2 $3 $4 $MON_TMPL_NAME $RUN_I $NODE_IP $NODE_PORT $HOST\" > "+log+"\n[ -e \"$FLAG\" ] && echo up\nexit 0\n"), 0o755)
	os.WriteFile(flag, nil, 0o600)
	startServer(t, "127.0.170.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.170.10:9000", "127.0.170.11:9000")
	cfg.Monitors["/Common/ext"] = &Monitor{Name: "/Common/ext", Type: MonitorExternal, Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond,
		External: &ExternalMonitor{Path: script, RunName: "/Common/check.sh", Args: `a "b c"`, Env: map[string]string{"FLAG": flag, "HOST": "www.example"}}}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/ext"}}
	mustApply(t, p, cfg)
	status := func() string { return memberStat(t, p, "/Common/pool", "/Common/127.0.170.11:9000").MonitorStatus }
	eventually(t, "up", func() bool { return status() == "up" })
	b, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(b)); got != "::ffff:127.0.170.11 9000 a b c /Common/ext /Common/check.sh ::ffff:127.0.170.11 9000 www.example" {
		t.Fatalf("the script saw %q", got)
	}
	os.Remove(flag)
	eventually(t, "down", func() bool { return status() == "down" })
}

// TestInbandMonitor marks a member down after failed connections to it
// and back up after retry-time, without probing.
func TestInbandMonitor(t *testing.T) {
	startServer(t, "127.0.171.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.171.10:9000", "127.0.171.11:9000", "127.0.171.12:9000") // .12: nothing listens
	cfg.Pools["/Common/pool"].ReselectTries = 1
	cfg.Monitors["/Common/inb"] = &Monitor{Name: "/Common/inb", Type: MonitorInband,
		Inband: &InbandMonitor{Failures: 2, FailureInterval: 30 * time.Second, RetryTime: 2 * time.Second}}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/inb"}}
	mustApply(t, p, cfg)
	status := func() string { return memberStat(t, p, "/Common/pool", "/Common/127.0.171.12:9000").MonitorStatus }
	if s := status(); s != "up" {
		t.Fatalf("an inband member starts up, is %s", s)
	}
	for i := 0; i < 4 && status() == "up"; i++ {
		if got := once(t, "127.0.171.10:9000"); got != "S1 Response" {
			t.Fatalf("client %d: %q", i, got)
		}
	}
	if s := status(); s != "down" {
		t.Fatalf("after failed connections the member is %s, want down", s)
	}
	// Down: every client goes to the live member at once.
	for i := 0; i < 3; i++ {
		once(t, "127.0.171.10:9000")
	}
	eventually(t, "retry-time to bring it back", func() bool { return status() == "up" })
}

// startSlowServer answers each line (or HTTP request head) after delay
// (never, with delay < 0): a member that is up but slow.
func startSlowServer(t *testing.T, addr, label string, delay time.Duration) {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after an earlier run
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				<-done
				c.Close()
			}()
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.HasPrefix(line, "GET ") { // the rest of the head
						for l := ""; l != "\r\n"; {
							if l, err = r.ReadString('\n'); err != nil {
								return
							}
						}
					}
					if delay < 0 {
						continue
					}
					time.Sleep(delay)
					if strings.HasPrefix(line, "GET ") {
						fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(label), label)
					} else {
						fmt.Fprintf(c, "%s Response\n", label)
					}
				}
			}()
		}
	}()
}

// TestInbandResponseTime marks a member down whose answers come later
// than the inband monitor's response-time: on a standard virtual a member
// answering every line after 1 s against a response-time of 500 ms,
// and on an http virtual a member that never answers (counted while the
// client still waits). The fast members take every client afterwards.
// The margins are wide so that a loaded machine's delays cannot make a
// fast member look slow.
func TestInbandResponseTime(t *testing.T) {
	startSlowServer(t, "127.0.174.11:9000", "SLOW", time.Second)
	startServer(t, "127.0.174.12:9000", "FAST")
	p, _ := newPlane(t)
	inb := &Monitor{Name: "/Common/inb", Type: MonitorInband,
		Inband: &InbandMonitor{Failures: 2, FailureInterval: 30 * time.Second, ResponseTime: 500 * time.Millisecond, RetryTime: time.Minute}}

	cfg := basic("127.0.174.10:9000", "127.0.174.11:9000", "127.0.174.12:9000")
	cfg.Monitors["/Common/inb"] = inb
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/inb"}}
	mustApply(t, p, cfg)
	status := func(pool, m string) string { return memberStat(t, p, pool, m).MonitorStatus }
	var slow int
	for i := 0; i < 8 && status("/Common/pool", "/Common/127.0.174.11:9000") == "up"; i++ {
		switch got := once(t, "127.0.174.10:9000"); got {
		case "SLOW Response":
			slow++
		case "FAST Response":
		default:
			t.Fatalf("client %d: %q", i, got)
		}
	}
	if s := status("/Common/pool", "/Common/127.0.174.11:9000"); s != "down" || slow != 2 {
		t.Fatalf("after %d slow answers the slow member is %s; want down after 2", slow, s)
	}
	if s := status("/Common/pool", "/Common/127.0.174.12:9000"); s != "up" {
		t.Fatalf("the fast member is %s", s)
	}
	for i := 0; i < 4; i++ {
		if got := once(t, "127.0.174.10:9000"); got != "FAST Response" {
			t.Fatalf("with the slow member down, client %d: %q", i, got)
		}
	}

	// An http virtual: the hung member is counted by the clock's timer
	// while the client waits (failures 1).
	startSlowServer(t, "127.0.174.21:80", "HUNG", -1)
	startSlowServer(t, "127.0.174.22:80", "WEB", 0)
	hcfg := mblbConfig("127.0.174.20:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.174.21:80", "127.0.174.22:80")
	one := *inb
	one.Inband = &InbandMonitor{Failures: 1, FailureInterval: 30 * time.Second, ResponseTime: 500 * time.Millisecond, RetryTime: time.Minute}
	hcfg.Monitors["/Common/inb"] = &one
	hcfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/inb"}}
	mustApply(t, p, hcfg)
	hung := func() string { return status("/Common/pool", "/Common/127.0.174.21:80") }
	for i := 0; i < 4 && hung() == "up"; i++ {
		c := dialHTTPVS(t, "127.0.174.20:80")
		c.c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c.c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		got := make(chan string, 1)
		go func() {
			r, err := http.ReadResponse(c.br, nil)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(r.Body)
			got <- string(b)
		}()
		// An answer comes from the live member; a client waiting on the hung
		// one sees it marked down while it still waits.
	wait:
		for j := 0; ; j++ {
			select {
			case body := <-got:
				if body != "WEB" {
					t.Fatalf("http client %d: %q", i, body)
				}
				break wait
			case <-time.After(20 * time.Millisecond):
				if hung() == "down" {
					break wait
				}
				if j == 100 {
					t.Fatalf("http client %d: no answer and the hung member is %s after 2 s", i, hung())
				}
			}
		}
		c.c.Close()
	}
	if s := hung(); s != "down" {
		t.Fatalf("the hung member is %s", s)
	}
	c := dialHTTPVS(t, "127.0.174.20:80")
	for i := 0; i < 3; i++ {
		if _, body, err := c.do("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil || body != "WEB" {
			t.Fatalf("with the hung member down, request %d: %q %v", i, body, err)
		}
	}
}
