package dataplane

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/wsframe"
)

// l7Member is a member that speaks HTTP/1.1 by hand, so that it can also
// switch to raw bytes: an Upgrade request is answered 101, CONNECT 200,
// GET /raw with a "RAW" line, and from then on every byte is echoed.
// /refuse-upgrade answers an upgrade 400. Any other request gets
// "<label> <method> <uri> body=<body> lb=<X-LB> send=<X-Send> xff=<XFF>"
// with X-Member: <label>; /redirect answers a 302 to the Location given
// in the request's X-To header; /flaky answers 503 to its first request.
type l7Member struct {
	label string
	conns atomic.Int32
	reqs  atomic.Int32
	flaky atomic.Int32
}

func startL7Member(t *testing.T, addr, label string) *l7Member {
	t.Helper()
	m := &l7Member{label: label}
	serveConns(t, addr, func(c net.Conn) {
		m.conns.Add(1)
		m.serve(c)
	})
	return m
}

func (m *l7Member) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		m.reqs.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == "CONNECT":
			io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
			echo(c, br)
			return
		case r.Header.Get("Upgrade") != "" && r.URL.Path == "/refuse-upgrade":
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 7\r\n\r\nrefused")
			continue
		case r.Header.Get("Upgrade") != "":
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: "+r.Header.Get("Upgrade")+"\r\nConnection: Upgrade\r\n\r\n")
			echo(c, br)
			return
		case r.URL.Path == "/raw":
			io.WriteString(c, "RAW\n")
			echo(c, br)
			return
		case r.URL.Path == "/redirect":
			io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: "+r.Header.Get("X-To")+"\r\nContent-Length: 0\r\n\r\n")
			continue
		case r.URL.Path == "/flaky" && m.flaky.Add(1) == 1:
			io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
			continue
		}
		out := fmt.Sprintf("%s %s %s body=%s lb=%s send=%s xff=%s", m.label, r.Method, r.RequestURI, body,
			r.Header.Get("X-LB"), r.Header.Get("X-Send"), r.Header.Get("X-Forwarded-For"))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Member: %s\r\nContent-Length: %d\r\n\r\n%s", m.label, len(out), out)
	}
}

// echo copies what the peer sends back to it, starting with what the
// reader already holds.
func echo(c net.Conn, br *bufio.Reader) {
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		c.Write(b)
		br.Discard(n)
	}
	io.Copy(c, c)
}

func l7Config(t *testing.T, vs string, oc bool, opts mblb.HTTPOptions, rule string, members ...string) *Config {
	t.Helper()
	cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: opts}}, members...)
	if oc {
		cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
	}
	if rule != "" {
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	}
	return cfg
}

// readLine reads one line with a deadline.
func readLine(t *testing.T, c *httpRuleClient) string {
	t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l, err := c.br.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %q %v", l, err)
	}
	return l
}

