//go:build linux

package dataplane

import (
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// TestAnyPortRuleNode: in a namespace of its own, under a TCP wildcard
// on every port, host virtuals whose rules compute the node at run time
// (`node $a $port`, `node [format ...]`: destinations the commit cannot
// pass over) reach the real servers on those local addresses, not the
// wildcard: the connect passes its destination over (l4 dialDirect,
// passPort) and the pass goes once the connection is open, so a
// client's own connection to that destination afterwards is the
// wildcard's again. Without the pass the plane's connections are the
// wildcard's (its member answers).
func TestAnyPortRuleNode(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.253.201.11:30001", "N1")
	startServer(t, "127.253.201.12:30002", "N2")
	startServer(t, "127.253.201.30:30030", "W") // the wildcard's member
	p, logs := loggedPlane(t)
	cfg := basic("127.253.201.1:30080", "127.253.201.30:30030")
	withPool(cfg, "/Common/pw", "127.253.201.30:30030")
	cfg.Virtuals["/Common/w"] = wildcardOf("/Common/w", "/Common/pw", ProtoTCP)
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
	set a "127.253.201."
	append a 11
	set port [expr {30000 + 1}]
	node $a $port
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs2"] = &Virtual{Name: "/Common/vs2", Destination: ap("127.253.201.2:30080"),
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	rs2, lg2 := compileRules(t, `when CLIENT_ACCEPTED {
	node [format "%s.%d:%d" 127.253.201 12 30002]
}`)
	lg2.showOnFailure(t)
	cfg.Virtuals["/Common/vs2"].Rules = rs2
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for range 3 {
		if got, err := askOnce("127.253.201.1:30080"); got != "N1 Response" {
			t.Errorf("node $a $port: %q (%v)\n%s", got, err, logs)
		}
		if got, err := askOnce("127.253.201.2:30080"); got != "N2 Response" {
			t.Errorf("node [format ...]: %q (%v)", got, err)
		}
	}
	p.mu.Lock()
	passed := p.steer.PassedCount()
	p.mu.Unlock()
	if passed != 0 {
		t.Errorf("%d destinations still passed over once the connections are open", passed)
	}
	// The pass went: a client's connection there is the wildcard's.
	if got, err := askOnce("127.253.201.11:30001"); got != "W Response" {
		t.Errorf("a client to the node's address after the pass: %q (%v)", got, err)
	}
	if v, _ := p.Virtual("/Common/w"); v.ClientSide.TotConns != 1 {
		t.Errorf("the wildcard: %d client connections, want 1 (the client's only)", v.ClientSide.TotConns)
	}
}

// TestAnyPortRuleSideband: under TCP and UDP wildcards on every port, a
// rule's sideband connections to addresses it computes (rules.Env's
// PassOver, the plane's PassOver) reach the TCP server and the UDP
// server on those local addresses, not the wildcards' members; the
// passes end (the TCP one once connected, the UDP one at close), and a
// client's connection to the TCP server's address afterwards is the
// TCP wildcard's.
func TestAnyPortRuleSideband(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.253.201.13:30003", "N3")
	startUDPMember(t, "127.253.201.14:30004", "U4")
	startServer(t, "127.253.201.30:30030", "W")
	startUDPMember(t, "127.253.201.30:30030", "WU")
	startServer(t, "127.253.201.31:30031", "M")
	p, _ := loggedPlane(t)
	cfg := basic("127.253.201.3:30080", "127.253.201.31:30031")
	withPool(cfg, "/Common/pw", "127.253.201.30:30030")
	cfg.Virtuals["/Common/w"] = wildcardOf("/Common/w", "/Common/pw", ProtoTCP)
	cfg.Virtuals["/Common/wu"] = wildcardOf("/Common/wu", "/Common/pw", ProtoUDP)
	lg := &ruleLog{}
	lg.showOnFailure(t)
	r, err := rules.Compile("/Common/sb", `when CLIENT_ACCEPTED {
	set a "127.253.201."
	set t [connect -timeout 2000 "${a}13:[expr {30000 + 3}]"]
	send $t "hello\n"
	set tr [string trim [recv -eol -timeout 2000 $t]]
	close $t
	set u [connect -protocol UDP -timeout 2000 "${a}14:30004"]
	send $u "u"
	set ur [recv -timeout 2000 $u]
	log local0. "tcp=$tr udp=$ur"
	close $u
}`)
	if err != nil {
		t.Fatal(err)
	}
	prog := rules.NewProgram(&rules.Env{Log: lg.log, PassOver: p.PassOver}, r)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	cfg.Virtuals["/Common/vs"].Rules = NewRules(prog)
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	if got, err := askOnce("127.253.201.3:30080"); got != "M Response" {
		t.Errorf("through the virtual: %q (%v)", got, err)
	}
	eventually(t, "the rule's log line", func() bool { return len(lg.Lines()) > 0 })
	if l := lg.Lines(); len(l) != 1 || !strings.HasSuffix(l[0], "tcp=N3 Response udp=U4:u") {
		t.Errorf("the sideband answers: %q, want tcp=N3 Response udp=U4:u", l)
	}
	p.mu.Lock()
	passed := p.steer.PassedCount()
	p.mu.Unlock()
	if passed != 0 {
		t.Errorf("%d destinations still passed over after the sidebands closed", passed)
	}
	if got, err := askOnce("127.253.201.13:30003"); got != "W Response" {
		t.Errorf("a client to the sideband's address after the pass: %q (%v)", got, err)
	}
}

// TestAnyPortRuleNodeHTTP: under a TCP wildcard on every port, an http
// virtual whose rule computes the node in HTTP_REQUEST reaches the web
// server on that local address, not the wildcard's member (the message
// engine's connect passes the node over: mblbvs dialFD, passedUntil);
// the pass ends within the connect timeout.
func TestAnyPortRuleNodeHTTP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startPortEcho(t, "127.253.201.15:30015", "H15")
	startPortEcho(t, "127.253.201.30:30030", "W")
	startPortEcho(t, "127.253.201.31:30031", "M")
	p, _ := loggedPlane(t)
	cfg := basic("127.253.201.5:30080", "127.253.201.31:30031")
	cfg.Virtuals["/Common/vs"].MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	withPool(cfg, "/Common/pw", "127.253.201.30:30030")
	cfg.Virtuals["/Common/w"] = wildcardOf("/Common/w", "/Common/pw", ProtoTCP)
	rs, lg := compileRules(t, `when HTTP_REQUEST {
	set a "127.253.201.1"
	append a 5
	node $a [expr {30000 + 15}]
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	hc := &http.Client{Timeout: 5 * time.Second}
	for range 2 {
		resp, err := hc.Get("http://127.253.201.5:30080/x")
		if err != nil {
			t.Fatalf("http: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(body), "H15 ") {
			t.Errorf("the rule's node: %d %q", resp.StatusCode, body)
		}
		hc.CloseIdleConnections()
	}
	eventually(t, "the node's pass to end", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.steer.PassedCount() == 0
	})
	if v, _ := p.Virtual("/Common/w"); v.ClientSide.TotConns != 0 {
		t.Errorf("the wildcard: %d client connections, want none", v.ClientSide.TotConns)
	}
}

// TestAnyPortWildcardIPv6Port: in a namespace of its own, an IPv6
// wildcard on one port (`[::]:30110 mask ::/0`, over a /64 delivered
// locally) takes that port of any address and no other port; its
// member, on an address of the /64, is the plane's own destination and
// reached; a UDP one on the same port answers from the port the client
// sent to. (The clients ask unassigned addresses: one to the member's
// assigned address leaves from it, and the address talking to itself is
// never steered.)
func TestAnyPortWildcardIPv6Port(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, args := range [][]string{
		{"-6", "route", "add", "local", "fd00:253:200::/64", "dev", "lo"},
		{"addr", "add", "fd00:253:200::30/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	startServer(t, "[fd00:253:200::30]:30030", "W6")
	startUDPMember(t, "[fd00:253:200::30]:30030", "U6")
	p, _ := loggedPlane(t)
	cfg := basic("[::]:30110", "[fd00:253:200::30]:30030")
	cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("::/0")
	cfg.Virtuals["/Common/vu"] = &Virtual{Name: "/Common/vu", Destination: ap("[::]:30110"), Network: netip.MustParsePrefix("::/0"),
		Protocol: ProtoUDP, Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, dst := range []string{"[fd00:253:200::9]:30110", "[fd00:253:200::a]:30110"} {
		if got, err := askOnce(dst); got != "W6 Response" {
			t.Errorf("%s: %q (%v)", dst, got, err)
		}
		if got := dialUDP(t, "", dst).mustAsk("u"); got != "U6:u" {
			t.Errorf("udp %s: %q", dst, got)
		}
	}
	if got, err := askOnce("[fd00:253:200::9]:30111"); err == nil {
		t.Errorf("another port: %q, want refused", got)
	}
	if v, _ := p.Virtual("/Common/vs"); v.ClientSide.TotConns != 2 {
		t.Errorf("the wildcard: %d client connections, want 2", v.ClientSide.TotConns)
	}
}

// TestAnyPortRuleNodeUDP: under a UDP wildcard on every port, a udp
// virtual whose rule computes the node reaches the UDP server on that
// local address, not the wildcard's member: the node is passed over
// while its leg lasts (udp nodeLeg, Env.Pass), and the pass ends with
// the flow (here, when the virtual goes).
func TestAnyPortRuleNodeUDP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startUDPMember(t, "127.253.201.16:30016", "U16")
	startUDPMember(t, "127.253.201.30:30030", "WU")
	p, _ := loggedPlane(t)
	cfg := basic("127.253.201.6:30080", "127.253.201.30:30030")
	cfg.Virtuals["/Common/vs"].Protocol = ProtoUDP
	cfg.Virtuals["/Common/wu"] = wildcardOf("/Common/wu", "/Common/pool", ProtoUDP)
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
	set a "127.253.201.1"
	append a 6
	node $a [expr {30000 + 16}]
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	c := dialUDP(t, "", "127.253.201.6:30080")
	for _, m := range []string{"a", "b"} {
		if got := c.mustAsk(m); got != "U16:"+m {
			t.Errorf("the rule's node: %q, want U16:%s", got, m)
		}
	}
	passed := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.steer.PassedCount()
	}
	if n := passed(); n != 1 {
		t.Errorf("%d destinations passed over while the flow lasts, want 1", n)
	}
	delete(cfg.Virtuals, "/Common/vs")
	mustApply(t, p, cfg)
	eventually(t, "the node's pass to end with its flow", func() bool { return passed() == 0 })
}

// wildcardOf is the rule-node tests' wildcard: every address and port
// of proto to pool, SNAT none.
func wildcardOf(name, pool string, proto Protocol) *Virtual {
	return &Virtual{Name: name, Destination: ap("0.0.0.0:0"), Network: netip.MustParsePrefix("0.0.0.0/0"), Protocol: proto,
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: pool, SNAT: SNAT{Type: SNATNone}}
}
