package dataplane

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// testCert is a self-signed certificate for names, as tlsprof objects
// and as a pool of roots for clients.
func testCert(t testing.TB, names ...string) (*tlsprof.Cert, *tlsprof.Key, *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(4711), Subject: pkix.Name{CommonName: names[0], Organization: []string{"openltm test"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: names,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	cert, err := tlsprof.ParseCert("/Common/"+names[0]+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	key, err := tlsprof.ParseKey("/Common/"+names[0]+".key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), "")
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, cert.Pool()
}

// clientSSL builds a client-ssl profile over cert and key.
func clientSSL(t testing.TB, cert *tlsprof.Cert, key *tlsprof.Key) *TLS {
	t.Helper()
	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}}, AuthenticateDepth: -1}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
	if err != nil {
		t.Fatal(err)
	}
	return &TLS{Client: cfg, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b}}
}

func serverSSL(t *testing.T) *tlsprof.Built {
	t.Helper()
	b, err := (&tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1}).Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startTLSServer is a labelled line member behind TLS.
func startTLSServer(t *testing.T, addr, label string, cert *tlsprof.Cert, key *tlsprof.Key) {
	t.Helper()
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			fmt.Fprintf(c, "%s Response tls\n", label)
		}
	})
}

func tlsAsk(t *testing.T, vs, sni string, roots *x509.CertPool, msgs ...string) []string {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs, &tls.Config{ServerName: sni, RootCAs: roots})
	if err != nil {
		t.Fatalf("TLS dial %s: %v", vs, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	var out []string
	for _, m := range msgs {
		if _, err := io.WriteString(c, m+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

// TestTLSStandardVirtual terminates TLS on a standard virtual, then also
// originates it to a TLS member (server-ssl): the client's lines reach the
// member as plaintext or re-encrypted, the flow is counted and leaves the
// connection table when it ends.
func TestTLSStandardVirtual(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.0.140.11:9000", "S1")
	startTLSServer(t, "127.0.140.12:9443", "S2", cert, key)
	p, _ := newPlane(t)

	cfg := basic("127.0.140.10:443", "127.0.140.11:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	mustApply(t, p, cfg)
	if got := tlsAsk(t, "127.0.140.10:443", "app.example", roots, "a", "b"); strings.Join(got, ",") != "S1 Response,S1 Response" {
		t.Fatalf("client-ssl: %q", got)
	}
	eventually(t, "the flow to end", func() bool { return p.table.Len() == 0 })
	if st := memberStat(t, p, "/Common/pool", "/Common/127.0.140.11:9000"); st.ServerSide.BitsIn == 0 || st.ServerSide.TotConns != 1 {
		t.Fatalf("member counters: %+v", st)
	}

	// A plaintext client gets no answer from a client-ssl virtual.
	pc := dialVS(t, "127.0.140.10:443")
	if got, err := pc.ask("plaintext hello"); err == nil || strings.Contains(got, "Response") {
		t.Fatalf("a plaintext client was answered by a client-ssl virtual: %q %v", got, err)
	}

	// client-ssl and server-ssl: re-encrypted to a TLS member.
	cfg = basic("127.0.140.10:443", "127.0.140.12:9443")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)
	if got := tlsAsk(t, "127.0.140.10:443", "app.example", roots, "x"); got[0] != "S2 Response tls" {
		t.Fatalf("client-ssl + server-ssl: %q", got)
	}

	// server-ssl only: plaintext clients, TLS members.
	cfg = basic("127.0.140.10:443", "127.0.140.12:9443")
	cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t)}
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.140.10:443")
	if got := c.mustAsk("y"); got != "S2 Response tls" {
		t.Fatalf("server-ssl: %q", got)
	}
}

// TestTLSHTTPVirtual terminates TLS on an HTTP virtual, with and without
// OneConnect and with a rule: keep-alive requests over one TLS connection
// each go through the http profile (X-Forwarded-For, the rule's routing
// and header edits).
func TestTLSHTTPVirtual(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startHTTPServer(t, "127.0.141.11:80", "WEB")
	startHTTPServer(t, "127.0.141.12:80", "API")
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, _ := newPlane(t)
			cfg := mblbConfig("127.0.141.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{InsertXFF: true}}},
				"127.0.141.11:80")
			if oc {
				cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg.Pools["/Common/api_pool"] = &Pool{Name: "/Common/api_pool", LBMode: RoundRobin,
				Members: []Member{{Node: "/Common/127.0.141.12", Addr: ap("127.0.141.12:80")}}}
			// The else branch as on BIG-IP: a pool a rule chose stays the
			// connection's for its later requests.
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST {
    if { [HTTP::path] starts_with "/api" } { pool api_pool } else { pool pool }
    HTTP::header replace X-Tag [HTTP::path]
}`)
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
			mustApply(t, p, cfg)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}, MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			paths := []string{"/a", "/b", "/c"}
			if oc {
				// Per-request routing needs OneConnect (without it the
				// connection's member serves every request).
				paths = []string{"/a", "/api/x", "/b", "/api/y"}
			}
			for i, path := range paths {
				req, _ := http.NewRequest("GET", "https://127.0.141.10:443"+path, nil)
				req.Host = "www.example"
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := "WEB"
				if strings.HasPrefix(path, "/api") {
					want = "API"
				}
				if got := string(b); !strings.HasPrefix(got, want+" host=www.example xff=127.0.0.1 tag="+path+" "+path) {
					t.Fatalf("request %s: %q", path, got)
				}
				if !resp.TLS.HandshakeComplete {
					t.Fatal("no TLS")
				}
			}
			if c, _ := countFlows(p); c != 1 {
				t.Fatalf("client flows = %d, want one keep-alive TLS connection", c)
			}
		})
	}
}

// TestTLSRulesHTTP runs the TLS events and SSL:: / X509:: commands on an
// HTTP virtual: the client's certificate, the negotiated suite and the SNI
// read by the rule, and SSL::disable letting a client speak plaintext.
func TestTLSRulesHTTP(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	ccert, ckey, _ := testCert(t, "alice")
	startHTTPServer(t, "127.0.142.11:80", "WEB")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.0.142.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.142.11:80")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED {
    set subj none
    if { [IP::client_addr] eq "127.0.0.2" } { SSL::disable }
}
when CLIENTSSL_CLIENTCERT {
    set subj "[X509::subject [SSL::cert 0]] serial=[X509::serial_number [SSL::cert 0]] until=[X509::not_valid_after [SSL::cert 0]]"
}
when CLIENTSSL_HANDSHAKE {
    set tlsinfo "[SSL::cipher version] [SSL::cipher name] [SSL::cipher bits]"
    binary scan [SSL::extensions -type 0] @9a* sni
}
when HTTP_REQUEST {
    if { [info exists tlsinfo] } {
        HTTP::respond 200 content "[PROFILE::clientssl name] $tlsinfo|[SSL::cert count]|$subj|$sni|[SSL::verify_result]"
    } else {
        HTTP::respond 200 content "clear"
    }
}`)
	// peer-cert-mode request with alice's certificate as the ca-file: every
	// client is let in, and SSL::verify_result says whom to trust.
	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
		PeerCertMode: "request", CAFile: ccert, AuthenticateDepth: -1, Options: []string{"no-tlsv1.3"}}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: b.Config, ClientBuilt: []*tlsprof.Built{b}, ClientProfiles: []string{"/Common/cs"}}
	mustApply(t, p, cfg)

	pair, _ := tlsprof.Pair("client", ccert, ckey, nil)
	get := func(tc *tls.Config, local string) string {
		t.Helper()
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		var c net.Conn
		var err error
		if tc != nil {
			c, err = tls.DialWithDialer(d, "tcp", "127.0.142.10:443", tc)
		} else {
			c, err = d.Dial("tcp", "127.0.142.10:443")
		}
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: www.example\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("response: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	got := get(&tls.Config{RootCAs: roots, ServerName: "www.example", Certificates: []tls.Certificate{pair},
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "127.0.0.1")
	want := "/Common/cs TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384 256|1|CN=alice,O=openltm test serial=12:67 until="
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " GMT|www.example|0") {
		t.Fatalf("rule's view of TLS:\n got %q\nwant %q...", got, want)
	}
	// Without a client certificate: count 0, CLIENTSSL_CLIENTCERT not run.
	if got := get(&tls.Config{RootCAs: roots, ServerName: "www.example"}, "127.0.0.1"); !strings.HasSuffix(got, "|0|none|www.example|0") {
		t.Fatalf("without a client certificate: %q", got)
	}
	// A certificate the ca-file does not vouch for (self-signed): let in,
	// with OpenSSL's 18 (X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT).
	mcert, mkey, _ := testCert(t, "mallory")
	mpair, _ := tlsprof.Pair("mallory", mcert, mkey, nil)
	// (GetClientCertificate: Go's client otherwise sends only a certificate
	// one of the server's acceptable CAs issued.)
	sendMallory := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &mpair, nil }
	if got := get(&tls.Config{RootCAs: roots, ServerName: "www.example", GetClientCertificate: sendMallory}, "127.0.0.1"); !strings.Contains(got, "CN=mallory") || !strings.HasSuffix(got, "|18") {
		t.Fatalf("an untrusted client certificate: %q", got)
	}
	// SSL::disable in CLIENT_ACCEPTED: plaintext HTTP.
	if got := get(nil, "127.0.0.2"); got != "clear" {
		t.Fatalf("SSL::disable: %q", got)
	}
}

