package dataplane

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/rules"
)

// ruleLog collects the rules engine's log lines.
type ruleLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *ruleLog) log(facility, line string) {
	l.mu.Lock()
	l.lines = append(l.lines, facility+" "+line)
	l.mu.Unlock()
}

// showOnFailure logs the rules' lines at the end of a test that failed.
func (l *ruleLog) showOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(l.Lines())
		}
	})
}

// Lines is a copy of the lines so far.
func (l *ruleLog) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *ruleLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// compileRules compiles rule bodies (named /Common/r1, /Common/r2 ...) into the
// proxy's hook, as the daemon does at commit.
func compileRules(t testing.TB, bodies ...string) (Rules, *ruleLog) {
	t.Helper()
	lg := &ruleLog{}
	var rs []*rules.Rule
	for i, b := range bodies {
		r, err := rules.Compile(fmt.Sprintf("/Common/r%d", i+1), b)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		rs = append(rs, r)
	}
	prog := rules.NewProgram(&rules.Env{Log: lg.log}, rs...)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	return NewRules(prog), lg
}

// withPool adds a one-member pool to cfg.
func withPool(cfg *Config, name string, members ...string) {
	p := &Pool{Name: name}
	for _, m := range members {
		a := ap(m)
		p.Members = append(p.Members, Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	cfg.Pools[name] = p
}

// rawServer answers every read with reply(data) and remembers what it got.
func rawServer(t *testing.T, addr string, reply func([]byte) []byte) {
	t.Helper()
	serveConns(t, addr, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			if _, err := c.Write(reply(buf[:n])); err != nil {
				return
			}
		}
	})
}

// readAll reads until EOF or an error, within 3 s.
func readAll(t *testing.T, c net.Conn) (string, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// flowsOf lists the connection records of a virtual.
func flowsOf(p *Plane, vs string) []flows.Record {
	var out []flows.Record
	p.table.Walk(flows.Filter{Virtual: vs}, func(r *flows.Record) bool {
		out = append(out, *r)
		return true
	})
	return out
}

func TestRulesRouteByLocalPort(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.70.2:10017", "S1")
	startServer(t, "127.0.70.3:10617", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.70.1:0")
	v := cfg.Virtuals["/Common/vs"]
	v.Pool = ""
	v.TranslatePort = false
	v.PortRanges = []PortRange{{Low: 10000, High: 10999}}
	withPool(cfg, "/Common/WSH_1_pool", "127.0.70.2:0")
	withPool(cfg, "/Common/WSH_2_pool", "127.0.70.3:0")
	v.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    if { [TCP::local_port] >= 10000 and [TCP::local_port] < 10500 } {
        pool WSH_1_pool
    } elseif { [TCP::local_port] >= 10500 and [TCP::local_port] < 11000 } {
        pool WSH_2_pool
    } else {
        drop
    }
}`)
	mustApply(t, p, cfg)
	for _, tc := range []struct{ port, want string }{
		{"10017", "S1 Response"},
		{"10617", "S2 Response"},
	} {
		if got := once(t, "127.0.70.1:"+tc.port); got != tc.want {
			t.Errorf("port %s: %q, want %q", tc.port, got, tc.want)
		}
	}
}

func TestRulesDelayedBinding(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.70.12:9000", "S1")
	startServer(t, "127.0.70.13:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.70.11:8000", "127.0.70.12:9000")
	withPool(cfg, "/Common/other", "127.0.70.13:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "other" } { pool other }
    TCP::release
}`)
	mustApply(t, p, cfg)

	c := dialVS(t, "127.0.70.11:8000")
	eventually(t, "the client flow", func() bool { return len(flowsOf(p, "/Common/vs")) == 1 })
	if r := flowsOf(p, "/Common/vs")[0]; r.SSServer.IsValid() {
		t.Fatalf("a server flow exists before any data: %+v", r)
	}
	if a := c.mustAsk("other please"); a != "S2 Response" {
		t.Fatalf("CLIENT_DATA's pool not used: %q", a)
	}
	if r := flowsOf(p, "/Common/vs"); len(r) != 1 || r[0].SSServer != ap("127.0.70.13:9000") {
		t.Fatalf("server flow after data: %+v", r)
	}
	// Released: later data flows without the rule, still to the same server.
	if a := c.mustAsk("again"); a != "S2 Response" {
		t.Fatalf("second message: %q", a)
	}
	if a := once(t, "127.0.70.11:8000"); a != "S1 Response" {
		t.Fatalf("default pool: %q", a)
	}
}

