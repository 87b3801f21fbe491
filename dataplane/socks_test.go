package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/socks"
	"golang.org/x/net/proxy"
)

// socksConfig is a socks virtual at vs (a pool-less TCP virtual with a
// socks profile) resolving through ns, beside a standard virtual at
// "127.103.1.11:80" whose pool is member.
func socksConfig(vs, member string, ns netip.AddrPort, allow bool) *Config {
	cfg := basic("127.103.1.11:80", member)
	rc := fwdproxy.ResolverConfig{Zones: []fwdproxy.Zone{{Name: ".", Nameservers: []netip.AddrPort{ns}}}, UDP: true}
	cfg.Virtuals["/Common/socks"] = &Virtual{Name: "/Common/socks", Destination: ap(vs), Enabled: true, SNAT: SNAT{Type: SNATNone},
		Socks: socks.New(socks.Config{Profile: "/Common/socks", Versions: socks.V4 | socks.V4A | socks.V5, ConnectAllow: allow, Resolver: &rc})}
	return cfg
}

// socksDial runs one hand-written request (greeting included) through
// the proxy at vs and returns the reply's first bytes (2 for SOCKS 4's
// code, 2 for SOCKS 5's after the method selection) and the connection.
func socksDial(t *testing.T, vs string, req []byte) (byte, net.Conn) {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	if req[0] == 5 {
		var sel [2]byte
		if _, err := io.ReadFull(c, sel[:]); err != nil || sel != [2]byte{5, 0} {
			t.Fatalf("method selection % x %v", sel, err)
		}
		var h [4]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			t.Fatalf("reply: %v", err)
		}
		n := 4 + 2
		if h[3] == 4 {
			n = 16 + 2
		}
		io.ReadFull(c, make([]byte, n))
		return h[1], c
	}
	var r [8]byte
	if _, err := io.ReadFull(c, r[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return r[1], c
}

// TestSocksVirtual: SOCKS 4, 4A and 5 clients (hand-written and
// golang.org/x/net/proxy) reach the destinations they name, by address
// or by a name the profile's resolver answers; what cannot be reached
// gets its reply code; BIND and UDP ASSOCIATE are refused.
func TestSocksVirtual(t *testing.T) {
	startServer(t, "127.103.1.20:80", "M1")
	ns := startNameserver(t, "127.103.1.53:0", map[string]string{"m1.test.": "127.103.1.20"})
	p, _ := newPlane(t)
	mustApply(t, p, socksConfig("127.103.1.10:1080", "127.103.1.20:80", ns, true))
	const vs = "127.103.1.10:1080"
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	v5 := []byte{5, 1, 0}
	for _, tc := range []struct {
		name string
		req  []byte
		code byte
	}{
		{"socks4", []byte{4, 1, 0, 80, 127, 103, 1, 20, 0}, 90},
		{"socks4a", cat([]byte{4, 1, 0, 80, 0, 0, 0, 1, 'u', 0}, []byte("m1.test\x00")), 90},
		{"socks5 address", cat(v5, []byte{5, 1, 0, 1, 127, 103, 1, 20, 0, 80}), socks.Succeeded},
		{"socks5 name", cat(v5, []byte{5, 1, 0, 3, 7}, []byte("m1.test"), []byte{0, 80}), socks.Succeeded},
		{"socks5 refused", cat(v5, []byte{5, 1, 0, 1, 127, 103, 1, 21, 0, 80}), socks.Refused},
		{"socks4 refused", []byte{4, 1, 0, 80, 127, 103, 1, 21, 0}, 91},
		{"socks5 no such name", cat(v5, []byte{5, 1, 0, 3, 9}, []byte("none.test"), []byte{0, 80}), socks.HostUnreachable},
		{"socks5 bind", cat(v5, []byte{5, 2, 0, 1, 127, 103, 1, 20, 0, 80}), socks.CmdNotSupported},
		{"socks5 udp associate", cat(v5, []byte{5, 3, 0, 1, 0, 0, 0, 0, 0, 0}), socks.CmdNotSupported},
		{"socks4 bind", []byte{4, 2, 0, 80, 127, 103, 1, 20, 0}, 91},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, c := socksDial(t, vs, tc.req)
			if code != tc.code {
				t.Fatalf("reply code %d, want %d", code, tc.code)
			}
			if code != 90 && code != socks.Succeeded {
				// Refused: the proxy closes the connection.
				if n, err := c.Read(make([]byte, 1)); err == nil {
					t.Errorf("%d more bytes after a refusal", n)
				}
				return
			}
			io.WriteString(c, "hello\n")
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || line != "M1 Response\n" {
				t.Errorf("through the proxy: %q %v", line, err)
			}
		})
	}

	// golang.org/x/net/proxy's SOCKS 5 client, by name and by address.
	d, err := proxy.SOCKS5("tcp", vs, nil, &net.Dialer{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{"m1.test:80", "127.103.1.20:80"} {
		c, err := d.(proxy.ContextDialer).DialContext(context.Background(), "tcp", dst)
		if err != nil {
			t.Fatalf("%s: %v", dst, err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "x\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if line != "M1 Response\n" {
			t.Errorf("%s: %q %v", dst, line, err)
		}
	}
	// A client offering username/password alone is told no method is
	// acceptable (0xFF) and closed.
	{
		c, err := net.DialTimeout("tcp", vs, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte{5, 1, 2})
		b, _ := io.ReadAll(c)
		c.Close()
		if !bytes.Equal(b, []byte{5, 0xff}) {
			t.Errorf("username/password only: % x, want 05 ff", b)
		}
	}
	// Not SOCKS at all: reset, nothing written.
	c, err := net.DialTimeout("tcp", vs, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	if n, err := c.Read(make([]byte, 64)); err == nil {
		t.Errorf("%d bytes answered to HTTP", n)
	}
	c.Close()
	eventually(t, "the socks clients leave the table", func() bool { cl, _ := countFlows(p); return cl == 0 })
	if st, ok := p.Virtual("/Common/socks"); !ok || st.ClientSide.TotConns < 10 {
		t.Errorf("socks virtual's counters: %+v", st.ClientSide)
	}
}

// TestSocksDeny: default-connect-handling deny takes a client only to a
// destination where a virtual server listens (and so to its pool's
// member), refusing any other with "not allowed by ruleset".
func TestSocksDeny(t *testing.T) {
	m := startServer(t, "127.103.1.20:80", "M1")
	ns := startNameserver(t, "127.103.1.53:0", map[string]string{"vs.test.": "127.103.1.11", "m1.test.": "127.103.1.20"})
	cfg := socksConfig("127.103.1.10:1080", "127.103.1.20:80", ns, false)
	// A rule's destination is checked as the client's would be, unless
	// the rule decided SOCKS::allowed itself.
	cfg.Virtuals["/Common/socks"].Rules, _ = compileRules(t, `when SOCKS_REQUEST {
	switch [SOCKS::destination] {
		"alias.test:80" { SOCKS::destination 127.103.1.11:80 }
		"sneak.test:80" { SOCKS::destination 127.103.1.20:80 }
		"force.test:80" { SOCKS::allowed 1; SOCKS::destination 127.103.1.20:80 }
	}
}`)
	cfg.Virtuals["/Common/off"] = &Virtual{Name: "/Common/off", Destination: ap("127.103.1.12:80"), Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	const vs = "127.103.1.10:1080"
	v5 := []byte{5, 1, 0}
	name5 := func(h string) []byte { return append(append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(h))}, h...), 0, 80) }
	for _, tc := range []struct {
		name string
		req  []byte
		code byte
	}{
		{"to the virtual", append(v5, 5, 1, 0, 1, 127, 103, 1, 11, 0, 80), socks.Succeeded},
		{"to the virtual by name", append(append(append(v5, 5, 1, 0, 3, 7), "vs.test"...), 0, 80), socks.Succeeded},
		{"to the member", append(v5, 5, 1, 0, 1, 127, 103, 1, 20, 0, 80), socks.NotAllowed},
		{"to the member by name", append(append(append(v5, 5, 1, 0, 3, 7), "m1.test"...), 0, 80), socks.NotAllowed},
		{"socks4 to the member", []byte{4, 1, 0, 80, 127, 103, 1, 20, 0}, 91},
		{"to a disabled virtual", append(v5, 5, 1, 0, 1, 127, 103, 1, 12, 0, 80), socks.NotAllowed},
		{"to the proxy itself", append(v5, 5, 1, 0, 1, 127, 103, 1, 10, 4, 56), socks.NotAllowed},
		{"a rule's destination at the virtual", name5("alias.test"), socks.Succeeded},
		{"a rule's destination at the member", name5("sneak.test"), socks.NotAllowed},
		{"a rule's verdict", name5("force.test"), socks.Succeeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, c := socksDial(t, vs, tc.req)
			if code != tc.code {
				t.Fatalf("reply code %d, want %d", code, tc.code)
			}
			if code != socks.Succeeded {
				return
			}
			io.WriteString(c, "hello\n")
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || line != "M1 Response\n" {
				t.Errorf("through the virtual: %q %v", line, err)
			}
		})
	}
	m.mu.Lock()
	n := len(m.remotes)
	m.mu.Unlock()
	if n != 4 {
		t.Errorf("the member had %d connections, want 4 (3 through the virtual, 1 the rule allowed)", n)
	}
}

