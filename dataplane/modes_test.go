package dataplane

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/rules"
)

func countAnswers(t *testing.T, vs string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := 0; i < n; i++ {
		got[once(t, vs)]++
	}
	return got
}

func TestRatioAndPriorityGroups(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.20.2:9000", "S1")
	startServer(t, "127.20.20.3:9000", "S2")
	p, _ := newPlane(t)
	vs := "127.20.20.1:8000"

	cfg := basic(vs, "127.20.20.2:9000", "127.20.20.3:9000")
	cfg.Pools["/Common/pool"].LBMode = RatioMember
	cfg.Pools["/Common/pool"].Members[0].Ratio = 3
	mustApply(t, p, cfg)
	if got := countAnswers(t, vs, 8); got["S1 Response"] != 6 || got["S2 Response"] != 2 {
		t.Fatalf("ratio 3:1 over 8 connections: %v", got)
	}

	pg := func(state AdminState) *Config {
		cfg := basic(vs, "127.20.20.2:9000", "127.20.20.3:9000")
		cfg.Pools["/Common/pool"].MinActiveMembers = 1
		cfg.Pools["/Common/pool"].Members[0].PriorityGroup = 2
		cfg.Pools["/Common/pool"].Members[0].State = state
		cfg.Pools["/Common/pool"].Members[1].PriorityGroup = 1
		return cfg
	}
	mustApply(t, p, pg(StateUserUp))
	if got := countAnswers(t, vs, 4); got["S1 Response"] != 4 {
		t.Fatalf("priority group 2 should take everything: %v", got)
	}
	mustApply(t, p, pg(StateUserDown))
	if got := countAnswers(t, vs, 4); got["S2 Response"] != 4 {
		t.Fatalf("lower group should take over: %v", got)
	}
}

func TestConnectionLimitsAndReselect(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.21.2:9000", "S1")
	startServer(t, "127.20.21.3:9000", "S2")
	p, _ := newPlane(t)
	vs := "127.20.21.1:8000"
	cfg := basic(vs, "127.20.21.2:9000", "127.20.21.3:9000")
	cfg.Pools["/Common/pool"].Members[0].ConnectionLimit = 1
	mustApply(t, p, cfg)
	var held *client
	for i := 0; i < 2 && held == nil; i++ {
		if c := dialVS(t, vs); c.mustAsk("x") == "S1 Response" {
			held = c
		}
	}
	if held == nil {
		t.Fatal("no flow reached S1")
	}
	if got := countAnswers(t, vs, 4); got["S2 Response"] != 4 {
		t.Fatalf("member at its limit still picked: %v", got)
	}
	if m := memberStat(t, p, "/Common/pool", "/Common/127.20.21.2:9000"); m.Status.Availability != Unavailable {
		t.Fatalf("member at its limit: %+v", m.Status)
	}

	// A member whose port is closed: with reselect-tries every client is
	// served by the other member.
	cfg = basic(vs, "127.20.21.4:9000", "127.20.21.3:9000")
	cfg.Pools["/Common/pool"].ReselectTries = 1
	mustApply(t, p, cfg)
	if got := countAnswers(t, vs, 4); got["S2 Response"] != 4 {
		t.Fatalf("reselect: %v", got)
	}
	cfg = basic(vs, "127.20.21.4:9000", "127.20.21.3:9000")
	mustApply(t, p, cfg)
	failures := 0
	for i := 0; i < 4; i++ {
		if err := tryAsk("", vs); err != nil {
			failures++
		}
	}
	if failures != 2 {
		t.Fatalf("without reselect-tries %d of 4 connections failed, want 2", failures)
	}
}

