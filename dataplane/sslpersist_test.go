package dataplane

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// sServer runs openssl s_server on addr until the test ends: TLS 1.2
// sessions resumed by session ID from its own cache (no tickets), so a
// session resumes only on the member that made it.
func sServer(t *testing.T, addr, cert, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "openssl", "s_server", "-accept", addr, "-cert", cert, "-key", key, "-tls1_2", "-no_ticket", "-quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	for i := 0; i < 100; i++ { // up to 5 s for it to listen
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("openssl s_server on %s did not listen", addr)
}

// reconnects runs openssl s_client -reconnect against addr (one
// connection, then five resuming its session) and counts the handshakes
// it reports resumed.
func reconnects(t *testing.T, addr string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "openssl", "s_client", "-connect", addr, "-tls1_2", "-no_ticket", "-reconnect").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "CONNECTED") {
		t.Fatalf("openssl s_client: %v\n%s", err, out)
	}
	return strings.Count(string(out), "Reused, TLSv1.2")
}

// TestSSLPersistenceOpenSSL: TLS passed through to two openssl servers
// with their own session caches. With SSL persistence each reconnection
// offering the first connection's session ID goes to the member that
// made it, so all five resume; the table holds the session's record.
// Without it, round robin sends them to the other member in turn, where
// the session is unknown.
func TestSSLPersistenceOpenSSL(t *testing.T) {
	cert, key := opensslCert(t, "www.example")
	sServer(t, "127.0.242.11:4433", cert, key)
	sServer(t, "127.0.242.12:4433", cert, key)
	p, _ := newPlane(t)

	cfg := basic("127.0.242.1:443", "127.0.242.11:4433", "127.0.242.12:4433")
	mustApply(t, p, cfg)
	if n := reconnects(t, "127.0.242.1:443"); n == 5 {
		t.Fatalf("without persistence all 5 reconnections resumed: the test cannot tell")
	}

	cfg = basic("127.0.242.1:443", "127.0.242.11:4433", "127.0.242.12:4433")
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: 300 * time.Second}
	mustApply(t, p, cfg)
	if n := reconnects(t, "127.0.242.1:443"); n != 5 {
		t.Fatalf("with SSL persistence %d of 5 reconnections resumed, want 5", n)
	}
	var recs []persist.Record
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		recs = append(recs, *r)
		return true
	})
	if len(recs) == 0 || recs[0].Key.Mode != persist.SSLSessionID || len(recs[0].Key.Str) != 64 {
		t.Fatalf("records %+v, want one ssl-session-id record keyed by a 32-byte ID", recs)
	}
}

// rdpRequest is an RDP client's first packet: a TPKT header and an
// X.224 Connection Request carrying cookie ("" for none).
func rdpRequest(cookie string) []byte {
	body := []byte{0xe0, 0, 0, 0, 0, 0} // CR TPDU, destination and source references, class 0
	if cookie != "" {
		body = append(body, "Cookie: "+cookie+"\r\n"...)
	}
	x224 := append([]byte{byte(len(body))}, body...)
	n := 4 + len(x224)
	return append([]byte{3, 0, byte(n >> 8), byte(n)}, x224...)
}

// TestMSRDPPersistence: RDP clients carrying a user's mstshash cookie go
// to the member their first connection went to, each user persisted on
// its own; the table holds an msrdp record per user; a client without a
// cookie is balanced.
func TestMSRDPPersistence(t *testing.T) {
	startServer(t, "127.0.244.11:3389", "A")
	startServer(t, "127.0.244.12:3389", "B")
	cfg := basic("127.0.244.1:3389", "127.0.244.11:3389", "127.0.244.12:3389")
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/msrdp", Method: PersistMSRDP, Timeout: 300 * time.Second}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	connect := func(cookie string) string {
		t.Helper()
		c, err := net.DialTimeout("tcp", "127.0.244.1:3389", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		req := rdpRequest(cookie)
		if cookie == "" {
			req = append(req, '\n') // the member answers a line
		}
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", cookie, err)
		}
		return strings.Fields(line)[0]
	}
	alice, bob := connect("mstshash=alice"), connect("mstshash=bob")
	for i := 0; i < 6; i++ {
		if got := connect("mstshash=alice"); got != alice {
			t.Fatalf("alice's connection %d went to %s, her first to %s", i+2, got, alice)
		}
		if got := connect("mstshash=bob"); got != bob {
			t.Fatalf("bob's connection %d went to %s, his first to %s", i+2, got, bob)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[connect("")] = true
	}
	if !seen["A"] || !seen["B"] {
		t.Errorf("clients without a cookie went to %v, want both members", seen)
	}
	keys := map[string]bool{}
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		if r.Key.Mode == persist.MSRDP {
			keys[r.Key.Str] = true
		}
		return true
	})
	if len(keys) != 2 || !keys["alice"] || !keys["bob"] {
		t.Errorf("msrdp records %v, want alice and bob", keys)
	}
}

// msts is a session directory's routing token for ap, as Microsoft's
// brokers write it: the IPv4 address as a little-endian number, the port
// byte-swapped.
func msts(ap netip.AddrPort) string {
	a := ap.Addr().As4()
	ip := uint32(a[0]) | uint32(a[1])<<8 | uint32(a[2])<<16 | uint32(a[3])<<24
	p := ap.Port()<<8 | ap.Port()>>8
	return fmt.Sprintf("msts=%d.%d.0000", ip, p)
}

// TestMSRDPSessionDirectory: with has-session-dir, a client carrying a
// session directory's routing token goes to the member it names, every
// time, whatever the balancing; a token naming no member of the pool is
// an ordinary cookie: balanced once, then persisted.
func TestMSRDPSessionDirectory(t *testing.T) {
	startServer(t, "127.0.244.21:3389", "A")
	startServer(t, "127.0.244.22:3389", "B")
	cfg := basic("127.0.244.2:3389", "127.0.244.21:3389", "127.0.244.22:3389")
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/msrdp", Method: PersistMSRDP, Timeout: 300 * time.Second, SessionDir: true}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	connect := func(cookie string) string {
		t.Helper()
		c, err := net.DialTimeout("tcp", "127.0.244.2:3389", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(rdpRequest(cookie)); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", cookie, err)
		}
		return strings.Fields(line)[0]
	}
	for i := 0; i < 4; i++ {
		if got := connect(msts(netip.MustParseAddrPort("127.0.244.22:3389"))); got != "B" {
			t.Fatalf("token for B, connection %d: went to %s", i+1, got)
		}
		if got := connect(msts(netip.MustParseAddrPort("127.0.244.21:3389"))); got != "A" {
			t.Fatalf("token for A, connection %d: went to %s", i+1, got)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[connect(msts(netip.MustParseAddrPort("127.0.244.99:3389")))] = true
	}
	if len(seen) != 1 {
		t.Errorf("a token naming no member went to %v, want one member, persisted", seen)
	}
}

// opensslCert makes a self-signed P-256 certificate for cn with openssl,
// for the tests whose members are openssl s_server; without openssl the
// test is skipped.
func opensslCert(t *testing.T, cn string) (cert, key string) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
		"-keyout", key, "-out", cert, "-subj", "/CN="+cn, "-days", "1").CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v\n%s", err, out)
	}
	return cert, key
}
