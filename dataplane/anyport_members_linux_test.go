//go:build linux

package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2member"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestAnyPortHTTP2Members: an HTTP virtual on every port of 127.249.40.1
// whose members (at port any) are asked in HTTP/2 sends each request,
// interleaved across two ports, as a stream to the member on the port
// the client asked for, in cleartext (h2c) and, on every port of
// 127.249.40.2, over the server-ssl profile (h2 in ALPN); no member
// connection carries the streams of two ports.
func TestAnyPortHTTP2Members(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	cert, key, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []string{"30041", "30042"} {
		startH2Member(t, "127.249.40.11:"+port, "C"+port, nil, nil)
		startH2Member(t, "127.249.40.12:"+port, "T"+port, &pair, nil)
	}
	p, _ := loggedPlane(t)
	cfg, st := memberH2Config(t, "127.249.40.1:0", "127.249.40.11:0")
	v := *cfg.Virtuals["/Common/vs"]
	m := *v.MBLB
	st2 := new(h2member.Stats)
	m.MemberHTTP2 = &h2member.Config{Stats: st2}
	v.Name, v.Destination, v.MBLB, v.Pool = "/Common/tls", ap("127.249.40.2:0"), &m, "/Common/ptls"
	v.TLS = &TLS{Server: serverSSL(t)}
	cfg.Virtuals["/Common/tls"] = &v
	withPool(cfg, "/Common/ptls", "127.249.40.12:0")
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	if why := AnyPortUnsupported(cfg.Virtuals["/Common/tls"]); why != "" {
		t.Fatalf("refused: %s", why)
	}
	client := h2Client(t)
	for i := range 6 {
		for _, tc := range []struct{ addr, label string }{{"127.249.40.1", "C"}, {"127.249.40.2", "T"}} {
			for _, port := range []string{"30041", "30042"} {
				path := fmt.Sprintf("/p%d", i)
				resp, err := client.Get("http://" + tc.addr + ":" + port + path)
				if err != nil {
					t.Fatalf("%s:%s%s: %v", tc.addr, port, path, err)
				}
				body := readBody(t, resp)
				if want := tc.label + port + " HTTP/2.0 GET " + path + " "; !strings.HasPrefix(body, want) {
					t.Errorf("%s:%s%s: %q, want it to begin %q", tc.addr, port, path, body, want)
				}
			}
		}
	}
	// Two ports, two member connections each (one per port), however
	// many requests.
	if n := st.TotalConnections.Load(); n != 2 {
		t.Errorf("cleartext: %d member connections, want 2 (one per port)", n)
	}
	if n := st2.TotalConnections.Load(); n != 2 {
		t.Errorf("server-ssl: %d member connections, want 2 (one per port)", n)
	}
}

// TestAnyPortServerSSL: an HTTP virtual on every port of 127.249.41.1
// with a server-ssl profile re-encrypts each request to its member (at
// port any) on the port the client asked for, keep-alive connections on
// two ports interleaved, with and without OneConnect.
func TestAnyPortServerSSL(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, port := range []string{"30045", "30046"} {
		startTLSMember(t, "127.249.41.11:"+port, "T"+port)
	}
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, _ := loggedPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			if oc {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig("127.249.41.1:0", m, "127.249.41.11:0")
			cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t)}
			mustApply(t, p, cfg)
			conns := map[string]*httpRuleClient{}
			for _, port := range []string{"30045", "30046"} {
				c, err := net.DialTimeout("tcp", "127.249.41.1:"+port, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				conns[port] = &httpRuleClient{c: c, br: bufio.NewReader(c)}
			}
			for i := range 4 {
				for _, port := range []string{"30045", "30046"} {
					_, body, err := conns[port].do(httpReq("any.example", fmt.Sprintf("/r%d", i)))
					if err != nil || body != "T"+port+" tls=true" {
						t.Errorf("port %s, request %d: %q %v", port, i, body, err)
					}
				}
			}
			// A new connection per request, with OneConnect: the pooled
			// connections of one port never answer the other's.
			for i := range 3 {
				for _, port := range []string{"30046", "30045"} {
					tr := &http.Transport{DisableKeepAlives: true}
					resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(fmt.Sprintf("http://127.249.41.1:%s/n%d", port, i))
					if err != nil {
						t.Fatalf("port %s: %v", port, err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(b) != "T"+port+" tls=true" {
						t.Errorf("port %s, new connection %d: %q", port, i, b)
					}
				}
			}
		})
	}
}

// TestAnyPortMinConnOneConnect: min-conn with OneConnect on an mblb
// virtual on every port keeps connections open ahead to its member at
// port any on each port a client asked for, filed with OneConnect's
// pool by the translated address: none before a client, more on port
// 30097 after a client there and none on 30098 until a client asks for
// it; every client's answer comes from the member on its own port,
// the warmed connections of one port never taken for the other.
func TestAnyPortMinConnOneConnect(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	m1 := startClosingMember(t, "127.249.42.11:30097", "S1", 0)
	m2 := startClosingMember(t, "127.249.42.11:30098", "S2", 0)
	p, _ := loggedPlane(t)
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}, MinConn: 2,
		OneConnect: &OneConnect{MaxSize: 4}}
	mustApply(t, p, mblbConfig("127.249.42.1:0", m, "127.249.42.11:0"))
	time.Sleep(1500 * time.Millisecond) // a few janitor ticks: nothing to warm yet
	if x1, _ := m1.counts(); x1 != 0 {
		t.Fatalf("%d connections to port 30097 before any client", x1)
	}
	ask := func(dst, want string) { t.Helper(); askLength(t, dst, want) }
	ask("127.249.42.1:30097", "S1")
	eventually(t, "two connections kept open to port 30097", func() bool { _, o1 := m1.counts(); return o1 >= 2 })
	if x2, _ := m2.counts(); x2 != 0 {
		t.Fatalf("%d connections to port 30098 before a client asked for it", x2)
	}
	ask("127.249.42.1:30098", "S2")
	eventually(t, "two connections kept open to port 30098", func() bool { _, o2 := m2.counts(); return o2 >= 2 })
	// Clients of both ports, interleaved: each answered by its port's
	// member (a warmed connection of the other port never taken).
	for range 4 {
		ask("127.249.42.1:30098", "S2")
		ask("127.249.42.1:30097", "S1")
	}
	// Still kept open on both ports.
	if _, o1 := m1.counts(); o1 < 2 {
		t.Errorf("port 30097: %d connections open, want at least 2", o1)
	}
	if _, o2 := m2.counts(); o2 < 2 {
		t.Errorf("port 30098: %d connections open, want at least 2", o2)
	}
}
