package daemon

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/metrics"
)

func quietGSLB(t *testing.T) *gslb.Server {
	t.Helper()
	g := gslb.New(gslb.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { g.Close() })
	return g
}

// openWithGSLB opens an engine with a GSLB server (no sockets) following
// its commits; both end with the test.
func openWithGSLB(t *testing.T) (*Engine, *gslb.Server) {
	t.Helper()
	e := openTest(t, t.TempDir())
	t.Cleanup(func() { e.Close() })
	g := quietGSLB(t)
	stop, err := e.AttachGSLB(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return e, g
}

// ask answers one A question from ldns without sockets.
func ask(t *testing.T, g *gslb.Server, name, ldns string) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), dns.TypeA)
	m, ok := g.Answer(q, netip.MustParseAddr(ldns), true)
	if !ok || m == nil {
		return "dropped"
	}
	var out []string
	for _, rr := range m.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	if len(out) == 0 {
		return dns.RcodeToString[m.Rcode] + " (no answer)"
	}
	return strings.Join(out, " ")
}

func TestGSLBFollowsCommits(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	steps := []gtmStep{
		{cmd: "create gtm datacenter dc1"},
		{cmd: "create gtm link isp1 datacenter dc1 uplink-address 127.0.119.1"},
		{cmd: "create gtm server lc1 datacenter dc1 virtual-servers add { vs1 { destination 127.0.119.11:80 link isp1 } vs2 { destination 127.0.119.12:80 } }"},
		{cmd: "create gtm pool a p1 members add { lc1:vs1 { member-order 0 } lc1:vs2 { member-order 1 } } load-balancing-mode global-availability"},
		{cmd: "create gtm wideip a www.example.com pools add { p1 }", ldns: "127.0.118.5", answer: "127.0.119.11"},
		{cmd: "modify gtm link isp1 disabled", ldns: "127.0.118.5", answer: "127.0.119.12"},
		{cmd: "show gtm link isp1", out: "Reason       : The link is disabled"},
		{cmd: "modify gtm link isp1 enabled", ldns: "127.0.118.5", answer: "127.0.119.11"},
		// Refused whole: nothing changes.
		{cmd: "modify gtm pool a p1 alternate-mode least-connections", err: "only static methods are allowed"},
		{cmd: "create gtm pool a p2 members add { nope:vs1 }", err: "server /Common/nope does not exist"},
		{cmd: "create gtm pool a p2 members add { lc1:nope }", err: "has no virtual server nope"},
		{cmd: "create gtm wideip a WWW.EXAMPLE.COM pools add { p1 }", err: "is already wide IP"},
		{cmd: "create gtm zone broken.example definition { not a zone }", err: "Configuration error"},
		{cmd: "list gtm pool a p1 alternate-mode load-balancing-mode", out: "load-balancing-mode global-availability"},
		// Static names beside the wide IPs.
		{cmd: "create gtm zone example.com definition { @ IN SOA ns1 hostmaster 1 3600 600 86400 300\n ns1 IN A 127.0.119.53 }"},
		// Shows.
		{cmd: "show gtm wideip", out: "Gtm::WideIp::A: www.example.com\n"},
		{cmd: "show gtm wideip a www.example.com", out: "  Availability : available\n"},
		{cmd: "show gtm wideip a nope.example.com", err: "01020036:3: The requested wide IP (/Common/nope.example.com) was not found."},
		{cmd: "show gtm wideip aaaa"},
		{cmd: "show gtm wideip aaaa www.example.com", err: "was not found"},
		{cmd: "show gtm pool", out: "Gtm::Pool::A: p1\n"},
		{cmd: "show gtm pool a p1 members", out: "  | Gtm::Pool Member: lc1:vs2\n"},
		{cmd: "show gtm pool p*", out: "  Preferred LB : global-availability\n"},
		{cmd: "show gtm server", out: "  | Gtm::Virtual Server: lc1:vs1\n"},
		{cmd: "show gtm server lc1", out: "  |   Link         : isp1\n"},
		{cmd: "show gtm datacenter dc1", out: "  Prober       : none\n"},
		{cmd: "show gtm link", out: "Gtm::Link: isp1\n"},
		{cmd: "show gtm persist", out: "Gtm::Persistence Records\nTotal persistence records returned: 0\n"},
		{cmd: "show gtm ldns", out: "127.0.118.0/24"},
		{cmd: "modify gtm wideip a www.example.com persistence enabled", ldns: "127.0.118.5", answer: "127.0.119.11"},
		{cmd: "show gtm persist", out: "Total persistence records returned: 1\n"},
	}
	runGTMSteps(t, s, g, "www.example.com", steps)
	q := new(dns.Msg)
	q.SetQuestion("ns1.example.com.", dns.TypeA)
	if m, _ := g.Answer(q, netip.MustParseAddr("127.0.118.5"), true); m == nil || len(m.Answer) != 1 {
		t.Fatalf("static name: %v", m)
	}
}

