package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/lb"
)

// fixture is a member on its node with the admin settings and monitor
// verdicts a case gives.
type fixture struct {
	session, nodeSession config.AdminSession
	state, nodeState     config.AdminState
	mon, nodeMon         MonStatus
	recvDisabled         bool
}

func (f fixture) member(pool *Pool, addr string) *Member {
	n := &Node{Name: "/Common/n", Watch: NewWatch("node")}
	n.Cfg.Store(&config.Node{Session: f.nodeSession, State: f.nodeState})
	n.Watch.status.Store(int32(f.nodeMon))
	m := &Member{Key: addr, Pool: pool, Name: addr, Node: n, Watch: NewWatch("member")}
	m.Cfg.Store(&config.Member{Addr: netip.MustParseAddrPort(addr), Session: f.session, State: f.state})
	m.Watch.status.Store(int32(f.mon))
	m.Watch.Disabled.Store(f.recvDisabled)
	return m
}

func TestAvailability(t *testing.T) {
	for _, c := range []struct {
		name string
		f    fixture
		want Avail
		word string
	}{
		{"enabled, unchecked", fixture{}, AvailUp, "up"},
		{"monitor up", fixture{mon: MonUp}, AvailUp, "up"},
		{"checking takes traffic", fixture{mon: MonChecking}, AvailUp, "up"},
		{"member disabled", fixture{session: config.SessionUserDisabled}, AvailDisabled, "session_disabled"},
		{"node disabled", fixture{nodeSession: config.SessionUserDisabled}, AvailDisabled, "session_disabled"},
		{"recv-disable", fixture{mon: MonUp, recvDisabled: true}, AvailDisabled, "session_disabled"},
		{"member down", fixture{mon: MonDown}, AvailDown, "down"},
		{"node down", fixture{nodeMon: MonDown}, AvailDown, "down"},
		{"disabled and down", fixture{session: config.SessionUserDisabled, mon: MonDown}, AvailDown, "down"},
		{"member forced offline", fixture{state: config.StateUserDown}, AvailForced, "down"},
		{"node forced offline", fixture{nodeState: config.StateUserDown, mon: MonUp}, AvailForced, "down"},
		{"forced beats down", fixture{state: config.StateUserDown, nodeMon: MonDown}, AvailForced, "down"},
	} {
		m := c.f.member(nil, "10.0.0.1:80")
		if got := m.Availability(); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if got := m.Availability().StatusWord(); got != c.word {
			t.Errorf("%s: LB::status %q, want %q", c.name, got, c.word)
		}
		if m.Usable() != (c.want == AvailUp) {
			t.Errorf("%s: usable %v", c.name, m.Usable())
		}
	}
}

// pool makes a round-robin pool of members as the fixtures say.
func pool(fs ...fixture) (*Pool, []*Member) {
	p := &Pool{Name: "/Common/p"}
	var ms []*Member
	for i, f := range fs {
		ms = append(ms, f.member(p, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), 80).String()))
	}
	p.Snap.Store(&PoolSnap{Cfg: &config.Pool{Name: p.Name}, Alg: lb.RoundRobin, Members: ms})
	return p, ms
}

func TestChoose(t *testing.T) {
	up, disabled, down, forced := fixture{mon: MonUp}, fixture{session: config.SessionUserDisabled}, fixture{mon: MonDown}, fixture{state: config.StateUserDown}
	p, ms := pool(up, disabled, down, forced)
	at := func(i int) Target { return Target{Addr: ms[i].Cfg.Load().Addr, Accept: AvailDisabled} }
	persisted := func(i int) func() (*Pool, *Member) { return func() (*Pool, *Member) { return p, ms[i] } }
	for _, c := range []struct {
		name      string
		t         Target
		persisted func() (*Pool, *Member)
		exclude   []*Member
		want      int // index in ms, -1 for none
		by        ChosenBy
	}{
		{"balancing takes the only usable member", Target{}, nil, nil, 0, ByBalancing},
		{"a named disabled member", at(1), nil, nil, 1, ByName},
		{"a named down member is passed over", at(2), nil, nil, 0, ByBalancing},
		{"accepting down", Target{Addr: ms[2].Cfg.Load().Addr, Accept: AvailDown}, nil, nil, 2, ByName},
		{"forced is never accepted below it", Target{Addr: ms[3].Cfg.Load().Addr, Accept: AvailDown}, nil, nil, 0, ByBalancing},
		{"named beats persisted", at(1), persisted(0), nil, 1, ByName},
		{"persisted beats balancing", Target{}, persisted(1), nil, 1, ByPersistence},
		{"an excluded persisted member", Target{}, persisted(1), ms[1:2], 0, ByBalancing},
		{"an excluded named member", at(1), nil, ms[1:2], 0, ByBalancing},
		{"nothing left", Target{}, nil, ms[:1], -1, ByBalancing},
	} {
		m, q, by := Choose(p, c.t, c.persisted, c.exclude, Chooser{})
		switch {
		case c.want < 0 && m != nil:
			t.Errorf("%s: chose %s", c.name, m.Name)
		case c.want >= 0 && m != ms[c.want]:
			t.Errorf("%s: chose %v, want %s", c.name, m, ms[c.want].Name)
		case q != p || by != c.by:
			t.Errorf("%s: pool %v, by %d; want by %d", c.name, q, by, c.by)
		}
	}
}

