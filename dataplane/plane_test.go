package dataplane

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// TestRoundRobinTwoMembers is seed 000's first observation at L4: new
// connections alternate between two real member listeners, and the
// counters and the connection table say so.
func TestRoundRobinTwoMembers(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.1.2:9000", "S1")
	startServer(t, "127.20.1.3:9000", "S2")
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.1.1:8000", "127.20.1.2:9000", "127.20.1.3:9000"))

	var got []string
	for i := 0; i < 6; i++ {
		got = append(got, once(t, "127.20.1.1:8000"))
	}
	for i := 2; i < len(got); i++ {
		if got[i] != got[i-2] || got[i] == got[i-1] {
			t.Fatalf("answers do not alternate: %v", got)
		}
	}
	// A held connection appears in the table with both sides.
	c := dialVS(t, "127.20.1.1:8000")
	c.mustAsk("hi")
	n := 0
	p.Connections(ConnFilter{CSClientPort: rawsock.AddrPortOf(c.c.LocalAddr()).Port()}, func(r *Connection) bool {
		n++
		if r.CSServer != ap("127.20.1.1:8000") || r.CSClient != rawsock.AddrPortOf(c.c.LocalAddr()) ||
			r.SSServer.Addr().String()[:9] != "127.20.1." || r.SSServer.Port() != 9000 || r.Protocol != "tcp" {
			t.Errorf("record = %+v", r)
		}
		if r.CSBytesIn == 0 || r.SSBytesIn == 0 {
			t.Errorf("record has no traffic: %+v", r)
		}
		return true
	})
	if n != 1 {
		t.Fatalf("connection table has %d records, want 1", n)
	}
	eventually(t, "counters", func() bool {
		vs, _ := p.Virtual("/Common/vs")
		return vs.ClientSide.TotConns == 7 && vs.ClientSide.CurConns == 1
	})
	ps, _ := p.Pool("/Common/pool")
	if ps.ServerSide.TotConns != 7 || ps.Members[0].ServerSide.TotConns+ps.Members[1].ServerSide.TotConns != 7 {
		t.Fatalf("pool counters: %+v", ps)
	}
	if ps.Members[0].ServerSide.BitsIn == 0 || ps.Status.Availability != Unknown {
		t.Fatalf("pool without monitor: %+v", ps.Status)
	}
	p.ResetStats(StatsPool, "/Common/pool")
	ps, _ = p.Pool("/Common/pool")
	if ps.ServerSide.TotConns != 0 || ps.Members[0].ServerSide.BitsIn != 0 || ps.ServerSide.CurConns != 1 {
		t.Fatalf("after reset-stats: %+v", ps.ServerSide)
	}
}

// TestDisableEnableForceOffline: a disabled or forced-offline member takes
// no new connections, its open flows go on; enabled again it shares again.
func TestDisableEnableForceOffline(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.2.2:9000", "S1")
	startServer(t, "127.20.2.3:9000", "S2")
	p, _ := newPlane(t)
	vs := "127.20.2.1:8000"
	mk := func(session AdminSession, state AdminState) *Config {
		cfg := basic(vs, "127.20.2.2:9000", "127.20.2.3:9000")
		cfg.Pools["/Common/pool"].Members[0].Session = session
		cfg.Pools["/Common/pool"].Members[0].State = state
		return cfg
	}
	mustApply(t, p, mk(SessionEnabled, StateUserUp))
	// Hold a connection to S1.
	var held *client
	for i := 0; i < 2 && held == nil; i++ {
		c := dialVS(t, vs)
		if c.mustAsk("x") == "S1 Response" {
			held = c
		}
	}
	if held == nil {
		t.Fatal("no connection reached S1")
	}
	for _, tc := range []struct {
		name    string
		session AdminSession
		state   AdminState
		avail   Availability
		state2  string
	}{
		{"disabled", SessionUserDisabled, StateUserUp, Unknown, "disabled"},
		{"forced offline", SessionUserDisabled, StateUserDown, Offline, "disabled"},
	} {
		mustApply(t, p, mk(tc.session, tc.state))
		for i := 0; i < 4; i++ {
			if a := once(t, vs); a != "S2 Response" {
				t.Fatalf("%s: new connection answered by %q", tc.name, a)
			}
		}
		if a := held.mustAsk("still there?"); a != "S1 Response" {
			t.Fatalf("%s: open flow answered by %q", tc.name, a)
		}
		m := memberStat(t, p, "/Common/pool", "/Common/127.20.2.2:9000")
		if m.Status.Availability != tc.avail || m.Status.State != tc.state2 || m.SessionStatus != "user-disabled" {
			t.Fatalf("%s: member status %+v session %s", tc.name, m.Status, m.SessionStatus)
		}
	}
	mustApply(t, p, mk(SessionEnabled, StateUserUp))
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[once(t, vs)] = true
	}
	if !seen["S1 Response"] || !seen["S2 Response"] {
		t.Fatalf("after enable answers came from %v", seen)
	}
}