// TestHTTPTunnels: an Upgrade answered 101, a CONNECT answered 200 and a
// request after which the rule ran HTTP::disable each turn the client's
// connection into a byte tunnel to the member that answered, with and
// without OneConnect; a refused upgrade leaves it HTTP, and the next
// request on it is served.
func TestHTTPTunnels(t *testing.T) {
	startL7Member(t, "127.0.131.11:80", "M1")
	rule := `when HTTP_REQUEST { if { [HTTP::path] eq "/raw" } { HTTP::disable } }`
	upgrade := "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
	for _, tc := range []struct {
		name string
		vs   string
		oc   bool
	}{{"per-connection", "127.0.131.1:80", false}, {"oneconnect", "127.0.131.2:80", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, lg := newPlane(t)
			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, rule, "127.0.131.11:80"))
			for _, open := range []struct {
				name, req, first string
			}{
				{"upgrade", upgrade, "HTTP/1.1 101 Switching Protocols"},
				{"connect", "CONNECT db.example:5432 HTTP/1.1\r\nHost: db.example:5432\r\n\r\n", "HTTP/1.1 200 Connection Established"},
				{"disable", httpReq("h", "/raw"), "RAW"},
			} {
				c := dialHTTPVS(t, tc.vs)
				// A request before it, pipelined with it: its answer comes
				// first, then the tunnel's.
				io.WriteString(c.c, httpReq("h", "/before")+open.req+"ping 1\n")
				r, err := http.ReadResponse(c.br, nil)
				if err != nil {
					t.Fatalf("%s: %v (log %s)", open.name, err, lg)
				}
				io.Copy(io.Discard, r.Body)
				if l := readLine(t, c); !strings.HasPrefix(l, open.first) {
					t.Fatalf("%s: first line %q", open.name, l)
				}
				if open.name != "disable" {
					for l := readLine(t, c); l != "\r\n"; l = readLine(t, c) {
					}
				}
				if l := readLine(t, c); l != "ping 1\n" {
					t.Fatalf("%s: echo %q", open.name, l)
				}
				big := strings.Repeat("x", 200<<10) + "\n"
				io.WriteString(c.c, big)
				if l := readLine(t, c); l != big {
					t.Fatalf("%s: %d bytes echoed, want %d", open.name, len(l), len(big))
				}
				// The client's close ends the tunnel in order.
				c.c.(*net.TCPConn).CloseWrite()
				c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if rest, err := io.ReadAll(c.br); err != nil || len(rest) != 0 {
					t.Fatalf("%s: after the client's close: %q %v", open.name, rest, err)
				}
			}
			// Refused: the connection stays HTTP.
			c := dialHTTPVS(t, tc.vs)
			r, body, err := c.do(strings.Replace(upgrade, "/chat", "/refuse-upgrade", 1))
			if err != nil || r.StatusCode != 400 || body != "refused" {
				t.Fatalf("refused upgrade: %v %q %v", r, body, err)
			}
			if _, body, err := c.do(httpReq("h", "/after")); err != nil || !strings.HasPrefix(body, "M1 GET /after") {
				t.Fatalf("after a refused upgrade: %q %v", body, err)
			}
			eventually(t, "tunnel flows gone", func() bool { c, _ := countFlows(p); return c == 1 })
		})
	}
}

// TestHTTPWebSocketClient runs Python's websockets client and server
// (Debian python3-websockets) through the virtual: the handshake and
// every frame cross the tunnel.
func TestHTTPWebSocketClient(t *testing.T) {
	py := ""
	for _, cand := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(cand, "-c", "import websockets").Run() == nil {
			py = cand
			break
		}
	}
	if py == "" {
		t.Skip("python3 with the websockets module (Debian python3-websockets) is not installed")
	}
	server := exec.Command(py, "-c", `
import asyncio, websockets
async def echo(ws, path=None):
    async for m in ws:
        await ws.send("echo " + m)
async def main():
    async with websockets.serve(echo, "127.0.131.21", 8765):
        print("ready", flush=True)
        await asyncio.Future()
asyncio.run(main())
`)
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	ready := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(out).ReadString('\n'); ready <- l }()
	select {
	case l := <-ready:
		if !strings.HasPrefix(l, "ready") {
			t.Fatalf("websocket server: %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("websocket server did not start")
	}
	for _, tc := range []struct {
		name string
		vs   string
		oc   bool
		ws   *wsframe.Options
		rule string
	}{
		{"per-connection", "127.0.131.3:80", false, nil, ""},
		{"oneconnect", "127.0.131.4:80", true, nil, ""},
		// The websocket profile frames the tunnel: permessage-deflate
		// frames (RSV1) and fragments pass, a rule reads every frame.
		{"websocket profile", "127.0.236.3:80", false, &wsframe.Options{}, `when WS_CLIENT_FRAME { WS::collect frame }
when WS_CLIENT_DATA { if { [WS::frame type] == 8 } { log local0. close } }`},
		{"websocket profile remasking", "127.0.236.4:80", true, &wsframe.Options{Masking: wsframe.Remask}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, lg := newPlane(t)
			mustApply(t, p, l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{InsertXFF: true, WebSocket: tc.ws}, tc.rule, "127.0.131.21:8765"))
			client := exec.Command(py, "-c", `
import asyncio, websockets, sys
async def main():
    async with websockets.connect("ws://`+tc.vs+`/chat") as ws:
        for i in range(3):
            await ws.send("hello %d" % i)
            print(await ws.recv())
        await ws.send("x" * 100000)
        print(len(await ws.recv()))
asyncio.run(asyncio.wait_for(main(), 20))
`)
			got, err := client.CombinedOutput()
			if err != nil {
				t.Fatalf("websocket client: %v\n%s\nlog: %s", err, got, lg)
			}
			want := "echo hello 0\necho hello 1\necho hello 2\n100005\n"
			if string(got) != want {
				t.Fatalf("websocket client said %q, want %q", got, want)
			}
		})
	}
}

