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
func (f *fakeGTM) QoSScore() (float64, error)    { return 42.5, nil }
func (f *fakeGTM) QoSWeights(p string) ([]QoSWeight, error) {
	return []QoSWeight{{"rtt", 50}, {"hops", 0}}, nil
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
	}{
		{name: "reads", body: `log local0. "[whoami] [whereami] [wideip name] [pools] [pools -list] [nodes_up p1] [nodes_up 192.0.2.1 80] [nodes_up 192.0.2.2:80] [nodes_up 192.0.2.1] [members p1] [ttl]"`,
			logs: "/Common/gtm1 /Common/dc1 /Common/www.example.com 2 /Common/p1 /Common/p2 2 1 0 1 2 30"},
		{name: "qos", body: `log local0. "[qos_score] [qos_weight p1] [qos_weight p1 hops] [qos_weight p1 qos-rtt]"`, logs: "42.5 rtt 50 hops 0 0 50"},
		{name: "unknown coefficient", body: `qos_weight p1 speed`, err: `qos_weight: unknown coefficient "speed": must be rtt, hops`},
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
			f := &fakeGTM{fakeDNS: newFakeDNS("www.example.com.", 1), ttl: 30, prio: map[netip.AddrPort]int{}}
			f.addrs[EndClient] = netip.MustParseAddrPort("192.0.2.77:5353")
			s := NewProgram(env, r).NewConnState(f)
			defer s.Release()
			err := s.Run(DNSRequest)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(logs, "\n"); got != c.logs {
				t.Errorf("logs %q, want %q", got, c.logs)
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
		for _, body := range []string{"whoami", "whereami", "wideip name", "pools", "nodes_up p1", "ttl", "ttl 5", "qos_score", "qos_weight p1", "member_priority p1 member 192.0.2.1 80 1", "matchregion ldns east"} {
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
