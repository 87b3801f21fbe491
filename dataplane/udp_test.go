package dataplane

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// udpMember is a UDP member process's stand-in: it answers each datagram
// with "label:payload" and remembers where datagrams came from.
type udpMember struct {
	label string
	mu    sync.Mutex
	from  []netip.AddrPort
}

func startUDPMember(t *testing.T, addr, label string) *udpMember {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	return serveUDPMember(t, c, label)
}

// serveUDPMember answers each datagram on c with label and the datagram,
// noting its source, until the test ends.
func serveUDPMember(t *testing.T, c *net.UDPConn, label string) *udpMember {
	t.Cleanup(func() { c.Close() })
	m := &udpMember{label: label}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			m.mu.Lock()
			m.from = append(m.from, from)
			m.mu.Unlock()
			c.WriteToUDPAddrPort(append([]byte(label+":"), buf[:n]...), from)
		}
	}()
	return m
}

func (m *udpMember) sources() []netip.AddrPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]netip.AddrPort(nil), m.from...)
}

// udpClient is one client address and port.
type udpClient struct {
	t *testing.T
	c *net.UDPConn
}

func dialUDP(t *testing.T, src, vs string) *udpClient {
	t.Helper()
	var laddr *net.UDPAddr
	if src != "" {
		laddr = net.UDPAddrFromAddrPort(ap(src))
	}
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &udpClient{t: t, c: c}
}

// ask sends msg and returns the answer; "" when none came within a
// second (a datagram may be lost, so callers ask again where it matters).
func (u *udpClient) ask(msg string) string {
	u.c.Write([]byte(msg))
	u.c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 65535)
	n, err := u.c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// mustAsk asks until an answer comes (up to 5 tries).
func (u *udpClient) mustAsk(msg string) string {
	u.t.Helper()
	for i := 0; i < 5; i++ {
		if a := u.ask(msg); a != "" {
			return a
		}
	}
	u.t.Fatalf("no answer to %q", msg)
	return ""
}

func (u *udpClient) local() netip.AddrPort { return u.c.LocalAddr().(*net.UDPAddr).AddrPort() }

// udpBasic is basic with the virtual made UDP.
func udpBasic(vs string, members ...string) *Config {
	cfg := basic(vs, members...)
	cfg.Virtuals["/Common/vs"].Protocol = ProtoUDP
	return cfg
}

func label(answer string) string { l, _, _ := strings.Cut(answer, ":"); return l }

func TestUDPPerFlowBalancing(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.1.2:5300", "S1")
	startUDPMember(t, "127.41.1.3:5300", "S2")
	p, _ := newPlane(t)
	mustApply(t, p, udpBasic("127.41.1.1:53", "127.41.1.2:5300", "127.41.1.3:5300"))

	a, b := dialUDP(t, "", "127.41.1.1:53"), dialUDP(t, "", "127.41.1.1:53")
	first := a.mustAsk("q1")
	if !strings.HasSuffix(first, ":q1") {
		t.Fatalf("answer %q", first)
	}
	for i := 0; i < 4; i++ {
		if got := a.mustAsk("again"); label(got) != label(first) {
			t.Fatalf("a flow's datagrams went to %s then %s", label(first), label(got))
		}
	}
	if got := b.mustAsk("q"); label(got) == label(first) {
		t.Fatalf("second client went to the same member %s (round robin)", label(got))
	}
	n := 0
	p.Connections(ConnFilter{Protocol: "udp"}, func(r *Connection) bool {
		n++
		if r.CSServer != ap("127.41.1.1:53") || r.SSServer.Port() != 5300 || r.Protocol != "udp" || r.CSPktsIn == 0 || r.SSPktsIn == 0 {
			t.Errorf("record %+v", r)
		}
		return true
	})
	if n != 2 {
		t.Fatalf("%d udp connections, want 2", n)
	}
	// Counters move just after each send: the answer may be back first.
	eventually(t, "the virtual's and pool's counters", func() bool {
		vs, _ := p.Virtual("/Common/vs")
		ps, _ := p.Pool("/Common/pool")
		return vs.ClientSide.TotConns == 2 && vs.ClientSide.CurConns == 2 && vs.ClientSide.PktsIn >= 6 && vs.ClientSide.PktsOut >= 6 &&
			ps.ServerSide.TotConns == 2 && ps.ServerSide.PktsOut >= 6 && ps.ServerSide.PktsIn >= 6
	})
	// delete sys connection ends the flows.
	p.DeleteConnections(ConnFilter{Protocol: "udp"})
	if p.Connections(ConnFilter{Protocol: "udp"}, func(*Connection) bool { return true }) != 0 {
		t.Fatal("flows left after delete")
	}
	vs, _ := p.Virtual("/Common/vs")
	if vs.ClientSide.CurConns != 0 {
		t.Fatalf("current connections %d after delete", vs.ClientSide.CurConns)
	}
}

