package gslb

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/rules"
)

// lbEventsConfig is the test configuration on a UDP and TCP listener
// in 127.42.0.0/16, with global availability in app_pool (its
// first member, bj-ltm:vs_cnc, answers) and ct_pool (bj-ltm:vs_ct), and a dr_pool on a
// third server that no wide IP pool holds.
func lbEventsConfig(listen netip.AddrPort, wide, listener []*rules.Rule, logs *ruleLog) *Config {
	cfg := ruleConfig(listen, wide, listener, logs)
	cfg.Pools["/Common/app_pool"].Mode = GlobalAvailability
	cfg.Pools["/Common/ct_pool"].Mode = GlobalAvailability
	cfg.Servers["/Common/dr-ltm"] = &Host{Name: "/Common/dr-ltm", Datacenter: "/Common/dc-gz",
		VirtualServers: []*VirtualServer{{Name: "vs_dr", Destination: netip.MustParseAddrPort("127.0.83.11:8080")}}}
	cfg.Pools["/Common/dr_pool"] = &Pool{Name: "/Common/dr_pool", TTL: 7, Members: []PoolMember{{Server: "/Common/dr-ltm", VirtualServer: "vs_dr"}}}
	return cfg
}

// TestWideIPLBEvents runs a wide IP's LB_SELECTED and LB_FAILED over a
// real listener, in BIG-IP DNS's order (DNS_REQUEST, then LB_SELECTED or
// LB_FAILED, then DNS_RESPONSE), with what each can read (LB::server) and
// change (host, cname, pool, DNS::answer and DNS::return, DNS::drop),
// and the wide IP's counters of how the query ended.
func TestWideIPLBEvents(t *testing.T) {
	const trace = `
when DNS_REQUEST { log local0. "request" }
when LB_SELECTED { log local0. "selected [LB::server]" }
when LB_FAILED { log local0. "failed [LB::server]" }
when DNS_RESPONSE { log local0. "wide IP response [llength [DNS::answer]]" }
`
	type counts struct{ resolved, returned, dropped uint64 }
	cases := []struct {
		name string
		rule string
		down bool // bj-ltm and gz-ltm down: app_pool and ct_pool fail
		// want is the answer section's data joined by |; "drop" means no
		// answer at all.
		want string
		ttl  uint32
		logs []string
		n    counts
	}{
		{name: "selected reads the choice", rule: `when LB_SELECTED {
  log local0. "[LB::server pool] [LB::server addr] [LB::server port] [LB::server name]"
}`, want: "127.0.81.11", ttl: 30, logs: []string{"/Common/app_pool 127.0.81.11 80 /Common/bj-ltm:vs_cnc"}, n: counts{resolved: 1}},
		{name: "order of events", rule: trace, want: "127.0.81.11", ttl: 30,
			logs: []string{"request", "selected /Common/app_pool 127.0.81.11 80", "wide IP response 1"}, n: counts{resolved: 1}},
		{name: "order when load balancing fails", rule: trace, down: true, want: "",
			logs: []string{"request", "failed ", "wide IP response 0"}, n: counts{returned: 1}},
		{name: "selected host", rule: `when LB_SELECTED { host 192.0.2.1 }`, want: "192.0.2.1", ttl: 30, n: counts{resolved: 1}},
		{name: "selected cname", rule: `when LB_SELECTED { cname www.example.net }`, want: "www.example.net.", ttl: 30, n: counts{resolved: 1}},
		{name: "selected pool", rule: `when LB_SELECTED { if { [LB::server pool] ne "/Common/dr_pool" } { pool dr_pool } }`,
			want: "127.0.83.11", ttl: 7, n: counts{resolved: 1}},
		{name: "selected drop", rule: `when LB_SELECTED { DNS::drop }`, want: "drop", n: counts{dropped: 1}},
		{name: "selected return", rule: `when LB_SELECTED {
  DNS::answer insert "[DNS::question name]. 5 IN A 192.0.2.5"
  DNS::return
}`, want: "192.0.2.5", ttl: 5},
		{name: "failed host", rule: `when LB_FAILED { host 192.0.2.9 }`, down: true, want: "192.0.2.9", ttl: 30, n: counts{resolved: 1}},
		{name: "failed cname", rule: `when LB_FAILED { cname sorry.example.net }`, down: true, want: "sorry.example.net.", ttl: 30, n: counts{resolved: 1}},
		{name: "failed pool", rule: `when LB_FAILED { pool dr_pool }`, down: true, want: "127.0.83.11", ttl: 7, n: counts{resolved: 1}},
		{name: "failed pool that fails too", rule: `when LB_FAILED { pool ct_pool }`, down: true, want: "", n: counts{returned: 1}},
		{name: "failed answer and return", rule: `when LB_FAILED {
  DNS::answer insert "[DNS::question name]. 60 IN A 192.0.2.60"
  DNS::return
}`, down: true, want: "192.0.2.60", ttl: 60},
		{name: "failed drop", rule: `when LB_FAILED { DNS::drop }`, down: true, want: "drop", n: counts{dropped: 1}},
		{name: "failed, nothing chosen: return to DNS", rule: `when LB_FAILED { log local0. "failed" }`, down: true, want: "",
			logs: []string{"failed"}, n: counts{returned: 1}},
		{name: "selected is not failed", rule: `when LB_FAILED { host 192.0.2.9 }`, want: "127.0.81.11", ttl: 30, n: counts{resolved: 1}},
		{name: "request pool, then selected", rule: `when DNS_REQUEST { pool ct_pool }
when LB_SELECTED { log local0. "[LB::server pool]" }`, want: "127.0.81.12", ttl: 30, logs: []string{"/Common/ct_pool"}, n: counts{resolved: 1}},
		{name: "request host: no load balancing, no LB event", rule: `when DNS_REQUEST { host 192.0.2.2 }
when LB_SELECTED { log local0. "selected" }
when LB_FAILED { log local0. "failed" }`, want: "192.0.2.2", ttl: 30, n: counts{resolved: 1}},
		{name: "response rewrites the answer", rule: `when DNS_RESPONSE { foreach rr [DNS::answer] { DNS::ttl $rr 3 } }`,
			want: "127.0.81.11", ttl: 3, n: counts{resolved: 1}},
		{name: "response after a rule's answer", rule: `when LB_FAILED { host 192.0.2.9 }
when DNS_RESPONSE { log local0. "[DNS::answer]" }`, down: true, want: "192.0.2.9", ttl: 30,
			logs: []string{"{www.example.com.\t30\tIN\tA\t192.0.2.9}"}, n: counts{resolved: 1}},
		{name: "response cannot choose", rule: `when DNS_RESPONSE { cname www.example.net }`, want: "drop",
			logs: []string{"valid in a wide IP's DNS_REQUEST, LB_SELECTED and LB_FAILED"}, n: counts{resolved: 1}},
		{name: "a Tcl error drops", rule: `when LB_SELECTED { error boom }`, want: "drop",
			logs: []string{"TCL error: /Common/lb_events <LB_SELECTED> - boom"}, n: counts{dropped: 1}},
		{name: "failed reselect pool", rule: `when LB_FAILED { LB::reselect pool dr_pool }`, down: true, want: "127.0.83.11", ttl: 7, n: counts{resolved: 1}},
		{name: "failed reselect runs the LB event again, with the query's variables", rule: `when DNS_REQUEST { set tries 0 }
when LB_SELECTED { log local0. "selected [LB::server pool] after $tries" }
when LB_FAILED {
  log local0. "failed $tries"
  if { [incr tries] < 3 } { LB::reselect pool ct_pool } else { LB::reselect pool dr_pool }
}`, down: true, want: "127.0.83.11", ttl: 7,
			logs: []string{"failed 0", "failed 1", "failed 2", "selected /Common/dr_pool after 3"}, n: counts{resolved: 1}},
		{name: "failed plain reselect tries the same pools again, a bounded number of times", rule: `when DNS_REQUEST { pool ct_pool }
when LB_FAILED { log local0. "failed"; LB::reselect }`, down: true, want: "",
			logs: []string{"failed", "failed", "failed", "failed", "failed"}, n: counts{returned: 1}},
		{name: "failed reselect member", rule: `when LB_FAILED { LB::reselect pool dr_pool member 127.0.83.11 8080 }
when LB_SELECTED { log local0. "[LB::server name]" }`, down: true, want: "127.0.83.11", ttl: 7,
			logs: []string{"/Common/dr-ltm:vs_dr"}, n: counts{resolved: 1}},
		{name: "failed reselect member that is down", rule: `when LB_FAILED { log local0. "failed"; if { $tries == 0 } { incr tries; LB::reselect pool app_pool member 127.0.81.11 80 } }
when DNS_REQUEST { set tries 0 }`, down: true, want: "", logs: []string{"failed", "failed"}, n: counts{returned: 1}},
		{name: "failed reselect node", rule: `when LB_FAILED { LB::reselect node 192.0.2.7 }`, down: true, want: "192.0.2.7", ttl: 30, n: counts{resolved: 1}},
		{name: "failed reselect a member the pool does not have", rule: `when LB_FAILED { LB::reselect pool dr_pool member 192.0.2.1 80 }`, down: true, want: "drop",
			logs: []string{"not a member of gtm pool a /Common/dr_pool"}, n: counts{dropped: 1}},
		{name: "failed reselect a pool that does not exist", rule: `when LB_FAILED { LB::reselect pool [string cat no pool] }`, down: true, want: "drop",
			logs: []string{"no such gtm pool a"}, n: counts{dropped: 1}},
		{name: "reselect in LB_SELECTED is a Tcl error", rule: `when LB_SELECTED { LB::reselect pool dr_pool }`, want: "drop",
			logs: []string{"LB::reselect: valid in a wide IP's LB_FAILED"}, n: counts{dropped: 1}},
	}
	listener := compileRule(t, "/Common/trace_response", `when DNS_RESPONSE { log local0. "response [DNS::header rcode]" }`)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs ruleLog
			listen := freeAddr(t, "127.42.0.1")
			wide := []*rules.Rule{compileRule(t, "/Common/lb_events", c.rule)}
			s := newServer(t, lbEventsConfig(listen, wide, []*rules.Rule{listener}, &logs), Options{})
			if c.down {
				s.SetServerStatus("/Common/bj-ltm", StatusDown)
				s.SetServerStatus("/Common/gz-ltm", StatusDown)
			}
			src := netip.AddrFrom4([4]byte{127, 42, 1, byte(1 + i)})
			for _, network := range []string{"udp", "tcp"} {
				timeout := 2 * time.Second
				if c.want == "drop" {
					timeout = 300 * time.Millisecond // no answer comes
				}
				m, err := gslbtest.Query(src, listen, network, wideName, dns.TypeA, timeout)
				if c.want == "drop" {
					if err == nil {
						t.Errorf("%s: answered %v, want dropped", network, m)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", network, err)
				}
				var got []string
				for _, rr := range m.Answer {
					f := strings.SplitN(rr.String(), "\t", 5)
					got = append(got, f[len(f)-1])
					if rr.Header().Ttl != c.ttl {
						t.Errorf("%s: TTL %d, want %d: %v", network, rr.Header().Ttl, c.ttl, rr)
					}
				}
				if g := strings.Join(got, "|"); g != c.want || m.Rcode != dns.RcodeSuccess {
					t.Errorf("%s: answer %q rcode %s, want %q NOERROR", network, g, dns.RcodeToString[m.Rcode], c.want)
				}
			}
			lines := logs.get()
			per := c.logs
			if c.want != "drop" {
				per = append(append([]string(nil), per...), "response NOERROR") // the listener's DNS_RESPONSE
			}
			want := append(append([]string(nil), per...), per...) // udp, then tcp
			if len(lines) != len(want) {
				t.Fatalf("logs %q, want %q", lines, want)
			}
			for k, l := range lines {
				if !strings.Contains(l, want[k]) {
					t.Errorf("log %d %q, want it to end %q", k, l, want[k])
				}
			}
			st := s.WideIPs()[0]
			n := counts{st.Resolved, st.ReturnedToDNS, st.Dropped}
			wantN := counts{2 * c.n.resolved, 2 * c.n.returned, 2 * c.n.dropped}
			if n != wantN || st.Requests != 2 {
				t.Errorf("counters: %d requests, %+v, want 2, %+v", st.Requests, n, wantN)
			}
		})
	}
}