// TestMemberKilledMarkedDownAndBack: the monitor marks a killed member down
// (logged in BIG-IP's words), traffic avoids it, and it returns when the
// server does.
func TestMemberKilledMarkedDownAndBack(t *testing.T) {
	t.Parallel()
	s1 := startServer(t, "127.20.3.2:9000", "S1")
	startServer(t, "127.20.3.3:9000", "S2")
	p, logs := newPlane(t)
	vs := "127.20.3.1:8000"
	cfg := basic(vs, "127.20.3.2:9000", "127.20.3.3:9000")
	tcpMonitor(cfg)
	mustApply(t, p, cfg)
	eventually(t, "pool available", func() bool {
		ps, _ := p.Pool("/Common/pool")
		return ps.AvailableMembers == 2 && ps.Status.Availability == Available
	})
	s1.kill()
	eventually(t, "member down", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/127.20.3.2:9000").Status.Availability == Offline
	})
	m := memberStat(t, p, "/Common/pool", "/Common/127.20.3.2:9000")
	if m.MonitorStatus != "down" || m.Status.Reason != reasonMemberDown || m.Monitor != "/Common/tcp (pool monitor)" {
		t.Fatalf("down member: %+v", m)
	}
	// The status changes before its line is logged.
	eventually(t, "the down line logged", func() bool {
		return strings.Contains(logs.String(), "Pool /Common/pool member /Common/127.20.3.2:9000 monitor status down. [ /Common/tcp: down; last error: ")
	})
	for i := 0; i < 4; i++ {
		if a := once(t, vs); a != "S2 Response" {
			t.Fatalf("traffic went to a down member: %q", a)
		}
	}
	s1.start()
	eventually(t, "member up", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/127.20.3.2:9000").Status.Availability == Available
	})
	eventually(t, "the up line logged", func() bool {
		return strings.Contains(logs.String(), "member /Common/127.20.3.2:9000 monitor status up.")
	})
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[once(t, vs)] = true
	}
	if !seen["S1 Response"] {
		t.Fatalf("revived member gets no traffic: %v", seen)
	}
	// All down: the pool and virtual roll up offline.
	s1.kill()
	cfg2 := basic(vs, "127.20.3.2:9000")
	tcpMonitor(cfg2)
	mustApply(t, p, cfg2)
	eventually(t, "virtual offline", func() bool {
		v, _ := p.Virtual("/Common/vs")
		return v.Status.Availability == Offline && v.Status.Reason == reasonChildrenDown
	})
}

// TestIdleTimeout: an idle flow is removed and both sides are reset.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.4.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.20.4.1:8000", "127.20.4.2:9000")
	cfg.Virtuals["/Common/vs"].IdleTimeout = 400 * time.Millisecond
	mustApply(t, p, cfg)
	c := dialVS(t, "127.20.4.1:8000")
	c.mustAsk("hello")
	// Activity keeps it alive past the timeout.
	for i := 0; i < 12; i++ {
		time.Sleep(40 * time.Millisecond)
		c.mustAsk("still here")
	}
	c.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := c.c.Read(make([]byte, 10))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("idle client read: %v, want a reset", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
}