func TestRulesRespondWithoutPool(t *testing.T) {
	t.Parallel()
	p, _ := newPlane(t)
	cfg := basic("127.0.70.21:8000")
	cfg.Virtuals["/Common/vs"].Pool = ""
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    TCP::respond "hello [string trim [TCP::payload]] from [IP::local_addr]\n"
    TCP::close
}`)
	mustApply(t, p, cfg)
	c, err := net.Dial("tcp", "127.0.70.21:8000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "bob\n")
	got, err := readAll(t, c)
	if err != nil || got != "hello bob from 127.0.70.21\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	eventually(t, "the flow to end", func() bool { return len(flowsOf(p, "/Common/vs")) == 0 })
}

func TestRulesRuntimeErrorResetsOneConnection(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.70.32:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.70.31:8000", "127.0.70.32:9000")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "boom" } { error "bad input" }
    TCP::release
}`)
	mustApply(t, p, cfg)
	good := dialVS(t, "127.0.70.31:8000")
	if a := good.mustAsk("hi"); a != "S1 Response" {
		t.Fatalf("good client: %q", a)
	}
	bad := dialVS(t, "127.0.70.31:8000")
	if _, err := bad.ask("boom"); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Fatalf("the failing connection was not reset: %v", err)
	}
	if a := good.mustAsk("still there"); a != "S1 Response" {
		t.Fatalf("the other connection suffered: %q", a)
	}
	if !strings.Contains(lg.String(), "local0.err TCL error: /Common/r1 <CLIENT_DATA> - bad input") {
		t.Fatalf("log:\n%s", lg)
	}
}

func TestRulesServerSideRewrite(t *testing.T) {
	t.Parallel()
	rawServer(t, "127.0.70.42:6789", func([]byte) []byte { return []byte("WSH 127.0.70.42:10017\n") })
	p, _ := newPlane(t)
	cfg := basic("127.0.70.41:6789", "127.0.70.42:6789")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA {
    if { [regexp -indices {WSH ([0-9.]+):} [TCP::payload] -> addr] } {
        set from [lindex $addr 0]
        TCP::payload replace $from [expr {[lindex $addr 1] - $from + 1}] [IP::local_addr clientside]
    }
    TCP::release
    TCP::collect
}`)
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.70.41:6789")
	for i := 0; i < 2; i++ {
		if a := c.mustAsk("hello"); a != "WSH 127.0.70.41:10017" {
			t.Fatalf("answer %d: %q", i, a)
		}
	}
}

func TestRulesDecisions(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.70.52:9000", "S1")
	startServer(t, "127.0.70.53:9000", "S2")
	for i, tc := range []struct {
		name, rule string
		want       string // answer, or "reset"/"closed"
	}{
		{"pool member", `when CLIENT_ACCEPTED { pool other member 127.0.70.53 9000 }`, "S2 Response"},
		{"not a member", `when CLIENT_ACCEPTED { pool pool member 127.0.70.53 9000 }`, "reset"},
		{"node", `when CLIENT_ACCEPTED { node 127.0.70.53 9000 }`, "S2 Response"},
		{"reject", `when CLIENT_ACCEPTED { reject }`, "reset"},
		{"drop", `when CLIENT_ACCEPTED { drop }`, "closed"},
		{"unknown pool", `when CLIENT_ACCEPTED { pool nope }`, "reset"},
		{"reselect on failure", `
when CLIENT_ACCEPTED { pool dead }
when LB_FAILED { LB::reselect pool other }`, "S2 Response"},
		{"answer on failure", `
when CLIENT_ACCEPTED { pool dead }
when LB_FAILED { TCP::respond "sorry\n" }`, "sorry"},
		{"lb selected sees the member", `
when LB_SELECTED { if { [LB::server addr] ne "127.0.70.52" } { reject } }`, "S1 Response"},
		{"snat", `when CLIENT_ACCEPTED { snat 127.0.70.59 }`, "S1 Response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			vs := fmt.Sprintf("127.0.70.%d:8000", 60+i)
			cfg := basic(vs, "127.0.70.52:9000")
			withPool(cfg, "/Common/dead", "127.0.70.54:9")
			withPool(cfg, "/Common/other", "127.0.70.53:9000")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			mustApply(t, p, cfg)
			// A reset may come before the dial returns: the rule runs
			// as soon as the connection is accepted.
			nc, err := net.DialTimeout("tcp", vs, 2*time.Second)
			a := ""
			if err == nil {
				defer nc.Close()
				c := &client{t: t, c: nc.(*net.TCPConn), r: bufio.NewReader(nc)}
				a, err = c.ask("hello")
			}
			switch {
			case err != nil && strings.Contains(err.Error(), "reset"):
				a = "reset"
			case err == io.EOF:
				a = "closed"
			}
			if a != tc.want {
				t.Fatalf("got %q (%v), want %q", a, err, tc.want)
			}
		})
	}
}

func TestRulesSnatSource(t *testing.T) {
	t.Parallel()
	s := startServer(t, "127.0.70.72:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.70.71:8000", "127.0.70.72:9000")
	cfg.SnatPools = map[string][]netip.Addr{"/Common/sp": {netip.MustParseAddr("127.0.70.79")}}
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { snatpool sp }`)
	mustApply(t, p, cfg)
	once(t, "127.0.70.71:8000")
	if got := s.lastRemote().Addr().String(); got != "127.0.70.79" {
		t.Fatalf("server saw %s, want the snatpool's address", got)
	}
}

