//go:build linux

package dataplane

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
)

// startPortEcho is an HTTP member that answers each request with its
// label, the address the request reached it at (which port of a member
// at port any), the connection it came on, and the headers a rule added.
func startPortEcho(t *testing.T, addr, label string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		local := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		fmt.Fprintf(w, "%s local=%s conn=%s host=%s port=%s addr=%s cs=%s", label, local, r.RemoteAddr, r.Host,
			r.Header.Get("X-Port"), r.Header.Get("X-Local"), r.Header.Get("X-CS"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// echoField is one key=value of a startPortEcho answer.
func echoField(body, key string) string {
	for _, f := range strings.Fields(body) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestAnyPortHTTP: an HTTP virtual on every port of 127.233.1.1 sends
// each request to its members at port any on the port the client asked
// for, with and without OneConnect (whose connections to one port never
// carry a request for another; without it a connection stays with its
// first member; a persistence cookie sends new connections back to
// its member), its rule seeing the port and address the client
// reached (in HTTP_REQUEST, and through clientside in
// HTTP_REQUEST_SEND); a virtual with translate-address disabled sends each
// request where the client was going (a listener of the virtual's own
// address, reached from that address); an mblb virtual (per-read
// framing) on every port of 127.233.1.4 balances each message to its
// member on the client's port; HTTP/2 clients (http2 profile,
// cleartext) and TLS clients (client-ssl) of such a virtual too.
func TestAnyPortHTTP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, a := range []string{"127.233.1.2:30011", "127.233.1.2:30012"} {
		startPortEcho(t, a, "M")
	}
	for _, a := range []string{"127.233.1.6:30011", "127.233.1.6:30012"} {
		startPortEcho(t, a, "N")
	}
	startPortEcho(t, "127.233.1.3:30013", "OWN") // another program on the virtual's address
	startServer(t, "127.233.1.5:30014", "P14")
	startServer(t, "127.233.1.5:30015", "P15")
	cert, key, roots := testCert(t, "any.example")
	const rule = `when HTTP_REQUEST {
    HTTP::header insert X-Port [TCP::local_port]
    HTTP::header insert X-Local [IP::local_addr]
}
when HTTP_REQUEST_SEND {
    HTTP::header insert X-CS [clientside {TCP::local_port}]
}`
	for _, tc := range []struct {
		name       string
		oneConnect bool
	}{
		{"one member per connection", false},
		{"oneconnect", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := loggedPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
				Cookie: httpx.CookieSpec{Name: httpx.PoolCookieName("/Common/pool")}}}}
			if tc.oneConnect {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig("127.233.1.1:0", m, "127.233.1.2:0", "127.233.1.6:0")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
			cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/cookie", Method: PersistCookie, Timeout: 180 * time.Second}
			tav := &Virtual{Name: "/Common/tav", Destination: ap("127.233.1.3:0"), Enabled: true,
				TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone},
				MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}}
			cfg.Virtuals["/Common/tav"] = tav
			cfg.Virtuals["/Common/mblb"] = &Virtual{Name: "/Common/mblb", Destination: ap("127.233.1.4:0"), Enabled: true,
				TranslateAddress: true, TranslatePort: true, Pool: "/Common/p5", SNAT: SNAT{Type: SNATNone},
				MBLB: &MBLB{Request: mblb.Framing{Mode: mblb.PerRead}}}
			withPool(cfg, "/Common/p5", "127.233.1.5:0")
			// HTTP/2 clients (cleartext) and TLS clients of the same
			// engine, on every port of addresses of their own.
			for name, d := range map[string]string{"/Common/h2": "127.233.1.7:0", "/Common/tls": "127.233.1.8:0"} {
				v := *cfg.Virtuals["/Common/vs"]
				m := *v.MBLB
				v.Name, v.Destination, v.MBLB = name, ap(d), &m
				cfg.Virtuals[name] = &v
			}
			cfg.Virtuals["/Common/h2"].HTTP2 = &HTTP2{Always: true}
			cfg.Virtuals["/Common/tls"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)

			// Keep-alive clients on two ports, their requests interleaved:
			// each reaches the member's listener on its own port, and the
			// rule sees that port and the address.
			c11 := dialHTTPVS(t, "127.233.1.1:30011")
			c12 := dialHTTPVS(t, "127.233.1.1:30012")
			conns := map[string]string{} // member-side connection -> port it reached
			labels := map[*httpRuleClient]string{}
			for i := 0; i < 6; i++ {
				// 11, 11, 12, 12, 11, 11 ...: round robin alone would move
				// a connection to the other member.
				for _, c := range []struct {
					cl   *httpRuleClient
					port string
				}{{c11, "30011"}, {c12, "30012"}}[i/2%2 : i/2%2+1] {
					r, body, err := c.cl.do(httpReq("site.example", "/"))
					if err != nil || r.StatusCode != http.StatusOK {
						t.Fatalf("port %s request %d: %v %q", c.port, i, err, body)
					}
					if got := echoField(body, "local"); !strings.HasSuffix(got, ":"+c.port) {
						t.Errorf("port %s request %d reached the member at %s: %q", c.port, i, got, body)
					}
					// Without OneConnect a connection stays with the
					// member its first request was balanced to.
					label, _, _ := strings.Cut(body, " ")
					if was := labels[c.cl]; !tc.oneConnect && was != "" && was != label {
						t.Errorf("port %s request %d: the connection moved from member %s to %s", c.port, i, was, label)
					}
					labels[c.cl] = label
					if echoField(body, "port") != c.port || echoField(body, "cs") != c.port || echoField(body, "addr") != "127.233.1.1" || echoField(body, "host") != "site.example" {
						t.Errorf("port %s request %d: the rule saw %q", c.port, i, body)
					}
					conn := echoField(body, "conn")
					if was, ok := conns[conn]; ok && was != c.port {
						t.Errorf("one server connection (%s) carried requests for ports %s and %s", conn, was, c.port)
					}
					conns[conn] = c.port
				}
			}
			// A fresh connection per request: OneConnect's pooled
			// connections are reused, still never across ports.
			for i := 0; i < 4; i++ {
				port := []string{"30011", "30012"}[i%2]
				_, body, err := dialHTTPVS(t, "127.233.1.1:"+port).do(httpReq("site.example", "/"))
				if err != nil || !strings.HasSuffix(echoField(body, "local"), ":"+port) {
					t.Fatalf("new client %d on %s: %v %q", i, port, err, body)
				}
				conn := echoField(body, "conn")
				if was, ok := conns[conn]; ok && was != port {
					t.Errorf("one server connection (%s) carried requests for ports %s and %s", conn, was, port)
				}
				conns[conn] = port
			}
			if tc.oneConnect && len(conns) > 8 {
				t.Errorf("%d server connections for 10 requests on two ports and two members with OneConnect: %v", len(conns), conns)
			}

			// Cookie persistence: the cookie names the member's
			// translated address; each new connection of the port
			// presenting it goes back to that member.
			r, first, err := dialHTTPVS(t, "127.233.1.1:30012").do(httpReq("site.example", "/"))
			v, _ := cookieOf(r, "BIGipServerpool")
			if err != nil || v == "" {
				t.Fatalf("no persistence cookie: %v %q", err, first)
			}
			for i := 0; i < 4; i++ {
				_, body, err := dialHTTPVS(t, "127.233.1.1:30012").do(httpReq("site.example", "/", "Cookie: BIGipServerpool="+v+"\r\n"))
				if err != nil || body[:1] != first[:1] || !strings.HasSuffix(echoField(body, "local"), ":30012") {
					t.Errorf("request %d with the cookie of %q: %v %q", i, first, err, body)
				}
			}

			// HTTP/2 streams and TLS clients: the same.
			h2 := h2Client(t)
			for _, port := range []string{"30011", "30012", "30011"} {
				resp, err := h2.Get("http://127.233.1.7:" + port + "/h2")
				if err != nil {
					t.Fatalf("http/2 on %s: %v", port, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body := string(b)
				if resp.Proto != "HTTP/2.0" || !strings.HasSuffix(echoField(body, "local"), ":"+port) || echoField(body, "port") != port {
					t.Errorf("http/2 on %s: %s %q", port, resp.Proto, body)
				}
			}
			for _, port := range []string{"30012", "30011"} {
				tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.233.1.8:"+port,
					&tls.Config{ServerName: "any.example", RootCAs: roots})
				if err != nil {
					t.Fatalf("tls on %s: %v", port, err)
				}
				t.Cleanup(func() { tc.Close() })
				_, body, err := (&httpRuleClient{c: tc, br: bufio.NewReader(tc)}).do(httpReq("any.example", "/tls"))
				if err != nil || !strings.HasSuffix(echoField(body, "local"), ":"+port) || echoField(body, "port") != port || echoField(body, "addr") != "127.233.1.8" {
					t.Errorf("tls on %s: %v %q", port, err, body)
				}
			}

			// translate-address disabled: where the client was going, from
			// that address.
			_, body, err := dialHTTPVS(t, "127.233.1.3:30013").do(httpReq("own.example", "/"))
			if err != nil || !strings.HasPrefix(body, "OWN ") || !strings.HasPrefix(echoField(body, "conn"), "127.233.1.3:") {
				t.Errorf("translate-address disabled: %v %q", err, body)
			}

			// The mblb profile: each message to the member on the
			// client's port.
			for _, tc := range []struct{ dst, want string }{
				{"127.233.1.4:30014", "P14 Response"},
				{"127.233.1.4:30015", "P15 Response"},
			} {
				if got, err := askOnce(tc.dst); got != tc.want {
					t.Errorf("mblb %s: %q (%v), want %q", tc.dst, got, err, tc.want)
				}
			}
		})
	}
}