// TestServiceDownAction: reset tears down a down member's flows; none lets
// them run.
func TestServiceDownAction(t *testing.T) {
	t.Parallel()
	for i, act := range []ServiceDownAction{DownNone, DownReset} {
		addr := "127.20.22." + string(rune('2'+i)) + ":9000"
		s := startServer(t, addr, "S1")
		p, _ := newPlane(t)
		vs := "127.20.22." + string(rune('5'+i)) + ":8000"
		cfg := basic(vs, addr)
		tcpMonitor(cfg)
		cfg.Pools["/Common/pool"].ServiceDownAction = act
		mustApply(t, p, cfg)
		c := dialVS(t, vs)
		c.mustAsk("hi")
		s.mu.Lock()
		s.ln.Close() // the service stops listening; the open connection stays
		s.mu.Unlock()
		eventually(t, "member down", func() bool {
			return memberStat(t, p, "/Common/pool", "/Common/"+strings.Split(addr, ":")[0]+":9000").MonitorStatus == "down"
		})
		_, err := c.ask("after")
		if act == DownNone && err != nil {
			t.Fatalf("none: flow cut: %v", err)
		}
		if act == DownReset && err == nil {
			t.Fatalf("reset: flow survived")
		}
	}
}

func TestNodeMonitorAndMonitorRules(t *testing.T) {
	t.Parallel()
	s := startServer(t, "127.20.23.2:9000", "S1")
	startServer(t, "127.20.23.3:9000", "S2")
	p, logs := newPlane(t)
	vs := "127.20.23.1:8000"
	mk := func() *Config {
		cfg := basic(vs, "127.20.23.2:9000", "127.20.23.3:9000")
		cfg.Monitors["/Common/tcp9000"] = &Monitor{Name: "/Common/tcp9000", Type: MonitorTCP,
			Interval: 20 * time.Millisecond, Timeout: 80 * time.Millisecond, Destination: netip.AddrPortFrom(netip.Addr{}, 9000)}
		cfg.Monitors["/Common/http_bad"] = &Monitor{Name: "/Common/http_bad", Type: MonitorHTTP, Send: "GET /\r\n",
			Recv: "never matches", Interval: 20 * time.Millisecond, Timeout: 80 * time.Millisecond}
		cfg.Monitors["/Common/http_ok"] = &Monitor{Name: "/Common/http_ok", Type: MonitorHTTP, Send: "GET /\r\n",
			Recv: "S. Response", Interval: 20 * time.Millisecond, Timeout: 80 * time.Millisecond}
		cfg.DefaultNodeMonitor = MonitorRule{Names: []string{"/Common/tcp9000"}}
		cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/http_bad", "/Common/http_ok"}, MinUp: 1}
		cfg.Pools["/Common/pool"].Members[1].Monitor = MonitorRule{Names: []string{"/Common/http_ok"}}
		return cfg
	}
	mustApply(t, p, mk())
	eventually(t, "members up", func() bool {
		ps, _ := p.Pool("/Common/pool")
		return ps.AvailableMembers == 2
	})
	m1 := memberStat(t, p, "/Common/pool", "/Common/127.20.23.2:9000")
	m2 := memberStat(t, p, "/Common/pool", "/Common/127.20.23.3:9000")
	if m1.Monitor != "min 1 of { /Common/http_bad /Common/http_ok } (pool monitor)" || m2.Monitor != "/Common/http_ok" {
		t.Fatalf("monitor rules shown as %q and %q", m1.Monitor, m2.Monitor)
	}
	// The members' own monitors can answer before the node's first probe
	// does: wait for the node's verdict too.
	eventually(t, "node up", func() bool {
		n, _ := p.Node("/Common/127.20.23.2")
		return n.Status.Availability == Available
	})
	if n, _ := p.Node("/Common/127.20.23.2"); n.Monitor != "/Common/tcp9000 (default node monitor)" {
		t.Fatalf("node: %+v", n)
	}
	s.kill()
	eventually(t, "node down", func() bool {
		n, _ := p.Node("/Common/127.20.23.2")
		return n.Status.Availability == Offline
	})
	eventually(t, "member address-down", func() bool {
		m := memberStat(t, p, "/Common/pool", "/Common/127.20.23.2:9000")
		return m.Status.Availability == Offline && m.Status.Reason == reasonParentDown
	})
	if !strings.Contains(logs.String(), "Node /Common/127.20.23.2 address 127.20.23.2 monitor status down.") {
		t.Fatalf("no node log line:\n%s", logs)
	}
	if got := countAnswers(t, vs, 3); got["S2 Response"] != 3 {
		t.Fatalf("traffic to a member of a down node: %v", got)
	}
}