func TestGSLBLoadKeepsDangling(t *testing.T) {
	e, g := openWithGSLB(t)
	h := &gslbHook{e: e, s: g}
	cfg := gtmConfig(t, "gtm datacenter /Common/dc { }\ngtm pool a /Common/p { members { /Common/nope:v { } } }")
	var warned []string
	if err := check(h, e.Config(), cfg, CommitOptions{Lenient: true, Warn: func(s string) { warned = append(warned, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "left out of GSLB decisions") {
		t.Fatalf("warnings %q", warned)
	}
	if err := check(h, e.Config(), cfg, CommitOptions{}); err == nil {
		t.Fatal("a new dangling member was accepted outside a load")
	}
	// Already there before: kept without a word.
	if err := check(h, cfg, cfg, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestLTMStatus(t *testing.T) {
	cases := []struct {
		st   dataplane.Status
		want gslb.Status
	}{
		{dataplane.Status{Availability: dataplane.Available, State: "enabled"}, gslb.StatusUp},
		{dataplane.Status{Availability: dataplane.Available, State: "disabled"}, gslb.StatusDown},
		{dataplane.Status{Availability: dataplane.Offline, State: "enabled"}, gslb.StatusDown},
		{dataplane.Status{Availability: dataplane.Unavailable, State: "enabled"}, gslb.StatusDown},
		{dataplane.Status{Availability: dataplane.Unknown, State: "enabled"}, gslb.StatusUnknown},
	}
	for _, c := range cases {
		if got := ltmStatus(c.st); got != c.want {
			t.Errorf("ltmStatus(%+v) = %v, want %v", c.st, got, c.want)
		}
	}
}

// TestGSLBFedFromLTM drives traffic through an LTM virtual and checks that
// the gtm virtual server at the same destination, and its link, get the
// figures.
func TestGSLBFedFromLTM(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	labelServer(t, "127.0.119.111:9000", "S1 Response")
	g := quietGSLB(t)
	h := &gslbHook{e: e, s: g, p: p}
	if err := e.AddHook(h); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool app members add { 127.0.119.111:9000 }",
		"create ltm virtual vs_isp1 destination 127.0.119.101:9000 pool app profiles replace-all-with { tcp { } }",
		"create gtm datacenter dc1",
		"create gtm link isp1 datacenter dc1 limit-max-total-bps 8 limit-max-total-bps-status enabled",
		"create gtm server lc1 datacenter dc1 virtual-servers add { v1 { destination 127.0.119.101:9000 link isp1 } v2 { destination 127.0.119.102:9000 } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	now := time.Now()
	h.report(now)
	c, err := net.DialTimeout("tcp", "127.0.119.101:9000", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	r := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		io.WriteString(c, "hello\n")
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	h.report(now.Add(time.Second))
	var v1, v2 gslb.VirtualServerStats
	for _, ss := range g.Servers() {
		for _, v := range ss.VirtualServers {
			switch v.Name {
			case "/Common/lc1:v1":
				v1 = v
			case "/Common/lc1:v2":
				v2 = v
			}
		}
	}
	if v1.Metrics == nil || v1.Metrics.Connections != 1 || v1.Metrics.Bps <= 0 {
		t.Fatalf("v1 metrics %+v", v1.Metrics)
	}
	if v2.Metrics != nil {
		t.Fatalf("v2 has no LTM virtual but got %+v", v2.Metrics)
	}
	links := g.Links()
	if len(links) != 1 || links[0].Metrics == nil || links[0].Metrics.InBps+links[0].Metrics.OutBps <= 0 {
		t.Fatalf("link %+v", links)
	}
	if v1.Status.Reason != "The link has exceeded its bandwidth limit" {
		t.Fatalf("v1 status %+v", v1.Status)
	}
	// The LTM virtual goes away: its figures are withdrawn.
	if _, err := run(t, s, "delete ltm virtual vs_isp1"); err != "" {
		t.Fatal(err)
	}
	h.report(now.Add(2 * time.Second))
	for _, ss := range g.Servers() {
		for _, v := range ss.VirtualServers {
			if v.Metrics != nil {
				t.Fatalf("%s keeps metrics %+v", v.Name, v.Metrics)
			}
		}
	}
}

// DNS iRules from tmsh: a wide IP's rule answers for it, a listener's rule
// runs on every query; a rule that does not compile is refused.
func TestGSLBRulesFromTmsh(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create gtm datacenter dc1",
		"create gtm server lc1 datacenter dc1 virtual-servers add { vs1 { destination 127.0.119.11:80 } }",
		"create gtm pool a p1 members add { lc1:vs1 }",
		"create ltm rule steer { when DNS_REQUEST { if { [IP::client_addr] starts_with \"127.0.118.\" } { host 127.0.9.9 } } }",
		"create gtm wideip a www.example.com pools add { p1 } rules { steer }",
	} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatalf("%s: %s", c, errText)
		}
	}
	if got := ask(t, g, "www.example.com", "127.0.118.5"); got != "127.0.9.9" {
		t.Errorf("steered LDNS got %s, want the rule's host 127.0.9.9", got)
	}
	if got := ask(t, g, "www.example.com", "127.0.117.5"); got != "127.0.119.11" {
		t.Errorf("other LDNS got %s, want the pool's 127.0.119.11", got)
	}
	if _, errText := run(t, s, "create ltm rule broken { when DNS_REQUEST { exec ls } }"); errText == "" {
		t.Error("a rule calling exec was accepted")
	}
	if _, errText := run(t, s, "modify gtm wideip a www.example.com rules none"); errText != "" {
		t.Fatal(errText)
	}
	if got := ask(t, g, "www.example.com", "127.0.118.5"); got != "127.0.119.11" {
		t.Errorf("without the rule: %s", got)
	}
}

// TestGSLBMetrics checks what a scrape carries of the GSLB: wide IP and
// pool resolutions by step, and the availability of pools, members,
// servers, virtual servers, datacenters and links, as show gtm has them.
func TestGSLBMetrics(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create gtm datacenter dc1",
		"create gtm link isp1 datacenter dc1 uplink-address 127.0.119.1",
		"create gtm server lc1 datacenter dc1 virtual-servers add { vs1 { destination 127.0.119.11:80 link isp1 } vs2 { destination 127.0.119.12:80 } }",
		"create gtm pool a p1 members add { lc1:vs1 { member-order 0 } lc1:vs2 { member-order 1 } } load-balancing-mode global-availability",
		"create gtm wideip a www.example.com pools add { p1 }",
		"modify gtm server lc1 virtual-servers modify { vs2 { disabled } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for range 3 {
		if got := ask(t, g, "www.example.com", "127.0.118.5"); got != "127.0.119.11" {
			t.Fatalf("answer %s", got)
		}
	}
	var snap metrics.Snapshot
	gslbSnapshot(&snap, g)
	if len(snap.WideIPs) != 1 || snap.WideIPs[0].Name != "/Common/www.example.com" || snap.WideIPs[0].Requests != 3 || snap.WideIPs[0].Preferred != 3 {
		t.Fatalf("wide IPs %+v", snap.WideIPs)
	}
	if len(snap.GSLBPools) != 1 || snap.GSLBPools[0].Preferred != 3 || snap.GSLBPools[0].Status.Availability != "available" || len(snap.GSLBPools[0].Members) != 2 {
		t.Fatalf("pools %+v", snap.GSLBPools)
	}
	if len(snap.GSLBServers) != 1 || len(snap.GSLBServers[0].VirtualServers) != 2 || snap.GSLBServers[0].VirtualServers[0].Picks != 3 ||
		snap.GSLBServers[0].VirtualServers[0].Destination != "127.0.119.11:80" {
		t.Fatalf("servers %+v", snap.GSLBServers)
	}
	if m := snap.GSLBPools[0].Members[1]; m.Status.Availability == "available" {
		t.Fatalf("the member on a disabled virtual server: %+v", m)
	}
	if v := snap.GSLBServers[0].VirtualServers[1]; v.Status.State != "disabled" {
		t.Fatalf("the disabled virtual server: %+v", v)
	}
	if len(snap.Datacenters) != 1 || len(snap.Links) != 1 || snap.DNS == nil || snap.DNS.WideIP != 3 {
		t.Fatalf("datacenters %+v links %+v dns %+v", snap.Datacenters, snap.Links, snap.DNS)
	}
	var none metrics.Snapshot
	gslbSnapshot(&none, quietGSLB(t))
	if none.DNS != nil || none.WideIPs != nil {
		t.Fatalf("a GSLB with nothing configured exported %+v", none)
	}
}

// A wide IP whose DNS rule uses an F5 command openltm lacks is kept with
// a warning, as an LTM virtual is, answers nothing, and show says why.
func TestWideIPWithKeptRule(t *testing.T) {
	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{"create gtm rule tsig_rule { when DNS_REQUEST { DNS::rrname } }", "create gtm pool a gp1"} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatalf("%s: %s", c, errText)
		}
	}
	out, errText := run(t, s, "create gtm wideip a www.kept.test pools add { gp1 } rules { tsig_rule }")
	if errText != "" || !strings.Contains(out, "Warning: gtm wideip a /Common/www.kept.test: rule /Common/tsig_rule uses F5 commands or events openltm does not implement yet; kept") {
		t.Fatalf("create: %q %q", out, errText)
	}
	if a := ask(t, g, "www.kept.test", "127.0.0.9"); !strings.HasSuffix(a, "(no answer)") && a != "dropped" {
		t.Fatalf("a kept wide IP answered %q", a)
	}
	out, errText = run(t, s, "show gtm wideip a www.kept.test")
	if errText != "" || !strings.Contains(out, "  Availability : unknown\n") ||
		!strings.Contains(out, "  Reason       : openltm does not serve it: rule /Common/tsig_rule uses F5 commands or events openltm does not implement yet\n") {
		t.Fatalf("show: %q %q", out, errText)
	}
}

// gtmStep is a tmsh command of a GSLB test, what its output or error
// holds, and a query to ask after it.
type gtmStep struct {
	cmd      string
	out, err string // substrings expected
	ldns     string // when set, ask the test's name from it ...
	answer   string // ... and expect this answer
}

// runGTMSteps runs steps on s in order, asking g for name after each
// step that names an LDNS.
func runGTMSteps(t *testing.T, s *Session, g *gslb.Server, name string, steps []gtmStep) {
	t.Helper()
	for _, st := range steps {
		out, errText := run(t, s, st.cmd)
		switch {
		case st.err == "" && errText != "":
			t.Fatalf("%s: %s", st.cmd, errText)
		case st.err != "" && !strings.Contains(errText, st.err):
			t.Fatalf("%s: error %q, want %q", st.cmd, errText, st.err)
		case !strings.Contains(out, st.out):
			t.Fatalf("%s: output\n%s\nwant %q", st.cmd, out, st.out)
		}
		if st.ldns != "" {
			if got := ask(t, g, name, st.ldns); got != st.answer {
				t.Fatalf("after %s: answer %s, want %s", st.cmd, got, st.answer)
			}
		}
	}
}
