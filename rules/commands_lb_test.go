package rules

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// lbFake is a connection that also answers the commands of
// commands_lb.go, recording what they ask.
type lbFake struct {
	*fakeConn
	connected    bool // the server side exists: prime and translate refuse
	primed       int
	addr, port   bool
	snat         string
	key, pool    string
	member       netip.AddrPort
	found        bool
	decisionLogs int
	virtual      string
}

func newLBFake() *lbFake {
	return &lbFake{fakeConn: newFakeConn(), addr: true, port: true, snat: "none", virtual: "/Common/vs"}
}

func (f *lbFake) LBConnect() error {
	if f.connected {
		return errors.New("the server side is connected already")
	}
	f.primed++
	return nil
}
func (f *lbFake) Translation() (bool, bool) { return f.addr, f.port }
func (f *lbFake) SetTranslation(a, p bool) error {
	if f.connected {
		return errors.New("the server side is connected already")
	}
	f.addr, f.port = a, p
	return nil
}
func (f *lbFake) SNATDecision() string { return f.snat }
func (f *lbFake) LBPersist() (string, string, netip.AddrPort, bool, error) {
	return f.key, f.pool, f.member, f.found, nil
}
func (f *lbFake) EnableDecisionLog() error { f.decisionLogs++; return nil }

// LBInfo, for traffic_group's virtual.
func (f *lbFake) VirtualName() string                      { return f.virtual }
func (f *lbFake) LBMode(string) (string, error)            { return "round-robin", nil }
func (f *lbFake) Members(string) ([]netip.AddrPort, error) { return nil, nil }
func (f *lbFake) MemberInfo(string, netip.AddrPort) (MemberInfo, error) {
	return MemberInfo{}, nil
}

func TestLBCommands(t *testing.T) {
	member := netip.MustParseAddrPort("127.88.3.2:8080")
	tgs := map[string]string{"/Common/vs": "/Common/traffic-group-2"}
	env := &Env{TrafficGroup: func(v string) string { return tgs[v] }}
	for _, c := range []struct {
		name  string
		ev    Event
		expr  string
		setup func(*lbFake)
		want  string
		err   string
		check func(*testing.T, *lbFake)
	}{
		{name: "prime", expr: "LB::prime", check: func(t *testing.T, f *lbFake) {
			if f.primed != 1 {
				t.Errorf("primed %d times", f.primed)
			}
		}},
		{name: "connect in CLIENT_DATA", ev: ClientData, expr: "LB::connect", check: func(t *testing.T, f *lbFake) {
			if f.primed != 1 {
				t.Errorf("primed %d times", f.primed)
			}
		}},
		{name: "prime with arguments", expr: "LB::prime pool p", err: "wrong # args"},
		{name: "prime in SERVER_CONNECTED", ev: ServerConnected, expr: "LB::prime", err: "only valid in CLIENT_ACCEPTED and CLIENT_DATA"},
		{name: "prime when connected", expr: "LB::prime", setup: func(f *lbFake) { f.connected = true }, err: "connected already"},
		{name: "snat none", expr: "LB::snat", want: "none"},
		{name: "snat pool", expr: "LB::snat", setup: func(f *lbFake) { f.snat = "snatpool /Common/sp" }, want: "snatpool /Common/sp"},
		{name: "snat extra", expr: "LB::snat x", err: "wrong # args"},
		{name: "translate address reads", expr: "translate address", want: "1"},
		{name: "translate address disable", expr: "translate address disable; translate address", want: "0", check: func(t *testing.T, f *lbFake) {
			if f.addr || !f.port {
				t.Errorf("translation %v %v, want address off, port on", f.addr, f.port)
			}
		}},
		{name: "translate port disable", expr: "translate port disable; list [translate address] [translate port]", want: "1 0"},
		{name: "translate service is the port", expr: "translate service disable; translate port", want: "0"},
		{name: "translate enable again", expr: "translate port disable; translate port enable; translate service", want: "1"},
		{name: "translate bad option", expr: "translate host disable", err: `bad option "host"`},
		{name: "translate bad value", expr: "translate address off", err: `bad value "off"`},
		{name: "translate when connected", expr: "translate address disable", setup: func(f *lbFake) { f.connected = true }, err: "connected already"},
		{name: "translate args", expr: "translate", err: "wrong # args"},
		{name: "persist none", expr: "LB::persist", want: ""},
		{name: "persist record", expr: "LB::persist", setup: func(f *lbFake) {
			f.key, f.pool, f.member, f.found = "127.88.3.9", "/Common/p", member, true
		}, want: "pool /Common/p member 127.88.3.2 8080"},
		{name: "persist key", expr: "LB::persist key", setup: func(f *lbFake) { f.key = "127.88.3.9" }, want: "127.88.3.9"},
		{name: "persist evaluates", expr: "eval [LB::persist]", setup: func(f *lbFake) {
			f.key, f.pool, f.member, f.found = "k", "test_pool", member, true
		}, check: func(t *testing.T, f *lbFake) {
			if got := f.fakeConn.String(); got != "member test_pool 127.88.3.2:8080" {
				t.Errorf("eval [LB::persist] decided %q", got)
			}
		}},
		{name: "persist cookie", expr: "LB::persist cookie", err: "no cookie persistence"},
		{name: "persist bad", expr: "LB::persist key x", err: "wrong # args"},
		{name: "decision log", expr: "LB::enable_decisionlog", check: func(t *testing.T, f *lbFake) {
			if f.decisionLogs != 1 {
				t.Errorf("decision log enabled %d times", f.decisionLogs)
			}
		}},
		{name: "decision log args", expr: "LB::enable_decisionlog on", err: "wrong # args"},
		{name: "traffic group", expr: "traffic_group", want: "/Common/traffic-group-2"},
		{name: "traffic group args", expr: "traffic_group x", err: "wrong # args"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newLBFake()
			if c.setup != nil {
				c.setup(f)
			}
			ev := c.ev
			if ev == 0 {
				ev = ClientAccepted
			}
			got, err := evalIn(t, f, env, ev, c.expr)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s: err %v, want %q", c.expr, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("%s: %q %v, want %q", c.expr, got, err, c.want)
			}
			if c.check != nil {
				c.check(t, f)
			}
		})
	}
}