func TestRulesEventsAndPartialRelease(t *testing.T) {
	t.Parallel()
	rawServer(t, "127.0.71.2:9000", func(b []byte) []byte { return append([]byte("got "), b...) })
	p, _ := newPlane(t)
	cfg := basic("127.0.71.1:8000", "127.0.71.2:9000")
	var lg *ruleLog
	// Length-prefixed messages: one digit, then that many bytes; each is
	// released on its own with a marker so the server sees the framing.
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `
when CLIENT_ACCEPTED { log local0. "accepted"; TCP::collect 1 }
when CLIENT_DATA {
    set n [string index [TCP::payload] 0]
    if { [TCP::payload length] < $n + 1 } { TCP::collect; return }
    TCP::payload replace 0 1 "<"
    TCP::release [expr {$n + 1}]
    TCP::respond "ok\n"
    TCP::collect 1
}
when LB_SELECTED { log local0. "selected [LB::server addr]" }
when SERVER_CONNECTED { log local0. "connected" }
when SERVER_CLOSED { log local0. "server closed" }
when CLIENT_CLOSED { log local0. "client closed" }`)
	mustApply(t, p, cfg)
	c, err := net.Dial("tcp", "127.0.71.1:8000")
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "3ab")
	io.WriteString(c, "c2x")
	line, _ := r.ReadString('\n')
	if line != "ok\n" {
		t.Fatalf("respond: %q", line)
	}
	// The server answers each read; collect until both messages are seen.
	var seen strings.Builder
	buf := make([]byte, 256)
	for !strings.Contains(seen.String(), "<abc") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	io.WriteString(c, "y")
	for !strings.Contains(seen.String(), "<xy") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	c.Close()
	eventually(t, "CLIENT_CLOSED", func() bool { return strings.Contains(lg.String(), "client closed") })
	want := []string{"accepted", "selected 127.0.71.2", "connected", "server closed", "client closed"}
	got := lg.String()
	last := -1
	for _, w := range want {
		i := strings.Index(got, w)
		if i < last {
			t.Fatalf("events out of order, want %v:\n%s", want, got)
		}
		last = i
	}
}

