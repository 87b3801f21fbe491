package dataplane

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
	"github.com/openltm/openltm/rules/policy"
)

// sniVirtualTLS is a client-ssl profile of its own for the virtual name.
func sniVirtualTLS(t *testing.T, name string, cert *tlsprof.Cert, key *tlsprof.Key) *TLS {
	t.Helper()
	b, err := (&tlsprof.ClientSSL{Name: name + "_cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}}, AuthenticateDepth: -1}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsprof.ForVirtual(name, []*tlsprof.Built{b})
	if err != nil {
		t.Fatal(err)
	}
	return &TLS{Client: cfg, ClientProfiles: []string{name + "_cs"}, ClientBuilt: []*tlsprof.Built{b}}
}

// sniVirtualAsk connects to vs over TLS asking for sni, in pieces of
// split bytes when split > 0, verifying the certificate against roots
// (nil: not verified), and returns the served certificate's common name
// and the answer to one line.
func sniVirtualAsk(vs, sni string, split int, roots *x509.CertPool) (cn, answer string, err error) {
	raw, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		return "", "", err
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	var nc net.Conn = raw
	if split > 0 {
		nc = &pieces{Conn: raw, n: split}
	}
	c := tls.Client(nc, &tls.Config{ServerName: sni, RootCAs: roots, InsecureSkipVerify: roots == nil})
	if err := c.Handshake(); err != nil {
		return "", "", err
	}
	if pc := c.ConnectionState().PeerCertificates; len(pc) > 0 {
		cn = pc[0].Subject.CommonName
	}
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return cn, "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return cn, strings.TrimSpace(line), err
}

// sniVirtualConfig is one VIP on 443 passing TLS through (ssl
// persistence, no client-ssl) whose default pool is a TLS member "DEF",
// and the internal virtuals its rules or policies hand clients to by SNI:
// vs_api and vs_www terminate TLS with their own certificates (vs_api
// with rules, vs_www without) to their own plaintext pools, vs_web is an
// HTTP virtual terminating TLS, vs_pass passes TLS through again and
// reads the hello itself, vs_loop hands the client back to the front.
// apiLog receives vs_api's rule's log.
func sniVirtualConfig(t *testing.T, front string, rs Rules) (cfg *Config, roots map[string]*x509.CertPool, apiLog *ruleLog) {
	t.Helper()
	roots = map[string]*x509.CertPool{}
	certs := map[string][2]any{}
	for _, n := range []string{"api.example", "www.example", "web.example"} {
		c, k, r := testCert(t, n)
		roots[n], certs[n] = r, [2]any{c, k}
	}
	tlsOf := func(name, sni string) *TLS {
		ck := certs[sni]
		return sniVirtualTLS(t, name, ck[0].(*tlsprof.Cert), ck[1].(*tlsprof.Key))
	}
	cfg = basic(front, "127.77.0.20:9443")
	front0 := cfg.Virtuals["/Common/vs"]
	front0.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	front0.Rules = rs
	withPool(cfg, "/Common/api_pool", "127.77.0.21:9000")
	withPool(cfg, "/Common/www_pool", "127.77.0.22:9000")
	withPool(cfg, "/Common/web_pool", "127.77.0.23:80")
	withPool(cfg, "/Common/pass_pool", "127.77.0.24:9443")
	add := func(name, dest, pool string) *Virtual {
		v := &Virtual{Name: name, Destination: ap(dest), Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: pool, SNAT: SNAT{Type: SNATNone}}
		cfg.Virtuals[name] = v
		return v
	}
	api := add("/Common/vs_api", "127.77.0.2:443", "/Common/api_pool")
	api.TLS = tlsOf(api.Name, "api.example")
	api.Rules, apiLog = compileRules(t, `when CLIENTSSL_HANDSHAKE {
    log local0. "[virtual name] handshake [SSL::cipher version]"
}`)
	www := add("/Common/vs_www", "127.77.0.3:443", "/Common/www_pool")
	www.TLS = tlsOf(www.Name, "www.example")
	web := add("/Common/vs_web", "127.77.0.4:443", "/Common/web_pool")
	web.TLS = tlsOf(web.Name, "web.example")
	web.MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{InsertXFF: true}}}
	web.SNAT = SNAT{Type: SNATAutomap}
	pass := add("/Common/vs_pass", "127.77.0.5:443", "/Common/pool")
	pass.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	pass.Rules, _ = compileRules(t, `when CLIENTSSL_CLIENTHELLO {
    if { [SSL::extensions -type 0] ends_with "pass.example" } { pool pass_pool }
}`)
	loop := add("/Common/vs_loop", "127.77.0.6:443", "/Common/pool")
	loop.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	loop.Rules, _ = compileRules(t, `when CLIENTSSL_CLIENTHELLO { virtual vs }`)
	return cfg, roots, apiLog
}