// TestHTTPConnectCurl: curl tunnels through the virtual (curl -p -x) to a
// forward proxy member, which reaches the origin; the origin's answer
// comes back through the tunnel.
func TestHTTPConnectCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	startHTTPServer(t, "127.0.131.32:80", "ORIGIN")
	// The member: a forward proxy that answers CONNECT and joins the two.
	serveConns(t, "127.0.131.31:3128", func(c net.Conn) {
		br := bufio.NewReader(c)
		r, err := http.ReadRequest(br)
		if err != nil || r.Method != "CONNECT" {
			return
		}
		o, err := net.Dial("tcp", r.Host)
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
			return
		}
		defer o.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
		go func() { io.Copy(o, br); o.(*net.TCPConn).CloseWrite() }()
		io.Copy(c, o)
	})
	p, lg := newPlane(t)
	mustApply(t, p, l7Config(t, "127.0.131.5:3128", false, mblb.HTTPOptions{}, "", "127.0.131.31:3128"))
	out, err := exec.Command("curl", "-sS", "--max-time", "10", "-p", "-x", "http://127.0.131.5:3128", "http://127.0.131.32/through").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ORIGIN host=127.0.131.32 xff= tag= /through") {
		t.Fatalf("curl through the tunnel: %q %v (log %s)", out, err, lg)
	}
}

// TestHTTPExpectContinue: the proxy invites the body of a request that
// asks with Expect: 100-continue (it buffers the body before choosing a
// member), and the member's answer follows without a second 100; curl's
// upload takes the same path.
func TestHTTPExpectContinue(t *testing.T) {
	startL7Member(t, "127.0.131.41:80", "M1")
	p, lg := newPlane(t)
	mustApply(t, p, l7Config(t, "127.0.131.6:80", false, mblb.HTTPOptions{}, "", "127.0.131.41:80"))
	c := dialHTTPVS(t, "127.0.131.6:80")
	io.WriteString(c.c, "PUT /up HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	if l := readLine(t, c); l != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("first answer %q, want 100 Continue (log %s)", l, lg)
	}
	if l := readLine(t, c); l != "\r\n" {
		t.Fatalf("after 100 Continue: %q", l)
	}
	io.WriteString(c.c, "hello")
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.HasPrefix(string(body), "M1 PUT /up body=hello") {
		t.Fatalf("answer %d %q", r.StatusCode, body)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		return
	}
	// curl waits for the 100 up to --expect100-timeout; a missing 100
	// would only slow it down, so the test checks what curl reports.
	out, err := exec.Command("curl", "-sS", "-v", "--max-time", "20", "--expect100-timeout", "15",
		"-H", "Expect: 100-continue", "--data-binary", "payload", "http://127.0.131.6/post").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("< HTTP/1.1 100 Continue")) || !bytes.Contains(out, []byte("M1 POST /post body=payload")) {
		t.Fatalf("curl: %v\n%s", err, out)
	}
}