func TestUDPDatagramLoadBalancing(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.2.2:5300", "S1")
	startUDPMember(t, "127.41.2.3:5300", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.2.1:53", "127.41.2.2:5300", "127.41.2.3:5300")
	cfg.Virtuals["/Common/vs"].DatagramLB = true
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.2.1:53")
	var got []string
	for i := 0; i < 6; i++ {
		got = append(got, label(c.mustAsk("q")))
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("datagrams of one client do not alternate: %v", got)
		}
	}
	legs := 0
	p.Connections(ConnFilter{Protocol: "udp"}, func(r *Connection) bool { legs++; return true })
	if legs != 2 {
		t.Fatalf("%d rows, want one per member", legs)
	}
}

func TestUDPAndTCPShareAnAddress(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.3.2:5300", "U1")
	startServer(t, "127.41.3.3:9000", "T1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.3.1:53", "127.41.3.2:5300")
	tcp := basic("127.41.3.1:53", "127.41.3.3:9000")
	cfg.Virtuals["/Common/tcp_vs"] = tcp.Virtuals["/Common/vs"]
	cfg.Virtuals["/Common/tcp_vs"].Name = "/Common/tcp_vs"
	cfg.Virtuals["/Common/tcp_vs"].Pool = "/Common/tcp_pool"
	cfg.Pools["/Common/tcp_pool"] = tcp.Pools["/Common/pool"]
	cfg.Pools["/Common/tcp_pool"].Name = "/Common/tcp_pool"
	mustApply(t, p, cfg)
	if got := dialUDP(t, "", "127.41.3.1:53").mustAsk("u"); got != "U1:u" {
		t.Fatalf("udp answer %q", got)
	}
	if got := once(t, "127.41.3.1:53"); !strings.Contains(got, "T1") {
		t.Fatalf("tcp answer %q", got)
	}
	// Two udp virtuals on one address are refused.
	cfg2 := udpBasic("127.41.3.1:53", "127.41.3.2:5300")
	cfg2.Virtuals["/Common/vs2"] = &Virtual{Name: "/Common/vs2", Destination: ap("127.41.3.1:53"), Protocol: ProtoUDP, Enabled: true}
	if err := Check(cfg2); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("Check = %v", err)
	}
}

func TestUDPIdleTimeout(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.4.2:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.4.1:53", "127.41.4.2:5300")
	cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.4.1:53")
	c.mustAsk("q")
	var idleTimeout time.Duration
	p.Connections(ConnFilter{}, func(r *Connection) bool { idleTimeout = r.IdleTimeout; return true })
	if idleTimeout != time.Second {
		t.Fatalf("idle timeout %v", idleTimeout)
	}
	eventually(t, "the idle flow to go", func() bool {
		return p.Connections(ConnFilter{}, func(*Connection) bool { return true }) == 0
	})
	// The client's next datagram makes a new flow.
	c.mustAsk("q")
	vs, _ := p.Virtual("/Common/vs")
	if vs.ClientSide.TotConns != 2 {
		t.Fatalf("total connections %d, want 2", vs.ClientSide.TotConns)
	}
}

