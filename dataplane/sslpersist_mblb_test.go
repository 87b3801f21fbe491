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
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestSSLPersistenceMessageVirtuals runs ssl persistence on http and
// message virtuals that terminate TLS: a client resuming its client-ssl
// session on a new connection reaches the member its session's first
// request went to, over the event loops and the goroutine front stage,
// with and without OneConnect, in TLS 1.2 and 1.3; new sessions are
// balanced; one record per session, listed in mode ssl-session-id.
func TestSSLPersistenceMessageVirtuals(t *testing.T) {
	t.Parallel()
	for i, row := range []struct {
		name    string
		version uint16
		http    bool
		oneConn bool
		rule    string
	}{
		{"http TLS 1.2", tls.VersionTLS12, true, false, ""},
		{"http TLS 1.3 oneconnect", tls.VersionTLS13, true, true, ""},
		{"http TLS 1.3 clienthello rule", tls.VersionTLS13, true, false, `when CLIENTSSL_CLIENTHELLO { log local0. "[SSL::extensions count]" }`},
		{"http TLS 1.2 request rule", tls.VersionTLS12, true, true, `when HTTP_REQUEST { HTTP::header insert X-Tag r }`},
		{"message TLS 1.3", tls.VersionTLS13, false, false, ""},
		{"message TLS 1.2 oneconnect", tls.VersionTLS12, false, true, ""},
	} {
		net4 := fmt.Sprintf("127.36.%d.", 10+i)
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			vsAddr := net4 + "1:443"
			if row.http {
				startHTTPServer(t, net4+"11:80", "W1")
				startHTTPServer(t, net4+"12:80", "W2")
			} else {
				startServer(t, net4+"11:80", "S1")
				startServer(t, net4+"12:80", "S2")
			}
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}}
			if row.http {
				m = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			}
			if row.oneConn {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig(vsAddr, m, net4+"11:80", net4+"12:80")
			vs := cfg.Virtuals["/Common/vs"]
			roots := clientSSLOn(t, vs, true)
			vs.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: time.Hour}
			if row.rule != "" {
				vs.Rules, _ = compileRules(t, row.rule)
			}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			ask := func(cache tls.ClientSessionCache) (string, bool) {
				t.Helper()
				return askTLS(t, vsAddr, roots, cache, row.version, row.http)
			}
			twoSessionsStick(t, ask, 4)
			recs := records(p, persist.Filter{Mode: persist.SSLSessionID})
			if len(recs) != 2 {
				t.Fatalf("%d ssl records, want 2", len(recs))
			}
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

// TestSSLPersistenceMessageNoTickets: without session-ticket on the
// client-ssl profile nothing resumes, so no record is made and each
// connection is balanced.
func TestSSLPersistenceMessageNoTickets(t *testing.T) {
	t.Parallel()
	const net4 = "127.36.30."
	startHTTPServer(t, net4+"11:80", "W1")
	startHTTPServer(t, net4+"12:80", "W2")
	cfg := mblbConfig(net4+"1:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, net4+"11:80", net4+"12:80")
	vs := cfg.Virtuals["/Common/vs"]
	roots := clientSSLOn(t, vs, false)
	vs.Persist = &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: time.Hour}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	cache := tls.NewLRUClientSessionCache(4)
	seen := map[string]bool{}
	for j := 0; j < 4; j++ {
		got, resumed := askTLS(t, net4+"1:443", roots, cache, tls.VersionTLS13, true)
		if resumed {
			t.Fatalf("connection %d resumed without session tickets", j+1)
		}
		seen[got] = true
	}
	if len(seen) != 2 {
		t.Fatalf("one client's connections all went to %v: balanced, they alternate", seen)
	}
	if n := len(records(p, persist.Filter{Mode: persist.SSLSessionID})); n != 0 {
		t.Fatalf("%d ssl records without tickets, want 0", n)
	}
}

// clientSSLOn gives vs a client-ssl profile for app.example, with
// session tickets as tickets says, and returns the roots that trust it.
func clientSSLOn(t *testing.T, vs *Virtual, tickets bool) *x509.CertPool {
	t.Helper()
	cert, key, roots := testCert(t, "app.example")
	b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
		AuthenticateDepth: -1, SessionTicket: tickets}).Build()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
	if err != nil {
		t.Fatal(err)
	}
	vs.TLS = &TLS{Client: tc, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b}}
	return roots
}

// askTLS connects to vs over TLS with cache (nil: no resumption), sends
// one request (HTTP, or a line), and says which member answered and
// whether the session resumed.
func askTLS(t *testing.T, vs string, roots *x509.CertPool, cache tls.ClientSessionCache, version uint16, isHTTP bool) (string, bool) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", vs,
		&tls.Config{ServerName: "app.example", RootCAs: roots, ClientSessionCache: cache, MaxVersion: version})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if isHTTP {
		if _, err := io.WriteString(c, httpReq("app.example", "/")); err != nil {
			t.Fatal(err)
		}
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r.Header.Get("X-Member"), c.ConnectionState().DidResume
	}
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.Fields(line)[0], c.ConnectionState().DidResume
}

// TestSSLPersistenceAcrossServices: with match-across-services, a client
// whose session began on a standard virtual ending TLS resumes it on an
// http virtual at the same address (one client-ssl profile, so one
// ticket key) and reaches the same server there; without it, the http
// virtual balances the client on its own.
func TestSSLPersistenceAcrossServices(t *testing.T) {
	t.Parallel()
	for i, across := range []bool{true, false} {
		net4 := fmt.Sprintf("127.36.%d.", 32+i)
		t.Run(fmt.Sprintf("match-across-services %v", across), func(t *testing.T) {
			t.Parallel()
			startServer(t, net4+"11:9000", "S1")
			startServer(t, net4+"12:9000", "S2")
			startHTTPServer(t, net4+"11:80", "S1")
			startHTTPServer(t, net4+"12:80", "S2")
			cfg := basic(net4+"1:443", net4+"11:9000", net4+"12:9000")
			l4 := cfg.Virtuals["/Common/vs"]
			roots := clientSSLOn(t, l4, true)
			pers := &Persistence{Profile: "/Common/ssl", Method: PersistSSL, Timeout: time.Hour, MatchAcrossServices: across}
			l4.Persist = pers
			web := *l4
			web.Name, web.Destination, web.Pool = "/Common/web", ap(net4+"1:8443"), "/Common/web_pool"
			web.SNAT = SNAT{Type: SNATAutomap}
			web.MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			cfg.Virtuals["/Common/web"] = &web
			cfg.Pools["/Common/web_pool"] = &Pool{Name: "/Common/web_pool", LBMode: RoundRobin, Members: []Member{
				{Node: "/Common/" + net4 + "12", Addr: ap(net4 + "12:80")}, // S2 first: balancing alone differs from S1's start
				{Node: "/Common/" + net4 + "11", Addr: ap(net4 + "11:80")},
			}}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			for u := 0; u < 2; u++ { // two sessions: round robin starts them on S1, then S2
				cache := tls.NewLRUClientSessionCache(4)
				first, _ := askTLS(t, net4+"1:443", roots, cache, tls.VersionTLS13, false)
				got, resumed := askTLS(t, net4+"1:8443", roots, cache, tls.VersionTLS13, true)
				if !resumed {
					t.Fatalf("session %d: not resumed on the http virtual", u)
				}
				if across && got != first {
					t.Fatalf("session %d began on %s, the http virtual sent it to %s", u, first, got)
				}
				if !across && u == 0 && got == first {
					t.Fatalf("session %d: %s on both without match-across-services (round robin starts on the other)", u, got)
				}
			}
		})
	}
}
