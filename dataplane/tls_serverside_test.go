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

// peekedConn is a connection whose first bytes were read to tell TLS
// from plaintext; reads go through the buffer that holds them.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// bothListener hands out each accepted connection as TLS when its first
// byte is a TLS handshake record, else as it is: one member port that
// speaks both, so that a test sees which way each request came.
type bothListener struct {
	net.Listener
	cfg *tls.Config
}

func (l *bothListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	b, err := r.Peek(1)
	c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: r}
	if err == nil && b[0] == 0x16 {
		return tls.Server(pc, l.cfg), nil
	}
	return pc, nil
}

// startBothServer is an HTTP member at addr answering, for every
// request, whether its connection was TLS, the connection's source
// address (which tells connections apart) and its own address.
func startBothServer(t *testing.T, addr string, cert *tlsprof.Cert, key *tlsprof.Key) {
	t.Helper()
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls=%v from=%s at=%v", r.TLS != nil, r.RemoteAddr, r.Context().Value(http.LocalAddrContextKey))
	})}
	go srv.Serve(&bothListener{Listener: ln, cfg: &tls.Config{Certificates: []tls.Certificate{pair}}})
	t.Cleanup(func() { srv.Close() })
}

// serverSideGet sends one request for path on the keep-alive connection
// (c, r) and returns the body.
func serverSideGet(t *testing.T, c net.Conn, r *bufio.Reader, path string) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: www.example\r\n\r\n"); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b)
}

// TestTLSHTTPServerSideDisable: on an http virtual with client-ssl and
// server-ssl, SSL::disable serverside sends the client's next requests to
// their members in plaintext and SSL::enable serverside turns TLS back on.
// One member port speaks both: whatever the OneConnect setting, a request
// meant to go in plaintext never travels on a TLS connection, nor the
// reverse, while connections of each kind are reused.
func TestTLSHTTPServerSideDisable(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startBothServer(t, "127.0.147.11:8443", mcert, mkey)
	rule := `when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/plain" } { SSL::disable serverside } else { SSL::enable serverside }
}`
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := mblbConfig("127.0.147.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.147.11:8443")
			if oc {
				cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
			mustApply(t, p, cfg)
			// Two clients, each alternating, so that with OneConnect a
			// connection one client left idle is offered to the other.
			var conns []net.Conn
			var readers []*bufio.Reader
			for i := 0; i < 2; i++ {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.0.147.10:443", &tls.Config{RootCAs: roots, ServerName: "www.example"})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns, readers = append(conns, c), append(readers, bufio.NewReader(c))
			}
			from := map[string]map[string]bool{"true": {}, "false": {}} // tls → sources seen
			paths := []string{"/tls/1", "/plain/1", "/tls/2", "/plain/2", "/plain/3", "/tls/3"}
			for i, path := range paths {
				k := i % 2
				got := serverSideGet(t, conns[k], readers[k], path)
				var isTLS, src string
				if _, err := fmt.Sscanf(got, "tls=%s from=%s", &isTLS, &src); err != nil {
					t.Fatalf("%s: %q", path, got)
				}
				if want := fmt.Sprint(!strings.HasPrefix(path, "/plain")); isTLS != want {
					t.Fatalf("client %d %s reached the member with tls=%s, want %s", k, path, isTLS, want)
				}
				from[isTLS][src] = true
			}
			for src := range from["true"] {
				if from["false"][src] {
					t.Fatalf("connection from %s carried TLS and plaintext requests", src)
				}
			}
			if oc && (len(from["true"]) > 2 || len(from["false"]) > 2) {
				t.Fatalf("OneConnect opened %d TLS and %d plaintext connections for 6 requests in turn, want them reused", len(from["true"]), len(from["false"]))
			}
		})
	}
}