// TestConnectionTableFilters: filters select by each side, delete closes
// only the selected flows.
func TestConnectionTableFilters(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.5.2:9000", "S1")
	startServer(t, "127.20.5.3:9001", "S2")
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.5.1:8000", "127.20.5.2:9000", "127.20.5.3:9001"))
	a := dialFrom(t, "127.20.5.10", "127.20.5.1:8000")
	b := dialFrom(t, "127.20.5.11", "127.20.5.1:8000")
	c := dialFrom(t, "127.20.5.11", "127.20.5.1:8000")
	for _, x := range []*client{a, b, c} {
		x.mustAsk("hi")
	}
	count := func(f ConnFilter) int { return p.Connections(f, func(*Connection) bool { return true }) }
	for _, tc := range []struct {
		name string
		f    ConnFilter
		want int
	}{
		{"all", ConnFilter{}, 3},
		{"cs-client-addr", ConnFilter{CSClientAddr: netip.MustParseAddr("127.20.5.11")}, 2},
		{"cs-client-port", ConnFilter{CSClientPort: rawsock.AddrPortOf(a.c.LocalAddr()).Port()}, 1},
		{"cs-server-port", ConnFilter{CSServerPort: 8000}, 3},
		{"ss-server-port", ConnFilter{SSServerPort: 9001}, count(ConnFilter{SSServerAddr: netip.MustParseAddr("127.20.5.3")})},
		{"ss-client-addr", ConnFilter{SSClientAddr: netip.MustParseAddr("127.20.5.10")}, 1},
		{"protocol", ConnFilter{Protocol: "udp"}, 0},
	} {
		if got := count(tc.f); got != tc.want {
			t.Errorf("%s: %d records, want %d", tc.name, got, tc.want)
		}
	}
	if n := p.DeleteConnections(ConnFilter{CSClientAddr: netip.MustParseAddr("127.20.5.10")}); n != 1 {
		t.Fatalf("deleted %d, want 1", n)
	}
	if _, err := a.ask("gone?"); err == nil {
		t.Fatalf("deleted flow still answers")
	}
	b.mustAsk("still here")
	eventually(t, "two flows left", func() bool { return count(ConnFilter{}) == 2 })
}

