//go:build linux

package dataplane

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// TestTLSLoopClientAccepted: a standard virtual with client-ssl and a
// rule handling CLIENT_ACCEPTED only runs its flows on the event loops,
// the rule's pool decision followed; a rule that rejects ends the client
// before the handshake; one that asks for what only a goroutine flow does
// after the event (a node decision, SSL::disable, TCP::respond) is
// served by one. SNAT and persistence decisions are followed on the loop.
func TestTLSLoopClientAccepted(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	s1 := startServer(t, "127.0.149.2:9000", "S1")
	startServer(t, "127.0.149.3:9000", "S2")
	startServer(t, "127.0.149.4:9000", "N")
	p, _ := newPlane(t)
	cfg := basic("127.0.149.1:443", "127.0.149.2:9000")
	cfg.Pools["/Common/p2"] = &Pool{Name: "/Common/p2", LBMode: RoundRobin, Members: []Member{{Node: "/Common/127.0.149.3", Addr: ap("127.0.149.3:9000")}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    switch [IP::client_addr] {
        127.0.0.2 { pool p2 }
        127.0.0.3 { reject }
        127.0.0.4 { node 127.0.149.4 9000 }
        127.0.0.5 { SSL::disable }
        127.0.0.6 { TCP::respond "hello\n" }
        127.0.0.7 { snat 127.0.149.9; persist source_addr 60 }
    }
}`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	dial := func(local string, withTLS bool) (net.Conn, error) {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		if withTLS {
			return tls.DialWithDialer(d, "tcp", "127.0.149.1:443", &tls.Config{RootCAs: roots, ServerName: "app.example"})
		}
		return d.Dial("tcp", "127.0.149.1:443")
	}
	ask := func(c net.Conn, r *bufio.Reader) string {
		t.Helper()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "x\n")
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return strings.TrimSpace(line)
	}
	for _, tc := range []struct {
		local string
		tls   bool
		want  string
		loops bool
	}{
		{"127.0.0.1", true, "S1 Response", true},
		{"127.0.0.2", true, "S2 Response", true},
		{"127.0.0.4", true, "N Response", false},
		{"127.0.0.5", false, "S1 Response", false},
		{"127.0.0.7", true, "S1 Response", true},
	} {
		c, err := dial(tc.local, tc.tls)
		if err != nil {
			t.Fatalf("%s: %v", tc.local, err)
		}
		if got := ask(c, bufio.NewReader(c)); got != tc.want {
			t.Fatalf("%s: %q, want %q", tc.local, got, tc.want)
		}
		if busy := loopsBusy(p); busy != tc.loops {
			t.Fatalf("%s: on the event loops %v, want %v", tc.local, busy, tc.loops)
		}
		c.Close()
		eventually(t, "the flow gone", func() bool { return p.ConnectionCount() == 0 && !loopsBusy(p) })
	}
	// 127.0.0.7's SNAT and persistence decisions, followed on the loop.
	s1.mu.Lock()
	last := s1.remotes[len(s1.remotes)-1]
	s1.mu.Unlock()
	if last.Addr().String() != "127.0.149.9" {
		t.Fatalf("snat in CLIENT_ACCEPTED: the member saw %s", last)
	}
	if n := p.PersistRecords(persist.Filter{ClientAddr: netip.MustParseAddr("127.0.0.7")}, func(*persist.Record) bool { return true }); n != 1 {
		t.Fatalf("persist source_addr in CLIENT_ACCEPTED: %d records for the client, want 1", n)
	}
	// reject: no handshake.
	if c, err := dial("127.0.0.3", true); err == nil {
		c.Close()
		t.Fatal("a rejected client completed its handshake")
	}
	// TCP::respond: its bytes, in plaintext before the handshake, reach
	// the client.
	c, err := dial("127.0.0.6", false)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("TCP::respond in CLIENT_ACCEPTED: %q %v", line, err)
	}
	c.Close()
	// The profile's current count goes down as each flow retires, which
	// may be after it left the connection table: both are waited for.
	eventually(t, "every flow gone", func() bool {
		return p.ConnectionCount() == 0 && p.ProfileStats(ProfileClientSSL, "/Common/cs", []string{"/Common/vs"}).SSL.Cur == 0
	})
	if n := p.ProfileStats(ProfileClientSSL, "/Common/cs", []string{"/Common/vs"}).SSL; n.Cur != 0 || n.Tot != 4 {
		t.Fatalf("client-ssl connections current %d total %d, want 0 and 4", n.Cur, n.Tot)
	}
}

// TestTLSLoopHTTPRules: an HTTP virtual with client-ssl and rules serves
// its TLS clients on the event loops, its rules as on a plaintext
// virtual: CLIENT_ACCEPTED before the handshake (a reject there leaves the
// client without one, SSL::disable there a plaintext client), the
// CLIENTSSL_ events after it (a pool chosen there is the client's), its
// choices carried to the loop, HTTP_REQUEST for each request; SSL::
// commands read the loop's session, SSL::sessionid the hellos its
// handshake recorded.
func TestTLSLoopHTTPRules(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startL7Member(t, "127.42.3.2:80", "M1")
	startL7Member(t, "127.42.3.3:80", "M2")
	for i, tc := range []struct {
		name, rule string
		onLoop     bool
		// want[path] is the answer's body (its start); path "" for a
		// client that gets no handshake.
		want map[string]string
	}{
		{"http rule", `when HTTP_REQUEST {
    if { [HTTP::path] eq "/deny" } { HTTP::respond 403 content denied } else { HTTP::header replace X-LB [HTTP::path] }
}`, true, map[string]string{"/a": "M1 GET /a body= lb=/a", "/deny": "denied", "/b": "M1 GET /b body= lb=/b"}},
		{"pool in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { pool other_pool }`,
			true, map[string]string{"/a": "M2 GET /a", "/b": "M2 GET /b"}},
		{"reject in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { reject }`, true, map[string]string{"": "", "no handshake": ""}},
		// A pool chosen at the handshake (SNI routing) is the client's for
		// its requests, as one chosen in CLIENT_ACCEPTED.
		{"pool in CLIENTSSL_HANDSHAKE", `when CLIENTSSL_HANDSHAKE { if { [string range [SSL::extensions -type 0] 9 end] eq "www.example" } { pool other_pool } }`,
			true, map[string]string{"/a": "M2 GET /a", "/b": "M2 GET /b"}},
		{"SSL:: through eval", `when HTTP_REQUEST { set c SSL::cipher; HTTP::header replace X-LB [eval [list $c version]] }`,
			true, map[string]string{"/a": "M1 GET /a body= lb=TLSv1.3"}},
		{"SSL:: named", `when HTTP_REQUEST { HTTP::header replace X-LB [SSL::cipher version] }`,
			true, map[string]string{"/a": "M1 GET /a body= lb=TLSv1.3"}},
		{"CLIENTSSL_HANDSHAKE", `when CLIENTSSL_HANDSHAKE { set v [SSL::cipher version] }
when HTTP_REQUEST { HTTP::header replace X-LB $v }`,
			true, map[string]string{"/a": "M1 GET /a body= lb=TLSv1.3", "/b": "M1 GET /b body= lb=TLSv1.3"}},
		{"reject in CLIENTSSL_HANDSHAKE", `when CLIENTSSL_HANDSHAKE { reject }`, true, map[string]string{"": ""}},
		{"SSL::disable after the handshake", `when HTTP_REQUEST { SSL::disable }`, true, map[string]string{"": ""}},
		{"SSL::disable in CLIENT_ACCEPTED", `when CLIENT_ACCEPTED { SSL::disable }`,
			true, map[string]string{"plain": "", "/a": "M1 GET /a", "/b": "M1 GET /b"}},
		// TLS 1.3 clients send a 32-byte compatibility session ID, which
		// the server echoes: 64 hex digits.
		{"SSL::sessionid", `when HTTP_REQUEST { HTTP::header replace X-LB [string length [SSL::sessionid]] }`,
			true, map[string]string{"/a": "M1 GET /a body= lb=64"}},
		{"SSL::sessionid in CLIENTSSL_HANDSHAKE", `when CLIENTSSL_HANDSHAKE { set id [SSL::sessionid] }
when HTTP_REQUEST { HTTP::header replace X-LB [expr {$id eq [SSL::sessionid] && $id ne ""}] }`,
			true, map[string]string{"/a": "M1 GET /a body= lb=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.42.3.%d:443", 10+i)
			p, lg := newPlane(t)
			cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, tc.rule, "127.42.3.2:80")
			cfg.Pools["/Common/other_pool"] = &Pool{Name: "/Common/other_pool", LBMode: RoundRobin,
				Members: []Member{{Node: "/Common/127.42.3.3", Addr: ap("127.42.3.3:80")}}}
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			if _, ok := tc.want[""]; ok {
				// The client is reset before or right after its handshake:
				// no request is answered.
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs,
					&tls.Config{ServerName: "www.example", RootCAs: roots})
				if _, nohs := tc.want["no handshake"]; nohs && err == nil {
					c.Close()
					t.Fatal("handshake done for a client CLIENT_ACCEPTED rejected")
				}
				if err == nil {
					rc := &httpRuleClient{c: c, br: bufio.NewReader(c)}
					_, body, err := rc.do(httpReq("www.example", "/a"))
					c.Close()
					if err == nil {
						t.Fatalf("a rejected client was answered %q", body)
					}
				}
				eventually(t, "no client flow", func() bool { c, _ := countFlows(p); return c == 0 })
				return
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("log: %s", lg)
				}
			})
			var c *httpRuleClient
			if _, plain := tc.want["plain"]; plain {
				c = dialHTTPVS(t, vs)
			} else {
				c = dialTLSHTTP(t, vs, roots)
			}
			for _, path := range []string{"/a", "/deny", "/b"} {
				want, ok := tc.want[path]
				if !ok {
					continue
				}
				_, body, err := c.do(httpReq("www.example", path))
				if err != nil || !strings.HasPrefix(body, want) {
					t.Fatalf("%s: %q, %v; want %q... (log %s)", path, body, err, want, lg)
				}
			}
			if got := loopsBusy(p); got != tc.onLoop {
				t.Fatalf("client on an event loop: %v, want %v", got, tc.onLoop)
			}
		})
	}
}
