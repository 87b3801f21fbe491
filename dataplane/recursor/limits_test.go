package recursor

import (
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// limitsHierarchy starts a signed tree on 127.68.1.x:53: the root and
// com (NSEC), and under com it.com (NSEC3, 200 iterations), hard.com
// (NSEC3, 600), unk.com (NSEC3 of an unknown hash), ws.com (NSEC) and
// n3.com (NSEC3), the last two with a wildcard. It returns the queries
// each server was asked, by address.
func limitsHierarchy(t *testing.T) map[string]*atomic.Int64 {
	t.Helper()
	soa := func(z string) string {
		return z + " 3600 IN SOA ns." + strings.TrimPrefix(z, ".") + " h. 1 3600 600 86400 30"
	}
	children := []struct {
		zone, addr string
		sg         authtest.Signing
	}{
		{"it.com.", "127.68.1.3", authtest.Signing{NSEC3: true, Iterations: 200}},
		{"hard.com.", "127.68.1.4", authtest.Signing{NSEC3: true, Iterations: 600}},
		{"unk.com.", "127.68.1.5", authtest.Signing{NSEC3: true, NSEC3Hash: 2}},
		{"ws.com.", "127.68.1.6", authtest.Signing{}},
		{"n3.com.", "127.68.1.7", authtest.Signing{NSEC3: true}},
	}
	type srv struct {
		addr string
		recs []string
		sg   authtest.Signing
	}
	servers := []srv{
		{"127.68.1.1:53", []string{soa("."), ". 3600 IN NS a.root.", "a.root. 3600 IN A 127.68.1.1",
			"com. 3600 IN NS ns.com.", "ns.com. 3600 IN A 127.68.1.2"}, authtest.Signing{Secure: []string{"com."}}},
	}
	com := srv{"127.68.1.2:53", []string{soa("com.")}, authtest.Signing{}}
	for i, c := range children {
		com.recs = append(com.recs, c.zone+" 3600 IN NS ns."+c.zone, "ns."+c.zone+" 3600 IN A "+c.addr)
		com.sg.Secure = append(com.sg.Secure, c.zone)
		recs := []string{soa(c.zone), "ns." + c.zone + " 3600 IN A " + c.addr,
			"www." + c.zone + " 300 IN A 127.68.9." + string(rune('1'+i)),
			"wild." + c.zone + " 300 IN TXT w", "*.wild." + c.zone + " 300 IN A 127.68.9.10"}
		servers = append(servers, srv{c.addr + ":53", recs, c.sg})
	}
	servers = append(servers, com)
	out := map[string]*atomic.Int64{}
	for _, sv := range servers {
		s, err := authtest.New(sv.recs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Sign(sv.sg); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(sv.addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", sv.addr, err)
		}
		t.Cleanup(s.Close)
		out[sv.addr] = &s.Queries
	}
	return out
}

func limitsConfig() Config {
	c := validating()
	c.RootHints = []netip.AddrPort{netip.MustParseAddrPort("127.68.1.1:53")}
	return c
}

// TestValidateLimits: NSEC3 iteration limits (RFC 9276) and unknown
// hashes, and wildcard NODATA proofs with NSEC and NSEC3.
func TestValidateLimits(t *testing.T) {
	limitsHierarchy(t)
	cases := []struct {
		name        string
		qname       string
		qtype       uint16
		want        string
		wantLimited uint64
	}{
		{"positive answer, 200 iterations", "www.it.com.", dns.TypeA, "NOERROR ad 127.68.9.1 sigs", 0},
		{"NXDOMAIN, 200 iterations: insecure", "nope.it.com.", dns.TypeA, "NXDOMAIN nsec3 sigs", 1},
		{"NODATA, 200 iterations: insecure", "www.it.com.", dns.TypeTXT, "NOERROR nsec3 sigs", 1},
		{"NXDOMAIN, 600 iterations: bogus", "nope.hard.com.", dns.TypeA, "SERVFAIL", 1},
		{"wildcard, 600 iterations: bogus", "a.wild.hard.com.", dns.TypeA, "SERVFAIL", 1},
		{"NXDOMAIN, unknown hash: insecure", "nope.unk.com.", dns.TypeA, "NXDOMAIN nsec3 sigs", 1},
		{"NXDOMAIN, no extra iteration", "nope.n3.com.", dns.TypeA, "NXDOMAIN ad nsec3 sigs", 0},
		{"wildcard NODATA, NSEC", "any.wild.ws.com.", dns.TypeTXT, "NOERROR ad nsec sigs", 0},
		{"wildcard NODATA, NSEC3", "a.b.wild.n3.com.", dns.TypeTXT, "NOERROR ad nsec3 sigs", 0},
		{"wildcard answer, NSEC3", "any.wild.n3.com.", dns.TypeA, "NOERROR ad 127.68.9.10 nsec3 sigs", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(limitsConfig())
			if got := askFlags(t, r, tc.qname, tc.qtype, "do"); got != tc.want {
				t.Errorf("%s %s: got %q, want %q", tc.qname, dns.TypeToString[tc.qtype], got, tc.want)
			}
			if got := r.Stats().NSEC3Limited.Load(); (got > 0) != (tc.wantLimited > 0) {
				t.Errorf("%s %s: %d proofs past the NSEC3 limits", tc.qname, dns.TypeToString[tc.qtype], got)
			}
		})
	}
}

// TestAggressiveNSEC: a validated NSEC range answers the names inside it
// without asking (RFC 8198); names it cannot prove are asked.
func TestAggressiveNSEC(t *testing.T) {
	queries := limitsHierarchy(t)
	ws, com := queries["127.68.1.6:53"], queries["127.68.1.2:53"]
	r := New(limitsConfig())
	steps := []struct {
		qname    string
		qtype    uint16
		want     string
		upstream bool   // a name server is asked
		counter  string // the aggressive counter that moves
	}{
		{"nope.ws.com.", dns.TypeA, "NXDOMAIN ad nsec sigs", true, ""},
		{"nope2.ws.com.", dns.TypeA, "NXDOMAIN ad nsec sigs", false, "nxdomain"},
		{"ws.com.", dns.TypeTXT, "NOERROR ad nsec sigs", false, "nodata"},
		{"a.wild.ws.com.", dns.TypeTXT, "NOERROR ad nsec sigs", true, ""},
		{"b.wild.ws.com.", dns.TypeTXT, "NOERROR ad nsec sigs", false, "nodata"},
		{"b.wild.ws.com.", dns.TypeA, "NOERROR ad 127.68.9.10 nsec sigs", true, ""}, // the wildcard has an A: asked
		{"nope.com.", dns.TypeA, "NXDOMAIN ad nsec sigs", true, ""},
		{"nope3.com.", dns.TypeA, "NXDOMAIN ad nsec sigs", false, "nxdomain"},
		{"www.n3.com.", dns.TypeA, "NOERROR ad 127.68.9.5 sigs", true, ""}, // below a cut in com's chain: asked
		{"ws.com.", dns.TypeDS, "NOERROR ad sigs", true, ""},               // the child's apex NSEC says nothing of the DS
	}
	for _, st := range steps {
		before := ws.Load() + com.Load()
		nx, nd := r.Stats().AggressiveNXDOMAIN.Load(), r.Stats().AggressiveNODATA.Load()
		if got := askFlags(t, r, st.qname, st.qtype, "do"); got != st.want {
			t.Errorf("%s %s: got %q, want %q", st.qname, dns.TypeToString[st.qtype], got, st.want)
		}
		if asked := ws.Load()+com.Load() > before; asked != st.upstream {
			t.Errorf("%s %s: name servers asked %v, want %v", st.qname, dns.TypeToString[st.qtype], asked, st.upstream)
		}
		dnx, dnd := r.Stats().AggressiveNXDOMAIN.Load()-nx, r.Stats().AggressiveNODATA.Load()-nd
		want := [2]uint64{}
		switch st.counter {
		case "nxdomain":
			want[0] = 1
		case "nodata":
			want[1] = 1
		}
		if [2]uint64{dnx, dnd} != want {
			t.Errorf("%s %s: aggressive NXDOMAIN +%d NODATA +%d, want %v", st.qname, dns.TypeToString[st.qtype], dnx, dnd, want)
		}
	}
	// Without DO the synthesised answer carries no NSEC.
	if got := askFlags(t, r, "nope4.ws.com.", dns.TypeA, ""); got != "NXDOMAIN" {
		t.Errorf("without DO: %q", got)
	}
	r.Flush()
	before := ws.Load()
	askFlags(t, r, "nope5.ws.com.", dns.TypeA, "do")
	if ws.Load() == before {
		t.Errorf("after a flush the NSEC ranges still answered")
	}

	// The ranges are kept within rrset-cache-size bytes: a cache too
	// small for one keeps none, and each name is asked.
	c := limitsConfig()
	c.RRsetBytes = 100
	small := New(c)
	for i, n := range []string{"nope.ws.com.", "nope2.ws.com."} {
		before := ws.Load()
		if got := askFlags(t, small, n, dns.TypeA, "do"); got != "NXDOMAIN ad nsec sigs" {
			t.Errorf("rrset-cache-size 100: %s: %q", n, got)
		}
		if ws.Load() == before {
			t.Errorf("rrset-cache-size 100: %s (#%d) answered from a range the cache had no room for", n, i)
		}
	}
	if small.nsecBytes > 100 {
		t.Errorf("rrset-cache-size 100: %d bytes of NSEC ranges kept", small.nsecBytes)
	}
}
