package dataplane

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// SSL::authenticate always, with a real Go client holding a client
// certificate and a session cache, on a client-ssl profile with
// peer-cert-mode require: a client the rule leaves alone (once) resumes
// its session without being asked for its certificate again; the client
// the rule names is authenticated again, in a full handshake that asks
// for its certificate, each time it comes back. The profile's
// authenticate always does the same for every client, on a virtual
// without rules too, and a rule's SSL::authenticate once lets its client
// resume there. TLS 1.2 and 1.3, a standard and an http virtual.
func TestSSLAuthenticateAlways(t *testing.T) {
	t.Parallel()
	cert, key, roots := testCert(t, "www.example")
	acert, akey, _ := testCert(t, "alice")
	alice, _ := tlsprof.Pair("alice", acert, akey, nil)
	startServer(t, "127.160.2.11:9000", "S1")
	startHTTPServer(t, "127.160.2.12:80", "WEB")
	build := func(always bool) *tlsprof.Built {
		b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
			PeerCertMode: "require", CAFile: acert, AuthenticateDepth: -1, SessionTicket: true, TicketLifetime: time.Hour,
			AuthenticateAlways: always}).Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const ruleAlways = `
when CLIENT_ACCEPTED {
    if { [IP::client_addr] eq "127.160.2.3" } { SSL::authenticate always } else { SSL::authenticate once }
}`
	const ruleOnce = `
when CLIENT_ACCEPTED {
    if { [IP::client_addr] eq "127.160.2.2" } { SSL::authenticate once }
}`
	for i, vt := range []struct {
		name          string
		http, profile bool   // an http virtual; the profile's authenticate always
		rule          string // "" none
		alwaysFrom    string // the client address authenticated always ("*": both)
	}{
		{"standard", false, false, ruleAlways, "127.160.2.3"},
		{"http", true, false, ruleAlways, "127.160.2.3"},
		{"standard profile", false, true, ruleOnce, "127.160.2.3"},
		{"http profile", true, true, ruleOnce, "127.160.2.3"},
		{"standard profile no rule", false, true, "", "*"},
	} {
		vs := fmt.Sprintf("127.160.2.1:%d", 443+i)
		b := build(vt.profile)
		p, _ := newPlane(t)
		var cfg *Config
		if vt.http {
			cfg = mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.160.2.12:80")
		} else {
			cfg = basic(vs, "127.160.2.11:9000")
		}
		lg := &ruleLog{}
		if vt.rule != "" {
			cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, vt.rule)
		}
		cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: b.Config, ClientBuilt: []*tlsprof.Built{b}, ClientProfiles: []string{"/Common/cs"}}
		mustApply(t, p, cfg)
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			for _, src := range []string{"127.160.2.2", "127.160.2.3"} {
				always := src == vt.alwaysFrom || vt.alwaysFrom == "*"
				t.Run(vt.name+"/"+tlsprof.VersionName(ver)+"/"+map[bool]string{true: "always", false: "once"}[always], func(t *testing.T) {
					lg.showOnFailure(t)
					asked := 0
					tc := &tls.Config{RootCAs: roots, ServerName: "www.example", MinVersion: ver, MaxVersion: ver,
						ClientSessionCache: tls.NewLRUClientSessionCache(4),
						GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
							asked++
							return &alice, nil
						}}
					for k := 0; k < 3; k++ {
						resumed, err := authAsk(src, vs, tc, vt.http)
						if err != nil {
							t.Fatalf("connection %d: %v", k, err)
						}
						if k > 0 && resumed == always {
							t.Fatalf("connection %d: resumed %v", k, resumed)
						}
					}
					if want := map[bool]int{true: 3, false: 1}[always]; asked != want {
						t.Fatalf("asked for the certificate %d times, want %d", asked, want)
					}
				})
			}
		}
	}
}

// authAsk connects from src with tc, sends a line (or an HTTP request)
// and reads the answer; it says whether the session resumed.
func authAsk(src, vs string, tc *tls.Config, http1 bool) (bool, error) {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := tls.DialWithDialer(d, "tcp", vs, tc)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := "hello\n"
	if http1 {
		msg = "GET / HTTP/1.1\r\nHost: www.example\r\nConnection: close\r\n\r\n"
	}
	if _, err := io.WriteString(c, msg); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && !strings.Contains(line, "S1") && !strings.HasPrefix(line, "HTTP/1.1 200") {
		err = fmt.Errorf("answer %q", line)
	}
	return c.ConnectionState().DidResume, err
}
