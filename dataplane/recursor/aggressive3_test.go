package recursor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// nsec3Hierarchy starts a signed tree on 127.100.1.x:53: the root and
// com (NSEC); under com, n3.com (NSEC3, a wildcard under wild.n3.com and
// an unsigned delegation un.n3.com) and oo.com (NSEC3 with opt-out, an
// unsigned delegation un.oo.com left out of its chain). It returns the
// queries the servers of n3.com, oo.com, com and un.n3.com were asked.
func nsec3Hierarchy(t *testing.T) (n3, oo, com, un *atomic.Int64) {
	t.Helper()
	soa := func(z string) string {
		return z + " 3600 IN SOA ns." + strings.TrimPrefix(z, ".") + " h. 1 3600 600 86400 30"
	}
	servers := []struct {
		addr string
		recs []string
		sg   authtest.Signing
	}{
		{"127.100.1.1:53", []string{soa("."), ". 3600 IN NS a.root.", "a.root. 3600 IN A 127.100.1.1",
			"com. 3600 IN NS ns.com.", "ns.com. 3600 IN A 127.100.1.2"}, authtest.Signing{Secure: []string{"com."}}},
		{"127.100.1.2:53", []string{soa("com."),
			"n3.com. 3600 IN NS ns.n3.com.", "ns.n3.com. 3600 IN A 127.100.1.3",
			"oo.com. 3600 IN NS ns.oo.com.", "ns.oo.com. 3600 IN A 127.100.1.4"}, authtest.Signing{Secure: []string{"n3.com.", "oo.com."}}},
		{"127.100.1.3:53", []string{soa("n3.com."), "ns.n3.com. 3600 IN A 127.100.1.3", "www.n3.com. 300 IN A 127.100.9.1",
			"wild.n3.com. 300 IN TXT w", "*.wild.n3.com. 300 IN A 127.100.9.2",
			"un.n3.com. 3600 IN NS ns.un.n3.com.", "ns.un.n3.com. 3600 IN A 127.100.1.5"}, authtest.Signing{NSEC3: true}},
		{"127.100.1.4:53", []string{soa("oo.com."), "ns.oo.com. 3600 IN A 127.100.1.4", "www.oo.com. 300 IN A 127.100.9.3",
			"un.oo.com. 3600 IN NS ns.un.oo.com.", "ns.un.oo.com. 3600 IN A 127.100.1.5"}, authtest.Signing{NSEC3: true, OptOut: true}},
		{"127.100.1.5:53", []string{soa("un.n3.com."), "un.n3.com. 3600 IN NS ns.un.n3.com.", "ns.un.n3.com. 3600 IN A 127.100.1.5",
			"x.un.n3.com. 300 IN A 127.100.9.4"}, authtest.Signing{}},
	}
	counts := map[string]*atomic.Int64{}
	for _, sv := range servers {
		s, err := authtest.New(sv.recs...)
		if err != nil {
			t.Fatal(err)
		}
		if sv.addr != "127.100.1.5:53" {
			if err := s.Sign(sv.sg); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(sv.addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", sv.addr, err)
		}
		t.Cleanup(s.Close)
		counts[sv.addr] = &s.Queries
	}
	return counts["127.100.1.3:53"], counts["127.100.1.4:53"], counts["127.100.1.2:53"], counts["127.100.1.5:53"]
}

// resolveDO resolves name/qtype for a client asking with DO.
func resolveDO(t *testing.T, r *Resolver, name string, qtype uint16) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.SetEdns0(1232, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := r.Resolve(ctx, q)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return m
}

// nsec3Of are the NSEC3 records of m's authority section.
func nsec3Of(m *dns.Msg) []*dns.NSEC3 {
	var out []*dns.NSEC3
	for _, rr := range m.Ns {
		if n, ok := rr.(*dns.NSEC3); ok {
			out = append(out, n)
		}
	}
	return out
}

// coveredBy is a name LABEL.suffix (LABEL drawn from a bounded list)
// whose hash lies strictly inside n's range when in is true, or inside
// none of the ranges of kept (nor matching one) when it is false: how a
// test finds names it knows the answer for without listing hashes.
func coveredBy(t *testing.T, suffix string, n *dns.NSEC3, kept []*dns.NSEC3, in bool) string {
	t.Helper()
	for i := range 2000 {
		name := fmt.Sprintf("c%d.%s", i, suffix)
		if in {
			if n.Cover(name) && !n.Match(name) {
				return name
			}
			continue
		}
		hit := false
		for _, k := range kept {
			hit = hit || k.Cover(name) || k.Match(name)
		}
		if !hit {
			return name
		}
	}
	t.Fatalf("no name under %s fits", suffix)
	return ""
}

// TestAggressiveNSEC3: the validated NSEC3 records of a secure negative
// answer answer later names they prove (RFC 8198 §5.2) without asking;
// what they do not prove (names outside the kept ranges, below a cut,
// under a wildcard that has the type, inside an opt-out range, past the
// TTL) is asked.
func TestAggressiveNSEC3(t *testing.T) {
	n3, oo, com, un := nsec3Hierarchy(t)
	c := validating()
	c.RootHints = []netip.AddrPort{netip.MustParseAddrPort("127.100.1.1:53")}
	var skew atomic.Int64 // the clock, moved on to show expiry
	r := New(c)
	r.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }

	// The first denials, asked: their NSEC3 records are kept.
	first := resolveDO(t, r, "nope.n3.com.", dns.TypeA)
	if first.Rcode != dns.RcodeNameError || !first.AuthenticatedData {
		t.Fatalf("nope.n3.com: rcode %s ad %v", dns.RcodeToString[first.Rcode], first.AuthenticatedData)
	}
	var nextCloser *dns.NSEC3
	for _, n := range nsec3Of(first) {
		if n.Cover("nope.n3.com.") {
			nextCloser = n
		}
	}
	if nextCloser == nil {
		t.Fatalf("nope.n3.com: no NSEC3 covers the name: %v", first.Ns)
	}
	wildFirst := resolveDO(t, r, "a.b.wild.n3.com.", dns.TypeTXT)
	if wildFirst.Rcode != dns.RcodeSuccess || !wildFirst.AuthenticatedData || len(wildFirst.Answer) != 0 {
		t.Fatalf("a.b.wild.n3.com TXT: %v", wildFirst)
	}
	var wildCloser *dns.NSEC3
	for _, n := range nsec3Of(wildFirst) {
		if n.Cover("b.wild.n3.com.") {
			wildCloser = n
		}
	}
	if wildCloser == nil {
		t.Fatalf("a.b.wild.n3.com: no NSEC3 covers the next closer name: %v", wildFirst.Ns)
	}
	kept := append(nsec3Of(first), nsec3Of(wildFirst)...)
	inRange := coveredBy(t, "n3.com.", nextCloser, nil, true)
	outside := coveredBy(t, "n3.com.", nil, kept, false)
	underWild := coveredBy(t, "wild.n3.com.", wildCloser, nil, true)
	ooFirst := resolveDO(t, r, "nope.oo.com.", dns.TypeA)
	if ooFirst.Rcode != dns.RcodeNameError {
		t.Fatalf("nope.oo.com: rcode %s", dns.RcodeToString[ooFirst.Rcode])
	}
	var ooCloser *dns.NSEC3
	for _, n := range nsec3Of(ooFirst) {
		if n.Cover("nope.oo.com.") {
			ooCloser = n
		}
	}
	if ooCloser == nil || ooCloser.Flags&1 == 0 {
		t.Fatalf("nope.oo.com: no opt-out NSEC3 covers the name: %v", ooFirst.Ns)
	}
	ooIn := coveredBy(t, "oo.com.", ooCloser, nil, true)

	asked := func() int64 { return n3.Load() + oo.Load() + com.Load() + un.Load() }
	steps := []struct {
		what     string
		qname    string
		qtype    uint16
		zone     string
		rcode    int
		ad       bool
		addr     string // the answer's address, if any
		upstream bool   // a name server is asked
		counter  string // the aggressive counter that moves
		fresh    bool   // asked of a second resolver, which has kept nothing else
	}{
		{"a name in the next closer range", inRange, dns.TypeA, "n3.com.", dns.RcodeNameError, true, "", false, "nxdomain", false},
		{"a name below it", "deep." + inRange, dns.TypeA, "n3.com.", dns.RcodeNameError, true, "", false, "nxdomain", false},
		{"the apex's NSEC3 without TXT", "n3.com.", dns.TypeTXT, "n3.com.", dns.RcodeSuccess, true, "", false, "nodata", false},
		{"a name outside the kept ranges", outside, dns.TypeA, "n3.com.", dns.RcodeNameError, true, "", true, "", false},
		{"a wildcard without TXT", underWild, dns.TypeTXT, "n3.com.", dns.RcodeSuccess, true, "", false, "nodata", false},
		{"a wildcard with an A", underWild, dns.TypeA, "n3.com.", dns.RcodeSuccess, true, "127.100.9.2", true, "", false},
		{"an unsigned delegation's DS", "un.n3.com.", dns.TypeDS, "n3.com.", dns.RcodeSuccess, true, "", true, "", true},
		{"the same DS again", "un.n3.com.", dns.TypeDS, "n3.com.", dns.RcodeSuccess, true, "", false, "nodata", true},
		{"a name below the delegation", "x.un.n3.com.", dns.TypeA, "", dns.RcodeSuccess, false, "127.100.9.4", true, "", true},
		{"an opt-out range", ooIn, dns.TypeA, "oo.com.", dns.RcodeNameError, true, "", true, "", false},
		{"the opt-out zone's apex without TXT", "oo.com.", dns.TypeTXT, "oo.com.", dns.RcodeSuccess, true, "", false, "nodata", false},
	}
	r2 := New(c)
	for _, st := range steps {
		r := r
		if st.fresh {
			r = r2
		}
		before := asked()
		nx, nd := r.Stats().AggressiveNXDOMAIN.Load(), r.Stats().AggressiveNODATA.Load()
		m := resolveDO(t, r, st.qname, st.qtype)
		addr := ""
		for _, rr := range m.Answer {
			if a, ok := rr.(*dns.A); ok {
				addr = a.A.String()
			}
		}
		if m.Rcode != st.rcode || m.AuthenticatedData != st.ad || addr != st.addr {
			t.Errorf("%s (%s %s): rcode %s ad %v address %q, want %s %v %q", st.what, st.qname, dns.TypeToString[st.qtype],
				dns.RcodeToString[m.Rcode], m.AuthenticatedData, addr, dns.RcodeToString[st.rcode], st.ad, st.addr)
		}
		if got := asked() > before; got != st.upstream {
			t.Errorf("%s (%s): name servers asked %v, want %v", st.what, st.qname, got, st.upstream)
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
			t.Errorf("%s (%s): aggressive NXDOMAIN +%d NODATA +%d, want %v", st.what, st.qname, dnx, dnd, want)
		}
		if st.counter == "" {
			continue
		}
		// What was made up is a proof a validator accepts.
		ke := r.keyGet(st.zone)
		if ke == nil {
			t.Fatalf("%s: no keys kept for %s", st.what, st.zone)
		}
		var sec Security
		if st.rcode == dns.RcodeNameError {
			sec = r.nxDomain(m.Ns, ke, st.zone, st.qname)
		} else {
			sec = r.noData(m.Ns, ke, st.zone, st.qname, st.qtype)
		}
		if sec != Secure || len(nsec3Of(m)) == 0 {
			t.Errorf("%s (%s): the synthesised proof is %v: %v", st.what, st.qname, sec, m.Ns)
		}
		seen := map[string]bool{}
		for _, rr := range m.Ns {
			if k := rr.String(); seen[k] {
				t.Errorf("%s (%s): %v twice in the proof", st.what, st.qname, rr)
			} else {
				seen[k] = true
			}
		}
	}

	// With the whole chain of n3.com kept (its six names' NSEC3), a
	// name below the cut un.n3.com is still asked: the NSEC3 at a cut
	// says nothing of the names below it.
	kept3 := func() int {
		r2.mu.Lock()
		defer r2.mu.Unlock()
		if z := r2.nsecs["n3.com."]; z != nil {
			return len(z.ranges)
		}
		return 0
	}
	for i := 0; kept3() < 6; i++ {
		if i == 300 {
			t.Fatalf("n3.com's chain not kept after %d denials: %d ranges", i, kept3())
		}
		resolveDO(t, r2, fmt.Sprintf("fill%d.n3.com.", i), dns.TypeA)
	}
	before := asked()
	if m := resolveDO(t, r2, "y.un.n3.com.", dns.TypeA); m.Rcode != dns.RcodeNameError || m.AuthenticatedData {
		t.Errorf("y.un.n3.com: rcode %s ad %v, want NXDOMAIN without AD", dns.RcodeToString[m.Rcode], m.AuthenticatedData)
	}
	if asked() == before {
		t.Errorf("y.un.n3.com: answered from n3.com's ranges, below its cut")
	}

	// Without DO the answer made up carries no NSEC3 nor RRSIG.
	q := new(dns.Msg)
	q.SetQuestion(inRange, dns.TypeA)
	m, err := r.Resolve(context.Background(), q)
	if err != nil || m.Rcode != dns.RcodeNameError {
		t.Fatalf("%s without DO: %v %v", inRange, m, err)
	}
	for _, rr := range m.Ns {
		if rr.Header().Rrtype != dns.TypeSOA {
			t.Errorf("%s without DO: %v in the authority section", inRange, rr)
		}
	}

	// The keys deleted, the ranges they validated go with them.
	if m := resolveDO(t, r, inRange, dns.TypeA); m.Rcode != dns.RcodeNameError {
		t.Fatalf("%s: rcode %s", inRange, dns.RcodeToString[m.Rcode])
	}
	r.FlushKeys()
	before = asked()
	if m := resolveDO(t, r, inRange, dns.TypeA); m.Rcode != dns.RcodeNameError || !m.AuthenticatedData {
		t.Errorf("%s after the keys were deleted: rcode %s ad %v", inRange, dns.RcodeToString[m.Rcode], m.AuthenticatedData)
	}
	if asked() == before {
		t.Errorf("%s after the keys were deleted: answered from the ranges they validated", inRange)
	}

	// Past the negative TTL (the SOA's minimum, 30 s) the ranges prove
	// nothing and the name is asked again.
	skew.Store(int64(31 * time.Second))
	before = asked()
	if m := resolveDO(t, r, inRange, dns.TypeA); m.Rcode != dns.RcodeNameError {
		t.Errorf("%s past the TTL: rcode %s", inRange, dns.RcodeToString[m.Rcode])
	}
	if asked() == before {
		t.Errorf("%s past the TTL: answered from an expired range", inRange)
	}
}