// TestConfigChangeDuringTraffic: commits that add members, virtuals and
// change modes leave open flows alone; a commit that cannot bind changes
// nothing.
func TestConfigChangeDuringTraffic(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.6.2:9000", "S1")
	startServer(t, "127.20.6.3:9000", "S2")
	p, _ := newPlane(t)
	vs := "127.20.6.1:8000"
	mustApply(t, p, basic(vs, "127.20.6.2:9000"))
	c := dialVS(t, vs)
	c.mustAsk("one")

	cfg := basic(vs, "127.20.6.2:9000", "127.20.6.3:9000")
	cfg.Pools["/Common/pool"].LBMode = LeastConnectionsMember
	cfg.Virtuals["/Common/other"] = &Virtual{Name: "/Common/other", Destination: ap("127.20.6.1:8001"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool"}
	mustApply(t, p, cfg)
	if a := c.mustAsk("two"); a != "S1 Response" {
		t.Fatalf("open flow answered by %q", a)
	}
	// least connections: S1 holds one flow, so the new one goes to S2.
	if a := once(t, "127.20.6.1:8001"); a != "S2 Response" {
		t.Fatalf("new virtual, least connections: %q", a)
	}

	// A destination that cannot be bound fails the whole commit.
	busy, err := net.Listen("tcp", "127.20.6.1:8002")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bad := basic(vs, "127.20.6.2:9000")
	bad.Virtuals["/Common/busy"] = &Virtual{Name: "/Common/busy", Destination: ap("127.20.6.1:8002"), Enabled: true}
	err = p.Apply(cfg, bad)
	if err == nil || !strings.Contains(err.Error(), "127.20.6.1:8002") {
		t.Fatalf("Apply with a busy address: %v", err)
	}
	if _, ok := p.Virtual("/Common/other"); !ok {
		t.Fatalf("a failed commit removed a virtual")
	}
	once(t, "127.20.6.1:8001")

	// Removing the other virtual closes its listener but not this flow.
	mustApply(t, p, basic(vs, "127.20.6.2:9000", "127.20.6.3:9000"))
	if _, err := net.DialTimeout("tcp", "127.20.6.1:8001", time.Second); err == nil {
		t.Fatalf("removed virtual still accepts")
	}
	if a := c.mustAsk("three"); a != "S1 Response" {
		t.Fatalf("open flow after removal: %q", a)
	}
}

func TestVirtualAdmission(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.7.2:9000", "S1")
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name  string
		tweak func(v *Virtual)
		src   string
		ok    bool
	}{
		{"enabled", func(v *Virtual) {}, "", true},
		{"disabled resets", func(v *Virtual) { v.Enabled = false }, "", false},
		{"source allowed", func(v *Virtual) { v.Source = netip.MustParsePrefix("127.20.7.0/24") }, "127.20.7.50", true},
		{"source refused", func(v *Virtual) { v.Source = netip.MustParsePrefix("127.20.8.0/24") }, "127.20.7.50", false},
	} {
		cfg := basic("127.20.7.1:8000", "127.20.7.2:9000")
		tc.tweak(cfg.Virtuals["/Common/vs"])
		mustApply(t, p, cfg)
		err := tryAsk(tc.src, "127.20.7.1:8000")
		if (err == nil) != tc.ok {
			t.Errorf("%s: ask error %v", tc.name, err)
		}
	}
	// Connection limit 1: the second concurrent client is reset.
	eventually(t, "earlier flows closed", func() bool { return p.ConnectionCount() == 0 })
	cfg := basic("127.20.7.1:8000", "127.20.7.2:9000")
	cfg.Virtuals["/Common/vs"].ConnectionLimit = 1
	mustApply(t, p, cfg)
	first := dialVS(t, "127.20.7.1:8000")
	first.mustAsk("hi")
	if err := tryAsk("", "127.20.7.1:8000"); err == nil {
		t.Fatalf("second connection passed a limit of 1")
	}
	v, _ := p.Virtual("/Common/vs")
	if v.Status.Availability != Unavailable {
		t.Fatalf("virtual at its limit: %+v", v.Status)
	}
}

// TestPortRangeAndPortAny: a virtual binds every port of its range and a
// member on port any keeps the client's destination port.
func TestPortRangeAndPortAny(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.9.2:40105", "P105")
	startServer(t, "127.20.9.2:40109", "P109")
	p, _ := newPlane(t)
	cfg := basic("127.20.9.1:0", "127.20.9.2:0")
	cfg.Virtuals["/Common/vs"].PortRanges = []PortRange{{Low: 40100, High: 40109}}
	mustApply(t, p, cfg)
	if a := once(t, "127.20.9.1:40105"); a != "P105 Response" {
		t.Fatalf("port 40105: %q", a)
	}
	if a := once(t, "127.20.9.1:40109"); a != "P109 Response" {
		t.Fatalf("port 40109: %q", a)
	}
	big := basic("127.20.9.1:0", "127.20.9.2:0")
	big.Virtuals["/Common/vs"].PortRanges = []PortRange{{Low: 20000, High: 20000 + MaxPortsPerVirtual}}
	if err := p.Apply(nil, big); err == nil || !strings.Contains(err.Error(), "at most 4096 ports") {
		t.Fatalf("Apply over the port cap: %v", err)
	}
	once(t, "127.20.9.1:40105") // the old config still runs
}

// TestSNAT: automap uses the self IP (or the virtual's address) and keeps
// the client's port; a snatpool uses its address.
func TestSNAT(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "127.20.10.2:9000", "S1")
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name  string
		snat  SNAT
		self  []netip.Addr
		pools map[string][]netip.Addr
		want  string
	}{
		{"none", SNAT{Type: SNATNone}, nil, nil, "127.20.10.77"},
		{"automap self", SNAT{Type: SNATAutomap}, []netip.Addr{netip.MustParseAddr("127.20.10.9")}, nil, "127.20.10.9"},
		{"automap virtual", SNAT{Type: SNATAutomap}, nil, nil, "127.20.10.1"},
		{"snatpool", SNAT{Type: SNATPool, Pool: "/Common/sp"}, nil, map[string][]netip.Addr{"/Common/sp": {netip.MustParseAddr("127.20.10.20")}}, "127.20.10.20"},
	} {
		cfg := basic("127.20.10.1:8000", "127.20.10.2:9000")
		cfg.Virtuals["/Common/vs"].SNAT = tc.snat
		cfg.SelfIPs, cfg.SnatPools = tc.self, tc.pools
		mustApply(t, p, cfg)
		c := dialFrom(t, "127.20.10.77", "127.20.10.1:8000")
		c.mustAsk("hi")
		got := srv.lastRemote()
		if got.Addr().String() != tc.want {
			t.Errorf("%s: server saw %v, want address %s", tc.name, got, tc.want)
		}
		if tc.name != "none" && got.Port() != rawsock.AddrPortOf(c.c.LocalAddr()).Port() {
			t.Errorf("%s: source port %d not kept (client %v)", tc.name, got.Port(), c.c.LocalAddr())
		}
	}
}

