package gslb

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/rules"
)

// typedConfig has a name with an A and an AAAA wide IP, a CNAME wide IP,
// and MX, SRV and NAPTR wide IPs whose members are names.
func typedConfig() *Config {
	a := netip.MustParseAddr
	cfg := &Config{
		Datacenters: map[string]*Datacenter{"/Common/dc": {Name: "/Common/dc"}},
		Servers: map[string]*Host{"/Common/s": {Name: "/Common/s", Datacenter: "/Common/dc", VirtualServers: []*VirtualServer{
			{Name: "v4", Destination: netip.AddrPortFrom(a("127.0.90.1"), 80)},
			{Name: "v6", Destination: netip.AddrPortFrom(a("::1"), 80)},
			{Name: "v6b", Destination: netip.AddrPortFrom(a("fd00::2"), 80), Disabled: true},
		}}},
		Pools: map[string]*Pool{
			"/Common/p":          {Name: "/Common/p", Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v4"}, {Server: "/Common/s", VirtualServer: "v6"}}},
			"aaaa /Common/p":     {Name: "/Common/p", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6"}, {Server: "/Common/s", VirtualServer: "v4"}}},
			"aaaa /Common/down":  {Name: "/Common/down", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6b"}}},
			"cname /Common/c":    {Name: "/Common/c", Type: TypeCNAME, Members: []PoolMember{{Target: "www.example.org", StaticTarget: true}}},
			"cname /Common/cdyn": {Name: "/Common/cdyn", Type: TypeCNAME, Members: []PoolMember{{Target: "gone.ex.test"}, {Target: "www.ex.test", Order: 1}}, Mode: GlobalAvailability},
			"mx /Common/m":       {Name: "/Common/m", Type: TypeMX, MaxAnswers: 2, Members: []PoolMember{{Target: "mx1.ex.test", Priority: 10}, {Target: "mx2.ex.test", Priority: 20, Order: 1}}, Mode: GlobalAvailability},
			"srv /Common/s":      {Name: "/Common/s", Type: TypeSRV, Members: []PoolMember{{Target: "sip.ex.test", Priority: 1, Weight: 5, Port: 5060}}},
			"naptr /Common/n":    {Name: "/Common/n", Type: TypeNAPTR, Members: []PoolMember{{Target: "_sip._udp.ex.test", Order: 3, Preference: 7, Flags: "s", Service: "SIP+D2U"}}},
		},
		WideIPs: map[string]*WideIP{
			"/Common/www.ex.test":           {Name: "/Common/www.ex.test", Pools: []WideIPPool{{Pool: "/Common/p"}}},
			"aaaa /Common/www.ex.test":      {Name: "/Common/www.ex.test", Type: TypeAAAA, Pools: []WideIPPool{{Pool: "aaaa /Common/p"}}},
			"aaaa /Common/gone.ex.test":     {Name: "/Common/gone.ex.test", Type: TypeAAAA, Pools: []WideIPPool{{Pool: "aaaa /Common/down"}}},
			"cname /Common/alias.ex.test":   {Name: "/Common/alias.ex.test", Type: TypeCNAME, Pools: []WideIPPool{{Pool: "cname /Common/c"}}},
			"cname /Common/dyn.ex.test":     {Name: "/Common/dyn.ex.test", Type: TypeCNAME, Pools: []WideIPPool{{Pool: "cname /Common/cdyn"}}},
			"mx /Common/ex.test":            {Name: "/Common/ex.test", Type: TypeMX, Pools: []WideIPPool{{Pool: "mx /Common/m"}}},
			"srv /Common/_sip._udp.ex.test": {Name: "/Common/_sip._udp.ex.test", Type: TypeSRV, Pools: []WideIPPool{{Pool: "srv /Common/s"}}},
			"naptr /Common/ex.test":         {Name: "/Common/ex.test", Type: TypeNAPTR, Pools: []WideIPPool{{Pool: "naptr /Common/n"}}},
		},
	}
	return cfg
}

func TestTypedWideIPs(t *testing.T) {
	s := newServer(t, typedConfig(), Options{})
	src := netip.MustParseAddr("127.0.91.1")
	cases := []struct {
		name  string
		qtype uint16
		want  string // the answer section's records' data, joined by |
	}{
		{"www.ex.test.", dns.TypeA, "127.0.90.1"},         // the IPv6 member is left out of A
		{"www.ex.test.", dns.TypeAAAA, "::1"},             // and the IPv4 one out of AAAA
		{"www.ex.test.", dns.TypeMX, ""},                  // the name exists: NODATA
		{"alias.ex.test.", dns.TypeA, "www.example.org."}, // a CNAME answers every type
		{"alias.ex.test.", dns.TypeCNAME, "www.example.org."},
		{"dyn.ex.test.", dns.TypeA, "www.ex.test."}, // gone.ex.test's wide IP is down: the next member
		{"ex.test.", dns.TypeMX, "10 mx1.ex.test.|20 mx2.ex.test."},
		{"_sip._udp.ex.test.", dns.TypeSRV, "1 5 5060 sip.ex.test."},
		{"ex.test.", dns.TypeNAPTR, `3 7 "s" "SIP+D2U" "" _sip._udp.ex.test.`},
	}
	for _, c := range cases {
		m := ask(t, s, src, c.name, c.qtype)
		if m == nil {
			t.Fatalf("%s %s: no answer", c.name, dns.TypeToString[c.qtype])
		}
		var got []string
		for _, rr := range m.Answer {
			f := strings.SplitN(rr.String(), "\t", 5)
			got = append(got, f[len(f)-1])
		}
		if strings.Join(got, "|") != c.want || m.Rcode != dns.RcodeSuccess || !m.Authoritative {
			t.Errorf("%s %s: rcode %s aa %v answer %q, want NOERROR aa %q", c.name, dns.TypeToString[c.qtype], dns.RcodeToString[m.Rcode], m.Authoritative, got, c.want)
		}
	}
	// Counters: the MX wide IP counted its own type.
	for _, w := range s.WideIPs() {
		if w.Name == "/Common/ex.test" && w.Type == TypeMX && (w.Requests != 1 || w.RequestsA != 1 || w.Preferred != 1) {
			t.Errorf("mx wide IP counters %+v", w)
		}
	}
	s.ResetStats(StatsWideIP, Key(TypeMX, "/Common/ex.test"))
	for _, w := range s.WideIPs() {
		if w.Type == TypeMX && w.Requests != 0 {
			t.Errorf("after reset-stats the mx wide IP has %d requests", w.Requests)
		}
		if w.Type == TypeA && w.Requests == 0 {
			t.Errorf("reset-stats of the mx wide IP reset the A one")
		}
	}
}

func TestTypedCompileRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"a wide IP over a pool of another type", func(c *Config) {
			c.WideIPs["/Common/www.ex.test"].Pools = []WideIPPool{{Pool: "aaaa /Common/p"}}
		}, "is a pool aaaa"},
		{"a name member without a name", func(c *Config) {
			c.Pools["mx /Common/m"].Members = append(c.Pools["mx /Common/m"].Members, PoolMember{})
		}, "needs a domain name"},
		{"a name member twice", func(c *Config) {
			c.Pools["mx /Common/m"].Members = append(c.Pools["mx /Common/m"].Members, PoolMember{Target: "MX1.ex.test."})
		}, "listed twice"},
		{"two wide IPs of one type and name", func(c *Config) {
			c.WideIPs["aaaa /Common/other"] = &WideIP{Name: "/Common/other", Type: TypeAAAA, Aliases: []string{"www.ex.test"}}
		}, "www.ex.test. is already wide IP /Common/other"},
	}
	for _, c := range cases {
		cfg := typedConfig()
		c.edit(cfg)
		if err := Check(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// DNS_REQUEST rules run on AAAA wide IPs as on A ones: `pool` names the
// wide IP's own type's pool, `host` answers an IPv6 address, and a rule
// naming a pool only of another type is refused when checked.
func TestAAAAWideIPRules(t *testing.T) {
	cfg := typedConfig()
	cfg.Pools["aaaa /Common/p2"] = &Pool{Name: "/Common/p2", Type: TypeAAAA, Members: []PoolMember{{Server: "/Common/s", VirtualServer: "v6"}}}
	cfg.WideIPs["aaaa /Common/www.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/v6", `
when DNS_REQUEST {
  if { [IP::addr [IP::client_addr] equals 127.0.92.0/24] } {
    host fd00::99
  } else {
    pool p2
  }
}`)}
	s := newServer(t, cfg, Options{})
	for src, want := range map[string]string{"127.0.92.1": "fd00::99", "127.0.93.1": "::1"} {
		m := ask(t, s, netip.MustParseAddr(src), "www.ex.test.", dns.TypeAAAA)
		if a := gslbtest.Addrs(m); len(a) != 1 || a[0].String() != want {
			t.Errorf("from %s: %v, want %s", src, m, want)
		}
	}
	// p2 exists only as an AAAA pool: on the A wide IP it is refused.
	bad := typedConfig()
	bad.WideIPs["/Common/www.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/v4", "when DNS_REQUEST {\n  pool p2\n}")}
	bad.Pools["aaaa /Common/p2"] = cfg.Pools["aaaa /Common/p2"]
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), "gtm pool a /Common/p2 does not exist") {
		t.Errorf("Check: %v", err)
	}
}