// TestNamedWideIPLBEvents: LB_SELECTED and LB_FAILED on CNAME, MX, SRV
// and NAPTR wide IPs, where the member is a name.
func TestNamedWideIPLBEvents(t *testing.T) {
	cases := []struct {
		name  string
		wide  string // the key of the wide IP in typedConfig
		qname string
		qtype uint16
		rule  string
		want  string
		logs  []string
	}{
		{name: "mx selected reads the target", wide: "mx /Common/ex.test", qname: "ex.test.", qtype: dns.TypeMX,
			rule: `when LB_SELECTED { log local0. "[LB::server] [LB::server name] [LB::server addr]" }`,
			want: "10 mx1.ex.test.|20 mx2.ex.test.", logs: []string{"/Common/m mx1.ex.test 0 mx1.ex.test mx1.ex.test"}},
		{name: "srv selected reads the port", wide: "srv /Common/_sip._udp.ex.test", qname: "_sip._udp.ex.test.", qtype: dns.TypeSRV,
			rule: `when LB_SELECTED { log local0. "[LB::server port]" }`, want: "1 5 5060 sip.ex.test.", logs: []string{"5060"}},
		{name: "cname selected replaced", wide: "cname /Common/alias.ex.test", qname: "alias.ex.test.", qtype: dns.TypeA,
			rule: `when LB_SELECTED { cname other.example.org }`, want: "other.example.org."},
		{name: "cname selected passes over a target whose wide IP is down", wide: "cname /Common/dyn.ex.test", qname: "dyn.ex.test.", qtype: dns.TypeA,
			rule: `when LB_SELECTED { log local0. "selected [LB::server name]" }
when LB_FAILED { log local0. "failed"; cname sorry.example.org }`, want: "www.ex.test.", logs: []string{"selected www.ex.test"}},
		{name: "naptr host refused: a Tcl error drops", wide: "naptr /Common/ex.test", qname: "ex.test.", qtype: dns.TypeNAPTR,
			rule: `when LB_SELECTED { host 192.0.2.1 }`, want: "drop",
			logs: []string{"TCL error: /Common/lb_events <LB_SELECTED> - host 192.0.2.1: a gtm wideip naptr answers names"}},
		{name: "mx selected pool", wide: "mx /Common/ex.test", qname: "ex.test.", qtype: dns.TypeMX,
			rule: `when LB_SELECTED { pool m2 }`, want: "50 backup-mx.ex.test."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs ruleLog
			cfg := typedConfig()
			cfg.RuleEnv = &rules.Env{Log: logs.add}
			cfg.Pools["mx /Common/m2"] = &Pool{Name: "/Common/m2", Type: TypeMX, Members: []PoolMember{{Target: "backup-mx.ex.test", Priority: 50}}}
			cfg.WideIPs[c.wide].Rules = []*rules.Rule{compileRule(t, "/Common/lb_events", c.rule)}
			s := newServer(t, cfg, Options{})
			m := ask(t, s, netip.MustParseAddr("127.42.2.1"), c.qname, c.qtype)
			if c.want == "drop" {
				if m != nil {
					t.Errorf("answered %v, want dropped", m)
				}
			} else {
				var got []string
				for _, rr := range m.Answer {
					f := strings.SplitN(rr.String(), "\t", 5)
					got = append(got, f[len(f)-1])
				}
				if g := strings.Join(got, "|"); g != c.want {
					t.Errorf("answer %q, want %q", g, c.want)
				}
			}
			lines := logs.get()
			if len(lines) != len(c.logs) {
				t.Fatalf("logs %q, want %q", lines, c.logs)
			}
			for k, l := range lines {
				if !strings.Contains(l, c.logs[k]) {
					t.Errorf("log %d %q, want it to end %q", k, l, c.logs[k])
				}
			}
		})
	}
}

