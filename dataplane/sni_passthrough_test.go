package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
	"github.com/openltm/openltm/rules/policy"
)

// sniMember is a member behind a virtual that passes TLS through: it
// completes the client's handshake itself and answers each line with
// "<label> Response tls". A client speaking plaintext gets "<label>
// Response plain" per line, and one whose first record is too big to be
// a hello gets "<label> big <length> <crc32>" for that record: the bytes
// the virtual read before balancing reach the member unchanged.
func sniMember(t *testing.T, addr, label string, pair tls.Certificate) {
	t.Helper()
	serveConns(t, addr, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		head, err := br.Peek(5)
		if err != nil {
			return
		}
		if head[0] != 22 { // not a TLS handshake record
			for {
				if _, err := br.ReadString('\n'); err != nil {
					return
				}
				fmt.Fprintf(c, "%s Response plain\n", label)
			}
		}
		if n := int(head[3])<<8 | int(head[4]); n >= 0x3000 {
			rec := make([]byte, 5+n)
			if _, err := io.ReadFull(br, rec); err != nil {
				return
			}
			fmt.Fprintf(c, "%s big %d %08x\n", label, len(rec), crc32.ChecksumIEEE(rec))
			return
		}
		tc := tls.Server(&bufConn{Conn: c, r: br}, &tls.Config{Certificates: []tls.Certificate{pair}})
		r := bufio.NewReader(tc)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			fmt.Fprintf(tc, "%s Response tls\n", label)
		}
	})
}

// bufConn reads c through r, which may hold bytes already peeked.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// pieces writes each write in pieces of n bytes, a moment apart, so that
// a TLS hello crosses the network in several segments.
type pieces struct {
	net.Conn
	n int
}

func (p *pieces) Write(b []byte) (int, error) {
	for i := 0; i < len(b); i += p.n {
		if _, err := p.Conn.Write(b[i:min(i+p.n, len(b))]); err != nil {
			return i, err
		}
		time.Sleep(time.Millisecond)
	}
	return len(b), nil
}

// sniAsk connects to vs over TLS asking for sni (none when empty), in
// pieces of split bytes when split > 0, and returns the member's answer
// to one line.
func sniAsk(vs, sni string, split int) (string, error) {
	raw, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	var nc net.Conn = raw
	if split > 0 {
		nc = &pieces{Conn: raw, n: split}
	}
	c := tls.Client(nc, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// plainAsk sends one line of plaintext to vs and returns the answer.
func plainAsk(t *testing.T, vs string, data []byte) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%q: %v", data[:min(len(data), 16)], err)
	}
	return strings.TrimSpace(line)
}

// sniPlane runs three TLS members, A in the virtual's own pool, B in
// /Common/api and C in /Common/www, behind a virtual at vs with ssl
// persistence and no client-ssl profile, running rs.
func sniPlane(t *testing.T, vs string, rs Rules) *Plane {
	t.Helper()
	cert, key, _ := testCert(t, "api.example", "www.example", "other.example")
	pair, err := tlsprof.Pair("member", cert, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ addr, label string }{{"127.0.247.11:9443", "A"}, {"127.0.247.12:9443", "B"}, {"127.0.247.13:9443", "C"}} {
		sniMember(t, m.addr, m.label, pair)
	}
	cfg := basic(vs, "127.0.247.11:9443")
	withPool(cfg, "/Common/api", "127.0.247.12:9443")
	withPool(cfg, "/Common/www", "127.0.247.13:9443")
	v := cfg.Virtuals["/Common/vs"]
	v.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	v.Rules = rs
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	return p
}

// TestSNIPassthroughRule: on a virtual that passes TLS through (ssl
// persistence, no client-ssl), CLIENTSSL_CLIENTHELLO runs over the hello
// the virtual read (SSL::extensions, the highest version offered, the
// session ID offered), the rule's pool by SNI wins over the virtual's, and
// the member completes the handshake with the bytes the virtual read. A
// hello in small pieces is read whole; a client without SNI, one speaking
// plaintext and one whose first record is too big to be a hello go to
// the virtual's pool, the last two without the event.
func TestSNIPassthroughRule(t *testing.T) {
	rs, lg := compileRules(t, `when CLIENTSSL_CLIENTHELLO {
    if { [SSL::extensions exists -type 0] } {
        binary scan [SSL::extensions -type 0] @9a* sni
        log local0. "hello $sni [SSL::extensions count] [SSL::cipher version] [string length [SSL::sessionid desired]]"
        switch -glob -- [string tolower $sni] {
            api.* { pool /Common/api }
            www.* { pool www }
            blocked.example { reject }
        }
    } else {
        log local0. "hello without SNI"
    }
}`)
	lg.showOnFailure(t)
	vs := "127.0.247.1:443"
	sniPlane(t, vs, rs)
	for _, tc := range []struct {
		name, sni string
		split     int
		want      string
	}{
		{"api", "api.example", 0, "B Response tls"},
		{"www, in capitals", "WWW.example", 0, "C Response tls"},
		{"another name", "other.example", 0, "A Response tls"},
		{"no SNI", "", 0, "A Response tls"},
		{"api in 40-byte pieces", "api.example", 40, "B Response tls"},
		{"www in 7-byte pieces", "www.example", 7, "C Response tls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sniAsk(vs, tc.sni, tc.split)
			if err != nil || got != tc.want {
				t.Fatalf("%q (%v), want %q", got, err, tc.want)
			}
		})
	}
	if _, err := sniAsk(vs, "blocked.example", 0); err == nil {
		t.Errorf("the rule's reject let the handshake through")
	}
	if got := plainAsk(t, vs, []byte("hello\n")); got != "A Response plain" {
		t.Errorf("plaintext client: %q, want A Response plain", got)
	}
	big := append([]byte{22, 3, 1, 0x40, 0}, bytes.Repeat([]byte{'x'}, 0x4000)...)
	if got, want := plainAsk(t, vs, big), fmt.Sprintf("A big %d %08x", len(big), crc32.ChecksumIEEE(big)); got != want {
		t.Errorf("a first record longer than a hello may be: %q, want %q", got, want)
	}
	log := lg.String()
	for _, want := range []string{"hello api.example 1 TLSv1.3 64", "hello WWW.example 1", "hello without SNI", "hello blocked.example"} {
		if !strings.Contains(log, want) {
			t.Errorf("rule log lacks %q", want)
		}
	}
	if n := strings.Count(log, "hello "); n != 7 {
		t.Errorf("CLIENTSSL_CLIENTHELLO ran %d times, want 7 (the TLS clients only)", n)
	}
}

