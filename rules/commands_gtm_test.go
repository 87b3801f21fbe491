package rules

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// fakeGTM is a fakeDNS resolving a wide IP, with a GSLB of its own.
type fakeGTM struct {
	*fakeDNS
	ttl  uint32
	prio map[netip.AddrPort]int
	// score is what QoSScore returns; calls records what qos_score and
	// qos_weight handed over, one line each.
	score float64
	calls []string
}

func (f *fakeGTM) WideIPName() (string, error)    { return "/Common/www.example.com", nil }
func (f *fakeGTM) WideIPPools() ([]string, error) { return []string{"/Common/p1", "/Common/p2"}, nil }
func (f *fakeGTM) PoolMembers(p string) ([]netip.AddrPort, error) {
	return []netip.AddrPort{netip.MustParseAddrPort("192.0.2.1:80"), netip.MustParseAddrPort("192.0.2.2:80")}, nil
}
func (f *fakeGTM) NodesUp(p string) (int, error) {
	if p != "p1" {
		return 0, errors.New("no such gtm pool a /Common/" + p)
	}
	return 2, nil
}
func (f *fakeGTM) VirtualUp(a netip.AddrPort) (bool, error) {
	return a == netip.MustParseAddrPort("192.0.2.1:80") || a == netip.MustParseAddrPort("192.0.2.1:0"), nil
}
func (f *fakeGTM) AnswerTTL() (uint32, error)    { return f.ttl, nil }
func (f *fakeGTM) SetAnswerTTL(ttl uint32) error { f.ttl = ttl; return nil }
func (f *fakeGTM) QoSScore(p QoSPool, m netip.AddrPort, with []QoSWeight) (float64, error) {
	if p.Name == "nosuch" {
		return 0, errors.New("no such gtm pool a /Common/nosuch")
	}
	ms := ""
	if m.IsValid() {
		ms = m.String()
	}
	f.calls = append(f.calls, "score "+p.Type+"/"+p.Name+" "+ms+" "+fmtWeights(with))
	return f.score, nil
}
func (f *fakeGTM) QoSWeight(p QoSPool, fa QoSFactor) (int64, error) {
	f.calls = append(f.calls, "get "+p.Type+"/"+p.Name+" "+fa.String())
	return int64(fa) * 10, nil
}
func (f *fakeGTM) SetQoSWeights(p QoSPool, ws []QoSWeight) error {
	f.calls = append(f.calls, "set "+p.Type+"/"+p.Name+" "+fmtWeights(ws))
	return nil
}
func (f *fakeGTM) ResetQoSWeight(p QoSPool, fa QoSFactor) (int64, error) {
	f.calls = append(f.calls, "reset "+p.Type+"/"+p.Name+" "+fa.String())
	return int64(fa), nil
}

func fmtWeights(ws []QoSWeight) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.Factor.String() + "=" + strconv.FormatUint(uint64(w.Weight), 10)
	}
	return strings.Join(s, ",")
}
func (f *fakeGTM) SetMemberPriority(p string, m netip.AddrPort, prio int) error {
	f.prio[m] = prio
	return nil
}
func (f *fakeGTM) MatchRegion(a netip.Addr, r string) (bool, error) {
	return r == "east" && netip.MustParsePrefix("192.0.2.0/24").Contains(a), nil
}
func (f *fakeGTM) Self() (string, string) { return "/Common/gtm1", "/Common/dc1" }