// sniVirtualMembers starts the members of sniVirtualConfig.
func sniVirtualMembers(t *testing.T) {
	t.Helper()
	cert, key, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	sniMember(t, "127.77.0.20:9443", "DEF", pair)
	sniMember(t, "127.77.0.24:9443", "PASS", pair)
	startServer(t, "127.77.0.21:9000", "API")
	startServer(t, "127.77.0.22:9000", "WWW")
	startHTTPServer(t, "127.77.0.23:80", "WEB")
}

// TestSNIVirtualTargetRule: one VIP passing TLS through hands each client,
// by the SNI of the ClientHello it read, to the internal virtual server
// that terminates TLS with that name's certificate (`virtual NAME` in
// CLIENTSSL_CLIENTHELLO): the client completes its handshake with that
// virtual, which reads the hello from the bytes handed over, runs its own
// rules and serves the client from its own pool, a hello in small pieces
// too; an HTTP virtual terminating TLS serves requests the same way; a
// virtual passing TLS through reads the handed hello for its own rules;
// an unknown name and no name stay on the front's pool; a client handed
// round in a loop is reset after four hand-offs and logged.
func TestSNIVirtualTargetRule(t *testing.T) {
	sniVirtualMembers(t)
	rs, lg := compileRules(t, `when CLIENTSSL_CLIENTHELLO {
    if { [SSL::extensions exists -type 0] } {
        binary scan [SSL::extensions -type 0] @9a* sni
        log local0. "front $sni"
        switch -glob -- [string tolower $sni] {
            api.example { virtual vs_api }
            www.example { virtual /Common/vs_www }
            web.example { virtual vs_web }
            *.pass.example { virtual vs_pass }
            loop.example { virtual vs_loop }
        }
    }
}`)
	lg.showOnFailure(t)
	front := "127.77.0.1:443"
	cfg, roots, apiLog := sniVirtualConfig(t, front, rs)
	p, plog := newPlane(t)
	mustApply(t, p, cfg)

	for _, tc := range []struct {
		name, sni string
		split     int
		cn, want  string
	}{
		{"api", "api.example", 0, "api.example", "API Response"},
		{"www", "www.example", 0, "www.example", "WWW Response"},
		{"www in 9-byte pieces", "www.example", 9, "www.example", "WWW Response"},
		{"api in 50-byte pieces", "API.example", 50, "api.example", "API Response"},
		{"passed through again", "a.pass.example", 0, "member.example", "PASS Response tls"},
		{"unknown name", "other.example", 0, "member.example", "DEF Response tls"},
		{"no name", "", 0, "member.example", "DEF Response tls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn, got, err := sniVirtualAsk(front, tc.sni, tc.split, roots[strings.ToLower(tc.sni)])
			if err != nil || cn != tc.cn || got != tc.want {
				t.Fatalf("certificate %q, answer %q (%v); want %q, %q", cn, got, err, tc.cn, tc.want)
			}
		})
	}

	// HTTP over TLS terminated by the HTTP virtual the front handed to.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots["web.example"], ServerName: "web.example"},
		DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, path := range []string{"/a", "/b"} {
		resp, err := hc.Get("https://" + front + path)
		if err != nil {
			t.Fatalf("https %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := string(b); !strings.HasPrefix(got, "WEB host="+front+" xff=127.0.0.1 tag= "+path) ||
			resp.TLS.PeerCertificates[0].Subject.CommonName != "web.example" {
			t.Fatalf("https %s: %q", path, got)
		}
	}

	// Each virtual counted the clients handed to it.
	for vs, want := range map[string]uint64{"/Common/vs_api": 2, "/Common/vs_www": 2, "/Common/vs_pass": 1, "/Common/vs_web": 1} {
		st, ok := p.Virtual(vs)
		if !ok || st.ClientSide.TotConns != want {
			t.Errorf("%s: %d connections, want %d", vs, st.ClientSide.TotConns, want)
		}
	}

	// A loop: front -> vs_loop -> front -> vs_loop -> reset.
	if _, _, err := sniVirtualAsk(front, "loop.example", 0, nil); err == nil {
		t.Errorf("a client handed round in a loop was served")
	}
	eventually(t, "the hand-off loop logged", func() bool {
		return strings.Contains(plog.String(), "has been handed on 4 times; reset")
	})
	if !strings.Contains(lg.String(), "front api.example") {
		t.Errorf("the front's rule did not run:\n%s", lg)
	}
	if n := strings.Count(apiLog.String(), "/Common/vs_api handshake TLSv1.3"); n != 2 {
		t.Errorf("vs_api's CLIENTSSL_HANDSHAKE ran %d times, want 2:\n%s", n, apiLog)
	}
	tr.CloseIdleConnections()
	eventually(t, "the flows to end", func() bool { return p.table.Len() == 0 })
}

// TestSNIVirtualTargetRefused: `virtual NAME` stays a rule error in
// CLIENTSSL_CLIENTHELLO on a virtual that terminates TLS (its handshake
// is under way; TestRulesVirtualTargetData refuses it in CLIENT_DATA): only
// that connection is reset, and the error is logged.
func TestSNIVirtualTargetRefused(t *testing.T) {
	sniVirtualMembers(t)
	front := "127.77.1.1:443"
	cfg, _, _ := sniVirtualConfig(t, front, nil)
	// The front terminates TLS itself here.
	c, k, _ := testCert(t, "front.example")
	v := cfg.Virtuals["/Common/vs"]
	v.Persist = nil
	v.TLS = sniVirtualTLS(t, v.Name, c, k)
	v.Pool = "/Common/api_pool"
	var lg *ruleLog
	v.Rules, lg = compileRules(t, `when CLIENTSSL_CLIENTHELLO { virtual vs_www }`)
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	if _, _, err := sniVirtualAsk(front, "www.example", 0, nil); err == nil {
		t.Errorf("a client-ssl virtual handed its connection on")
	}
	eventually(t, "the rule error logged", func() bool {
		return strings.Contains(lg.String(), "TCL error: /Common/r1 <CLIENTSSL_CLIENTHELLO> - virtual /Common/vs_www: a virtual server with a client-ssl profile cannot hand its connection on")
	})
	if st, _ := p.Virtual("/Common/vs_www"); st.ClientSide.TotConns != 0 {
		t.Errorf("vs_www took %d connections", st.ClientSide.TotConns)
	}
}

// TestSNIVirtualTargetPolicy: a policy's `forward select virtual` at
// ssl-client-hello on a virtual passing TLS through hands the client to
// that virtual with the hello, as the iRule command does.
func TestSNIVirtualTargetPolicy(t *testing.T) {
	sniVirtualMembers(t)
	cond := func(val string) policy.Spec {
		return policy.Spec{Num: "0", Words: map[string]string{"operand": "ssl-extension", "event": "ssl-client-hello", "selector": "server-name", "operator": "equals"}, Values: []string{val}}
	}
	act := func(target string) policy.Spec {
		return policy.Spec{Num: "0", Words: map[string]string{"event": "ssl-client-hello", "operand": "forward", "verb": "select", "virtual": target}}
	}
	c, err := policy.Compile(policy.Policy{Name: "/Common/sni_virtual", Strategy: "first-match", Rules: []policy.Rule{
		{Name: "api", Conditions: []policy.Spec{cond("api.example")}, Actions: []policy.Spec{act("/Common/vs_api")}},
		{Name: "www", Conditions: []policy.Spec{cond("www.example")}, Actions: []policy.Spec{act("/Common/vs_www")}},
	}})
	if err != nil || c.HelloTcl == "" || len(c.NotRun) > 0 {
		t.Fatalf("Compile: %v %+v", err, c)
	}
	pr, err := rules.Compile("policy /Common/sni_virtual", c.HelloTcl)
	if err != nil {
		t.Fatal(err)
	}
	lg := &ruleLog{}
	lg.showOnFailure(t)
	prog := rules.NewProgram(&rules.Env{Log: lg.log}, pr)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	front := "127.77.2.1:443"
	cfg, roots, _ := sniVirtualConfig(t, front, NewRules(prog))
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	for _, tc := range []struct{ sni, cn, want string }{
		{"api.example", "api.example", "API Response"},
		{"www.example", "www.example", "WWW Response"},
		{"other.example", "member.example", "DEF Response tls"},
	} {
		cn, got, err := sniVirtualAsk(front, tc.sni, 0, roots[tc.sni])
		if err != nil || cn != tc.cn || got != tc.want {
			t.Errorf("%s: certificate %q, answer %q (%v); want %q, %q", tc.sni, cn, got, err, tc.cn, tc.want)
		}
	}
}
