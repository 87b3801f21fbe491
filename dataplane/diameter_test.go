package dataplane

import (
	"fmt"
	"testing"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
)

// diamServer runs a Diameter member named name on addr.
func diamServer(t *testing.T, addr, name string, watchdog bool) *diamtest.Server {
	t.Helper()
	s, err := diamtest.Start(addr, name, watchdog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// diamVirtual adds a diameter virtual named name at vs over pool.
func diamVirtual(t *testing.T, cfg *Config, name, vs, pool string, opt diameter.Options, rule string) {
	opt.Profile = "/Common/diameter"
	v := &Virtual{Name: name, Destination: ap(vs), Enabled: true, TranslateAddress: true, TranslatePort: true,
		Pool: pool, SNAT: SNAT{Type: SNATNone}, Diameter: &opt}
	if rule != "" {
		v.Rules, _ = compileRules(t, rule)
	}
	cfg.Virtuals[name] = v
}

// diamClient connects to vs and exchanges capabilities as host.
func diamClient(t *testing.T, vs, host string) (*diamtest.Client, diamtest.Answer) {
	t.Helper()
	c, err := diamtest.Dial(vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cea, err := c.CER(host)
	if err != nil {
		t.Fatalf("CER: %v", err)
	}
	if cea.Result != diammsg.ResultSuccess {
		t.Fatalf("CEA %+v", cea)
	}
	return c, cea
}

// ccrs sends one Credit-Control-Request per session at once and returns
// the answers' Origin-Hosts, in order.
func ccrs(t *testing.T, c *diamtest.Client, host string, sessions ...string) []diamtest.Answer {
	t.Helper()
	codes := make([]uint32, len(sessions))
	avps := make([][]byte, len(sessions))
	for i, s := range sessions {
		codes[i], avps[i] = 272, diamtest.Request(host, s, "")
	}
	ans, err := c.Exchange(codes, 4, avps...)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	for i, a := range ans {
		if a.Session != sessions[i] || a.Result != diammsg.ResultSuccess {
			t.Fatalf("answer %d: %+v, want session %s", i, a, sessions[i])
		}
	}
	return ans
}

// TestDiameterProfile: Diameter peers (the codec's test client and
// servers) through a virtual with the diameter profile: each request of
// one connection is balanced on its own over two members and every
// answer pairs with its request; the second member is sent the client's
// CER first and its CEA is not passed on; persist-avp Session-Id keeps a
// session's requests on one member across connections; the origin
// rewrites reach the members and the client; a rule reads and rewrites
// an AVP; a member's watchdog is answered by the virtual; a stream that
// is not Diameter resets the connection, counted.
func TestDiameterProfile(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.116.1.10:3868", "member-a.example", true)
	b := diamServer(t, "127.116.1.11:3868", "member-b.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.116.1.1:3868", a.Addr(), b.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	diamVirtual(t, cfg, "/Common/plain", "127.116.1.1:3868", "/Common/pool", diameter.Options{}, "")
	diamVirtual(t, cfg, "/Common/persist", "127.116.1.2:3868", "/Common/pool", diameter.Options{PersistAVP: diammsg.AVPSessionID, HostIPRewrite: true, OverwriteDestHost: true,
		OriginHostToServer: "lb.example", OriginRealmToClient: "lb-realm.example"}, "")
	diamVirtual(t, cfg, "/Common/rule", "127.116.1.3:3868", "/Common/pool", diameter.Options{PersistAVP: diammsg.AVPSessionID}, `when DIAMETER_INGRESS {
		if {[DIAMETER::is_request] && [DIAMETER::command] == 272} {
			log local0. "ccr [DIAMETER::session] from [DIAMETER::host]"
			DIAMETER::avp replace Origin-Host "ruled-[DIAMETER::host]"
		}
	}`)
	mustApply(t, p, cfg)
	stats := func() DiameterProfileStats {
		return p.ProfileStats(ProfileDiameter, "/Common/diameter", []string{"/Common/plain", "/Common/persist", "/Common/rule"}).Diameter
	}

	t.Run("two members share the requests", func(t *testing.T) {
		c, cea := diamClient(t, "127.116.1.1:3868", "client.example")
		first := cea.Origin
		var sessions []string
		for i := range 8 {
			sessions = append(sessions, fmt.Sprintf("client.example;share;%d", i))
		}
		ans := ccrs(t, c, "client.example", sessions...)
		by := map[string]int{}
		for _, a := range ans {
			by[a.Origin]++
		}
		if by["member-a.example"] == 0 || by["member-b.example"] == 0 {
			t.Fatalf("answers by member %v, want both", by)
		}
		// The CER reached both members; only the first CEA reached the
		// client (the exchange above saw no stray answer).
		for _, s := range []*diamtest.Server{a, b} {
			cers := 0
			for _, g := range s.Got() {
				if g.Code == diammsg.CmdCapabilitiesExchange && g.Origin == "client.example" {
					cers++
				}
			}
			if cers == 0 {
				t.Fatalf("%s got no CER", s.Name)
			}
		}
		if first != "member-a.example" && first != "member-b.example" {
			t.Fatalf("CEA from %q", first)
		}
		eventually(t, "member-a's watchdog answered", func() bool { return a.DWAs() > 0 })
	})

	t.Run("a session stays on its member", func(t *testing.T) {
		c, cea := diamClient(t, "127.116.1.2:3868", "pcef.example")
		if cea.OriginRealm != "lb-realm.example" || cea.HostIP != "127.116.1.2" {
			t.Fatalf("CEA realm %q Host-IP-Address %q, want the virtual's", cea.OriginRealm, cea.HostIP)
		}
		want := ""
		for round := range 3 {
			ans := ccrs(t, c, "pcef.example", "pcef.example;sticky;1", "pcef.example;sticky;1", "pcef.example;other;"+fmt.Sprint(round))
			for _, x := range ans[:2] {
				if want == "" {
					want = x.Origin
				}
				if x.Origin != want {
					t.Fatalf("round %d: the session reached %s, then %s", round, want, x.Origin)
				}
			}
		}
		// Another connection: the same session, the same member.
		c2, _ := diamClient(t, "127.116.1.2:3868", "pcef.example")
		for range 3 {
			if got := ccrs(t, c2, "pcef.example", "pcef.example;sticky;1")[0].Origin; got != want {
				t.Fatalf("a second connection's request reached %s, want %s", got, want)
			}
		}
		for _, s := range []*diamtest.Server{a, b} {
			for _, g := range s.Got() {
				if g.Session == "pcef.example;sticky;1" && g.Origin != "lb.example" {
					t.Fatalf("%s got Origin-Host %q, want lb.example", s.Name, g.Origin)
				}
				if g.Code == diammsg.CmdCapabilitiesExchange && g.Origin == "lb.example" && (g.HostIP == "192.0.2.1" || g.HostIP == "") {
					t.Fatalf("%s got Host-IP-Address %q, want the server side's", s.Name, g.HostIP)
				}
			}
		}
		// overwrite-destination-host: the member's own Origin-Host.
		if _, err := c2.Exchange([]uint32{272}, 4, diamtest.Request("pcef.example", "pcef.example;dest;1", "wrong.example")); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Destination-Host rewritten to the member's", func() bool {
			for _, s := range []*diamtest.Server{a, b} {
				for _, g := range s.Got() {
					if g.Session == "pcef.example;dest;1" {
						return g.Dest == s.Name
					}
				}
			}
			return false
		})
		if st := stats(); st.Persisted == 0 || st.Records == 0 {
			t.Fatalf("stats %+v: nothing persisted", st)
		}
	})

	t.Run("a rule rewrites an AVP", func(t *testing.T) {
		c, _ := diamClient(t, "127.116.1.3:3868", "ocs.example")
		ccrs(t, c, "ocs.example", "ocs.example;ruled;1")
		eventually(t, "a member got the rewritten Origin-Host", func() bool {
			for _, s := range []*diamtest.Server{a, b} {
				for _, g := range s.Got() {
					if g.Session == "ocs.example;ruled;1" {
						return g.Origin == "ruled-ocs.example"
					}
				}
			}
			return false
		})
	})

	t.Run("not Diameter resets, counted", func(t *testing.T) {
		before := stats().Malformed
		for _, in := range [][]byte{[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), {1, 0, 0, 21, 0x80, 0, 1, 16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}} {
			c, err := diamtest.Dial("127.116.1.1:3868")
			if err != nil {
				t.Fatal(err)
			}
			c.Write(in)
			if err := c.Wait(); err != diamtest.ErrReset {
				t.Fatalf("after %q: %v, want a reset", in[:4], err)
			}
			c.Close()
		}
		// After a good CER: an AVP that overruns its message.
		c, _ := diamClient(t, "127.116.1.1:3868", "client.example")
		bad := diammsg.Build(diammsg.FlagRequest, 272, 4, 5, 5, diammsg.AppendAVP(nil, diammsg.AVPSessionID, 0, 0, []byte("abcd")))
		bad[diammsg.HeaderLen+7] = 100
		c.Write(bad)
		if err := c.Wait(); err != diamtest.ErrReset {
			t.Fatalf("after a bad AVP: %v, want a reset", err)
		}
		eventually(t, "the three counted", func() bool { return stats().Malformed-before == 3 })
	})
}

// TestDiameterPersistReset: DIAMETER::persist reset on the diameter
// profile's flows forgets the request's persist-avp record, so that the
// pool balances it anew: a session whose every request resets reaches
// both members, one that does not stays on one.
func TestDiameterPersistReset(t *testing.T) {
	t.Parallel()
	a := diamServer(t, "127.116.2.10:3868", "member-a.example", true)
	b := diamServer(t, "127.116.2.11:3868", "member-b.example", false)
	p, _ := newPlane(t)
	cfg := basic("127.116.2.1:3868", a.Addr(), b.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	diamVirtual(t, cfg, "/Common/reset", "127.116.2.1:3868", "/Common/pool", diameter.Options{PersistAVP: diammsg.AVPSessionID}, `when DIAMETER_INGRESS {
		if {[DIAMETER::is_request] && [string match "*;reset;*" [DIAMETER::session]]} {
			DIAMETER::persist reset
		}
	}`)
	mustApply(t, p, cfg)
	c, _ := diamClient(t, "127.116.2.1:3868", "client.example")
	members := func(session string, n int) map[string]int {
		by := map[string]int{}
		for range n {
			by[ccrs(t, c, "client.example", session)[0].Origin]++
		}
		return by
	}
	if by := members("client.example;kept;1", 6); len(by) != 1 {
		t.Fatalf("a persisted session reached %v, want one member", by)
	}
	if by := members("client.example;reset;1", 6); len(by) != 2 {
		t.Fatalf("a session reset on each request reached %v, want both members", by)
	}
}
