package dataplane

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
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

// startCertMember is an HTTPS member at addr that tells, for every
// request, the common name of the client certificate its connection
// presented (none) and the connection's source; require: a connection
// without a certificate from ca fails its handshake.
func startCertMember(t *testing.T, addr string, ca *x509.CertPool, require bool) {
	t.Helper()
	mcert, mkey, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", mcert, mkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	auth := tls.VerifyClientCertIfGiven
	if require {
		auth = tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: auth, ClientCAs: ca})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := "none"
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		fmt.Fprintf(w, "cert=%s from=%s", cn, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// choosable is what the commit builds for a virtual whose rules say
// SSL::profile: /Common/ss (no certificate), /Common/ss-cert (offers
// the client certificate cert, key) and /Common/cs-b (client-ssl over
// bcert, bkey).
func choosable(t *testing.T, cert *tlsprof.Cert, key *tlsprof.Key, bcert *tlsprof.Cert, bkey *tlsprof.Key) map[string]*Choosable {
	t.Helper()
	withCert, err := (&tlsprof.ServerSSL{Name: "/Common/ss-cert", Cert: cert, Key: key, AuthenticateDepth: -1}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cb := clientSSL(t, bcert, bkey)
	cb.ClientProfiles = []string{"/Common/cs-b"}
	return map[string]*Choosable{
		"/Common/ss":      {Server: true, Tag: 1, TLS: &TLS{Server: serverSSL(t), ServerProfile: "/Common/ss"}},
		"/Common/ss-cert": {Server: true, Tag: 2, TLS: &TLS{Server: withCert, ServerProfile: "/Common/ss-cert"}},
		"/Common/cs-b":    {TLS: cb},
	}
}

// TestSSLProfileStandard: on a standard virtual, SSL::profile chooses the
// server-ssl profile of the member connection (in LB_SELECTED,
// SERVER_CONNECTED or SERVERSSL_CLIENTHELLO_SEND), one not attached to
// the virtual: a member that requires a client certificate only that
// profile offers answers; without it, or with a profile named too late
// or not at all, the client gets nothing. In CLIENT_ACCEPTED it chooses
// the client-ssl profile, whose certificate the client is shown.
func TestSSLProfileStandard(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	ccert, ckey, cpool := testCert(t, "ltm-client")
	bcert, bkey, broots := testCert(t, "b.example")
	startCertMember(t, "127.98.1.11:8443", cpool, true)
	startCertMember(t, "127.98.1.12:8443", cpool, false)
	startHTTPServer(t, "127.98.1.13:8080", "plain")
	for _, tc := range []struct {
		name, rule, member string
		roots              *x509.CertPool
		want               string // the body's start; "": no answer
	}{
		{"no rule", ``, "127.98.1.11:8443", roots, ""},
		{"server connected", `when SERVER_CONNECTED { SSL::profile /Common/ss-cert }`, "127.98.1.11:8443", roots, "cert=ltm-client "},
		{"lb selected, relative name", `when LB_SELECTED { if { [LB::server port] == 8443 } { SSL::profile ss-cert } }`, "127.98.1.11:8443", roots, "cert=ltm-client "},
		{"hello send", `when SERVERSSL_CLIENTHELLO_SEND { SSL::profile /Common/ss-cert }`, "127.98.1.11:8443", roots, "cert=ltm-client "},
		{"chosen then back", `when SERVER_CONNECTED { SSL::profile ss-cert; SSL::profile ss }`, "127.98.1.12:8443", roots, "cert=none "},
		{"unknown profile", `when SERVER_CONNECTED { SSL::profile /Common/nope }`, "127.98.1.12:8443", roots, ""},
		{"caught", `when SERVER_CONNECTED { if { [catch { SSL::profile /Common/nope }] } { SSL::profile ss-cert } }`, "127.98.1.12:8443", roots, "cert=ltm-client "},
		{"too late", `when SERVERSSL_HANDSHAKE { SSL::profile /Common/ss-cert }`, "127.98.1.12:8443", roots, ""},
		{"client side", `when CLIENT_ACCEPTED { SSL::profile /Common/cs-b }`, "127.98.1.12:8443", broots, "cert=none "},
		{"client side too late", `when CLIENTSSL_HANDSHAKE { SSL::profile /Common/cs-b }`, "127.98.1.12:8443", roots, ""},
		{"client side in the hello", `when CLIENTSSL_CLIENTHELLO { SSL::profile /Common/cs-b }`, "127.98.1.12:8443", roots, ""},
		// client-ssl only: the flows run on the event loops, CLIENT_ACCEPTED before the handshake.
		{"client side, client-ssl only", `when CLIENT_ACCEPTED { SSL::profile /Common/cs-b }`, "127.98.1.13:8080", broots, "plain "},
		{"server-ssl on a client-ssl only virtual", `when SERVER_CONNECTED { SSL::profile /Common/ss-cert }`, "127.98.1.13:8080", roots, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := basic("127.98.1.10:443", tc.member)
			v := cfg.Virtuals["/Common/vs"]
			v.SNAT = SNAT{Type: SNATAutomap}
			v.TLS = clientSSL(t, cert, key)
			if !strings.HasSuffix(tc.member, ":8080") {
				v.TLS.Server, v.TLS.ServerProfile = serverSSL(t), "/Common/ss"
			}
			v.TLS.Choosable = choosable(t, ccert, ckey, bcert, bkey)
			if tc.rule != "" {
				v.Rules, _ = compileRules(t, tc.rule)
			}
			mustApply(t, p, cfg)
			sni := "www.example"
			if tc.roots == broots {
				sni = "b.example"
			}
			got := sslProfileGet(t, "127.98.1.10:443", sni, tc.roots)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("answered %q, want no answer", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("answered %q, want %q", got, tc.want)
			}
		})
	}
}

// sslProfileGet asks for / over a new TLS connection to vs and returns
// the body, "" when the connection failed or closed without an answer.
func sslProfileGet(t *testing.T, vs, sni string, roots *x509.CertPool) string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", vs, &tls.Config{ServerName: sni, RootCAs: roots})
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+sni+"\r\nConnection: close\r\n\r\n"); err != nil {
		return ""
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestSSLProfileHTTPOneConnect: on an http virtual, a request's
// SSL::profile (in HTTP_REQUEST) decides the server-ssl profile of the
// connection that carries it. One member asks for a client certificate
// and tells whether it got one: whatever the OneConnect setting, a
// request that chose the profile with the certificate never travels on a
// connection made without it, nor the reverse, while connections of each
// kind are reused. SSL::profile in SERVER_CONNECTED is that connection's:
// OneConnect closes it after its response instead of lending it.
func TestSSLProfileHTTPOneConnect(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	ccert, ckey, cpool := testCert(t, "ltm-client")
	bcert, bkey, _ := testCert(t, "b.example")
	startCertMember(t, "127.98.2.11:8443", cpool, false)
	rules := map[string]string{
		"http_request": `when HTTP_REQUEST {
    if { [HTTP::uri] starts_with "/cert" } { SSL::profile /Common/ss-cert } else { SSL::profile /Common/ss }
}`,
		"lb_selected": `when HTTP_REQUEST { set c [string match /cert* [HTTP::uri]] }
when LB_SELECTED { if { $c } { SSL::profile ss-cert } else { SSL::profile ss } }`,
	}
	for name, rule := range rules {
		for _, oc := range []bool{false, true} {
			if name == "lb_selected" && !oc {
				continue // a client's own connection stays with its member: no LB_SELECTED after the first request
			}
			t.Run(fmt.Sprintf("%s/oneconnect=%v", name, oc), func(t *testing.T) {
				p, _ := newPlane(t)
				cfg := mblbConfig("127.98.2.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.98.2.11:8443")
				v := cfg.Virtuals["/Common/vs"]
				if oc {
					v.MBLB.OneConnect = &OneConnect{MaxSize: 4}
				}
				v.Rules, _ = compileRules(t, rule)
				v.TLS = clientSSL(t, cert, key)
				v.TLS.Server, v.TLS.ServerProfile = serverSSL(t), "/Common/ss"
				v.TLS.Choosable = choosable(t, ccert, ckey, bcert, bkey)
				mustApply(t, p, cfg)
				var conns []net.Conn
				var readers []*bufio.Reader
				for i := 0; i < 2; i++ {
					c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.98.2.10:443", &tls.Config{RootCAs: roots, ServerName: "www.example"})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					conns, readers = append(conns, c), append(readers, bufio.NewReader(c))
				}
				from := map[string]map[string]bool{"ltm-client": {}, "none": {}} // certificate → sources seen
				paths := []string{"/cert/1", "/plain/1", "/cert/2", "/plain/2", "/plain/3", "/cert/3", "/cert/4", "/plain/4"}
				for i, path := range paths {
					k := i % 2
					got := serverSideGet(t, conns[k], readers[k], path)
					var cn, src string
					if _, err := fmt.Sscanf(got, "cert=%s from=%s", &cn, &src); err != nil {
						t.Fatalf("%s: %q", path, got)
					}
					want := "none"
					if strings.HasPrefix(path, "/cert") {
						want = "ltm-client"
					}
					if cn != want {
						t.Fatalf("client %d %s reached the member with certificate %s, want %s", k, path, cn, want)
					}
					from[cn][src] = true
				}
				for src := range from["ltm-client"] {
					if from["none"][src] {
						t.Fatalf("connection from %s carried requests of both profiles", src)
					}
				}
				if oc && (len(from["ltm-client"]) > 2 || len(from["none"]) > 2) {
					t.Fatalf("OneConnect opened %d and %d connections for 8 requests in turn, want them reused", len(from["ltm-client"]), len(from["none"]))
				}
			})
		}
	}
	t.Run("server connected/oneconnect", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := mblbConfig("127.98.2.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.98.2.11:8443")
		v := cfg.Virtuals["/Common/vs"]
		v.MBLB.OneConnect = &OneConnect{MaxSize: 4}
		v.Rules, _ = compileRules(t, `when HTTP_REQUEST { set c [string match /cert* [HTTP::uri]] }
when SERVER_CONNECTED { if { $c } { SSL::profile /Common/ss-cert } }`)
		v.TLS = clientSSL(t, cert, key)
		v.TLS.Server, v.TLS.ServerProfile = serverSSL(t), "/Common/ss"
		v.TLS.Choosable = choosable(t, ccert, ckey, bcert, bkey)
		mustApply(t, p, cfg)
		// Each request on a client connection of its own: the one that
		// chose the certificate must not leave its connection to the
		// next client, which did not. (A later /cert request may be lent
		// a pooled connection made without the certificate: SERVER_CONNECTED
		// runs for new connections only, so only the first is checked.)
		for i, path := range []string{"/cert/1", "/plain/1", "/plain/2", "/cert/2", "/plain/3"} {
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.98.2.10:443", &tls.Config{RootCAs: roots, ServerName: "www.example"})
			if err != nil {
				t.Fatal(err)
			}
			got := serverSideGet(t, c, bufio.NewReader(c), path)
			c.Close()
			want := "cert=none "
			if path == "/cert/1" {
				want = "cert=ltm-client "
			}
			if path != "/cert/2" && !strings.HasPrefix(got, want) {
				t.Fatalf("request %d %s: %q, want %q", i, path, got, want)
			}
		}
	})
}