// DNS_REQUEST rules run on CNAME, MX, SRV and NAPTR wide IPs as on
// address ones: `pool` steers to a pool of the wide IP's own type, `cname`
// answers a CNAME, DNS::answer insert with DNS::return rewrites the
// answer, DNS::drop sends nothing, and `host` (an address) is a Tcl error
// there, so the query is dropped and the error logged. A rule that
// chooses nothing leaves the configured load balancing to answer.
func TestNamedWideIPRules(t *testing.T) {
	var logs ruleLog
	cfg := typedConfig()
	cfg.RuleEnv = &rules.Env{Log: logs.add}
	cfg.Pools["mx /Common/m2"] = &Pool{Name: "/Common/m2", Type: TypeMX, Members: []PoolMember{{Target: "backup-mx.ex.test", Priority: 50}}}
	cfg.Pools["cname /Common/c2"] = &Pool{Name: "/Common/c2", Type: TypeCNAME, Members: []PoolMember{{Target: "eu.example.org", StaticTarget: true}}}
	cfg.WideIPs["mx /Common/ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/mx_steer", `
when DNS_REQUEST {
  if { [IP::addr [IP::client_addr] equals 127.0.94.0/24] } {
    pool m2
  } elseif { [IP::addr [IP::client_addr] equals 127.0.95.0/24] } {
    DNS::answer insert "[DNS::question name]. 77 IN MX 1 rewritten.ex.test."
    DNS::return
  } elseif { [IP::addr [IP::client_addr] equals 127.0.96.0/24] } {
    DNS::drop
  } elseif { [IP::addr [IP::client_addr] equals 127.0.97.0/24] } {
    host 192.0.2.1
  }
}`)}
	cfg.WideIPs["cname /Common/alias.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/cn_steer", `
when DNS_REQUEST {
  if { [IP::addr [IP::client_addr] equals 127.0.94.0/24] } { pool c2 }
}`)}
	cfg.WideIPs["srv /Common/_sip._udp.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/srv_cname", `
when DNS_REQUEST {
  if { [DNS::question type] eq "SRV" && [IP::addr [IP::client_addr] equals 127.0.94.0/24] } { cname _sip._udp.eu.ex.test }
}`)}
	cfg.WideIPs["naptr /Common/ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/naptr_drop", `
when DNS_REQUEST {
  if { [IP::addr [IP::client_addr] equals 127.0.96.0/24] } { DNS::drop }
}`)}
	s := newServer(t, cfg, Options{})
	data := func(m *dns.Msg) string {
		var got []string
		for _, rr := range m.Answer {
			f := strings.SplitN(rr.String(), "\t", 5)
			got = append(got, f[len(f)-1])
		}
		return strings.Join(got, "|")
	}
	cases := []struct {
		src, name string
		qtype     uint16
		want      string // "drop" when nothing is sent
		aa        bool   // the answer is authoritative (the rule's own answer is as it built it)
	}{
		{"127.0.93.1", "ex.test.", dns.TypeMX, "10 mx1.ex.test.|20 mx2.ex.test.", true}, // no choice: the pool
		{"127.0.94.1", "ex.test.", dns.TypeMX, "50 backup-mx.ex.test.", true},
		{"127.0.95.1", "ex.test.", dns.TypeMX, "1 rewritten.ex.test.", false},
		{"127.0.96.1", "ex.test.", dns.TypeMX, "drop", false},
		{"127.0.97.1", "ex.test.", dns.TypeMX, "drop", false}, // host on an MX wide IP: Tcl error
		{"127.0.94.1", "alias.ex.test.", dns.TypeA, "eu.example.org.", true},
		{"127.0.94.1", "alias.ex.test.", dns.TypeCNAME, "eu.example.org.", true},
		{"127.0.93.1", "alias.ex.test.", dns.TypeA, "www.example.org.", true},
		{"127.0.94.1", "_sip._udp.ex.test.", dns.TypeSRV, "_sip._udp.eu.ex.test.", true},
		{"127.0.93.1", "_sip._udp.ex.test.", dns.TypeSRV, "1 5 5060 sip.ex.test.", true},
		{"127.0.96.1", "ex.test.", dns.TypeNAPTR, "drop", false},
		{"127.0.93.1", "ex.test.", dns.TypeNAPTR, `3 7 "s" "SIP+D2U" "" _sip._udp.ex.test.`, true},
	}
	for _, c := range cases {
		q := new(dns.Msg)
		q.SetQuestion(c.name, c.qtype)
		m, send := s.Answer(q, netip.MustParseAddr(c.src), true)
		switch {
		case c.want == "drop":
			if send {
				t.Errorf("%s %s from %s: %v, want nothing sent", c.name, dns.TypeToString[c.qtype], c.src, m)
			}
		case !send || m.Rcode != dns.RcodeSuccess || m.Authoritative != c.aa || data(m) != c.want:
			t.Errorf("%s %s from %s: sent %v %v, want NOERROR aa %v %q", c.name, dns.TypeToString[c.qtype], c.src, send, m, c.aa, c.want)
		}
	}
	if l := logs.get(); len(l) != 1 || !strings.Contains(l[0], "host 192.0.2.1: a gtm wideip mx answers names, not addresses") {
		t.Errorf("logs %q, want the host error once", l)
	}
	// A pool of another type than the wide IP's is refused when checked.
	bad := typedConfig()
	bad.WideIPs["srv /Common/_sip._udp.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/b", "when DNS_REQUEST {\n  pool m\n}")}
	if err := Check(bad); err == nil || !strings.Contains(err.Error(), "gtm pool srv /Common/m does not exist") {
		t.Errorf("Check: %v", err)
	}
}