// TestSocksRules: SOCKS_REQUEST reads the request (SOCKS::version,
// SOCKS::destination, SOCKS::allowed), turns one away, sends another
// elsewhere, and rejects a third; a rule error resets the client.
func TestSocksRules(t *testing.T) {
	startServer(t, "127.103.1.20:80", "M1")
	startServer(t, "127.103.1.21:80", "M2")
	ns := startNameserver(t, "127.103.1.53:0", map[string]string{"m1.test.": "127.103.1.20"})
	cfg := socksConfig("127.103.1.10:1080", "127.103.1.20:80", ns, true)
	r, lg := compileRules(t, `when SOCKS_REQUEST {
	log local0. "v[SOCKS::version] [SOCKS::destination] allowed=[SOCKS::allowed]"
	switch -glob [SOCKS::destination] {
		"blocked.test:*" { SOCKS::allowed 0 }
		"moved.test:*" { SOCKS::destination 127.103.1.21:80 }
		"named.test:*" { SOCKS::destination m1.test:80 }
		"reject.test:*" { reject }
		"bad.test:*" { SOCKS::destination nonsense }
	}
}`)
	cfg.Virtuals["/Common/socks"].Rules = r
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	name5 := func(h string) []byte {
		return append(append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(h))}, h...), 0, 80)
	}
	for _, tc := range []struct {
		name string
		req  []byte
		code byte
		want string
	}{
		{"blocked", name5("blocked.test"), socks.NotAllowed, ""},
		{"moved", name5("moved.test"), socks.Succeeded, "M2 Response\n"},
		{"named", name5("named.test"), socks.Succeeded, "M1 Response\n"},
		{"socks4a moved", append(append([]byte{4, 1, 0, 80, 0, 0, 0, 1, 0}, "moved.test"...), 0), 90, "M2 Response\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, c := socksDial(t, "127.103.1.10:1080", tc.req)
			if code != tc.code {
				t.Fatalf("reply code %d, want %d", code, tc.code)
			}
			if tc.want == "" {
				return
			}
			io.WriteString(c, "x\n")
			if line, err := bufio.NewReader(c).ReadString('\n'); line != tc.want {
				t.Errorf("got %q %v, want %q", line, err, tc.want)
			}
		})
	}
	for _, h := range []string{"reject.test", "bad.test"} {
		c, err := net.DialTimeout("tcp", "127.103.1.10:1080", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write(name5(h))
		b, _ := io.ReadAll(c) // the method selection, then the reset
		c.Close()
		if len(b) > 2 {
			t.Errorf("%s: % x after the method selection, want a reset", h, b)
		}
	}
	eventually(t, "the log", func() bool {
		s := lg.String()
		return strings.Contains(s, "v5 blocked.test:80 allowed=1") && strings.Contains(s, "v4 moved.test:80 allowed=1")
	})
}

// TestSocksCurl: curl's SOCKS clients (--socks4, --socks4a, --socks5,
// --socks5-hostname) fetch a page from an HTTP member through the proxy.
func TestSocksCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	startL7Member(t, "127.103.1.30:80", "W1")
	ns := startNameserver(t, "127.103.1.53:0", map[string]string{"w1.test.": "127.103.1.30"})
	p, _ := newPlane(t)
	mustApply(t, p, socksConfig("127.103.1.10:1080", "127.103.1.30:80", ns, true))
	for _, tc := range []struct{ flag, url string }{
		{"--socks4", "http://127.103.1.30/a"},
		{"--socks4a", "http://w1.test/a"},
		{"--socks5", "http://127.103.1.30/a"},
		{"--socks5-hostname", "http://w1.test/a"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, curl, "-sS", "--max-time", "10", tc.flag, "127.103.1.10:1080", tc.url).CombinedOutput()
		cancel()
		if err != nil || !strings.HasPrefix(string(out), "W1 GET /a ") {
			t.Errorf("curl %s %s: %q %v", tc.flag, tc.url, out, err)
		}
	}
}