// TestHTTPMaxRequests: after max-requests requests the answer says
// Connection: close and the connection closes.
func TestHTTPMaxRequests(t *testing.T) {
	startL7Member(t, "127.0.131.51:80", "M1")
	p, _ := newPlane(t)
	mustApply(t, p, l7Config(t, "127.0.131.7:80", true, mblb.HTTPOptions{MaxRequests: 2}, "", "127.0.131.51:80"))
	c := dialHTTPVS(t, "127.0.131.7:80")
	for i, wantClose := range []bool{false, true} {
		r, _, err := c.do(httpReq("h", "/n"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Close != wantClose {
			t.Fatalf("request %d: Connection close %v, want %v (%v)", i+1, r.Close, wantClose, r.Header)
		}
	}
	if !c.closed() {
		t.Fatal("the connection stayed open after max-requests")
	}
}

// TestHTTPRuleEventsFull runs every HTTP event a request meets, in F5's
// order, and checks what each one's edits did: the body HTTP_REQUEST_DATA
// replaced reaches the member with its new length, the headers LB_SELECTED
// and HTTP_REQUEST_SEND set reach it too, and the response body
// HTTP_RESPONSE_DATA replaced reaches the client.
func TestHTTPRuleEventsFull(t *testing.T) {
	startL7Member(t, "127.0.131.61:80", "M1")
	rule := `
when HTTP_REQUEST { log local0. "HTTP_REQUEST"; if { [HTTP::method] eq "POST" } { HTTP::collect 5 } }
when HTTP_REQUEST_DATA {
    log local0. "HTTP_REQUEST_DATA [HTTP::payload]"
    HTTP::payload replace 0 5 "HELLO, WORLD"
}
when LB_SELECTED { log local0. "LB_SELECTED"; HTTP::header insert X-LB [LB::server addr] }
when SERVER_CONNECTED { log local0. "SERVER_CONNECTED" }
when HTTP_REQUEST_SEND { log local0. "HTTP_REQUEST_SEND"; clientside { HTTP::header insert X-Send [HTTP::request_num] } }
when HTTP_RESPONSE { log local0. "HTTP_RESPONSE [HTTP::status]"; HTTP::collect }
when HTTP_RESPONSE_DATA {
    log local0. "HTTP_RESPONSE_DATA [HTTP::payload length]"
    HTTP::payload replace 0 0 "<"
}
when HTTP_RESPONSE_RELEASE { log local0. "HTTP_RESPONSE_RELEASE"; HTTP::header insert X-Release yes }
`
	for _, tc := range []struct {
		name string
		vs   string
		oc   bool
	}{{"per-connection", "127.0.131.8:80", false}, {"oneconnect", "127.0.131.9:80", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, plog := newPlane(t)
			cfg := l7Config(t, tc.vs, tc.oc, mblb.HTTPOptions{}, "", "127.0.131.61:80")
			var lg *ruleLog
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, rule)
			mustApply(t, p, cfg)
			c := dialHTTPVS(t, tc.vs)
			r, body, err := c.do("POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n8\r\nlo world\r\n0\r\n\r\n")
			if err != nil {
				t.Fatalf("%v\nrule log: %s\nlog: %s", err, lg, plog)
			}
			want := "<M1 POST /p body=HELLO, WORLD world lb=127.0.131.61 send=1 xff="
			if body != want || r.Header.Get("X-Release") != "yes" {
				t.Fatalf("answer %q %v, want %q", body, r.Header, want)
			}
			var got []string
			for _, l := range lg.Lines() {
				got = append(got, l[strings.LastIndex(l, ": ")+2:])
			}
			wantEv := []string{"HTTP_REQUEST", "HTTP_REQUEST_DATA hello world", "LB_SELECTED", "SERVER_CONNECTED",
				"HTTP_REQUEST_SEND", "HTTP_RESPONSE 200", fmt.Sprintf("HTTP_RESPONSE_DATA %d", len(want)-1), "HTTP_RESPONSE_RELEASE"}
			if strings.Join(got, "|") != strings.Join(wantEv, "|") {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEv, "\n"))
			}
		})
	}
}