// TestHalfCloseAndReset: a client's FIN reaches the server and the answer
// still comes back; a server's reset reaches the client as a reset.
func TestHalfCloseAndReset(t *testing.T) {
	t.Parallel()
	startServer(t, "127.20.11.2:9000", "S1")
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.11.1:8000", "127.20.11.2:9000"))
	c := dialVS(t, "127.20.11.1:8000")
	c.c.Write([]byte("last words"))
	c.c.CloseWrite()
	c.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(c.c)
	if err != nil || string(b) != "S1 Response\n" {
		t.Fatalf("after half-close read %q, %v", b, err)
	}
	r := dialVS(t, "127.20.11.1:8000")
	r.c.Write([]byte("reset\n"))
	r.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = r.c.Read(make([]byte, 10))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("server reset reached the client as %v", err)
	}
	eventually(t, "table empty", func() bool { return p.ConnectionCount() == 0 })
}

// TestBulkTransfer moves more than the copy buffer so the splice path runs,
// and checks the bytes and the counters.
func TestBulkTransfer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.20.12.2:9000")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 3<<20 + 123
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(io.Discard, io.LimitReader(c, 1))
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i)
		}
		c.Write(payload)
	}()
	p, _ := newPlane(t)
	mustApply(t, p, basic("127.20.12.1:8000", "127.20.12.2:9000"))
	c := dialVS(t, "127.20.12.1:8000")
	c.c.Write([]byte("g"))
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c.c)
	if err != nil || len(b) != size {
		t.Fatalf("read %d bytes, %v", len(b), err)
	}
	for i := range b {
		if b[i] != byte(i) {
			t.Fatalf("byte %d corrupted", i)
		}
	}
	eventually(t, "counters", func() bool {
		v, _ := p.Virtual("/Common/vs")
		return v.ClientSide.BitsOut == size*8 && v.ClientSide.BitsIn == 8
	})
}

// TestIPv6Loopback: a virtual on ::1 proxies to a member on ::1, and the
// member's name uses BIG-IP's '.' before the port.
func TestIPv6Loopback(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback")
	} else {
		ln.Close()
	}
	startServer(t, "[::1]:47910", "S6")
	p, _ := newPlane(t)
	mustApply(t, p, basic("[::1]:47911", "[::1]:47910"))
	if a := once(t, "[::1]:47911"); a != "S6 Response" {
		t.Fatalf("IPv6 answer %q", a)
	}
	ps, _ := p.Pool("/Common/pool")
	if ps.Members[0].Name != "/Common/::1.47910" {
		t.Fatalf("IPv6 member name %q", ps.Members[0].Name)
	}
}
