package dataplane

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// sniCollectRule is the DevCentral iRule that routes TLS by SNI without
// decrypting it and without an ssl persistence profile: the front
// collects the client's first bytes, walks the ClientHello with binary
// scan to its server_name extension, and hands the client to a virtual
// server by name; other names stay on the front's own pool.
const sniCollectRule = `when CLIENT_ACCEPTED {
    TCP::collect
}
when CLIENT_DATA {
    set sni ""
    if { [binary scan [TCP::payload] cSS rtype rversion rlen] == 3 && $rtype == 22 } {
        set rlen [expr {$rlen & 0xffff}]
        if { [TCP::payload length] < $rlen + 5 } {
            # The hello is not all here yet: wait for the rest.
            log local0. "front waits for the rest of the hello"
            TCP::collect
            return
        }
        binary scan [TCP::payload] @5c htype
        if { $htype == 1 } {
            # record header 5, handshake header 4, version 2, random 32
            set off 43
            binary scan [TCP::payload] @${off}c sidlen
            incr off [expr {1 + ($sidlen & 0xff)}]
            binary scan [TCP::payload] @${off}S cslen
            incr off [expr {2 + ($cslen & 0xffff)}]
            binary scan [TCP::payload] @${off}c cmlen
            incr off [expr {1 + ($cmlen & 0xff)}]
            binary scan [TCP::payload] @${off}S extlen
            incr off 2
            set end [expr {$off + ($extlen & 0xffff)}]
            while { $off + 4 <= $end } {
                binary scan [TCP::payload] @${off}SS etype elen
                if { $etype == 0 } {
                    # server_name: list length 2, name type 1, name length 2
                    binary scan [TCP::payload] @[expr {$off + 7}]S nlen
                    binary scan [TCP::payload] @[expr {$off + 9}]a[expr {$nlen & 0xffff}] sni
                    break
                }
                incr off [expr {4 + ($elen & 0xffff)}]
            }
        }
    }
    log local0. "front sni '$sni'"
    switch -glob -- [string tolower $sni] {
        "api.*" { virtual vs_api }
        "www.*" { virtual /Common/vs_www }
        "loop.*" { virtual vs_loop }
    }
    TCP::release
}`