// TestHTTPRuleRetryAndFallback: HTTP::retry sends the request again in
// place of a 503 (the client sees only the second answer);
// HTTP::fallback redirects a request no member can serve.
func TestHTTPRuleRetryAndFallback(t *testing.T) {
	m := startL7Member(t, "127.0.131.71:80", "M1")
	rule := `
when HTTP_REQUEST {
    set req [HTTP::request]
    if { [HTTP::path] eq "/down" } { pool down_pool ; HTTP::fallback "http://sorry.example.com/" }
}
when HTTP_RESPONSE { if { [HTTP::status] == 503 } { HTTP::retry $req } }
`
	p, lg := newPlane(t)
	cfg := l7Config(t, "127.0.131.10:80", true, mblb.HTTPOptions{}, rule, "127.0.131.71:80")
	withPool(cfg, "/Common/down_pool", "127.0.131.72:80") // nothing listens
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.0.131.10:80")
	r, body, err := c.do(httpReq("h", "/flaky"))
	if err != nil || r.StatusCode != 200 || !strings.HasPrefix(body, "M1 GET /flaky") {
		t.Fatalf("retried: %v %q %v (log %s)", r, body, err, lg)
	}
	if n := m.reqs.Load(); n != 2 {
		t.Fatalf("member saw %d requests, want 2 (the first and its retry)", n)
	}
	r, _, err = c.do(httpReq("h", "/down"))
	if err != nil || r.StatusCode != 302 || r.Header.Get("Location") != "http://sorry.example.com/" {
		t.Fatalf("fallback: %v %v", r, err)
	}

	// The same from LB_FAILED.
	p2, _ := newPlane(t)
	cfg = l7Config(t, "127.0.131.17:80", false, mblb.HTTPOptions{}, `when LB_FAILED { HTTP::fallback "http://sorry.example.com/lb" }`, "127.0.131.72:80")
	mustApply(t, p2, cfg)
	c = dialHTTPVS(t, "127.0.131.17:80")
	r, _, err = c.do(httpReq("h", "/x"))
	if err != nil || r.StatusCode != 302 || r.Header.Get("Location") != "http://sorry.example.com/lb" {
		t.Fatalf("LB_FAILED fallback: %v %v", r, err)
	}
}

// TestHTTPRuleOneConnect: ONECONNECT::reuse disable closes the shared
// connection after its answer; ONECONNECT::label keeps labelled requests
// off other labels' connections; ONECONNECT::detach disable keeps a
// client on its member.
func TestHTTPRuleOneConnect(t *testing.T) {
	m := startL7Member(t, "127.0.131.81:80", "M1")
	rule := `
when HTTP_REQUEST {
    switch -glob [HTTP::path] {
        "/noreuse" { ONECONNECT::reuse disable }
        "/label/*" { ONECONNECT::label [lindex [split [HTTP::path] /] 2] }
    }
}
`
	p, lg := newPlane(t)
	mustApply(t, p, l7Config(t, "127.0.131.12:80", true, mblb.HTTPOptions{}, rule, "127.0.131.81:80"))
	c := dialHTTPVS(t, "127.0.131.12:80")
	for _, path := range []string{"/a", "/b", "/noreuse", "/c", "/label/x", "/label/x", "/label/y"} {
		if _, _, err := c.do(httpReq("h", path)); err != nil {
			t.Fatalf("%s: %v (log %s)", path, err, lg)
		}
	}
	// /a, /b and /noreuse share one; /c needs a new one; label x one,
	// label y another.
	if n := m.conns.Load(); n != 4 {
		t.Fatalf("member saw %d connections, want 4", n)
	}

	// detach: round robin over two members, but the client stays.
	startL7Member(t, "127.0.131.82:80", "M2")
	detach := `when HTTP_REQUEST { if { [HTTP::path] eq "/stay" } { ONECONNECT::detach disable } }`
	mustApply(t, p, l7Config(t, "127.0.131.13:80", true, mblb.HTTPOptions{}, detach, "127.0.131.81:80", "127.0.131.82:80"))
	c = dialHTTPVS(t, "127.0.131.13:80")
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		r, _, err := c.do(httpReq("h", "/move"))
		if err != nil {
			t.Fatal(err)
		}
		seen[r.Header.Get("X-Member")]++
	}
	if len(seen) != 2 {
		t.Fatalf("detached requests went to %v, want both members", seen)
	}
	r, _, err := c.do(httpReq("h", "/stay"))
	if err != nil {
		t.Fatal(err)
	}
	stay := r.Header.Get("X-Member")
	for i := 0; i < 4; i++ {
		r, _, err := c.do(httpReq("h", "/after"))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header.Get("X-Member"); got != stay {
			t.Fatalf("after detach disable, request %d went to %s, not %s", i, got, stay)
		}
	}
}