// TestTLSHTTPServerSideTwoPools is the common use: some paths go to a
// plaintext pool, the rest re-encrypted to a TLS member, SSL::disable
// serverside set in HTTP_REQUEST or in LB_SELECTED. SSL::disable
// serverside in SERVER_CONNECTED comes too late on an http virtual: the
// rule's error resets the client.
func TestTLSHTTPServerSideTwoPools(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startTLSMember(t, "127.0.147.21:443", "secure")
	startHTTPServer(t, "127.0.147.22:80", "PLAIN")
	rules := map[string]string{
		"http_request": `when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/plain" } { pool plain_pool; SSL::disable serverside } else { SSL::enable serverside }
}`,
		"lb_selected": `when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/plain" } { pool plain_pool } else { pool pool }
}
when LB_SELECTED {
    if { [LB::server port] == 80 } { SSL::disable serverside } else { SSL::enable serverside }
}`,
	}
	for name, rule := range rules {
		for _, oc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneconnect=%v", name, oc), func(t *testing.T) {
				p, _ := newPlane(t)
				cfg := mblbConfig("127.0.147.20:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.147.21:443")
				if oc {
					cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
				}
				cfg.Pools["/Common/plain_pool"] = &Pool{Name: "/Common/plain_pool", LBMode: RoundRobin,
					Members: []Member{{Node: "/Common/127.0.147.22", Addr: ap("127.0.147.22:80")}}}
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
				mustApply(t, p, cfg)
				tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}, MaxIdleConnsPerHost: 1}
				defer tr.CloseIdleConnections()
				hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
				// New connections for each request without OneConnect
				// (its member is the connection's); one keep-alive
				// connection with it.
				for i, path := range []string{"/a", "/plain/b", "/c", "/plain/d"} {
					if !oc {
						tr.CloseIdleConnections()
					}
					resp, err := hc.Get("https://127.0.147.20" + path)
					if err != nil {
						t.Fatalf("request %d %s: %v", i, path, err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					want := "secure tls=true"
					if strings.HasPrefix(path, "/plain") {
						want = "PLAIN "
					}
					if !strings.HasPrefix(string(b), want) {
						t.Fatalf("%s: %q, want %q...", path, b, want)
					}
				}
			})
		}
	}
}