// TestSNIPassthroughPolicy: a policy's ssl-client-hello actions run
// before the virtual's own CLIENTSSL_CLIENTHELLO, as BIG-IP runs policies
// first: the rule's later choice wins over the policy's.
func TestSNIPassthroughPolicy(t *testing.T) {
	cond := func(op, val string) policy.Spec {
		return policy.Spec{Num: "0", Words: map[string]string{"operand": "ssl-extension", "event": "ssl-client-hello", "selector": "server-name", "operator": op}, Values: []string{val}}
	}
	act := func(num string, kv ...string) policy.Spec {
		s := policy.Spec{Num: num, Words: map[string]string{"event": "ssl-client-hello"}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Words[kv[i]] = kv[i+1]
		}
		return s
	}
	c, err := policy.Compile(policy.Policy{Name: "/Common/sni", Strategy: "first-match", Rules: []policy.Rule{
		{Name: "api", Conditions: []policy.Spec{cond("starts-with", "API.")}, Actions: []policy.Spec{
			act("0", "operand", "log", "verb", "write", "message", "policy api"),
			act("1", "operand", "forward", "verb", "select", "pool", "/Common/api")}},
		{Name: "www", Conditions: []policy.Spec{cond("ends-with", ".www.example")}, Actions: []policy.Spec{
			act("0", "operand", "forward", "verb", "select", "pool", "/Common/www")}},
	}})
	if err != nil || !c.TLS || c.HelloTcl == "" {
		t.Fatalf("Compile: %v %+v", err, c)
	}
	pr, err := rules.Compile("policy /Common/sni", c.HelloTcl)
	if err != nil {
		t.Fatal(err)
	}
	ur, err := rules.Compile("/Common/r1", `when CLIENTSSL_CLIENTHELLO {
    log local0. "rule [string range [SSL::extensions -type 0] 9 end]"
    if { [SSL::extensions -type 0] ends_with "api.override.example" } { pool /Common/www }
}`)
	if err != nil {
		t.Fatal(err)
	}
	lg := &ruleLog{}
	lg.showOnFailure(t)
	prog := rules.NewProgram(&rules.Env{Log: lg.log}, pr, ur)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	vs := "127.0.247.2:443"
	sniPlane(t, vs, NewRules(prog))
	for _, tc := range []struct{ sni, want string }{
		{"api.example", "B Response tls"},
		{"a.www.example", "C Response tls"},
		{"api.override.example", "C Response tls"},
		{"other.example", "A Response tls"},
		{"", "A Response tls"},
	} {
		if got, err := sniAsk(vs, tc.sni, 0); err != nil || got != tc.want {
			t.Errorf("%q: %q (%v), want %q", tc.sni, got, err, tc.want)
		}
	}
	lines := lg.Lines()
	pol := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "policy api") })
	rule := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "rule api.example") })
	if pol < 0 || rule < 0 || pol > rule {
		t.Errorf("the policy's log at %d, the rule's at %d: want the policy's first\n%s", pol, rule, strings.Join(lines, "\n"))
	}
}

// TestSNIPassthroughSSLPersistence: the pool a rule chooses by SNI and
// ssl persistence work together: openssl s_client -reconnect through the
// virtual to two openssl servers of the chosen pool, each with its own
// session cache, resumes all five reconnections, and the record is the
// chosen pool's.
func TestSNIPassthroughSSLPersistence(t *testing.T) {
	cert, key := opensslCert(t, "api.example")
	sServer(t, "127.0.247.21:4433", cert, key)
	sServer(t, "127.0.247.22:4433", cert, key)
	startServer(t, "127.0.247.23:4433", "D")
	rs, lg := compileRules(t, `when CLIENTSSL_CLIENTHELLO {
    if { [SSL::extensions -type 0] ends_with "api.example" } { pool /Common/api }
}`)
	lg.showOnFailure(t)
	cfg := basic("127.0.247.3:443", "127.0.247.23:4433")
	withPool(cfg, "/Common/api", "127.0.247.21:4433", "127.0.247.22:4433")
	v := cfg.Virtuals["/Common/vs"]
	v.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	v.Rules = rs
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "openssl", "s_client", "-connect", "127.0.247.3:443", "-servername", "api.example",
		"-tls1_2", "-no_ticket", "-reconnect").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "CONNECTED") {
		t.Fatalf("openssl s_client: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "Reused, TLSv1.2"); n != 5 {
		t.Fatalf("%d of 5 reconnections resumed, want 5", n)
	}
	var recs []persist.Record
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		recs = append(recs, *r)
		return true
	})
	if len(recs) != 1 || recs[0].Key.Mode != persist.SSLSessionID || recs[0].Pool != "/Common/api" {
		t.Fatalf("records %+v, want one ssl-session-id record of /Common/api", recs)
	}
}