// TestTLSRulesStandard runs rules on a standard virtual with client-ssl
// and server-ssl: the TLS events in order (the client's hello before its
// handshake, the proxy's own hello after SERVER_CONNECTED), each side's
// SSL:: view, data events over the plaintext, and SSL::disable.
func TestTLSRulesStandard(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	mcert, mkey, _ := testCert(t, "member.example")
	startTLSServer(t, "127.0.143.11:9443", "M", mcert, mkey)
	startServer(t, "127.0.143.12:9000", "P")
	p, _ := newPlane(t)
	rule := `
when CLIENT_ACCEPTED {
    set ev accepted
    if { [IP::client_addr] eq "127.0.0.2" } { SSL::disable; SSL::disable serverside; pool plain }
}
when CLIENTSSL_CLIENTHELLO { append ev " hello=[SSL::extensions count]/[SSL::cipher version]" }
when CLIENTSSL_HANDSHAKE { append ev " clientssl=[SSL::cipher version] sid=[string length [SSL::sessionid]] [PROFILE::clientssl name]" }
when SERVER_CONNECTED { append ev " connected"; TCP::collect }
when SERVERSSL_CLIENTHELLO_SEND { append ev " hellosend" }
when SERVERSSL_HANDSHAKE { append ev " serverssl=[X509::subject [SSL::cert 0]] sid=[string length [SSL::sessionid]]/[string length [SSL::sessionid desired]] verify=[SSL::verify_result] [PROFILE::serverssl name]" }
when SERVER_DATA {
    TCP::payload replace 0 0 "$ev|"
    TCP::release
}`
	cfg := basic("127.0.143.10:443", "127.0.143.11:9443")
	cfg.Pools["/Common/plain"] = &Pool{Name: "/Common/plain", LBMode: RoundRobin, Members: []Member{{Node: "/Common/127.0.143.12", Addr: ap("127.0.143.12:9000")}}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server, cfg.Virtuals["/Common/vs"].TLS.ServerProfile = serverSSL(t), "/Common/ss"
	mustApply(t, p, cfg)
	got := tlsAsk(t, "127.0.143.10:443", "app.example", roots, "x")
	// verify=18: the server-ssl profile has no ca-file, and the member's
	// certificate is self-signed (OpenSSL's X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT).
	if want := "accepted hello=1/TLSv1.3 clientssl=TLSv1.3 sid=64 /Common/cs connected hellosend serverssl=CN=member.example,O=openltm test sid=64/64 verify=18 /Common/ss|M Response tls"; got[0] != want {
		t.Fatalf("TLS events:\n got %q\nwant %q", got[0], want)
	}
	// SSL::disable on both sides: plaintext through to a plaintext member.
	c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}).Dial("tcp", "127.0.143.10:443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "y\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "accepted connected|P Response\n" {
		t.Fatalf("SSL::disable: %q %v", line, err)
	}
}

