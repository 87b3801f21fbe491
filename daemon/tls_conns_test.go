package daemon

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
)

// TestSSLProfileConnectionsShown opens N TLS clients through a virtual
// with client-ssl and server-ssl and reads the profiles' Current,
// Maximum and Total Connections in show ltm profile client-ssl and
// server-ssl: N, N, N while they are open; 0, N, N once they closed; 0,
// 0, 0 after reset-stats.
func TestSSLProfileConnectionsShown(t *testing.T) {
	const n = 3
	tlsMember(t, "127.46.0.13:8443")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm profile client-ssl conncssl defaults-from clientssl",
		"create ltm profile server-ssl connssl defaults-from serverssl",
		"create ltm pool tp members add { 127.46.0.13:8443 }",
		"create ltm virtual vs destination 127.46.0.3:443 pool tp profiles replace-all-with { tcp conncssl connssl }",
	)
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", "127.46.0.3:443", &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "hello\n")
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || strings.TrimSpace(line) != "TLS member" {
			t.Fatalf("through vs: %q %v", line, err)
		}
		conns = append(conns, c)
	}
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "3", "Maximum Connections": "3", "Total Connections": "3"})
	}
	for _, c := range conns {
		c.Close()
	}
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "0", "Maximum Connections": "3", "Total Connections": "3"})
	}
	mustRun(t, s, "reset-stats ltm profile client-ssl conncssl", "reset-stats ltm profile server-ssl connssl")
	for _, show := range []string{"show ltm profile client-ssl conncssl", "show ltm profile server-ssl connssl"} {
		waitStats(t, s, show, map[string]string{"Current Connections": "0", "Maximum Connections": "0", "Total Connections": "0"})
	}
}

// TestSSLDisableServerSideFromTmsh is the common use, configured through
// the shell: an http virtual with clientssl and serverssl whose rule
// sends /plain to a plaintext pool with SSL::disable serverside and the
// rest re-encrypted to a TLS member, over one keep-alive client
// connection with OneConnect.
func TestSSLDisableServerSideFromTmsh(t *testing.T) {
	tlsHTTP := func(addr, body string, withTLS bool) {
		t.Helper()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if withTLS {
			pki := newTestPKI(t)
			crt, key := pki.leaf(t, "member", "member.example", false)
			pair, err := tls.LoadX509KeyPair(crt, key)
			if err != nil {
				t.Fatal(err)
			}
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{pair}})
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s tls=%v", body, r.TLS != nil)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	tlsHTTP("127.46.0.21:443", "secure", true)
	tlsHTTP("127.46.0.22:80", "plain", false)
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool tls_pool members add { 127.46.0.21:443 }",
		"create ltm pool plain_pool members add { 127.46.0.22:80 }",
		`create ltm rule split {
when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/plain" } {
        pool plain_pool
        SSL::disable serverside
    } else {
        SSL::enable serverside
    }
}
}`,
		"create ltm virtual vs destination 127.46.0.20:443 pool tls_pool rules { split } profiles replace-all-with { tcp http oneconnect clientssl serverssl }",
	)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, path := range []string{"/a", "/plain/b", "/c", "/plain/d"} {
		resp, err := hc.Get("https://127.46.0.20" + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "secure tls=true"
		if strings.HasPrefix(path, "/plain") {
			want = "plain tls=false"
		}
		if string(b) != want {
			t.Fatalf("%s: %q, want %q", path, b, want)
		}
	}
	waitStats(t, s, "show ltm profile server-ssl serverssl", map[string]string{"Total Connections": "1"})
}
