package daemon

import (
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
)

// cacheVirtual is an engine with a running plane and a UDP DNS virtual
// NET.2.1:5300 whose dns profile keeps answers in the transparent cache
// c1, balancing to one real member NET.2.11:5300 that answers records;
// extra commands run before the profile is made.
func cacheVirtual(t *testing.T, net string, records map[string]string, extra ...string) (*Session, *dnsPoolMember) {
	t.Helper()
	e, _ := openWithPlane(t, t.TempDir()) // util_test.go
	member := startDNSPoolMember(t, net+".2.11:5300", records)
	s := e.NewSession("admin").(*Session)
	cmds := append([]string{
		"create ltm pool dns_pool members add { " + net + ".2.11:5300 }",
		"create ltm dns cache transparent c1",
	}, extra...)
	cmds = append(cmds,
		"create ltm profile dns dnsp enable-cache yes cache c1",
		"create ltm virtual dns_udp destination "+net+".2.1:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool")
	for _, c := range cmds {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	return s, member
}

// TestDNSCacheShow: show ltm dns cache counts the hits and misses of
// queries sent over a real socket, lists and drops the kept answers, and
// refuses what is not a cache.
func TestDNSCacheShow(t *testing.T) {
	s, member := cacheVirtual(t, "127.23", map[string]string{
		"a.example.net. A": "x 300 IN A 127.23.9.40",
		"b.example.net. A": "x 300 IN A 127.23.9.41",
	}, "create ltm dns cache resolver r1")
	const vip = "127.23.2.1:5300"
	steps := []struct {
		ask   string // a query sent first ("" for none; "-name": REFUSED expected)
		cmd   string
		out   []string // lines (as regexps) the output holds
		not   []string // lines it must not hold
		err   string
		asked int64 // the member's queries after the step
	}{
		{cmd: "show ltm dns cache transparent c1", out: []string{`Ltm::DNS Cache Transparent: c1`, `Total +0$`, `Count +0$`, `Maximum Size \(bytes\) +1\.0M$`}},
		{ask: "a.example.net", cmd: "show ltm dns cache transparent c1 raw", out: []string{`Total +1$`, `Cache Misses +1$`, `Cache Hits +0$`, `Inserts +1$`, `Count +1$`, `Maximum Size \(bytes\) +1048576$`}, asked: 1},
		{ask: "a.example.net", cmd: "show ltm dns cache", out: []string{`Ltm::DNS Cache Transparent: c1`, `Ltm::DNS Cache Resolver: r1`, `Cache Hits +1$`}, asked: 1},
		{ask: "b.example.net", cmd: "show ltm dns cache records msg cache c1", out: []string{`a\.example\.net\. +A +IN +no +NOERROR +(29\d|300) +\d+$`, `b\.example\.net\. +A +IN`}, asked: 2},
		{cmd: "show ltm dns cache resolver", out: []string{`Ltm::DNS Cache Resolver: r1`, `Total +0$`, `Maximum Size \(bytes\) +1\.0M$`}, not: []string{`Transparent`}, asked: 2},
		{cmd: "reset-stats ltm dns cache transparent c1", asked: 2},
		{cmd: "show ltm dns cache transparent c1", out: []string{`Total +0$`, `Count +2$`}, asked: 2},
		{cmd: "delete ltm dns cache records msg cache c1", asked: 2},
		{ask: "a.example.net", cmd: "show ltm dns cache records all cache c1", out: []string{`a\.example\.net\.`}, not: []string{`b\.example\.net\.`}, asked: 3},
		{cmd: "show ltm dns cache transparent nosuch", err: "not found", asked: 3},
		{cmd: "show ltm dns cache records msg cache nosuch", err: "not found", asked: 3},
		{cmd: "delete ltm dns cache records msg c1", err: "expected msg|rrset|nameserver|key|all cache NAME", asked: 3},
		// The profile counts which step answered, across a commit.
		{cmd: "create ltm pool other", asked: 3},
		{cmd: "show ltm profile dns dnsp raw", out: []string{`^Ltm::DNS Profile: dnsp$`, `^Total +4$`, `^Cache +1$`, `^Pool Members +3$`, `^Allow +3$`, `^Reject +0$`, `^GSLB and DNS Express +0$`}, asked: 3},
		{cmd: "modify ltm profile dns dnsp unhandled-query-action reject enable-cache no", asked: 3},
		{ask: "-c.example.net", cmd: "show ltm profile dns dnsp raw", out: []string{`^Total +5$`, `^Reject +1$`, `^Pool Members +3$`}, asked: 3},
		{cmd: "reset-stats ltm profile dns dnsp", asked: 3},
		{cmd: "show ltm profile dns", out: []string{`^Total +0$`, `^Ltm::DNS Profile: dns$`}, asked: 3},
		// The cache is configuration still: delete is refused while a profile names it.
		{cmd: "delete ltm dns cache transparent c1", err: "in use by a Profile", asked: 3},
	}
	for i, st := range steps {
		if name, refused := strings.CutPrefix(st.ask, "-"); refused {
			if got := dnsAsk(t, "udp", vip, name, dns.TypeA); got != "REFUSED" {
				t.Fatalf("step %d: %s: %q, want REFUSED", i, name, got)
			}
		} else if st.ask != "" {
			if got := dnsAsk(t, "udp", vip, st.ask, dns.TypeA); !strings.HasPrefix(got, "NOERROR 127.23.9.") {
				t.Fatalf("step %d: %s: %q", i, st.ask, got)
			}
		}
		checkStep(t, s, i, st.cmd, st.err, st.out, st.not)
		if n := member.queries.Load(); n != st.asked {
			t.Errorf("step %d: the member got %d queries, want %d", i, n, st.asked)
		}
	}
}

// TestDNS64AdditionalRewrite: the glue of an MX answer the pool gives is
// rewritten as dns64-additional-section-rewrite says, with dns64 on.
func TestDNS64AdditionalRewrite(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	defer p.Close()
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Addr: "127.23.2.12:5300", Net: "udp", NotifyStartedFunc: func() {}}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	srv.Handler = dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = append(m.Answer, mustRR(t, r.Question[0].Name+" 60 IN MX 10 mx1.example.net."), mustRR(t, r.Question[0].Name+" 60 IN MX 20 mx2.example.net."))
		m.Extra = append(m.Extra, mustRR(t, "mx1.example.net. 60 IN A 192.0.2.1"), mustRR(t, "mx2.example.net. 60 IN A 192.0.2.2"), mustRR(t, "mx2.example.net. 60 IN AAAA 2001:db8::2"))
		w.WriteMsg(m)
	})
	go srv.ListenAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the member did not start")
	}
	defer srv.Shutdown()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool dns_pool members add { 127.23.2.12:5300 }",
		"create ltm profile dns dnsp",
		"create ltm virtual dns_udp destination 127.23.2.2:5300 ip-protocol udp profiles add { dnsp udp } pool dns_pool",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for _, tt := range []struct {
		cmd  string
		want string // the additional section's addresses
	}{
		{"modify ltm profile dns dnsp dns64 disabled dns64-additional-section-rewrite v6-only", "192.0.2.1 192.0.2.2 2001:db8::2"}, // dns64 off: as the pool said
		{"modify ltm profile dns dnsp dns64 secondary dns64-additional-section-rewrite disabled", "192.0.2.1 192.0.2.2 2001:db8::2"},
		{"modify ltm profile dns dnsp dns64-additional-section-rewrite v6-only", "64:ff9b::c000:201 2001:db8::2"},
		{"modify ltm profile dns dnsp dns64-additional-section-rewrite v4-only", "192.0.2.1 192.0.2.2"},
		{"modify ltm profile dns dnsp dns64-additional-section-rewrite any dns64-prefix 2001:db8:64::", "192.0.2.1 2001:db8:64::c000:201 192.0.2.2 2001:db8::2"},
	} {
		if _, err := run(t, s, tt.cmd); err != "" {
			t.Fatalf("%s: %s", tt.cmd, err)
		}
		q := new(dns.Msg)
		q.SetQuestion("example.net.", dns.TypeMX)
		c := &dns.Client{Net: "udp", Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP("127.23.2.100")}}}
		m, _, err := c.Exchange(q, "127.23.2.2:5300")
		if err != nil {
			t.Fatalf("%s: %v", tt.cmd, err)
		}
		var got []string
		for _, rr := range m.Extra {
			switch x := rr.(type) {
			case *dns.A:
				got = append(got, x.A.String())
			case *dns.AAAA:
				got = append(got, x.AAAA.String())
			}
		}
		if len(m.Answer) != 2 || strings.Join(got, " ") != tt.want {
			t.Errorf("%s: %d answers, additional %q, want 2 and %q", tt.cmd, len(m.Answer), strings.Join(got, " "), tt.want)
		}
	}
}

// checkStep runs step i's command in s and checks its error (wantErr ""
// for none, else a part of it) and its output: each of out a line there,
// none of not (multi-line regular expressions).
func checkStep(t *testing.T, s *Session, i int, cmd, wantErr string, out, not []string) {
	t.Helper()
	got, err := run(t, s, cmd)
	if wantErr == "" && err != "" || wantErr != "" && !strings.Contains(err, wantErr) {
		t.Errorf("step %d: %s: error %q, want %q", i, cmd, err, wantErr)
	}
	for _, re := range out {
		if !regexp.MustCompile(`(?m)` + re).MatchString(got) {
			t.Errorf("step %d: %s: no line %q in\n%s", i, cmd, re, got)
		}
	}
	for _, re := range not {
		if regexp.MustCompile(`(?m)` + re).MatchString(got) {
			t.Errorf("step %d: %s: line %q in\n%s", i, cmd, re, got)
		}
	}
}
