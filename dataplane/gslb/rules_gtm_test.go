package gslb

import (
	"net/netip"
	"strings"
	"testing"
	"time"

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
		// Quality of service over vs_score (bj 100 and 50, gz 25; weight
		// 10) and topology (the west LDNS's record gives gz's vs_ct 100;
		// weight 0 unless a rule sets it): bj's vs_cnc wins, 10 to 2.5.
		{name: "qos_score", rule: `when LB_SELECTED {
  log local0. "<[qos_score]> [qos_score -aslong] [qos_score -integer] <[qos_score pool app_pool member 127.0.82.11 80]> <[qos_score pool a app_pool member 127.0.82.12:80 topology 30]>"
}`, setup: qosSetup, src: west, want: bjCNC, log: "<10 0> 655360 10 <2 500000> <32 500000>"},
		{name: "qos_score of a member before load balancing", rule: `when DNS_REQUEST { log local0. "<[qos_score pool app_pool member 127.0.81.12 80]>" }`,
			setup: qosSetup, src: west, want: bjCNC, log: "<5 0>"},
		{name: "qos_score before a member is picked", rule: `when DNS_REQUEST { qos_score }`, setup: qosSetup, src: west},
		{name: "qos_score of no member", rule: `when LB_SELECTED { qos_score pool app_pool member 192.0.2.1 80 }`, setup: qosSetup, src: west},
		// Another method picked: factors openltm has not gathered for
		// the members (packet rate, throughput, capacity) count 0.
		{name: "qos_score of another method", rule: `when LB_SELECTED { log local0. "<[qos_score]>" }`,
			setup: func(c *Config) { c.Pools["/Common/app_pool"].QoS = &QoSWeights{PacketRate: 1, Kbps: 3, VSCapacity: 2} },
			src:   west, want: bjCNC, log: "<0 0>"},
		{name: "qos_weight set flips the member", rule: `when DNS_REQUEST { qos_weight set topology 30 }`, setup: qosSetup, src: west, want: gzCT},
		{name: "qos_weight set in the pool", rule: `when DNS_REQUEST { qos_weight pool app_pool set topo 30 }`, setup: qosSetup, src: west, want: gzCT},
		{name: "qos_weight set in another pool", rule: `when DNS_REQUEST { qos_weight pool ct_pool set topo 30 }`, setup: qosSetup, src: west, want: bjCNC},
		{name: "qos_weight get", rule: `when DNS_REQUEST { qos_weight set topology 30; log local0. "<[qos_weight get vs_score topology rtt]> <[qos_weight pool ct_pool get topo]>" }`,
			setup: qosSetup, src: west, want: gzCT, log: "<10 30 0> <30>"},
		{name: "qos_weight reset", rule: `when DNS_REQUEST { qos_weight set topology 30; log local0. "<[qos_weight reset topology]> <[qos_weight get topology vs_score]>" }`,
			setup: qosSetup, src: west, want: bjCNC, log: "<0> <0 10>"},
		{name: "qos_weight reset in one pool", rule: `when DNS_REQUEST { qos_weight set topology 30; qos_weight pool app_pool reset topology; log local0. "<[qos_weight get topology]> <[qos_weight pool ct_pool get topology]>" }`,
			setup: qosSetup, src: west, want: bjCNC, log: "<0> <30>"},
		{name: "qos_weight set in LB_SELECTED then qos_score", rule: `when LB_SELECTED { qos_weight set vs_score 20; log local0. "<[qos_score]> <[qos_weight get vs_score]>" }`,
			setup: qosSetup, src: west, want: bjCNC, log: "<20 0> <20>"},
		{name: "qos_weight set in LB_SELECTED then pool", rule: `when LB_SELECTED { if { [LB::server addr] ne "127.0.82.12" } { qos_weight set topology 30; pool app_pool } }`,
			setup: qosSetup, src: west, want: gzCT},
		{name: "qos_weight of no pool", rule: `when DNS_REQUEST { qos_weight pool nosuch get rtt }`, setup: qosSetup, src: west},
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

// qosSetup makes app_pool quality-of-service over vs_score and
// topology: bj's virtual servers score 100 and 50, gz's 25, weighed 10;
// the west LDNSes' topology record gives gz's vs_ct 100, weighed 0.
func qosSetup(c *Config) {
	p := c.Pools["/Common/app_pool"]
	p.Mode, p.QoS = QualityOfService, &QoSWeights{VSScore: 10}
	for i, v := range c.Servers["/Common/bj-ltm"].VirtualServers {
		v.Score = 50 * (2 - i)
	}
	for _, v := range c.Servers["/Common/gz-ltm"].VirtualServers {
		v.Score = 25
	}
	c.Topology = []TopologyRecord{{LDNS: Match{Kind: MatchSubnet, Prefix: netip.MustParsePrefix("127.150.2.0/24")},
		Server: Match{Kind: MatchSubnet, Prefix: netip.PrefixFrom(gzCT, 32)}, Score: 100}}
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

	// A listener's rule reads a named pool's weights, but sets none and
	// scores nothing: those belong to a wide IP's resolution.
	for body, want := range map[string]string{
		`log local0. "<[qos_weight pool app_pool get rtt link]>"`: "",
		`qos_weight get rtt`:                            "qos_weight: no pool named: valid without one in a wide IP's rules only",
		`qos_weight set rtt 5`:                          "qos_weight: weights are set in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED",
		`qos_weight pool app_pool reset rtt`:            "qos_weight: weights are set in a wide IP's",
		`qos_score pool app_pool member 127.0.81.11 80`: "qos_score: valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED",
	} {
		r := compileRule(t, "/Common/l", "when DNS_REQUEST { "+body+" }")
		rc := &ruleConn{p: mustCompile(t, ruleConfig(netip.AddrPort{}, nil, []*rules.Rule{r}, &logs)), q: new(dns.Msg)}
		err := rc.state(rules.NewProgram(&rules.Env{Log: logs.add}, r)).Run(rules.DNSRequest)
		rc.release()
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			if got := logs.get(); !strings.HasSuffix(got[len(got)-1], "<50 30>") {
				t.Errorf("%s: logs %q", body, got)
			}
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
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

// Quality of service allocates nothing per pick, with or without the
// weights a rule's qos_weight set, and weighs with them.
func TestQoSWeightsAllocs(t *testing.T) {
	cfg := testConfig(netip.AddrPort{})
	qosSetup(cfg)
	s := newServer(t, cfg, Options{})
	p := s.plan.Load()
	pl := p.pools["/Common/app_pool"]
	west := netip.MustParseAddr("127.150.2.5")
	rq := &request{plan: p, ldns: west, client: west, topoAddr: west}
	if i := s.pick(rq, pl, QualityOfService, pl.members); pl.members[i].vs.addr != bjCNC {
		t.Fatalf("picked %v, want %v", pl.members[i].vs.addr, bjCNC)
	}
	if n := testing.AllocsPerRun(100, func() { s.pick(rq, pl, QualityOfService, pl.members) }); n != 0 {
		t.Errorf("%v allocations per pick", n)
	}
	rq.qosw = []qosOverride{{pool: nil, f: rules.QoSTopology, w: 30}}
	if i := s.pick(rq, pl, QualityOfService, pl.members); pl.members[i].vs.addr != gzCT {
		t.Fatalf("picked %v with topology weighed 30, want %v", pl.members[i].vs.addr, gzCT)
	}
	if n := testing.AllocsPerRun(100, func() { s.pick(rq, pl, QualityOfService, pl.members) }); n != 0 {
		t.Errorf("%v allocations per pick with a rule's weights", n)
	}
}

// TestGTMRulePersist: the GTM form of persist reads whether the query
// uses the wide IP's LDNS persistence (1 or 0) and turns it on or off
// for the query, returning what it was: a disabled query neither reads
// nor records a persistence record; an enabled one does on a wide IP
// without persistence. Other forms, and the command past load balancing
// (DNS_RESPONSE), are errors (the query is dropped).
func TestGTMRulePersist(t *testing.T) {
	cases := []struct {
		name    string
		rule    string
		persist bool // the wide IP's persistence setting
		src     netip.Addr
		records int    // persistence records after the query; -1: the query is dropped
		log     string // the rule's log line ("": not checked)
	}{
		{"read enabled", `when DNS_REQUEST { log local0. "[persist]" }`, true, ldnsCNC, 1, "1"},
		{"read disabled", `when DNS_REQUEST { log local0. "[persist]" }`, false, ldnsCNC, 0, "0"},
		{"disable", `when DNS_REQUEST { log local0. "[persist disable] [persist]" }`, true, ldnsCNC, 0, "1 0"},
		{"enable", `when DNS_REQUEST { log local0. "[persist enable] [persist]" }`, false, ldnsCNC, 1, "0 1"},
		{"disable one LDNS", `when DNS_REQUEST { if { [IP::client_addr] eq "127.0.85.1" } { persist disable } }`, true, ldnsCNC, 0, ""},
		{"disable another LDNS", `when DNS_REQUEST { if { [IP::client_addr] eq "127.0.85.1" } { persist disable } }`, true, ldnsCT, 1, ""},
		{"enable in LB_SELECTED before a pool", `when LB_SELECTED { persist enable; pool app_pool }`, false, ldnsCNC, 1, ""},
		{"read in DNS_RESPONSE", "when DNS_REQUEST { persist disable }\nwhen DNS_RESPONSE { log local0. \"[persist]\" }", true, ldnsCNC, -1, ""},
		{"set in DNS_RESPONSE", `when DNS_RESPONSE { persist disable }`, true, ldnsCNC, -1, ""},
		{"LTM form", `when DNS_REQUEST { persist source_addr }`, true, ldnsCNC, -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs ruleLog
			r := compileRule(t, "/Common/r", c.rule)
			cfg := ruleConfig(netip.AddrPort{}, []*rules.Rule{r}, nil, &logs)
			w := cfg.WideIPs["/Common/www.example.com"]
			w.Persistence, w.PersistTTL = c.persist, time.Minute
			s := newServer(t, cfg, Options{})
			m := ask(t, s, c.src, wideName, dns.TypeA)
			if c.records < 0 {
				if m != nil {
					t.Fatalf("answered %v, want the query dropped by the rule's error", m)
				}
				return
			}
			if m == nil || len(m.Answer) == 0 {
				t.Fatalf("answer %v (logs %q)", m, logs.get())
			}
			if n := len(s.PersistRecords()); n != c.records {
				t.Errorf("%d persistence records, want %d", n, c.records)
			}
			if got := strings.Join(logs.get(), "\n"); c.log != "" && !strings.HasSuffix(got, c.log) {
				t.Errorf("log %q, want %q", got, c.log)
			}
		})
	}
}

// TestGTMRuleLBServerInfo: LB::server priority, ratio and weight read
// the member load balancing picked: its priority from the query's
// member_priority (0 when none), its ratio in the pool; LB_FAILED has
// no member, and reads nothing.
func TestGTMRuleLBServerInfo(t *testing.T) {
	for _, c := range []struct {
		name, rule, log string
		fail            bool // every member down: LB_FAILED
	}{
		{"no priority", `when LB_SELECTED { log local0. "<[LB::server priority]> <[LB::server ratio]> <[LB::server weight]>" }`, "<0> <1> <1>", false},
		{"member_priority", "when DNS_REQUEST { member_priority app_pool member 127.0.82.12 80 10 }\nwhen LB_SELECTED { log local0. \"<[LB::server addr]> <[LB::server priority]>\" }", "<127.0.82.12> <10>", false},
		{"LB_FAILED", `when LB_FAILED { log local0. "<[LB::server]> <[LB::server priority]>" }`, "<> <>", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs ruleLog
			r := compileRule(t, "/Common/r", c.rule)
			cfg := ruleConfig(netip.AddrPort{}, []*rules.Rule{r}, nil, &logs)
			cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability
			if c.fail {
				for _, sv := range cfg.Servers {
					for _, v := range sv.VirtualServers {
						v.Disabled = true
					}
				}
			}
			s := newServer(t, cfg, Options{})
			ask(t, s, ldnsCT, wideName, dns.TypeA)
			if got := strings.Join(logs.get(), "\n"); !strings.HasSuffix(got, c.log) {
				t.Errorf("log %q, want %q", got, c.log)
			}
		})
	}
}
