package dataplane

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// Host persistence on an HTTP virtual: every request for one site (Host
// header, any letter case) reaches the member the first one was balanced
// to, from any client connection; sites spread over the members; the
// records are in the table under mode host; a request without Host makes
// no host record, and goes by the fallback persistence (source address)
// when there is one.
func TestHTTPHostPersistence(t *testing.T) {
	startHTTPServer(t, "127.17.6.11:80", "W1")
	startHTTPServer(t, "127.17.6.12:80", "W2")
	startHTTPServer(t, "127.17.6.13:80", "W3")
	for _, tc := range []struct {
		name       string
		oneConnect bool
		fallback   bool
	}{
		{"one member per connection", false, false},
		{"oneconnect: one decision per request", true, false},
		{"with source-address fallback", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
			if tc.oneConnect {
				m.OneConnect = &OneConnect{MaxSize: 4}
			}
			cfg := mblbConfig("127.17.6.2:80", m, "127.17.6.11:80", "127.17.6.12:80", "127.17.6.13:80")
			v := cfg.Virtuals["/Common/vs"]
			v.Persist = &Persistence{Profile: "/Common/host", Method: PersistHost, Timeout: 180 * time.Second}
			if tc.fallback {
				v.FallbackPersist = &Persistence{Profile: "/Common/source_addr", Method: PersistSourceAddr, Timeout: 180 * time.Second}
			}
			mustApply(t, p, cfg)

			sites := []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"}
			first := map[string]string{}
			ask := func(c *httpRuleClient, req string) string {
				t.Helper()
				r, body, err := c.do(req)
				if err != nil || r.StatusCode != http.StatusOK {
					t.Fatalf("%q: %v", req, err)
				}
				return strings.Fields(body)[0]
			}
			for round := 0; round < 3; round++ {
				// A new client connection each round: persistence, not
				// the connection, keeps the site on its member.
				c := dialHTTPVS(t, "127.17.6.2:80")
				for _, s := range sites {
					host := s
					if round == 1 {
						host = strings.ToUpper(s) // host names are case-insensitive
					}
					got := ask(c, httpReq(host, "/"))
					if first[s] == "" {
						first[s] = got
					} else if got != first[s] && (tc.oneConnect || round > 0) {
						t.Fatalf("round %d: %s moved from %s to %s", round, s, first[s], got)
					}
					if !tc.oneConnect {
						c = dialHTTPVS(t, "127.17.6.2:80") // the connection stays with its member
					}
				}
			}
			members := map[string]bool{}
			for _, m := range first {
				members[m] = true
			}
			// With a source-address fallback, a site without a record
			// yet goes where the client's address persists (the
			// fallback serves any lookup the default finds nothing for),
			// so one client's sites share a member.
			if !tc.fallback && len(members) < 2 {
				t.Fatalf("six sites all on one member: %v", first)
			}
			keys := map[string]string{}
			p.PersistRecords(persist.Filter{Mode: persist.Host}, func(r *persist.Record) bool {
				keys[r.Key.String()] = r.Member.String()
				return true
			})
			// Records are made when a request is balanced; with the
			// fallback, the sites its record served made none.
			want := len(sites)
			if tc.fallback {
				want = 1
			}
			if len(keys) != want {
				t.Fatalf("host records %v, want %d", keys, want)
			}
			for k, m := range keys {
				if first[k] == "" || !strings.HasSuffix(m, ":80") {
					t.Fatalf("record %s -> %s is not one of the sites asked", k, m)
				}
			}

			// HTTP/1.0 without Host: no host record; with the fallback, a
			// source-address record is made.
			c := dialHTTPVS(t, "127.17.6.2:80")
			ask(c, "GET / HTTP/1.0\r\n\r\n")
			n := 0
			p.PersistRecords(persist.Filter{Mode: persist.SourceAddress}, func(*persist.Record) bool { n++; return true })
			if tc.fallback != (n > 0) {
				t.Fatalf("%d source-address records after a request without Host; fallback %v", n, tc.fallback)
			}
			nh := 0
			p.PersistRecords(persist.Filter{Mode: persist.Host}, func(*persist.Record) bool { nh++; return true })
			if nh != want {
				t.Fatalf("%d host records after a request without Host, want %d", nh, want)
			}
		})
	}
}