// TestWideIPReselectTypes: LB::reselect pool in the LB_FAILED of a wide
// IP of each type, over a real UDP listener, makes it answer from the
// pool named; the member form is for address wide IPs only.
func TestWideIPReselectTypes(t *testing.T) {
	cases := []struct {
		typ   RRType
		qtype uint16
		rule  string
		want  string // the answer's data joined by |; "drop" for none
	}{
		{TypeA, dns.TypeA, `LB::reselect pool p`, "127.0.90.1"},
		{TypeA, dns.TypeA, `LB::reselect pool p member 127.0.90.1 80`, "127.0.90.1"},
		{TypeAAAA, dns.TypeAAAA, `LB::reselect pool p`, "::1"},
		{TypeAAAA, dns.TypeAAAA, `LB::reselect pool /Common/p member ::1 80`, "::1"},
		{TypeAAAA, dns.TypeAAAA, `LB::reselect node fd00::9`, "fd00::9"},
		{TypeCNAME, dns.TypeA, `LB::reselect pool c`, "www.example.org."},
		{TypeMX, dns.TypeMX, `LB::reselect pool m`, "10 mx1.ex.test.|20 mx2.ex.test."},
		{TypeMX, dns.TypeMX, `LB::reselect pool m member 127.0.90.1 25`, "drop"},
		{TypeSRV, dns.TypeSRV, `LB::reselect pool s`, "1 5 5060 sip.ex.test."},
		{TypeSRV, dns.TypeSRV, `LB::reselect node 192.0.2.1`, "drop"},
		{TypeNAPTR, dns.TypeNAPTR, `LB::reselect pool n`, `3 7 "s" "SIP+D2U" "" _sip._udp.ex.test.`},
	}
	for i, c := range cases {
		t.Run(string(c.typ)+" "+c.rule, func(t *testing.T) {
			var logs ruleLog
			listen := freeAddr(t, "127.42.0.1")
			cfg := typedConfig()
			cfg.Listeners = []Listener{{Name: "/Common/dns", Addr: listen}}
			cfg.RuleEnv = &rules.Env{Log: logs.add}
			off := Key(c.typ, "/Common/off")
			// A disabled pool: load balancing fails, LB_FAILED runs.
			cfg.Pools[off] = &Pool{Name: "/Common/off", Type: c.typ, Disabled: true}
			cfg.WideIPs[Key(c.typ, "/Common/fail.ex.test")] = &WideIP{Name: "/Common/fail.ex.test", Type: c.typ,
				Pools: []WideIPPool{{Pool: off}}, Rules: []*rules.Rule{compileRule(t, "/Common/again", "when LB_FAILED { "+c.rule+" }")}}
			s := newServer(t, cfg, Options{})
			src := netip.AddrFrom4([4]byte{127, 42, 3, byte(1 + i)})
			timeout := 2 * time.Second
			if c.want == "drop" {
				timeout = 300 * time.Millisecond
			}
			m, err := gslbtest.Query(src, listen, "udp", "fail.ex.test", c.qtype, timeout)
			if c.want == "drop" {
				if err == nil {
					t.Fatalf("answered %v, want dropped", m)
				}
				if l := logs.get(); len(l) != 1 || !strings.Contains(l[0], "TCL error") {
					t.Errorf("logs %q, want one Tcl error", l)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rr := range m.Answer {
				f := strings.SplitN(rr.String(), "\t", 5)
				got = append(got, f[len(f)-1])
			}
			if g := strings.Join(got, "|"); g != c.want {
				t.Errorf("answer %q, want %q (logs %q)", g, c.want, logs.get())
			}
			found := false
			for _, w := range s.WideIPs() {
				if w.Name == "/Common/fail.ex.test" {
					found = true
					if w.Resolved != 1 || w.ReturnedToDNS != 0 {
						t.Errorf("%s %s: resolved %d, returned to DNS %d, want 1 and 0", w.Type, w.Name, w.Resolved, w.ReturnedToDNS)
					}
				}
			}
			if !found {
				t.Error("no statistics for the wide IP fail.ex.test")
			}
		})
	}
}
