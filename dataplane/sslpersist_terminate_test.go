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

	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestSSLPersistenceClientSSL runs ssl persistence on a virtual that
// terminates TLS: a client resuming its session (by ticket, in TLS 1.2
// and 1.3 alike) returns to the member its session's first connection
// had; a client starting a new session each time is balanced.
func TestSSLPersistenceClientSSL(t *testing.T) {
	t.Parallel()
	for i, row := range []struct {
		version uint16
		rule    string // the virtual's iRule, if any (its flows run the rules path)
	}{
		{tls.VersionTLS12, ""},
		{tls.VersionTLS13, ""},
		{tls.VersionTLS12, `when CLIENTSSL_HANDSHAKE { log local0. "[SSL::cipher version]" }`},
		{tls.VersionTLS13, `when CLIENT_ACCEPTED { log local0. "[IP::client_addr]" }`},
	} {
		version, rule := row.version, row.rule
		net4 := fmt.Sprintf("127.28.%d.", 30+i)
		t.Run(fmt.Sprintf("%s rule %v", tls.VersionName(version), rule != ""), func(t *testing.T) {
			t.Parallel()
			startServer(t, net4+"11:9000", "S1")
			startServer(t, net4+"12:9000", "S2")
			cert, key, roots := testCert(t, "app.example")
			p, _ := newPlane(t)
			cfg := basic(net4+"1:443", net4+"11:9000", net4+"12:9000")
			vs := cfg.Virtuals["/Common/vs"]
			b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
				AuthenticateDepth: -1, SessionTicket: true}).Build()
			if err != nil {
				t.Fatal(err)
			}
			tc, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
			if err != nil {
				t.Fatal(err)
			}
			vs.TLS = &TLS{Client: tc, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b}}
			vs.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: time.Hour}
			if rule != "" {
				vs.Rules, _ = compileRules(t, rule)
			}
			mustApply(t, p, cfg)
			// ask connects with cache (nil: no resumption), asks once,
			// and says which member answered and whether it resumed.
			ask := func(cache tls.ClientSessionCache) (string, bool) {
				t.Helper()
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net4+"1:443",
					&tls.Config{ServerName: "app.example", RootCAs: roots, ClientSessionCache: cache, MaxVersion: version})
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.WriteString(c, "hello\n"); err != nil {
					t.Fatal(err)
				}
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				return strings.TrimSpace(line), c.ConnectionState().DidResume
			}
			twoSessionsStick(t, ask, 3)
			// One record per session, in mode ssl-session-id.
			if n := len(records(p, persist.Filter{Mode: persist.SSLSessionID})); n != 2 {
				t.Fatalf("%d ssl records, want 2", n)
			}
			// New sessions each time: balanced as without persistence.
			seen := map[string]bool{}
			for j := 0; j < 4; j++ {
				got, _ := ask(nil)
				seen[got] = true
			}
			if len(seen) != 2 {
				t.Fatalf("new sessions all went to %v", seen)
			}
		})
	}
}

// twoSessionsStick has two users, each with a session cache of its own,
// connect through ask: each one's first connection makes a session and
// its next resumes connections resume it on the member that first served
// it, and round robin gives the two sessions different members.
func twoSessionsStick(t *testing.T, ask func(tls.ClientSessionCache) (string, bool), resumes int) {
	t.Helper()
	var firsts []string
	for u := 0; u < 2; u++ {
		cache := tls.NewLRUClientSessionCache(4)
		first, resumed := ask(cache)
		if resumed {
			t.Fatalf("user %d resumed on its first connection", u)
		}
		firsts = append(firsts, first)
		for j := 0; j < resumes; j++ {
			got, resumed := ask(cache)
			if !resumed {
				t.Fatalf("user %d, connection %d: not resumed", u, j+2)
			}
			if got != first {
				t.Fatalf("user %d, connection %d: %q, its session began on %q", u, j+2, got, first)
			}
		}
	}
	if firsts[0] == firsts[1] {
		t.Fatalf("both sessions began on %q: round robin should have split them", firsts[0])
	}
}