// startTLSMember serves HTTP over TLS (a certificate for member.example)
// on addr, answering "<word> tls=true" to every request, until the test
// ends.
func startTLSMember(t *testing.T, addr, word string) {
	t.Helper()
	mcert, mkey, _ := testCert(t, "member.example")
	pair, _ := tlsprof.Pair("member", mcert, mkey, nil)
	ln, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s tls=%v", word, r.TLS != nil)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestTLSHTTPServerSSL re-encrypts an HTTP virtual's requests to a TLS
// member; SERVERSSL_CLIENTHELLO_SEND and SERVERSSL_HANDSHAKE run for the
// client that opened the connection (the second reads the member's
// certificate), after the client's own CLIENTSSL_CLIENTHELLO.
func TestTLSHTTPServerSSL(t *testing.T) {
	cert, key, roots := testCert(t, "www.example")
	startTLSMember(t, "127.0.144.11:443", "member")
	p, _ := newPlane(t)
	cfg := mblbConfig("127.0.144.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.0.144.11:443")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENTSSL_CLIENTHELLO { set sni [SSL::extensions count] }
when SERVERSSL_CLIENTHELLO_SEND { set sent yes }
when SERVERSSL_HANDSHAKE { set member [X509::subject [SSL::cert 0]] }
when HTTP_RESPONSE { HTTP::header insert X-Member-Cert $member; HTTP::header insert X-Hello "$sni $sent" }`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server = serverSSL(t)
	mustApply(t, p, cfg)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "www.example"}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://127.0.144.10/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "member tls=true" || resp.Header.Get("X-Member-Cert") != "CN=member.example,O=openltm test" || resp.Header.Get("X-Hello") != "1 yes" {
		t.Fatalf("server-ssl on an HTTP virtual: %q %v", body, resp.Header)
	}
}

// TestTLSIdleTimeout: an idle TLS flow is reset at the idle timeout, and
// one that keeps talking is not.
func TestTLSIdleTimeout(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.0.145.11:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.145.10:443", "127.0.145.11:9000")
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
	mustApply(t, p, cfg)
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.0.145.10:443", &tls.Config{ServerName: "app.example", RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := 0; i < 15; i++ { // 15 × 100 ms: past the timeout, but never idle for it
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "x\n")
		if line, err := r.ReadString('\n'); err != nil || line != "S1 Response\n" {
			t.Fatalf("request %d: %q %v", i, line, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("idle TLS flow: read %v, want the connection ended", err)
	}
	eventually(t, "the table empty", func() bool { return p.ConnectionCount() == 0 })
}

// TestTLSHelloSendDisable: SSL::disable serverside in
// SERVERSSL_CLIENTHELLO_SEND leaves that server connection in plaintext
// (no hello leaves) on a standard virtual with server-ssl.
func TestTLSHelloSendDisable(t *testing.T) {
	cert, key, roots := testCert(t, "app.example")
	startServer(t, "127.0.143.32:9000", "P")
	p, _ := newPlane(t)
	cfg := basic("127.0.143.30:443", "127.0.143.32:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when SERVERSSL_CLIENTHELLO_SEND { SSL::disable serverside }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::payload replace 0 0 "sent|"; TCP::release }`)
	cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
	cfg.Virtuals["/Common/vs"].TLS.Server, cfg.Virtuals["/Common/vs"].TLS.ServerProfile = serverSSL(t), "/Common/ss"
	mustApply(t, p, cfg)
	if got := tlsAsk(t, "127.0.143.30:443", "app.example", roots, "x"); got[0] != "sent|P Response" {
		t.Fatalf("a plaintext member behind SSL::disable serverside: %q", got)
	}
}
