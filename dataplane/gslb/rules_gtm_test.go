package gslb

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules"
)

// The GTM-only commands in a wide IP's rules, against the test
// configuration: what they read of the resolution, and how ttl,
// member_priority and matchregion change the answer.
func TestGTMRuleCommands(t *testing.T) {
	pfx := netip.MustParsePrefix
	east := netip.MustParseAddr("127.150.1.5")
	west := netip.MustParseAddr("127.150.2.5")
	cases := []struct {
		name  string
		rule  string
		setup func(*Config)
		src   netip.Addr
		// want is the answer's first address (invalid: the query is
		// dropped), ttl its TTL (0: not checked), log the rule's log
		// line (empty: none).
		want netip.Addr
		ttl  uint32
		log  string
	}{
		{name: "getters", rule: `when DNS_REQUEST {
  log local0. "[whoami] [whereami] [wideip name] [pools] [pools -list] [nodes_up app_pool] [nodes_up 127.0.81.11 80] [nodes_up 127.0.82.12:80] [members app_pool] [ttl]"
}`, src: west, want: bjCNC, ttl: 30,
			log: "/Common/bj-ltm /Common/dc-bj /Common/www.example.com 1 /Common/app_pool 4 1 1 4 30"},
		{name: "nodes_up sees a disabled member", rule: `when DNS_REQUEST { log local0. "[nodes_up app_pool] [nodes_up 127.0.81.11 80]" }`,
			setup: func(c *Config) { c.Servers["/Common/bj-ltm"].VirtualServers[0].Disabled = true },
			src:   west, want: bjCT, log: "3 0"},
		{name: "ttl in DNS_REQUEST", rule: `when DNS_REQUEST { ttl 7 }`, src: west, want: bjCNC, ttl: 7},
		{name: "ttl in LB_SELECTED", rule: `when LB_SELECTED { log local0. "[ttl]"; ttl 9 }`, src: west, want: bjCNC, ttl: 9, log: "30"},
		{name: "ttl of a rule's host", rule: `when DNS_REQUEST { ttl 5; host 192.0.2.5 }`, src: west, want: netip.MustParseAddr("192.0.2.5"), ttl: 5},
		{name: "member_priority", rule: `when DNS_REQUEST { member_priority app_pool member 127.0.82.12 80 10; member_priority app_pool member 127.0.82.11:80 5 }`,
			src: west, want: gzCT},
		{name: "member_priority after load balancing", rule: `when LB_SELECTED { member_priority app_pool member 127.0.82.12 80 10 }`, src: west},
		{name: "member_priority of no member", rule: `when DNS_REQUEST { member_priority app_pool member 192.0.2.1 80 10 }`, src: west},
		{name: "matchregion ldns", rule: `when DNS_REQUEST { if { [matchregion ldns east] } { host 192.0.2.1 } }`, src: east, want: netip.MustParseAddr("192.0.2.1")},
		{name: "matchregion elsewhere", rule: `when DNS_REQUEST { if { [matchregion ldns east] } { host 192.0.2.1 } }`, src: west, want: bjCNC},
		{name: "matchregion address", rule: `when DNS_REQUEST { log local0. "[matchregion 127.150.1.9 east] [matchregion 127.150.9.9 /Common/east]" }`, src: west, want: bjCNC, log: "1 0"},
		{name: "matchregion no region", rule: `when DNS_REQUEST { matchregion ldns nosuch }`, src: west},
		{name: "qos", rule: `when LB_SELECTED { log local0. "[qos_score] [qos_weight app_pool vs-score] [qos_weight app_pool]" }`,
			setup: func(c *Config) {
				p := c.Pools["/Common/app_pool"]
				p.Mode, p.QoS = QualityOfService, &QoSWeights{VSScore: 10}
				for i, v := range c.Servers["/Common/bj-ltm"].VirtualServers {
					v.Score = 50 * (2 - i)
				}
				for _, v := range c.Servers["/Common/gz-ltm"].VirtualServers {
					v.Score = 25
				}
			},
			src: west, want: bjCNC,
			log: "10.0 10 rtt 0 hit-ratio 0 hops 0 packet-rate 0 kilobytes-second 0 vs-capacity 0 vs-score 10 topology 0 lcs 0"},
		{name: "qos_score of another method", rule: `when LB_SELECTED { qos_score }`, src: west},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs ruleLog
			r := compileRule(t, "/Common/r", c.rule)
			cfg := ruleConfig(netip.AddrPort{}, []*rules.Rule{r}, nil, &logs)
			cfg.Self = "/Common/bj-ltm"
			cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability
			cfg.Regions = map[string]*Region{"/Common/east": {Name: "/Common/east", Members: []Match{{Kind: MatchSubnet, Prefix: pfx("127.150.1.0/24")}}}}
			if c.setup != nil {
				c.setup(cfg)
			}
			s := newServer(t, cfg, Options{})
			m := ask(t, s, c.src, wideName, dns.TypeA)
			if !c.want.IsValid() {
				if m != nil {
					t.Fatalf("answered %v, want the query dropped by the rule's error", m)
				}
				return
			}
			if m == nil || len(m.Answer) == 0 {
				t.Fatalf("answer %v, want %v (logs %q)", m, c.want, logs.get())
			}
			a, ok := m.Answer[0].(*dns.A)
			if !ok || a.A.String() != c.want.String() {
				t.Errorf("answer %v, want %v", m.Answer, c.want)
			}
			if c.ttl != 0 && m.Answer[0].Header().Ttl != c.ttl {
				t.Errorf("TTL %d, want %d", m.Answer[0].Header().Ttl, c.ttl)
			}
			got := strings.Join(logs.get(), "\n")
			if c.log != "" && !strings.HasSuffix(got, c.log) {
				t.Errorf("log %q, want %q", got, c.log)
			}
		})
	}
}

// whoami and whereami name the gtm server whose address a listener
// serves on when no gtm server holds a self IP; a listener's rules read
// them too, but not what only a wide IP has.
func TestGTMRuleSelf(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: netip.MustParseAddrPort("127.0.82.1:53")}}
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.me == nil || p.me.name != "/Common/gz-ltm" || p.me.dc.name != "/Common/dc-gz" {
		t.Errorf("me: %+v", p.me)
	}
	cfg.Self = "/Common/bj-ltm"
	if p, _ = compile(cfg); p.me == nil || p.me.name != "/Common/bj-ltm" {
		t.Errorf("me with a self: %+v", p.me)
	}
	cfg.Self, cfg.Listeners = "", nil
	if p, _ = compile(cfg); p.me != nil {
		t.Errorf("me without a listener: %+v", p.me)
	}

	var logs ruleLog
	r := compileRule(t, "/Common/l", `when DNS_REQUEST { log local0. "<[whoami]> <[whereami]>"; wideip name }`)
	rc := &ruleConn{p: mustCompile(t, ruleConfig(netip.AddrPort{}, nil, []*rules.Rule{r}, &logs)), q: new(dns.Msg)}
	prog := rules.NewProgram(&rules.Env{Log: logs.add}, r)
	if err := rc.state(prog).Run(rules.DNSRequest); err == nil || !strings.Contains(err.Error(), "wideip: valid in a wide IP's rules only") {
		t.Errorf("wideip name in a listener's rule: %v", err)
	}
	rc.release()
	if got := logs.get(); len(got) == 0 || !strings.HasSuffix(got[0], "<> <>") {
		t.Errorf("logs %q", got)
	}
}

func mustCompile(t *testing.T, cfg *Config) *plan {
	t.Helper()
	p, err := compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