// A rule's IP::idle_timeout outlasts the profile's for its flow; the
// connection table shows the flow's own timeout.
func TestUDPRuleIdleTimeout(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.4.12:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.4.11:53", "127.41.4.12:5300")
	cfg.Virtuals["/Common/vs"].IdleTimeout = 200 * time.Millisecond
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { IP::idle_timeout 30 }`)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.4.11:53")
	c.mustAsk("q")
	time.Sleep(time.Second) // five times the profile's timeout
	var idleTimeout time.Duration
	if n := p.Connections(ConnFilter{}, func(r *Connection) bool { idleTimeout = r.IdleTimeout; return true }); n != 1 {
		t.Fatalf("%d flows after a second's silence, want 1", n)
	}
	if idleTimeout != 30*time.Second {
		t.Fatalf("idle timeout %v", idleTimeout)
	}
	c.mustAsk("q")
	vs, _ := p.Virtual("/Common/vs")
	if vs.ClientSide.TotConns != 1 {
		t.Fatalf("total connections %d, want 1 (the same flow)", vs.ClientSide.TotConns)
	}
}

func TestUDPSNATAndPersistence(t *testing.T) {
	t.Parallel()
	m1 := startUDPMember(t, "127.41.5.2:5300", "S1")
	m2 := startUDPMember(t, "127.41.5.3:5300", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.5.1:53", "127.41.5.2:5300", "127.41.5.3:5300")
	v := cfg.Virtuals["/Common/vs"]
	v.SNAT = SNAT{Type: SNATPool, Pool: "/Common/sp"}
	cfg.SnatPools = map[string][]netip.Addr{"/Common/sp": {netip.MustParseAddr("127.41.5.9")}}
	v.Persist = &Persistence{Profile: "/Common/source_addr", Method: PersistSourceAddr, Timeout: time.Minute}
	mustApply(t, p, cfg)
	var first string
	for i := 0; i < 4; i++ {
		// New client ports of one address: new flows, the same member.
		got := label(dialUDP(t, "127.41.5.20:0", "127.41.5.1:53").mustAsk("q"))
		if first == "" {
			first = got
		} else if got != first {
			t.Fatalf("persisted client went to %s then %s", first, got)
		}
	}
	// Another address balances afresh (round robin: the other member).
	if got := label(dialUDP(t, "127.41.5.21:0", "127.41.5.1:53").mustAsk("q")); got == first {
		t.Fatalf("a second client address went to %s too", got)
	}
	for _, src := range append(m1.sources(), m2.sources()...) {
		if src.Addr() != netip.MustParseAddr("127.41.5.9") {
			t.Fatalf("member saw source %s, want the snatpool's address", src)
		}
	}
}

func TestUDPMemberStates(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.6.2:5300", "S1")
	startUDPMember(t, "127.41.6.3:5300", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.6.1:53", "127.41.6.2:5300", "127.41.6.3:5300")
	cfg.Pools["/Common/pool"].Members[0].State = StateUserDown
	mustApply(t, p, cfg)
	for i := 0; i < 4; i++ {
		if got := label(dialUDP(t, "", "127.41.6.1:53").mustAsk("q")); got != "S2" {
			t.Fatalf("forced-offline member answered (%s)", got)
		}
	}
	// The virtual disabled: nothing is answered.
	cfg2 := udpBasic("127.41.6.1:53", "127.41.6.2:5300", "127.41.6.3:5300")
	cfg2.Virtuals["/Common/vs"].Enabled = false
	mustApply(t, p, cfg2)
	if got := dialUDP(t, "", "127.41.6.1:53").ask("q"); got != "" {
		t.Fatalf("disabled virtual answered %q", got)
	}
}

func TestUDPRules(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.7.2:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.7.1:53", "127.41.7.2:5300")
	r, _ := compileRules(t, `when CLIENT_ACCEPTED { set n 0 }
when CLIENT_DATA {
  incr n
  if {[UDP::payload] eq "ping"} {
    UDP::respond "pong [UDP::client_port] [UDP::local_port] $n"
    UDP::drop
  }
}
when SERVER_DATA { UDP::payload replace 0 2 "X[UDP::remote_port]" }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.7.1:53")
	want := "pong " + strconv.Itoa(int(c.local().Port())) + " 53 1"
	if got := c.mustAsk("ping"); got != want {
		t.Fatalf("ping: %q, want %q", got, want)
	}
	if got := c.mustAsk("hello"); got != "X5300:hello" {
		t.Fatalf("hello: %q", got)
	}
	// The ping was answered by the rule: no member saw it, no server side
	// was opened for it.
	// (The counters move just after the send, so the answer may be back
	// first. A ping sent on would have come back before hello's answer.)
	eventually(t, "one datagram counted to the pool", func() bool {
		ps, _ := p.Pool("/Common/pool")
		return ps.ServerSide.PktsOut == 1
	})
}