// A connection without the optional interfaces turns every command into
// a clear Tcl error rather than a made-up answer.
func TestLBCommandsUnsupported(t *testing.T) {
	for _, expr := range []string{"LB::prime", "LB::connect", "LB::snat", "translate address", "LB::persist", "LB::enable_decisionlog"} {
		if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, expr); err == nil {
			t.Errorf("%s on a connection without it: no error", expr)
		}
	}
	// Without a virtual (a plain Conn), the traffic group is the
	// device's own; without the Env's lookup, BIG-IP's default.
	if got, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "traffic_group"); err != nil || got != LocalOnlyTrafficGroup {
		t.Errorf("traffic_group without a virtual: %q %v", got, err)
	}
	if got, err := evalIn(t, newLBFake(), nil, ClientAccepted, "traffic_group"); err != nil || got != DefaultTrafficGroup {
		t.Errorf("traffic_group without Env.TrafficGroup: %q %v", got, err)
	}
}

// LB::prime in a script `after` scheduled is refused: the connection may
// be connecting on its own by then.
func TestLBPrimeInAfter(t *testing.T) {
	r := mustCompile(t, "after_prime", `when CLIENT_ACCEPTED { after 1 { LB::prime } }`)
	lg := &logSink{}
	p := NewProgram(&Env{Log: lg.log}, r)
	f := &afterFake{lbFake: newLBFake()}
	s := p.NewConnState(f)
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if f.fn == nil {
		t.Fatal("no script scheduled")
	}
	if err := f.fn(); err == nil || !strings.Contains(err.Error(), "not valid in a script after scheduled") {
		t.Fatalf("LB::prime in after: %v", err)
	}
	if f.primed != 0 {
		t.Fatalf("primed %d times", f.primed)
	}
}

// afterFake schedules one script and runs it when the test says.
type afterFake struct {
	*lbFake
	fn func() error
}

func (f *afterFake) After(d time.Duration, fn func() error) func() {
	f.fn = fn
	return func() {}
}
