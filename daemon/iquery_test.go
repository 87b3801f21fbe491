package daemon

import (
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
)

// ltmdAt is one whole ltmd with its state in dir, logging into log.
func ltmdAt(t *testing.T, dir string, log *syncBuf) *Running {
	t.Helper()
	r, err := Start(Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}, filepath.Join(dir, "ltmd.sock"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func must(t *testing.T, r *Running, lines ...string) string {
	t.Helper()
	s := r.Engine.NewSession("admin").(*Session)
	defer s.Close()
	var out strings.Builder
	for _, l := range lines {
		o, err := run(t, s, l)
		if err != "" {
			t.Fatalf("%s: %s", l, err)
		}
		out.WriteString(o)
	}
	return out.String()
}

// eventually polls cond every 50 ms for at most limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answers asks the GSLB for name a number of times and returns the set
// of addresses it answered with.
func answers(t *testing.T, r *Running, name string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < 8; i++ {
		for _, a := range strings.Fields(ask(t, r.GSLB, name, "127.0.151.5")) {
			out[a] = true
		}
	}
	return out
}

// Three ltmd on one machine: two datacenters' LTMs and one GSLB, over
// iQuery. The GSLB refuses a datacenter it does not trust (and logs it),
// trusts it after the exchange, discovers its virtual servers, stops
// answering with them while its ltmd is down, and answers with them again
// once it is back.
func TestIQueryThreeLtmd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var log1, log2, logG syncBuf
	dc1 := ltmdAt(t, filepath.Join(root, "dc1"), &log1)
	dc2 := ltmdAt(t, filepath.Join(root, "dc2"), &log2)
	gs := ltmdAt(t, filepath.Join(root, "gslb"), &logG)
	defer func() { gs.Stop(); dc2.Stop() }()
	defer func() {
		if t.Failed() {
			t.Logf("GSLB's log:\n%s", logG.String())
		}
	}()

	must(t, dc1, "create net self self1 address 127.0.150.1/32 allow-service default", "create ltm virtual vs1 destination 127.0.150.11:80",
		"create gtm datacenter here", "create gtm link uplink1 datacenter here router-addresses add { 127.0.150.254 }")
	must(t, dc2, "create net self self2 address 127.0.150.2/32 allow-service default", "create ltm virtual vs2 destination 127.0.150.21:80")
	must(t, gs,
		"create net self selfg address 127.0.150.3/32 allow-service default",
		"create gtm datacenter dc1",
		"create gtm datacenter dc2",
		"create gtm server ltm1 datacenter dc1 product bigip addresses add { 127.0.150.1 } virtual-server-discovery enabled link-discovery enabled",
		// ltm2's first address has no ltmd: it is reached at its second.
		"create gtm server ltm2 datacenter dc2 product bigip addresses add { 127.0.150.9 127.0.150.2 } virtual-server-discovery enabled-no-delete",
	)

	// Not trusted yet: refused and logged on the GSLB.
	eventually(t, 10*time.Second, "the GSLB logs the untrusted datacenter", func() bool {
		return strings.Contains(logG.String(), "iquery: refused a peer")
	})
	if strings.Contains(must(t, gs, "list gtm server ltm1"), "virtual-servers") {
		t.Fatal("an untrusted datacenter's virtual servers were discovered")
	}

	// run completes its operations and their options.
	for line, want := range map[string]string{"run ": "gtm", "run gtm ": "trust-exchange", "run gtm trust-exchange ": "fingerprint"} {
		found := false
		for _, sg := range gs.Engine.NewSession("admin").Complete(line) {
			found = found || sg.Text == want
		}
		if !found {
			t.Errorf("Complete(%q) does not offer %q", line, want)
		}
	}

	// The exchange: each side confirms the other's fingerprint.
	fpOf := func(r *Running) string {
		m := regexp.MustCompile(`Fingerprint  : ([0-9a-f]{64})`).FindStringSubmatch(must(t, r, "show gtm iquery"))
		if m == nil {
			t.Fatal("show gtm iquery has no fingerprint")
		}
		return m[1]
	}
	gs1 := gs.Engine.NewSession("admin").(*Session)
	defer gs1.Close()
	eventually(t, 10*time.Second, "dc1 listens for iQuery", func() bool {
		_, err := run(t, gs1, "run gtm trust-exchange address 127.0.150.1")
		return strings.Contains(err, "fingerprint "+fpOf(dc1))
	})
	if _, err := run(t, gs1, "run gtm trust-exchange address 127.0.150.1 fingerprint "+strings.Repeat("0", 64)); !strings.Contains(err, "not trusted") {
		t.Fatalf("a wrong fingerprint: %q", err)
	}
	must(t, gs, "run gtm trust-exchange address 127.0.150.1 fingerprint "+fpOf(dc1), "run gtm trust-exchange address 127.0.150.2 fingerprint "+fpOf(dc2))
	eventually(t, 10*time.Second, "the GSLB listens for iQuery", func() bool {
		return strings.Contains(must(t, gs, "show gtm iquery"), "127.0.150.3:4353")
	})
	must(t, dc1, "run gtm trust-exchange address 127.0.150.3 fingerprint "+fpOf(gs))
	must(t, dc2, "run gtm trust-exchange address 127.0.150.3 fingerprint "+fpOf(gs))

	// Discovery adds each datacenter's virtual servers.
	eventually(t, 15*time.Second, "discovery", func() bool {
		l := must(t, gs, "list gtm server")
		return strings.Contains(l, "destination 127.0.150.11:http") && strings.Contains(l, "destination 127.0.150.21:http")
	})
	// Link discovery: dc1's link, in the server's datacenter here.
	eventually(t, 10*time.Second, "link discovery", func() bool {
		s := gs.Engine.NewSession("admin").(*Session)
		defer s.Close()
		out, err := run(t, s, "list gtm link uplink1 one-line")
		return err == "" && strings.Contains(out, "datacenter dc1") && strings.Contains(out, "127.0.150.254")
	})
	must(t, gs,
		"create gtm pool a p members add { ltm1:/Common/vs1 ltm2:/Common/vs2 }",
		"create gtm wideip a www.x.test pools add { p }",
	)
	both := func() bool { a := answers(t, gs, "www.x.test"); return a["127.0.150.11"] && a["127.0.150.21"] }
	eventually(t, 10*time.Second, "answers from both datacenters", both)
	if out := must(t, gs, "show gtm iquery"); !strings.Contains(out, "127.0.150.1:4353") || !strings.Contains(out, "connected") ||
		!regexp.MustCompile(`127\.0\.150\.9:4353,127\.0\.150\.2:4353 +connected +device .*, via 127\.0\.150\.2:4353`).MatchString(out) {
		t.Errorf("show gtm iquery:\n%s", out)
	}
	if out := must(t, gs, "show gtm server ltm2"); !strings.Contains(out, "iQuery       : connected to 127.0.150.2:4353") {
		t.Errorf("show gtm server ltm2:\n%s", out)
	}

	// RTT: each datacenter's ltmd probes the LDNS from its own address, at
	// the GSLB's request, and the GSLB merges the results: dc2's path is
	// the faster, so lowest-round-trip-time answers with dc2.
	ldns, err := gslbtest.NewLDNS(netip.MustParseAddr("127.0.151.5"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ldns.Close()
	ldns.SetDelay(netip.MustParseAddr("127.0.150.1"), 80*time.Millisecond)
	ldns.SetDelay(netip.MustParseAddr("127.0.150.2"), 5*time.Millisecond)
	must(t, gs, fmt.Sprintf("modify gtm global-settings metrics ldns-probe-port %d", ldns.Port()),
		"modify gtm pool a p load-balancing-mode lowest-round-trip-time")
	eventually(t, 10*time.Second, "answers by RTT", func() bool {
		a := answers(t, gs, "www.x.test")
		return !a["127.0.150.11"] && a["127.0.150.21"]
	})
	if out := must(t, gs, "show gtm ldns"); !regexp.MustCompile(`dc1 +[0-9.]+ms`).MatchString(out) || !regexp.MustCompile(`dc2 +[0-9.]+ms`).MatchString(out) {
		t.Errorf("show gtm ldns:\n%s", out)
	}
	for _, l := range []*syncBuf{&log1, &log2} {
		if !strings.Contains(l.String(), "iquery: probed an LDNS for a GSLB") {
			t.Errorf("a datacenter did not probe for the GSLB")
		}
	}
	must(t, gs, "modify gtm pool a p load-balancing-mode round-robin")

	// dc1's ltmd goes away: its virtual server leaves the answers.
	if err := dc1.Stop(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "dc1's virtual server out of the answers", func() bool {
		a := answers(t, gs, "www.x.test")
		return !a["127.0.150.11"] && a["127.0.150.21"]
	})
	if out := must(t, gs, "show gtm server ltm1"); !strings.Contains(out, "The parent server is down") || !strings.Contains(out, "iQuery       : not connected (") {
		t.Errorf("show gtm server ltm1 while dc1 is down:\n%s", out)
	}
	// Back on its state directory (identity and trust kept): it returns.
	dc1 = ltmdAt(t, filepath.Join(root, "dc1"), &log1)
	defer dc1.Stop()
	eventually(t, 15*time.Second, "dc1's virtual server back in the answers", both)

	// enabled deletes what the LTM no longer has; enabled-no-delete keeps it.
	must(t, dc1, "delete ltm virtual vs1")
	must(t, dc2, "delete ltm virtual vs2")
	eventually(t, 10*time.Second, "vs1 removed by discovery", func() bool {
		return !strings.Contains(must(t, gs, "list gtm server ltm1"), "/Common/vs1")
	})
	if !strings.Contains(must(t, gs, "list gtm server ltm2"), "/Common/vs2") {
		t.Error("enabled-no-delete removed a virtual server")
	}
	// A trusted device revoked is refused, and the refusal logged.
	must(t, dc2, "delete gtm trusted-device "+fpOf(gs))
	eventually(t, 15*time.Second, "dc2 refuses the revoked GSLB", func() bool {
		return strings.Contains(log2.String(), "iquery: refused a peer")
	})
}