// In an AAAA wide IP's rule, active_members and LB::status read the AAAA
// pool of that name (here one that exists only as AAAA, its member
// disabled).
func TestAAAARuleReadsAAAAPools(t *testing.T) {
	var logs ruleLog
	cfg := typedConfig()
	cfg.RuleEnv = &rules.Env{Log: logs.add}
	cfg.WideIPs["aaaa /Common/www.ex.test"].Rules = []*rules.Rule{compileRule(t, "/Common/v6check", `
when DNS_REQUEST {
  if { [active_members down] == 0 && [LB::status pool down member fd00::2 80] eq "down" } {
    host fd00::77
  }
}`)}
	s := newServer(t, cfg, Options{})
	m := ask(t, s, netip.MustParseAddr("127.0.92.1"), "www.ex.test.", dns.TypeAAAA)
	if m == nil {
		t.Fatalf("dropped (logs %q), want the rule's fd00::77", logs.get())
	}
	if a := gslbtest.Addrs(m); len(a) != 1 || a[0].String() != "fd00::77" {
		t.Errorf("answer %v (logs %q), want the rule's fd00::77", m, logs.get())
	}
}

// Static-persistence in a CNAME pool: each LDNS (masked by the
// setting's CIDR) keeps its target while that target is available,
// LDNSes spread over the targets, and only the LDNSes of a target that
// goes down move.
func TestNamePoolStaticPersistence(t *testing.T) {
	cfg := typedConfig()
	var ms []PoolMember
	for i := range 4 {
		ms = append(ms, PoolMember{Target: fmt.Sprintf("site%d.example.org", i), StaticTarget: true})
	}
	cfg.Pools["cname /Common/sp"] = &Pool{Name: "/Common/sp", Type: TypeCNAME, Members: ms, Mode: StaticPersistence, Alternate: ReturnToDNS, Fallback: ReturnToDNS}
	cfg.WideIPs["cname /Common/sp.ex.test"] = &WideIP{Name: "/Common/sp.ex.test", Type: TypeCNAME, Pools: []WideIPPool{{Pool: "cname /Common/sp"}}}
	s := newServer(t, cfg, Options{})
	target := func(src netip.Addr) string {
		m := ask(t, s, src, "sp.ex.test.", dns.TypeCNAME)
		if m == nil || len(m.Answer) != 1 {
			t.Fatalf("%v: answer %v", src, m)
		}
		return m.Answer[0].(*dns.CNAME).Target
	}
	first := map[netip.Addr]string{}
	spread := map[string]bool{}
	for i := 1; i <= 40; i++ {
		src := netip.AddrFrom4([4]byte{127, 0, 95, byte(i)})
		first[src] = target(src)
		spread[first[src]] = true
		for range 3 {
			if got := target(src); got != first[src] {
				t.Fatalf("%v moved from %s to %s", src, first[src], got)
			}
		}
	}
	if len(spread) < 3 {
		t.Errorf("40 LDNSes landed on only %v", spread)
	}
	// site0 disabled: its LDNSes move, the others stay.
	cfg.Pools["cname /Common/sp"].Members[0].Disabled = true
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	for src, was := range first {
		got := target(src)
		if got == "site0.example.org." || (was != "site0.example.org." && got != was) {
			t.Errorf("%v: %s, was %s", src, got, was)
		}
	}
}