// TestHTTPProfileDetails: redirect-rewrite, accept-xff (source-address
// persistence follows the address in X-Forwarded-For) and
// server-agent-name on the answers the proxy makes.
func TestHTTPProfileDetails(t *testing.T) {
	startL7Member(t, "127.0.131.91:80", "M1")
	p, _ := newPlane(t)
	opts := mblb.HTTPOptions{RedirectRewrite: 3 /* nodes */, ServerAgent: "edge", Fallback: "http://sorry/"}
	cfg := l7Config(t, "127.0.131.14:8080", false, opts, `when HTTP_REQUEST { if { [HTTP::path] eq "/me" } { HTTP::respond 200 content me } }`, "127.0.131.91:80")
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.0.131.14:8080")
	r, _, err := c.do(httpReq("h", "/redirect", "X-To: http://127.0.131.91:80/login\r\n"))
	if err != nil || r.Header.Get("Location") != "http://127.0.131.14:8080/login" {
		t.Fatalf("nodes redirect: %v %v", r.Header, err)
	}
	r, _, err = c.do(httpReq("h", "/redirect", "X-To: http://www.example.com/login\r\n"))
	if err != nil || r.Header.Get("Location") != "http://www.example.com/login" {
		t.Fatalf("redirect to a name: %v %v", r.Header, err)
	}
	r, _, err = c.do(httpReq("h", "/me"))
	if err != nil || r.Header.Get("Server") != "edge" {
		t.Fatalf("server-agent-name: %v %v", r.Header, err)
	}
}

// TestHTTPAcceptXFF: with accept-xff, source-address persistence keys on
// the client address X-Forwarded-For (or an alternative name) gives, so
// users behind one upstream proxy connection spread and each stays put.
func TestHTTPAcceptXFF(t *testing.T) {
	startL7Member(t, "127.0.131.101:80", "M1")
	startL7Member(t, "127.0.131.102:80", "M2")
	p, _ := newPlane(t)
	opts := mblb.HTTPOptions{AcceptXFF: true, XFFNames: []string{"true-client-ip", "x-forwarded-for"}}
	cfg := l7Config(t, "127.0.131.15:80", true, opts, "", "127.0.131.101:80", "127.0.131.102:80")
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(time.Minute)
	mustApply(t, p, cfg)
	c := dialHTTPVS(t, "127.0.131.15:80")
	first := map[string]string{}
	for round := 0; round < 3; round++ {
		for _, user := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
			hdr := "X-Forwarded-For: " + user + ", 192.0.2.1\r\n"
			if round == 1 {
				hdr = "True-Client-IP: " + user + "\r\n"
			}
			r, _, err := c.do(httpReq("h", "/", hdr))
			if err != nil {
				t.Fatal(err)
			}
			got := r.Header.Get("X-Member")
			if first[user] == "" {
				first[user] = got
			} else if first[user] != got {
				t.Fatalf("round %d: %s moved from %s to %s", round, user, first[user], got)
			}
		}
	}
	members := map[string]bool{}
	for _, m := range first {
		members[m] = true
	}
	if len(members) != 2 {
		t.Fatalf("four users behind one connection all went to %v", first)
	}
}

// TestHTTPRuleEditsLength: a rule that changes Content-Length (or drops
// Transfer-Encoding) without touching the body does not desynchronise the
// member or the client: the message is re-framed by its real body.
func TestHTTPRuleEditsLength(t *testing.T) {
	startL7Member(t, "127.0.131.111:80", "M1")
	rule := `
when HTTP_REQUEST { HTTP::header replace Content-Length 2 }
when HTTP_RESPONSE { HTTP::header replace Content-Length 1 }
`
	p, _ := newPlane(t)
	mustApply(t, p, l7Config(t, "127.0.131.16:80", false, mblb.HTTPOptions{}, rule, "127.0.131.111:80"))
	c := dialHTTPVS(t, "127.0.131.16:80")
	for i := 0; i < 2; i++ {
		_, body, err := c.do("POST /len HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
		if err != nil || !strings.HasPrefix(body, "M1 POST /len body=hello") {
			t.Fatalf("round %d: %q %v", i, body, err)
		}
	}
	_, body, err := c.do("POST /len HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	if err != nil || !strings.HasPrefix(body, "M1 POST /len body=abc") {
		t.Fatalf("chunked: %q %v", body, err)
	}
}