func TestGatewayICMPNodeMonitor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("gateway-icmp needs root")
	}
	startServer(t, "127.20.24.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.20.24.1:8000", "127.20.24.2:9000")
	cfg.Monitors["/Common/gateway_icmp"] = &Monitor{Name: "/Common/gateway_icmp", Type: MonitorGatewayICMP,
		Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/gateway_icmp"}}
	mustApply(t, p, cfg)
	eventually(t, "member up by ICMP", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/127.20.24.2:9000").MonitorStatus == "up"
	})
}

// fakeRules stands in for the rules engine.
type fakeRules struct {
	pool   string
	reject netip.Addr
	fail   bool
}

func (f *fakeRules) Handles(ev Event) bool { return ev == EventClientAccepted }

func (f *fakeRules) Run(ev Event, c RuleConn) error {
	if f.fail {
		return errors.New(`invalid command name "bogus"`)
	}
	if c.Addr(rules.EndClient).Addr() == f.reject {
		return c.Decide(rules.Decision{Kind: rules.DecideReject})
	}
	return c.Decide(rules.Decision{Kind: rules.DecidePool, Pool: f.pool})
}

func TestRulesHook(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.25.2:9000", "S1")
	startServer(t, "127.20.25.3:9000", "OTHER")
	p, logs := newPlane(t)
	mk := func(r Rules) *Config {
		cfg := basic("127.20.25.1:8000", "127.20.25.2:9000")
		cfg.Pools["/Common/other"] = &Pool{Name: "/Common/other", Members: []Member{{Node: "/Common/127.20.25.3", Addr: ap("127.20.25.3:9000")}}}
		cfg.Virtuals["/Common/vs"].Rules = r
		return cfg
	}
	mustApply(t, p, mk(&fakeRules{pool: "/Common/other", reject: netip.MustParseAddr("127.20.25.66")}))
	if a := once(t, "127.20.25.1:8000"); a != "OTHER Response" {
		t.Fatalf("rule's pool not used: %q", a)
	}
	if err := tryAsk("127.20.25.66", "127.20.25.1:8000"); err == nil {
		t.Fatalf("rejected client was served")
	}
	mustApply(t, p, mk(&fakeRules{fail: true}))
	if err := tryAsk("", "127.20.25.1:8000"); err == nil {
		t.Fatalf("a failing rule let the flow through")
	}
	if !strings.Contains(logs.String(), "TCL error: /Common/vs <CLIENT_ACCEPTED>") {
		t.Fatalf("rule error not logged:\n%s", logs)
	}
}

func TestCheckErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*Config)
		want  string
	}{
		{"ok", func(*Config) {}, ""},
		{"missing pool", func(c *Config) { c.Virtuals["/Common/vs"].Pool = "/Common/nope" }, "pool /Common/nope does not exist"},
		{"port any mptcp", func(c *Config) {
			v := c.Virtuals["/Common/vs"]
			v.Destination, v.ClientTCP = ap("127.0.0.1:0"), &TCPSide{MPTCP: true}
		}, "Multipath TCP listener"},
		{"bad mode", func(c *Config) { c.Pools["/Common/pool"].LBMode = "observed-node" }, "load-balancing-mode observed-node is not supported"},
		{"missing monitor", func(c *Config) { c.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/x"}} }, "monitor /Common/x does not exist"},
		{"bad regex", func(c *Config) {
			c.Monitors["/Common/h"] = &Monitor{Name: "/Common/h", Type: MonitorHTTP, Interval: 1, Timeout: 1, Recv: "("}
		}, "not a valid regular expression"},
		{"same destination twice", func(c *Config) {
			c.Virtuals["/Common/b"] = &Virtual{Name: "/Common/b", Destination: ap("127.0.0.1:80"), Enabled: true}
		}, "already used by virtual"},
		{"snatpool", func(c *Config) { c.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATPool, Pool: "/Common/sp"} }, "snatpool /Common/sp does not exist"},
	} {
		cfg := basic("127.0.0.1:80", "127.0.0.2:80")
		tc.tweak(cfg)
		err := Check(cfg)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}
