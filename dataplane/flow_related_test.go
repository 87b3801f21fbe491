package dataplane

import "testing"

// relatedRule creates a related connection from the client's address,
// on port 7021 of the virtual's address, to the data member, and tells
// the client its client flow as F5 writes it.
const relatedRule = `when CLIENT_ACCEPTED {
    set f [FLOW::create_related {
        proto 6
        clientflow -local-port 7021 [IP::client_addr] 0 0
        serverflow 127.163.3.3 2000 0
    }]
    TCP::respond "FLOW $f\n"
}`

// TestFlowCreateRelated: FLOW::create_related on a standard virtual
// opens the related connection's client flow at the port the rule
// names; the client's second connection there reaches the server flow's
// member (not the pool's), as a flow of the virtual.
func TestFlowCreateRelated(t *testing.T) {
	startServer(t, "127.163.3.2:21", "C")
	startServer(t, "127.163.3.3:2000", "D")
	p, lg := newPlane(t)
	cfg := basic("127.163.3.1:21", "127.163.3.2:21")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, relatedRule)
	mustApply(t, p, cfg)
	ctl := dialVS(t, "127.163.3.1:21")
	line, err := ctl.r.ReadString('\n')
	if err != nil {
		t.Fatalf("control connection: %v (log %s)", err, lg)
	}
	if want := "FLOW 127.163.3.1,7021,127.0.0.1,0,0,6\n"; line != want {
		t.Fatalf("the rule's flow %q, want %q", line, want)
	}
	dc := dialVS(t, "127.163.3.1:7021")
	if got := dc.mustAsk("list"); got != "D Response" {
		t.Errorf("related connection: %q, want the server flow's member", got)
	}
	if got := ctl.mustAsk("hello"); got != "C Response" {
		t.Errorf("control connection: %q, want the pool's member", got)
	}
	related := false
	for _, r := range flowsOf(p, "/Common/vs") {
		related = related || r.SSServer == ap("127.163.3.3:2000")
	}
	if !related {
		t.Error("the related connection is not a flow of the virtual server")
	}
}