// TestSSLProfileHTTPClientSide: on an http virtual, SSL::profile in
// CLIENT_ACCEPTED chooses the client-ssl profile the client's handshake
// uses (the client sees its certificate), on the front stage (with
// server-ssl) and on the event loops (client-ssl only); in
// CLIENTSSL_HANDSHAKE it is too late and the client is reset.
func TestSSLProfileHTTPClientSide(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	ccert, ckey, cpool := testCert(t, "ltm-client")
	bcert, bkey, broots := testCert(t, "b.example")
	startCertMember(t, "127.98.4.11:8443", cpool, false)
	startHTTPServer(t, "127.98.4.12:8080", "plain")
	for _, tc := range []struct {
		name, rule, member string
		roots              *x509.CertPool
		want               string
	}{
		{"front stage", `when CLIENT_ACCEPTED { SSL::profile /Common/cs-b }`, "127.98.4.11:8443", broots, "cert=none "},
		{"event loops", `when CLIENT_ACCEPTED { SSL::profile /Common/cs-b }`, "127.98.4.12:8080", broots, "plain "},
		{"not chosen", `when CLIENT_ACCEPTED { }`, "127.98.4.12:8080", roots, "plain "},
		{"too late", `when CLIENTSSL_HANDSHAKE { SSL::profile /Common/cs-b }`, "127.98.4.11:8443", roots, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := mblbConfig("127.98.4.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, tc.member)
			v := cfg.Virtuals["/Common/vs"]
			v.Rules, _ = compileRules(t, tc.rule)
			v.TLS = clientSSL(t, cert, key)
			if strings.HasSuffix(tc.member, ":8443") {
				v.TLS.Server, v.TLS.ServerProfile = serverSSL(t), "/Common/ss"
			}
			v.TLS.Choosable = choosable(t, ccert, ckey, bcert, bkey)
			mustApply(t, p, cfg)
			sni := "www.example"
			if tc.roots == broots {
				sni = "b.example"
			}
			got := sslProfileGet(t, "127.98.4.10:443", sni, tc.roots)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("answered %q, want no answer", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("answered %q, want %q", got, tc.want)
			}
		})
	}
}
