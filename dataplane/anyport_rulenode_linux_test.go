//go:build linux

package dataplane

import (
	"net/netip"
	"testing"
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
	cfg.Virtuals["/Common/w"] = &Virtual{Name: "/Common/w", Destination: ap("0.0.0.0:0"), Network: netip.MustParsePrefix("0.0.0.0/0"),
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/pw", SNAT: SNAT{Type: SNATNone}}
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