// The GTM-only commands' syntax and what they hand the GSLB.
func TestGTMCommands(t *testing.T) {
	cases := []struct {
		name, body string
		logs       string
		err        string // a Tcl error the event ends with
		ttl        uint32
		prio       string
		score      float64 // what the GSLB computes for qos_score
		calls      string  // what qos_score and qos_weight handed it
	}{
		{name: "reads", body: `log local0. "[whoami] [whereami] [wideip name] [pools] [pools -list] [nodes_up p1] [nodes_up 192.0.2.1 80] [nodes_up 192.0.2.2:80] [nodes_up 192.0.2.1] [members p1] [ttl]"`,
			logs: "/Common/gtm1 /Common/dc1 /Common/www.example.com 2 /Common/p1 /Common/p2 2 1 0 1 2 30"},
		// qos_score: 16.16 fixed point, as {integer millionths}, raw, or
		// the integer part.
		{name: "qos_score", body: `log local0. "<[qos_score]> [qos_score -aslong] [qos_score -integer]"`, score: 42.5,
			logs: "<42 500000> 2785280 42", calls: "score /  ;score /  ;score /  "},
		{name: "qos_score fraction", body: `log local0. "<[qos_score]> [qos_score -aslong]"`, score: 2.1, logs: "<2 100006> 137626"},
		{name: "qos_score zero", body: `log local0. "<[qos_score]> [qos_score -aslong] [qos_score -integer]"`, logs: "<0 0> 0 0"},
		{name: "qos_score pool member", body: `qos_score pool p1 member 192.0.2.1 80; qos_score -integer pool a p1 member 192.0.2.2:80 rtt 5 link 7; qos_score pool a member {[2001:db8::1]:53} vs_s 1; qos_score pool p1 member 2001:db8::2 53`,
			calls: "score /p1 192.0.2.1:80 ;score a/p1 192.0.2.2:80 rtt=5,link_capacity=7;score /a [2001:db8::1]:53 vs_score=1;score /p1 [2001:db8::2]:53 "},
		{name: "qos_score factors only", body: `qos_score topology 30 hit 2`, calls: "score /  topology=30,hit_ratio=2"},
		{name: "qos_score pool without member", body: `qos_score pool p1`, err: "qos_score: pool p1 needs a member"},
		{name: "qos_score pool without member but factors", body: `qos_score pool p1 rtt 5`, err: "qos_score: pool p1 needs a member"},
		{name: "qos_score member without port", body: `qos_score pool p1 member 192.0.2.1`, err: `"192.0.2.1" is not a pool member's address and port`},
		{name: "qos_score odd factors", body: `qos_score rtt`, err: "wrong # args"},
		{name: "qos_score unknown factor", body: `qos_score speed 5`, err: `qos_score: unknown factor "speed": must be bps, hit_ratio, hops, link_capacity, packet_rate, rtt, topology, vs_capacity, vs_score`},
		{name: "qos_score ambiguous factor", body: `qos_score vs 5`, err: `qos_score: ambiguous factor "vs": vs_capacity, vs_score`},
		{name: "qos_score weight", body: `qos_score rtt -1`, err: `qos_score: rtt "-1" is not a weight`},
		{name: "qos_score weight too large", body: `qos_score rtt 4294967296`, err: `is not a weight`},
		{name: "qos_score of no pool", body: `qos_score pool nosuch member 192.0.2.1 80`, err: "qos_score: no such gtm pool a /Common/nosuch"},
		// qos_weight: get (a list of more than one), set (nothing), reset
		// (the new values).
		{name: "qos_weight get", body: `log local0. "<[qos_weight get rtt topology]> <[qos_weight pool p1 get link]> <[qos_weight pool aaaa p6 get vs_score]>"`,
			logs: "<50 60> <30> <80>", calls: "get / rtt;get / topology;get /p1 link_capacity;get aaaa/p6 vs_score"},
		{name: "qos_weight set", body: `log local0. "<[qos_weight set link 50 packet 120]>"; qos_weight pool p1 set ho 3`, logs: "<>",
			calls: "set / link_capacity=50,packet_rate=120;set /p1 hops=3"},
		{name: "qos_weight reset", body: `log local0. "<[qos_weight reset vs_score bps]> <[qos_weight pool get reset rtt]>"`, logs: "<8 0> <5>",
			calls: "reset / vs_score;reset / bps;reset /get rtt"},
		{name: "qos_weight set bad pair", body: `qos_weight set rtt 5 hops`, err: "wrong # args"},
		{name: "qos_weight set bad value changes nothing", body: `qos_weight set rtt 5 hops x`, err: `qos_weight: hops "x" is not a weight`},
		{name: "qos_weight get nothing", body: `qos_weight get`, err: "wrong # args"},
		{name: "qos_weight old syntax", body: `qos_weight p1`, err: "wrong # args"},
		{name: "qos_weight unknown option", body: `qos_weight p1 rtt`, err: `qos_weight: unknown option "p1": must be get, set or reset`},
		{name: "qos_weight unknown factor", body: `qos_weight get speed`, err: `qos_weight: unknown factor "speed"`},
		{name: "ttl", body: `ttl 120`, ttl: 120},
		{name: "bad ttl", body: `ttl -1`, err: `ttl: "-1" is not a TTL`},
		{name: "ttl too large", body: `ttl 2147483648`, err: `is not a TTL`},
		{name: "member_priority", body: `member_priority p1 member 192.0.2.2 80 7; member_priority p1 member 192.0.2.1:80 3`, prio: "192.0.2.1:80=3 192.0.2.2:80=7"},
		{name: "member_priority syntax", body: `member_priority p1 192.0.2.2 80 7`, err: "wrong # args"},
		{name: "member_priority address", body: `member_priority p1 member www 80 7`, err: `"www 80" is not a virtual server's address`},
		{name: "member_priority value", body: `member_priority p1 member 192.0.2.2 80 high`, err: `"high" is not an integer priority`},
		{name: "matchregion", body: `log local0. "[matchregion ldns east] [matchregion 192.0.2.9 east] [matchregion 198.51.100.1 east]"`, logs: "1 1 0"},
		{name: "matchregion address", body: `matchregion www east`, err: `"www" is not an IP address or ldns`},
		{name: "nodes_up of no pool", body: `nodes_up p9`, err: "nodes_up: no such gtm pool a /Common/p9"},
		{name: "wideip syntax", body: `wideip`, err: "wrong # args"},
		{name: "pools syntax", body: `pools -count`, err: "wrong # args"},
		{name: "whoami syntax", body: `whoami me`, err: "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs []string
			env := &Env{Log: func(_, line string) { logs = append(logs, line[strings.Index(line, ": ")+2:]) }}
			r := mustCompile(t, "/Common/r", "when DNS_REQUEST {\n"+c.body+"\n}")
			f := &fakeGTM{fakeDNS: newFakeDNS("www.example.com.", 1), ttl: 30, prio: map[netip.AddrPort]int{}, score: c.score}
			f.addrs[EndClient] = netip.MustParseAddrPort("192.0.2.77:5353")
			s := NewProgram(env, r).NewConnState(f)
			defer s.Release()
			err := s.Run(DNSRequest)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if len(f.calls) > 0 && !strings.Contains(c.err, "no such") {
					t.Errorf("a refused command reached the GSLB: %q", f.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(logs, "\n"); got != c.logs {
				t.Errorf("logs %q, want %q", got, c.logs)
			}
			if got := strings.Join(f.calls, ";"); c.calls != "" && got != c.calls {
				t.Errorf("calls %q, want %q", got, c.calls)
			}
			if c.ttl != 0 && f.ttl != c.ttl {
				t.Errorf("ttl %d, want %d", f.ttl, c.ttl)
			}
			if c.prio != "" {
				var got []string
				for _, a := range []string{"192.0.2.1:80", "192.0.2.2:80"} {
					if p, ok := f.prio[netip.MustParseAddrPort(a)]; ok {
						got = append(got, a+"="+strconv.Itoa(p))
					}
				}
				if strings.Join(got, " ") != c.prio {
					t.Errorf("priorities %v, want %s", got, c.prio)
				}
			}
		})
	}
}

// BIG-IP's validator takes the GTM-only commands in a query's events
// only: elsewhere the rule is refused with the command's position; in
// a query's events they compile, and on a connection that is no GSLB
// query they are Tcl errors.
func TestGTMCommandsOutsideGTM(t *testing.T) {
	for _, cmd := range gtmCommands {
		for _, ev := range []string{"HTTP_REQUEST", "RULE_INIT", "CLIENT_ACCEPTED"} {
			_, err := Compile("/Common/r", "when "+ev+" {\n  set x ["+cmd+"]\n}")
			var ce *CompileError
			if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(ce.Msg, cmd+": command is not valid in the current event ("+ev+")") {
				t.Errorf("%s in %s: %v", cmd, ev, err)
			}
		}
		for _, ev := range []string{"DNS_REQUEST", "DNS_RESPONSE", "LB_SELECTED", "LB_FAILED"} {
			if _, err := Compile("/Common/r", "when "+ev+" {\n  catch { "+cmd+" }\n}"); err != nil {
				t.Errorf("%s in %s: %v", cmd, ev, err)
			}
		}
		// In a proc, known only when called.
		if _, err := Compile("/Common/r", "proc p {} { "+cmd+" }\nwhen HTTP_REQUEST { }"); err != nil {
			t.Errorf("%s in a proc: %v", cmd, err)
		}
	}
	// An LTM virtual's LB_SELECTED, and a DNS connection that is no GSLB
	// query: Tcl errors, naming the command.
	for _, conn := range []Conn{newFakeConn(), newFakeDNS("www.example.com.", 1)} {
		for _, body := range []string{"whoami", "whereami", "wideip name", "pools", "nodes_up p1", "ttl", "ttl 5", "qos_score", "qos_weight get rtt", "member_priority p1 member 192.0.2.1 80 1", "matchregion ldns east"} {
			r := mustCompile(t, "/Common/r", "when LB_SELECTED {\n"+body+"\n}")
			s := NewProgram(&Env{}, r).NewConnState(conn)
			err := s.Run(LBSelected)
			s.Release()
			name, _, _ := strings.Cut(body, " ")
			if err == nil || !strings.Contains(err.Error(), name+": command is not valid in this context (not a gtm rule's query)") {
				t.Errorf("%s on %T: %v", body, conn, err)
			}
		}
	}
}