// TestTLSHTTPServerSideConnected: on an http virtual with server-ssl,
// SERVER_CONNECTED runs before the server connection's handshake, as on
// BIG-IP, and SSL::disable there leaves that connection in plaintext
// (the usual rule for a pool whose members speak TLS on one port and
// plaintext on another); each connection keeps its way while OneConnect
// lends it to later requests. After the handshake (SERVERSSL_HANDSHAKE)
// turning TLS off is the rule's error, and the client is reset.
func TestTLSHTTPServerSideConnected(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startBothServer(t, "127.0.147.31:8443", mcert, mkey)
	startBothServer(t, "127.0.147.32:80", mcert, mkey)
	both := []string{"127.0.147.31:8443", "127.0.147.32:80"}
	for _, tc := range []struct {
		name, rule string
		members    []string
		oneconnect bool
		// want80 and want8443 are the body's start for a request the
		// member on port 80 or 8443 answered; want8443 empty: the client
		// is reset.
		want80, want8443 string
	}{
		{"disable", `when SERVER_CONNECTED { SSL::disable serverside }`,
			both[:1], false, "", "tls=false "},
		{"disable without a side", `when SERVER_CONNECTED { SSL::disable }`,
			both[:1], false, "", "tls=false "},
		{"disable then enable", `when SERVER_CONNECTED { SSL::disable serverside; SSL::enable serverside }`,
			both[:1], false, "", "tls=true "},
		{"by member port", `when SERVER_CONNECTED { if { [TCP::remote_port] == 80 } { SSL::disable } }`,
			both, false, "tls=false ", "tls=true "},
		{"by member port, oneconnect", `when SERVER_CONNECTED { if { [TCP::remote_port] == 80 } { SSL::disable } }`,
			both, true, "tls=false ", "tls=true "},
		{"before the handshake", `when SERVER_CONNECTED { set connected 1 }
when SERVERSSL_HANDSHAKE { if { ![info exists connected] } { reject } }`,
			both[:1], false, "", "tls=true "},
		{"already off", `when HTTP_REQUEST { SSL::disable serverside }
when SERVER_CONNECTED { SSL::disable serverside }`,
			both[:1], false, "", "tls=false "},
		{"after the handshake", `when SERVERSSL_HANDSHAKE { SSL::disable serverside }`,
			both[:1], false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := mblbConfig("127.0.147.30:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, tc.members...)
			if tc.oneconnect {
				cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
			mustApply(t, p, cfg)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			seen := map[string]bool{}
			for i := range 6 {
				if !tc.oneconnect {
					// Without OneConnect the member is the client
					// connection's: a new one for each request.
					tr.CloseIdleConnections()
				}
				resp, err := hc.Get(fmt.Sprintf("https://127.0.147.30/r%d", i))
				if tc.want8443 == "" {
					if err == nil {
						resp.Body.Close()
						t.Fatalf("status %s, want the client reset", resp.Status)
					}
					return
				}
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body := string(b)
				port, want := "8443", tc.want8443
				if strings.HasSuffix(body, "at=127.0.147.32:80") {
					port, want = "80", tc.want80
				}
				if !strings.HasPrefix(body, want) {
					t.Fatalf("request %d: %q, want %q... from the member on port %s", i, body, want, port)
				}
				seen[port] = true
			}
			if len(tc.members) > 1 && !(seen["80"] && seen["8443"]) {
				t.Fatalf("members that answered: %v, want both", seen)
			}
		})
	}
}

// TestTLSStandardServerSideEnable: on a standard virtual, SSL::enable
// serverside undoes an SSL::disable serverside made before the server
// is connected, and SSL::enable (client side) one made in
// CLIENT_ACCEPTED.
func TestTLSStandardServerSideEnable(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startBothServer(t, "127.0.147.41:8443", mcert, mkey)
	p, _ := newPlane(t)
	cfg := basic("127.0.147.40:443", "127.0.147.41:8443")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    SSL::disable
    SSL::disable serverside
    if { [IP::client_addr] ne "127.0.0.2" } { SSL::enable; SSL::enable serverside }
}`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)
	for _, tc := range []struct {
		local string
		tls   bool
	}{{"127.0.0.1", true}, {"127.0.0.2", false}} {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(tc.local)}}
		var c net.Conn
		var err error
		if tc.tls {
			c, err = tls.DialWithDialer(d, "tcp", "127.0.147.40:443", &tls.Config{RootCAs: roots, ServerName: "www.example"})
		} else {
			c, err = d.Dial("tcp", "127.0.147.40:443")
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.local, err)
		}
		got := serverSideGet(t, c, bufio.NewReader(c), "/")
		c.Close()
		if want := fmt.Sprintf("tls=%v ", tc.tls); !strings.HasPrefix(got, want) {
			t.Fatalf("client %s: %q, want %q...", tc.local, got, want)
		}
	}
}

// TestTLSHTTPClientSideEnable: on an http virtual, SSL::enable undoes an
// SSL::disable of CLIENT_ACCEPTED there, and is refused once the client
// speaks plaintext (HTTP_REQUEST): its connection cannot turn to TLS.
func TestTLSHTTPClientSideEnable(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startHTTPServer(t, "127.0.147.51:80", "WEB")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.0.147.50:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.147.51:80")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    SSL::disable
    if { [IP::client_addr] ne "127.0.0.2" } { SSL::enable }
}
when HTTP_REQUEST {
    if { [catch { SSL::enable }] } { HTTP::respond 200 content "refused" } else { HTTP::respond 200 content "enabled" }
}`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	for _, tc := range []struct {
		local string
		tls   bool
		want  string
	}{{"127.0.0.1", true, "enabled"}, {"127.0.0.2", false, "refused"}} {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(tc.local)}}
		var c net.Conn
		var err error
		if tc.tls {
			c, err = tls.DialWithDialer(d, "tcp", "127.0.147.50:443", &tls.Config{RootCAs: roots, ServerName: "www.example"})
		} else {
			c, err = d.Dial("tcp", "127.0.147.50:443")
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.local, err)
		}
		if got := serverSideGet(t, c, bufio.NewReader(c), "/"); got != tc.want {
			t.Fatalf("client %s: %q, want %q", tc.local, got, tc.want)
		}
		c.Close()
	}
}