// virtualDataConfig is the front at front running rs over the pool of one
// TLS member "DEF" at 127.79.0.20:9443, and the virtual servers its rule
// hands clients to: vs_api and vs_www terminate TLS with their own
// certificates (vs_api with a rule logging its handshake) to their own
// plaintext pools; vs_loop hands every client back to the front.
func virtualDataConfig(t *testing.T, front string, rs Rules) (cfg *Config, roots map[string]*x509.CertPool, apiLog *ruleLog) {
	t.Helper()
	roots = map[string]*x509.CertPool{}
	tlsOf := func(name, sni string) *TLS {
		c, k, r := testCert(t, sni)
		roots[sni] = r
		return sniVirtualTLS(t, name, c, k)
	}
	cfg = basic(front, "127.79.0.20:9443")
	cfg.Virtuals["/Common/vs"].Rules = rs
	withPool(cfg, "/Common/api_pool", "127.79.0.21:9000")
	withPool(cfg, "/Common/www_pool", "127.79.0.22:9000")
	add := func(name, dest, pool string) *Virtual {
		v := &Virtual{Name: name, Destination: ap(dest), Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: pool, SNAT: SNAT{Type: SNATNone}}
		cfg.Virtuals[name] = v
		return v
	}
	api := add("/Common/vs_api", "127.79.0.2:443", "/Common/api_pool")
	api.TLS = tlsOf(api.Name, "api.example")
	api.Rules, apiLog = compileRules(t, `when CLIENTSSL_HANDSHAKE {
    log local0. "[virtual name] handshake [SSL::cipher version]"
}`)
	www := add("/Common/vs_www", "127.79.0.3:443", "/Common/www_pool")
	www.TLS = tlsOf(www.Name, "www.example")
	loop := add("/Common/vs_loop", "127.79.0.6:443", "/Common/pool")
	loop.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { virtual vs }`)
	return cfg, roots, apiLog
}

// TestSNIVirtualCollectRule: the classic SNI switch (TCP::collect, the
// ClientHello's server_name found with binary scan in CLIENT_DATA,
// `virtual NAME`, TCP::release) on an L4 virtual without client-ssl or
// persistence hands each Go TLS client, by the name it asks for, to the
// virtual server that terminates TLS with that name's certificate; that
// virtual reads the collected hello first, runs its own rules and serves
// the client from its own pool, a hello in small pieces too. Other names
// and none reach the front's own member, which completes TLS itself; the
// clients handed on never reach it. A client handed round in a loop is
// reset after four hand-offs, logged.
func TestSNIVirtualCollectRule(t *testing.T) {
	cert, key, _ := testCert(t, "member.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	sniMember(t, "127.79.0.20:9443", "DEF", pair)
	startServer(t, "127.79.0.21:9000", "API")
	startServer(t, "127.79.0.22:9000", "WWW")
	rs, lg := compileRules(t, sniCollectRule)
	lg.showOnFailure(t)
	front := "127.79.0.1:443"
	cfg, roots, apiLog := virtualDataConfig(t, front, rs)
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
		{"api in 100-byte pieces", "API.example", 100, "api.example", "API Response"},
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
	for vs, want := range map[string]uint64{"/Common/vs_api": 2, "/Common/vs_www": 2, "/Common/vs": 6} {
		st, ok := p.Virtual(vs)
		if !ok || st.ClientSide.TotConns != want {
			t.Errorf("%s: %d connections, want %d", vs, st.ClientSide.TotConns, want)
		}
	}
	// Only the two clients the front kept reached its member.
	if m := memberStat(t, p, "/Common/pool", "/Common/127.79.0.20:9443"); m.ServerSide.TotConns != 2 {
		t.Errorf("the front's member had %d connections, want 2", m.ServerSide.TotConns)
	}
	if n := strings.Count(apiLog.String(), "/Common/vs_api handshake TLSv1.3"); n != 2 {
		t.Errorf("vs_api's CLIENTSSL_HANDSHAKE ran %d times, want 2:\n%s", n, apiLog)
	}
	for _, want := range []string{"front waits for the rest of the hello", "front sni 'api.example'", "front sni 'www.example'", "front sni 'API.example'", "front sni 'other.example'", "front sni ''"} {
		if !strings.Contains(lg.String(), want) {
			t.Errorf("the front's rule did not log %q:\n%s", want, lg)
		}
	}

	// front -> vs_loop -> front -> vs_loop -> reset.
	if _, _, err := sniVirtualAsk(front, "loop.example", 0, nil); err == nil {
		t.Errorf("a client handed round in a loop was served")
	}
	eventually(t, "the hand-off loop logged", func() bool {
		return strings.Contains(plog.String(), "has been handed on 4 times; reset")
	})
	if m := memberStat(t, p, "/Common/pool", "/Common/127.79.0.20:9443"); m.ServerSide.TotConns != 2 {
		t.Errorf("the front's member had %d connections after the loop, want 2", m.ServerSide.TotConns)
	}
	eventually(t, "the flows to end", func() bool { return p.table.Len() == 0 })
}

// TestRulesVirtualTargetData: `virtual NAME` in CLIENT_DATA on a plaintext
// virtual hands the client with every collected byte, as TCP::payload
// replace left them, whether the rule released them all, some, or none:
// the named virtual's member gets them as the client's first bytes, and
// the front's member nothing. Refused, each resetting only its client and
// logged: once a member of the front was connected, on a virtual that
// terminates TLS, and in SERVER_DATA.
func TestRulesVirtualTargetData(t *testing.T) {
	t.Parallel()
	startServer(t, "127.79.1.10:9000", "FRONT")
	rawServer(t, "127.79.1.11:9000", func(b []byte) []byte { return []byte("MAIL got " + string(b)) })
	cfg := basic("127.79.1.1:25", "127.79.1.10:9000")
	withPool(cfg, "/Common/mail_pool", "127.79.1.11:9000")
	front := cfg.Virtuals["/Common/vs"]
	var lg *ruleLog
	front.Rules, lg = compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    switch -glob -- [TCP::payload] {
        "HELO *" {
            TCP::payload replace 0 5 "EHLO "
            virtual vs_mail
        }
        "part*" {
            TCP::release 2
            virtual vs_mail
        }
        "keep*" {
            virtual vs_mail
            return
        }
        "switch*" { virtual vs_mail }
    }
    TCP::release
    TCP::collect
}`)
	lg.showOnFailure(t)
	mail := &Virtual{Name: "/Common/vs_mail", Destination: ap("127.79.1.2:25"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/mail_pool", SNAT: SNAT{Type: SNATNone}}
	cfg.Virtuals[mail.Name] = mail
	c, k, _ := testCert(t, "term.example")
	term := &Virtual{Name: "/Common/vs_term", Destination: ap("127.79.1.3:443"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	term.TLS = sniVirtualTLS(t, term.Name, c, k)
	var termLog, srvLog *ruleLog
	term.Rules, termLog = compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { virtual vs_mail }`)
	cfg.Virtuals[term.Name] = term
	srvData := &Virtual{Name: "/Common/vs_srvdata", Destination: ap("127.79.1.4:25"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	srvData.Rules, srvLog = compileRules(t, `when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { virtual vs_mail }`)
	cfg.Virtuals[srvData.Name] = srvData
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	for _, tc := range []struct{ send, want string }{
		{"HELO client.example\r\n", "MAIL got EHLO client.example"},
		{"partial line\n", "MAIL got partial line"},
		{"keep it\n", "MAIL got keep it"},
		{"anything\n", "FRONT Response"},
	} {
		if got := plainAsk(t, "127.79.1.1:25", []byte(tc.send)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.send, got, tc.want)
		}
	}
	if st, _ := p.Virtual("/Common/vs_mail"); st.ClientSide.TotConns != 3 {
		t.Errorf("vs_mail: %d connections, want 3", st.ClientSide.TotConns)
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.79.1.10:9000"); m.ServerSide.TotConns != 1 {
		t.Errorf("the front's member had %d connections, want 1", m.ServerSide.TotConns)
	}

	// Once the front's member has the client's first line, the client
	// stays: the rule error resets it.
	cl := dialVS(t, "127.79.1.1:25")
	if got := cl.mustAsk("first"); got != "FRONT Response" {
		t.Fatalf("before switching: %q", got)
	}
	if _, err := cl.ask("switch"); err == nil {
		t.Errorf("a client with a member was handed on")
	}
	// A virtual that terminates TLS refuses.
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", "127.79.1.3:443", &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.SetDeadline(time.Now().Add(3 * time.Second))
	tc.Write([]byte("hello\n"))
	if _, err := bufio.NewReader(tc).ReadString('\n'); err == nil {
		t.Errorf("a client-ssl virtual handed its client on")
	}
	tc.Close()
	// SERVER_DATA refuses.
	k2 := dialVS(t, "127.79.1.4:25")
	if _, err := k2.ask("x"); err == nil {
		t.Errorf("virtual in SERVER_DATA: the connection was answered")
	}
	for _, want := range []string{
		"TCL error: /Common/r1 <CLIENT_DATA> - virtual /Common/vs_mail: the connection already went to a server of virtual /Common/vs (127.79.1.10:9000); it is handed to another virtual server in CLIENT_DATA only before a member is connected",
		"TCL error: /Common/r1 <CLIENT_DATA> - virtual /Common/vs_mail: a virtual server with a client-ssl profile cannot hand its connection on",
		"TCL error: /Common/r1 <SERVER_DATA> - virtual /Common/vs_mail: a connection is handed to another virtual server in CLIENT_ACCEPTED, in CLIENT_DATA before a member is connected, or in CLIENTSSL_CLIENTHELLO on a virtual server that passes TLS through",
	} {
		eventually(t, "the rule error logged: "+want, func() bool {
			return strings.Contains(lg.String()+termLog.String()+srvLog.String(), want)
		})
	}
	if st, _ := p.Virtual("/Common/vs_mail"); st.ClientSide.TotConns != 3 {
		t.Errorf("vs_mail took %d connections, want 3", st.ClientSide.TotConns)
	}
	cl.c.Close()
	eventually(t, "the flows to end", func() bool { return p.table.Len() == 0 })
}
