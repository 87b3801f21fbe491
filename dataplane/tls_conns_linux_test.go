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

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// startTLSHTTPServer is an HTTP member behind TLS answering "secure".
func startTLSHTTPServer(t *testing.T, addr string, cert *tlsprof.Cert, key *tlsprof.Key) {
	t.Helper()
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestTLSProfileConnections counts the TLS connections of the client-ssl
// and server-ssl profiles on every TLS path: standard virtuals on the
// event loops (client-ssl only), on goroutines (with server-ssl, with a
// rule), http virtuals on the loops (client-ssl only) and on goroutines
// (server-ssl; own server connections, so that they end with their
// clients). N clients open: current N, total N; closed, current 0, the
// maximum N; reset-stats with one open: maximum 1, total 0.
func TestTLSProfileConnections(t *testing.T) {
	const n = 3
	cert, key, roots := testCert(t, "www.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startServer(t, "127.0.148.2:9000", "P")
	startTLSServer(t, "127.0.148.3:9443", "M", mcert, mkey)
	startHTTPServer(t, "127.0.148.4:80", "WEB")
	startTLSHTTPServer(t, "127.0.148.5:443", mcert, mkey)
	for i, tc := range []struct {
		name   string
		http   bool
		member string
		server bool   // server-ssl
		rule   string // a rule without TLS events
		loops  bool   // the flows are the event loops'
	}{
		{name: "standard on loops", member: "127.0.148.2:9000", loops: true},
		{name: "standard server-ssl", member: "127.0.148.3:9443", server: true},
		{name: "standard with a rule", member: "127.0.148.2:9000", rule: `when CLIENT_ACCEPTED { set x 1 }`},
		{name: "http on loops", http: true, member: "127.0.148.4:80", loops: true},
		{name: "http server-ssl", http: true, member: "127.0.148.5:443", server: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.0.148.%d:443", 10+i)
			p, _ := newPlane(t)
			var cfg *Config
			if tc.http {
				cfg = mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, tc.member)
			} else {
				cfg = basic(vs, tc.member)
			}
			v := cfg.Virtuals["/Common/vs"]
			v.TLS = clientSSL(t, cert, key)
			if tc.server {
				v.TLS.Server = serverSSL(t)
			}
			if tc.rule != "" {
				v.Rules, _ = compileRules(t, tc.rule)
			}
			mustApply(t, p, cfg)
			users := []string{"/Common/vs"}
			stats := func(kind ProfileKind) SSLProfileStats {
				return p.ProfileStats(kind, "/Common/cs", users).SSL
			}
			check := func(what string, cur, maxc, tot uint64) {
				t.Helper()
				kinds := []ProfileKind{ProfileClientSSL}
				if tc.server {
					kinds = append(kinds, ProfileServerSSL)
				}
				for _, k := range kinds {
					var s SSLProfileStats
					ok := false
					for j := 0; j < 250 && !ok; j++ { // flows end, and count, after the client saw its close
						s = stats(k)
						if ok = s.Cur == cur && s.Max == maxc && s.Tot == tot; !ok {
							time.Sleep(20 * time.Millisecond)
						}
					}
					if !ok {
						t.Fatalf("%s: %s current/maximum/total %d/%d/%d, want %d/%d/%d", what, k, s.Cur, s.Max, s.Tot, cur, maxc, tot)
					}
				}
			}
			open := func() net.Conn {
				t.Helper()
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, &tls.Config{RootCAs: roots, ServerName: "www.example"})
				if err != nil {
					t.Fatal(err)
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				if tc.http {
					io.WriteString(c, "GET / HTTP/1.1\r\nHost: www.example\r\n\r\n")
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						t.Fatal(err)
					}
					io.ReadAll(resp.Body)
					resp.Body.Close()
				} else {
					io.WriteString(c, "x\n")
					if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, "Response") {
						t.Fatalf("answer %q %v", line, err)
					}
				}
				return c
			}
			check("before", 0, 0, 0)
			var conns []net.Conn
			for j := 0; j < n; j++ {
				conns = append(conns, open())
			}
			if tc.loops && !loopsBusy(p) {
				t.Fatal("the flows are not on the event loops")
			}
			check("open", n, n, n)
			for _, c := range conns {
				c.Close()
			}
			check("closed", 0, n, n)
			c := open()
			defer c.Close()
			check("one more", 1, n, n+1)
			p.ResetProfileStats(ProfileClientSSL, "/Common/cs", users)
			p.ResetProfileStats(ProfileServerSSL, "/Common/ss", users)
			check("reset", 1, 1, 0)
			c.Close()
			check("all closed", 0, 1, 0)
		})
	}
}