func TestRulesDetach(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.71.12:9000", "S1")
	startServer(t, "127.0.71.13:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.71.11:8000", "127.0.71.12:9000", "127.0.71.13:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [LB::server] ne "" } { LB::detach }
    TCP::release
    TCP::collect
}`)
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.71.11:8000")
	a1 := c.mustAsk("one")
	a2 := c.mustAsk("two")
	if a1 == a2 {
		t.Fatalf("after LB::detach the second message went to the same server: %q, %q", a1, a2)
	}
	if n := len(flowsOf(p, "/Common/vs")); n != 1 {
		t.Fatalf("%d records, want one server flow at a time", n)
	}
}

// Seed 000's rule on a plain L4 virtual (no message-based profile): both
// sides are collected and released message by message; TCP::notify has
// nothing to do, and the flow behaves as a proxy.
func TestRulesSeed000RuleOnPlainFlow(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.71.22:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.71.21:8000", "127.0.71.22:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA     { TCP::release; TCP::notify request;  TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA     { TCP::release; TCP::notify response; TCP::collect }`)
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.71.21:8000")
	eventually(t, "the client flow alone", func() bool {
		r := flowsOf(p, "/Common/vs")
		return len(r) == 1 && !r[0].SSServer.IsValid()
	})
	for i := 0; i < 3; i++ {
		if a := c.mustAsk(fmt.Sprintf("transaction %d", i)); a != "S1 Response" {
			t.Fatalf("transaction %d: %q", i, a)
		}
	}
	c.c.Close()
	eventually(t, "the flow to end", func() bool { return len(flowsOf(p, "/Common/vs")) == 0 })
}

// TestRulesDefaultPoolIdiom: on a standard virtual, LB::server pool in
// CLIENT_ACCEPTED names the pool the flow will go to (the virtual's, or
// one a rule chose before), as BIG-IP answers there.
func TestRulesDefaultPoolIdiom(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.177.2:9000", "S1")
	startServer(t, "127.0.177.3:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.177.1:8000", "127.0.177.2:9000")
	withPool(cfg, "/Common/other_pool", "127.0.177.3:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    if { [LB::server pool] ne "/Common/pool" } { reject }
    pool other_pool
    if { [LB::server pool] ne "/Common/other_pool" } { reject }
}`)
	mustApply(t, p, cfg)
	if got := once(t, "127.0.177.1:8000"); got != "S2 Response" {
		t.Fatalf("got %q, want S2's answer", got)
	}
}

// IP::stats on a standard virtual: the client connection's bytes so far
// in CLIENT_DATA, and the server connection's in SERVER_DATA.
func TestRulesIPStats(t *testing.T) {
	t.Parallel()
	rawServer(t, "127.0.71.32:9000", func(b []byte) []byte { return append([]byte("got "), b...) })
	p, _ := newPlane(t)
	cfg := basic("127.0.71.31:8000", "127.0.71.32:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { TCP::respond "client [IP::stats bytes in]\n"; TCP::release; TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::payload replace 0 0 "server [IP::stats bytes in] [IP::stats bytes out] "; TCP::release; TCP::collect }`)
	mustApply(t, p, cfg)
	c, err := net.Dial("tcp", "127.0.71.31:8000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "hello")
	for _, want := range []string{"client 5\n", "server 9 5 got hello"} {
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	}
}

// FLOW_INIT runs before CLIENT_ACCEPTED on a standard virtual, in the
// same connection's variables, and can reject the flow.
func TestRulesFlowInit(t *testing.T) {
	t.Parallel()
	rawServer(t, "127.0.71.42:9000", func(b []byte) []byte { return append([]byte("got "), b...) })
	p, _ := newPlane(t)
	cfg := basic("127.0.71.41:8000", "127.0.71.42:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when FLOW_INIT {
    if { [IP::client_addr] eq "127.0.0.2" } { reject }
    set greeting "init"
}
when CLIENT_ACCEPTED { TCP::respond "$greeting accepted\n" }`)
	mustApply(t, p, cfg)
	c, err := net.Dial("tcp", "127.0.71.41:8000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "init accepted\n" {
		t.Fatalf("read %q (%v)", line, err)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	c2, err := d.Dial("tcp", "127.0.71.41:8000")
	if errors.Is(err, syscall.ECONNRESET) {
		return // the reset came before the connect was seen to complete
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(3 * time.Second))
	if b, err := io.ReadAll(c2); err == nil || len(b) > 0 {
		t.Fatalf("a rejected client read %q (%v), want a reset", b, err)
	}
}
