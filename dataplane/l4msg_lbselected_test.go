package dataplane

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
	"github.com/openltm/openltm/dataplane/starttls"
)

// The message protocols the L4 engine runs as flows of their own
// (internal/l4: mqtt.go, fix.go, ldap.go, diameter.go): a decision in
// LB_SELECTED acts there too. MQTT and FIX connect one member, at the
// client's first message, and LDAP at the client's connection, through
// the L4 connect, which follows the decision; Diameter balances each
// request by itself, and LB_SELECTED runs for each choice
// (internal/l4/diameter_lbselected.go).

// TestMQTTLBSelectedDecision: `pool p2` in LB_SELECTED on an mqtt
// virtual connects the client to p2's broker.
func TestMQTTLBSelectedDecision(t *testing.T) {
	a := startBroker(t, "127.220.6.11:1883", "A")
	b := startBroker(t, "127.220.6.12:1883", "B")
	p, logs := newPlane(t)
	cfg := basic("127.220.6.1:1883", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p2", b.Addr())
	mqttVirtual(t, cfg, "/Common/mq", "127.220.6.1:1883", "/Common/pool", lbSelectedElsewhere)
	mustApply(t, p, cfg)
	mqttDial(t, "127.220.6.1:1883", mqtttest.Connect("c1"))
	if !slices.Contains(b.ClientIDs(), "c1") || slices.Contains(a.ClientIDs(), "c1") {
		t.Errorf("client c1 at A %v, B %v; want at B only (pool p2)\n%s", a.ClientIDs(), b.ClientIDs(), logs)
	}
}

// TestFIXLBSelectedDecision: `pool p2` in LB_SELECTED on a fix virtual
// connects the session to p2's acceptor, whose Logon answers.
func TestFIXLBSelectedDecision(t *testing.T) {
	a := startAcceptor(t, "127.220.7.11:9878", "member-a")
	b := startAcceptor(t, "127.220.7.12:9878", "member-b")
	p, logs := newPlane(t)
	cfg := basic("127.220.7.1:9878", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p2", b.Addr())
	fixVirtual(t, cfg, "/Common/fx", "127.220.7.1:9878", "/Common/pool", fix.Options{}, lbSelectedElsewhere)
	mustApply(t, p, cfg)
	c := fixDial(t, "127.220.7.1:9878")
	c.Send(fixLogon("FIX.4.4", "BANZAI"))
	if got := recvHas(t, c, "35=A"); !strings.Contains(got, "49=member-b") {
		t.Errorf("Logon answered %s; want member-b's (pool p2)\n%s", got, logs)
	}
	if n := len(a.Messages()); n != 0 {
		t.Errorf("member-a got %d messages, want none", n)
	}
}

// TestDiameterLBSelectedEachRequest: on a diameter virtual each request
// is balanced by itself, and LB_SELECTED decides for each: by the
// request's session, `pool p2` sends it to p2's member and `node` to a
// server in no pool (each opened and sent the client's CER first, its
// CEA kept from the client); other requests stay in the virtual's pool.
// LB::server names each choice.
func TestDiameterLBSelectedEachRequest(t *testing.T) {
	a := diamServer(t, "127.220.8.11:3868", "member-a.example", false)
	b := diamServer(t, "127.220.8.12:3868", "member-b.example", false)
	n := diamServer(t, "127.220.8.13:3868", "node-c.example", false)
	p, logs := newPlane(t)
	cfg := basic("127.220.8.1:3868", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p2", b.Addr())
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED { set to "" }
when DIAMETER_INGRESS {
    if {[DIAMETER::is_request] && [DIAMETER::command] == 272} { set to [DIAMETER::session] }
}
when LB_SELECTED {
    log local0. "$to [LB::server pool] [LB::server addr]"
    if {[LB::server pool] eq "/Common/pool"} {
        if {$to ends_with ";p2"} { pool p2 } elseif {$to ends_with ";node"} { node 127.220.8.13 3868 }
    }
}`)
	lg.showOnFailure(t)
	diamVirtual(t, cfg, "/Common/dm", "127.220.8.1:3868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/dm"].Rules = rs
	mustApply(t, p, cfg)
	c, cea := diamClient(t, "127.220.8.1:3868", "client.example")
	if cea.Origin != "member-a.example" {
		t.Fatalf("CEA from %s, want member-a's (the virtual's pool)", cea.Origin)
	}
	for _, tc := range []struct{ session, want string }{
		{"client.example;1;a", "member-a.example"},
		{"client.example;2;p2", "member-b.example"},
		{"client.example;3;node", "node-c.example"},
		{"client.example;4;a", "member-a.example"},
		{"client.example;5;p2", "member-b.example"},
	} {
		before := len(lg.Lines())
		if got := ccrs(t, c, "client.example", tc.session)[0].Origin; got != tc.want {
			t.Fatalf("%s answered by %s, want %s\n%s", tc.session, got, tc.want, logs)
		}
		if len(lg.Lines()) == before {
			t.Errorf("%s: LB_SELECTED did not run", tc.session)
		}
	}
	var lines []string
	for _, l := range lg.Lines() {
		lines = append(lines, l[strings.LastIndex(l, ": ")+2:])
	}
	want := []string{
		" /Common/pool 127.220.8.11", // the CER
		"client.example;1;a /Common/pool 127.220.8.11",
		"client.example;2;p2 /Common/pool 127.220.8.11", "client.example;2;p2 /Common/p2 127.220.8.12",
		"client.example;3;node /Common/pool 127.220.8.11", "client.example;3;node  127.220.8.13",
		"client.example;4;a /Common/pool 127.220.8.11",
		"client.example;5;p2 /Common/pool 127.220.8.11", "client.example;5;p2 /Common/p2 127.220.8.12",
	}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("LB_SELECTED runs:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// The member and the node each got the client's CER once.
	for _, s := range []*diamtest.Server{b, n} {
		cers := 0
		for _, g := range s.Got() {
			if g.Code == 257 {
				cers++
			}
		}
		if cers != 1 {
			t.Errorf("%s got %d CERs, want 1", s.Name, cers)
		}
	}
}

// TestLDAPLBSelectedDecision: an LDAP virtual with client-ldap (StartTLS
// offload) connects its member through the L4 connect: `pool p2` in
// LB_SELECTED sends the client's bind and search to p2's directory.
func TestLDAPLBSelectedDecision(t *testing.T) {
	a := startLDAPMember(t, "127.220.9.11:3389", ldap.LDAPResultUnavailable, false)
	b := startLDAPMember(t, "127.220.9.12:3389", ldap.LDAPResultUnavailable, false)
	cert, key, roots := testCert(t, "ldap.example")
	p, logs := newPlane(t)
	cfg := basic("127.220.9.1:389", "127.220.9.11:3389")
	withPool(cfg, "/Common/p2", "127.220.9.12:3389")
	v := cfg.Virtuals["/Common/vs"]
	v.TLS = clientSSL(t, cert, key)
	v.STARTTLS = &starttls.Options{Profile: "/Common/clientldap", Protocol: starttls.LDAP, Mode: starttls.Allow}
	var lg *ruleLog
	v.Rules, lg = compileRules(t, lbSelectedElsewhere)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	c := ldapDial(t, "127.220.9.1:389")
	if err := c.StartTLS(&tls.Config{ServerName: "ldap.example", RootCAs: roots}); err != nil {
		t.Fatalf("StartTLS: %v\n%s", err, logs)
	}
	if dn, err := ldapBindSearch(c); err != nil || dn != "cn=alice,dc=example" {
		t.Fatalf("bind and search: %q %v\n%s", dn, err, logs)
	}
	if !hasOp(b.ops(), "bind") || len(a.ops()) != 0 {
		t.Errorf("the directories heard: A %q, B %q; want B only (pool p2)", a.ops(), b.ops())
	}
}

// TestL4LBSelectedNamesNode: on a plain TCP virtual, LB::server in
// LB_SELECTED names the node a rule chose (address and port, no pool),
// as on message-based virtuals: the choice being decided on comes
// before the flow's server connection and the virtual's pool.
func TestL4LBSelectedNamesNode(t *testing.T) {
	startServer(t, "127.220.10.11:9000", "S1")
	startServer(t, "127.220.10.12:9000", "N")
	p, logs := newPlane(t)
	cfg := basic("127.220.10.1:9000", "127.220.10.11:9000")
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED { node 127.220.10.12 9000 }
when LB_SELECTED { log local0. "<[LB::server pool]> [LB::server addr] [LB::server port]" }`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	if got := dialVS(t, "127.220.10.1:9000").mustAsk("x"); got != "N Response" {
		t.Fatalf("%q, want the node's\n%s", got, logs)
	}
	l := lg.Lines()
	if len(l) != 1 || !strings.HasSuffix(l[0], ": <> 127.220.10.12 9000") {
		t.Errorf("LB_SELECTED logged %q, want the node", l)
	}
}

// TestDiameterLBSelectedHolds: a decision naming the pool the request's
// member is in already (`LB::reselect pool p2` written unconditionally)
// is no change: LB_SELECTED runs once per request, which stays on its
// member; the flow's first choice (in the virtual's pool) moved to p2.
func TestDiameterLBSelectedHolds(t *testing.T) {
	a := diamServer(t, "127.220.11.11:3868", "member-a.example", false)
	b := diamServer(t, "127.220.11.12:3868", "member-b.example", false)
	p, logs := newPlane(t)
	cfg := basic("127.220.11.1:3868", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p2", b.Addr())
	rs, lg := compileRules(t, `when LB_SELECTED {
    log local0. "[LB::server pool]"
    LB::reselect pool p2
}`)
	lg.showOnFailure(t)
	diamVirtual(t, cfg, "/Common/dm", "127.220.11.1:3868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/dm"].Rules = rs
	mustApply(t, p, cfg)
	c, cea := diamClient(t, "127.220.11.1:3868", "client.example")
	if cea.Origin != "member-b.example" {
		t.Fatalf("CEA from %s, want member-b's (pool p2)\n%s", cea.Origin, logs)
	}
	for i := range 3 {
		before := len(lg.Lines())
		if got := ccrs(t, c, "client.example", fmt.Sprintf("client.example;h;%d", i))[0].Origin; got != "member-b.example" {
			t.Fatalf("request %d answered by %s, want member-b", i, got)
		}
		if n := len(lg.Lines()) - before; n != 1 {
			t.Errorf("request %d: LB_SELECTED ran %d times, want 1", i, n)
		}
	}
	if len(a.Got()) != 0 {
		t.Errorf("member-a got %d messages, want none", len(a.Got()))
	}
}

// TestDiameterIngressDecision: a pool, member or node decision in a
// client's request's DIAMETER_INGRESS sends that request there (a pool
// stays the flow's pool for its later requests, a member or node is the
// request's alone), and LB_SELECTED runs for that choice. Before, the
// flow's later requests were balanced in its first message's pool
// whatever the rule decided.
func TestDiameterIngressDecision(t *testing.T) {
	a := diamServer(t, "127.220.12.11:3868", "member-a.example", false)
	b := diamServer(t, "127.220.12.12:3868", "member-b.example", false)
	diamServer(t, "127.220.12.13:3868", "node-c.example", false)
	p, logs := newPlane(t)
	cfg := basic("127.220.12.1:3868", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/p2", b.Addr())
	rs, lg := compileRules(t, `when DIAMETER_INGRESS {
    if {[DIAMETER::is_request] && [DIAMETER::command] == 272} {
        switch -glob -- [DIAMETER::session] {
            "*;p2" { pool p2 }
            "*;member" { pool pool member 127.220.12.11 3868 }
            "*;node" { node 127.220.12.13 3868 }
        }
    }
}
when LB_SELECTED { log local0. "[LB::server addr]" }`)
	lg.showOnFailure(t)
	diamVirtual(t, cfg, "/Common/dm", "127.220.12.1:3868", "/Common/pool", diameter.Options{}, "")
	cfg.Virtuals["/Common/dm"].Rules = rs
	mustApply(t, p, cfg)
	c, _ := diamClient(t, "127.220.12.1:3868", "client.example")
	for _, tc := range []struct{ session, want, selected string }{
		{"s;1;none", "member-a.example", "127.220.12.11"},
		{"s;2;p2", "member-b.example", "127.220.12.12"},
		{"s;3;none", "member-b.example", "127.220.12.12"}, // p2 is the flow's pool now
		{"s;4;node", "node-c.example", "127.220.12.13"},
		{"s;5;member", "member-a.example", "127.220.12.11"},
		{"s;6;none", "member-a.example", "127.220.12.11"}, // the member's pool
	} {
		before := len(lg.Lines())
		if got := ccrs(t, c, "client.example", tc.session)[0].Origin; got != tc.want {
			t.Fatalf("%s answered by %s, want %s\n%s", tc.session, got, tc.want, logs)
		}
		l := lg.Lines()[before:]
		if len(l) != 1 || !strings.HasSuffix(l[0], ": "+tc.selected) {
			t.Errorf("%s: LB_SELECTED logged %q, want once for %s", tc.session, l, tc.selected)
		}
	}
}