// A udp monitor's verdict steers new flows as on the TCP path: the member
// whose answer does not match is down and takes no flow.
func TestUDPMonitoredMembers(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.8.2:5300", "S1")
	startUDPMember(t, "127.41.8.3:5300", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.8.1:53", "127.41.8.2:5300", "127.41.8.3:5300")
	cfg.Monitors["/Common/udp_s2"] = &Monitor{Name: "/Common/udp_s2", Type: MonitorUDP,
		Interval: 50 * time.Millisecond, Timeout: 200 * time.Millisecond, Send: "health", Recv: "^S2:"}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/udp_s2"}}
	mustApply(t, p, cfg)
	eventually(t, "S1 marked down by its monitor", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/127.41.8.2:5300").MonitorStatus == "down"
	})
	for i := 0; i < 4; i++ {
		if got := label(dialUDP(t, "", "127.41.8.1:53").mustAsk("q")); got != "S2" {
			t.Fatalf("a flow went to the member its monitor marked down (%s)", got)
		}
	}
}

// LB_SELECTED sees each choice and may change it; LB_FAILED answers when
// no member can take a datagram.
func TestUDPLBEvents(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.9.2:5300", "S1")
	startUDPMember(t, "127.41.9.3:5300", "OTHER")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.9.1:53", "127.41.9.2:5300")
	withPool(cfg, "/Common/other", "127.41.9.3:5300")
	r, _ := compileRules(t, `when LB_SELECTED {
  if {[UDP::client_port] % 2 == 0 && [LB::server pool] ne "/Common/other"} { pool other }
}
when LB_FAILED { UDP::respond "no member for [IP::client_addr]" }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	for i := 0; i < 6; i++ {
		c := dialUDP(t, "", "127.41.9.1:53")
		want := "S1"
		if c.local().Port()%2 == 0 {
			want = "OTHER"
		}
		if got := label(c.mustAsk("q")); got != want {
			t.Fatalf("client port %d went to %s, want %s", c.local().Port(), got, want)
		}
	}
	// Every member forced offline: LB_FAILED answers.
	cfg2 := udpBasic("127.41.9.1:53", "127.41.9.2:5300")
	withPool(cfg2, "/Common/other", "127.41.9.3:5300")
	cfg2.Pools["/Common/pool"].Members[0].State = StateUserDown
	cfg2.Pools["/Common/other"].Members[0].State = StateUserDown
	cfg2.Virtuals["/Common/vs"].Rules = r
	mustApply(t, p, cfg2)
	if got := dialUDP(t, "127.41.9.20:0", "127.41.9.1:53").mustAsk("q"); got != "no member for 127.41.9.20" {
		t.Fatalf("LB_FAILED: %q", got)
	}
}

// A rule's persist uie keeps datagrams with one key on one member even
// when every datagram is balanced on its own.
func TestUDPRulePersistence(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.10.2:5300", "S1")
	startUDPMember(t, "127.41.10.3:5300", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.10.1:53", "127.41.10.2:5300", "127.41.10.3:5300")
	cfg.Virtuals["/Common/vs"].DatagramLB = true
	r, _ := compileRules(t, `when CLIENT_DATA { persist uie [getfield [UDP::payload] " " 1] 60 }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.10.1:53")
	seen := map[string]string{}
	for i := 0; i < 8; i++ {
		key := []string{"alice", "bob"}[i%2]
		got := label(c.mustAsk(key + " q"))
		if prev, ok := seen[key]; ok && prev != got {
			t.Fatalf("key %s went to %s, then %s", key, prev, got)
		}
		seen[key] = got
	}
	if seen["alice"] == seen["bob"] {
		t.Fatalf("both keys on %s: the second key was not balanced", seen["alice"])
	}
	if n := p.PersistRecords(persist.Filter{}, func(*persist.Record) bool { return true }); n != 2 {
		t.Fatalf("%d persistence records, want 2", n)
	}
}

// SERVER_CONNECTED runs once per server side of a UDP flow, after
// CLIENT_ACCEPTED, CLIENT_DATA and LB_SELECTED and before the datagram
// goes, SERVER_CLOSED and CLIENT_CLOSED when the flow ends; UDP::hold in CLIENT_ACCEPTED holds the client's datagrams while
// the server is chosen and connected, and UDP::release in
// SERVER_CONNECTED lets them through CLIENT_DATA with the choice known.
// A hold never released keeps them from the member; one released in
// LB_SELECTED does not wait for SERVER_CONNECTED.
func TestUDPServerConnectedAndHold(t *testing.T) {
	t.Parallel()
	m := startUDPMember(t, "127.41.12.2:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.12.1:53", "127.41.12.2:5300")
	events := `
when LB_SELECTED { append ev " selected" }
when SERVER_DATA { UDP::payload replace 0 0 "$ev|" }`
	r, rlog := compileRules(t, `when CLIENT_ACCEPTED { set ev accepted }
when CLIENT_DATA { append ev " data" }
when SERVER_CONNECTED { append ev " connected=[IP::server_addr]:[UDP::server_port]" }
when SERVER_CLOSED { log local0. "server closed [IP::server_addr]:[UDP::server_port]" }
when CLIENT_CLOSED { log local0. "client closed" }`+events)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.12.1:53")
	if got, want := c.mustAsk("a"), "accepted data selected connected=127.41.12.2:5300|S1:a"; got != want {
		t.Fatalf("first datagram: %q, want %q", got, want)
	}
	if got, want := c.mustAsk("b"), "accepted data selected connected=127.41.12.2:5300 data|S1:b"; got != want {
		t.Fatalf("second datagram (no new server side): %q, want %q", got, want)
	}
	// The flow ends (delete sys connection): SERVER_CLOSED, then CLIENT_CLOSED.
	p.DeleteConnections(ConnFilter{})
	eventually(t, "the closing events", func() bool { return len(rlog.Lines()) >= 2 })
	if l := rlog.Lines(); len(l) != 2 || !strings.HasSuffix(l[0], "server closed 127.41.12.2:5300") || !strings.HasSuffix(l[1], "client closed") {
		t.Fatalf("closing events: %q", l)
	}

	// hold makes the rule hold in CLIENT_ACCEPTED and release in the
	// event named ("" never).
	hold := func(releaseIn string) {
		rel := map[string]string{releaseIn: "; UDP::release"}
		r, lg := compileRules(t, `when CLIENT_ACCEPTED { set ev accepted; UDP::hold }
when CLIENT_DATA { append ev " data([LB::server addr])" }
when LB_SELECTED { append ev " selected"`+rel["LB_SELECTED"]+` }
when SERVER_CONNECTED { append ev " connected"`+rel["SERVER_CONNECTED"]+` }
when SERVER_DATA { UDP::payload replace 0 0 "$ev|" }`)
		t.Cleanup(func() {
			if l := lg.Lines(); len(l) > 0 {
				t.Logf("rule log: %q", l)
			}
		})
		setVirtualRules(cfg, "/Common/vs", r)
		mustApply(t, p, cfg)
	}
	for _, in := range []string{"SERVER_CONNECTED", "LB_SELECTED"} {
		hold(in)
		c = dialUDP(t, "", "127.41.12.1:53")
		if got, want := c.mustAsk("h"), "accepted selected connected data(127.41.12.2)|S1:h"; got != want {
			t.Fatalf("held, released in %s: %q, want %q", in, got, want)
		}
	}

	hold("")
	before := len(m.sources())
	c = dialUDP(t, "", "127.41.12.1:53")
	if got := c.ask("never"); got != "" {
		t.Fatalf("held and never released, an answer came: %q", got)
	}
	if n := len(m.sources()) - before; n != 0 {
		t.Fatalf("held and never released, the member saw %d datagrams", n)
	}
}

// Held datagrams are bounded by the udp profile's buffer-max-packets:
// while no member can take the flow, UDP::hold keeps the first two of
// four, and they go, in order, once a member is back and SERVER_CONNECTED
// releases them.
func TestUDPHoldBound(t *testing.T) {
	t.Parallel()
	m := startUDPMember(t, "127.41.13.2:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.13.1:53", "127.41.13.2:5300")
	cfg.Virtuals["/Common/vs"].HoldPackets = 2
	cfg.Pools["/Common/pool"].Members[0].State = StateUserDown
	r, _ := compileRules(t, `when CLIENT_ACCEPTED { UDP::hold }
when SERVER_CONNECTED { UDP::release }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.41.13.1:53")
	for _, d := range []string{"1", "2", "3"} {
		c.c.Write([]byte(d))
	}
	eventually(t, "the three datagrams counted", func() bool {
		vs, _ := p.Virtual("/Common/vs")
		return vs.ClientSide.PktsIn == 3
	})
	cfg2 := udpBasic("127.41.13.1:53", "127.41.13.2:5300")
	cfg2.Virtuals["/Common/vs"].HoldPackets = 2
	cfg2.Virtuals["/Common/vs"].Rules = r
	mustApply(t, p, cfg2)
	c.c.Write([]byte("4"))
	c.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 100)
	for _, want := range []string{"S1:1", "S1:2"} {
		n, err := c.c.Read(buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("released datagram: %q %v, want %q", buf[:n], err, want)
		}
	}
	if n := len(m.sources()); n != 2 {
		t.Fatalf("the member saw %d datagrams, want the 2 held", n)
	}
}

// setVirtualRules gives a virtual of cfg new rules in a copy of its
// configuration: the plane's flows may still read the one applied before
// (their snapshot shares it), so it must not change under them.
func setVirtualRules(cfg *Config, name string, r Rules) {
	v := *cfg.Virtuals[name]
	v.Rules = r
	cfg.Virtuals[name] = &v
}

// LB::server pool in CLIENT_ACCEPTED names the pool the flow will go to
// (the virtual's, or one a rule chose before), as BIG-IP answers there.
func TestUDPDefaultPoolIdiom(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.41.182.2:5300", "S1")
	startUDPMember(t, "127.41.182.3:5300", "OTHER")
	p, _ := newPlane(t)
	cfg := udpBasic("127.41.182.1:53", "127.41.182.2:5300")
	withPool(cfg, "/Common/other", "127.41.182.3:5300")
	r, _ := compileRules(t, `when CLIENT_ACCEPTED {
  if {[LB::server pool] ne "/Common/pool"} { UDP::respond "default [LB::server pool]"; return }
  pool other
  if {[LB::server pool] ne "/Common/other"} { UDP::respond "chosen [LB::server pool]" }
}`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	if got := label(dialUDP(t, "", "127.41.182.1:53").mustAsk("q")); got != "OTHER" {
		t.Fatalf("got %q, want the other pool's member", got)
	}
}