func TestChooseReserves(t *testing.T) {
	p, ms := pool(fixture{mon: MonUp}, fixture{mon: MonUp})
	for _, m := range ms {
		c := *m.Cfg.Load()
		c.ConnectionLimit = 1
		m.Cfg.Store(&c)
	}
	how := Chooser{Reserve: true}
	a, _, _ := Choose(p, Target{}, nil, nil, how)
	b, _, _ := Choose(p, Target{}, nil, nil, how)
	if a == nil || b == nil || a == b {
		t.Fatalf("two connections went to %v and %v", a, b)
	}
	if m, _, _ := Choose(p, Target{}, nil, nil, how); m != nil {
		t.Errorf("both at their limit, yet %s was chosen", m.Name)
	}
	// A named member at its limit is not replaced by another.
	if m, _, by := Choose(p, Target{Addr: a.Cfg.Load().Addr, Accept: AvailDisabled}, nil, nil, how); m != nil || by != ByName {
		t.Errorf("named member at its limit: %v by %d", m, by)
	}
	// override-connection-limit lets a persisted member past it.
	how.Override = true
	if m, _, by := Choose(p, Target{}, func() (*Pool, *Member) { return p, a }, nil, how); m != a || by != ByPersistence {
		t.Errorf("override: %v by %d", m, by)
	}
	if got := a.Stats.Cur.Load(); got != 2 {
		t.Errorf("member counts %d connections, want 2", got)
	}
	a.Release()
	a.Release()
	if m, _, _ := Choose(p, Target{}, nil, []*Member{b}, how); m != a {
		t.Errorf("after releases: %v", m)
	}
}

func TestChooseAvoids(t *testing.T) {
	p, ms := pool(fixture{mon: MonUp}, fixture{mon: MonUp})
	for i := 0; i < 4; i++ {
		if m, _, _ := Choose(p, Target{}, nil, nil, Chooser{Avoid: ms[:1]}); m != ms[1] {
			t.Fatalf("round %d: %v, want the member not avoided", i, m)
		}
	}
	if m, _, _ := Choose(p, Target{}, nil, nil, Chooser{Avoid: ms}); m == nil {
		t.Error("every member avoided: none chosen, yet avoiding only prefers")
	}
	if m, _, _ := Choose(p, Target{}, nil, ms[1:], Chooser{Avoid: ms[:1]}); m != ms[0] {
		t.Errorf("the avoided member is the only one not excluded: %v", m)
	}
}

func TestTranslate(t *testing.T) {
	local := netip.MustParseAddrPort("10.9.9.9:443")
	for _, c := range []struct {
		addr, port bool
		member     string
		want       string
	}{
		{true, true, "10.0.0.1:80", "10.0.0.1:80"},
		{true, true, "10.0.0.1:0", "10.0.0.1:443"},
		{false, true, "10.0.0.1:80", "10.9.9.9:80"},
		{true, false, "10.0.0.1:80", "10.0.0.1:443"},
	} {
		v := &config.Virtual{TranslateAddress: c.addr, TranslatePort: c.port}
		if got := Translate(v, netip.MustParseAddrPort(c.member), local).String(); got != c.want {
			t.Errorf("%+v: %s, want %s", c, got, c.want)
		}
	}
}
