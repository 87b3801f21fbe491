package rules

import (
	"strings"
	"testing"
)

// FLOW_INIT runs once, before a flow's first event, and its variables
// are the flow's: rules set their per-connection settings there.
func TestFlowInit(t *testing.T) {
	r := mustCompile(t, "fi", `
when FLOW_INIT { set started 1; append trail "flow_init " }
when CLIENT_ACCEPTED { append trail "accepted($started) " }
when HTTP_REQUEST { append trail "request " }`)
	p := NewProgram(&Env{}, r)
	if !p.Handles(ClientAccepted) {
		t.Fatal("a program with FLOW_INIT does not handle CLIENT_ACCEPTED")
	}
	s := p.NewConnState(newFakeConn())
	for _, ev := range []Event{ClientAccepted, HTTPRequest, HTTPRequest} {
		if err := s.Run(ev); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.Var("trail"); got != "flow_init accepted(1) request request " {
		t.Fatalf("trail %q", got)
	}
	s.Release()

	// The first event need not be CLIENT_ACCEPTED (a DNS listener's first
	// is DNS_REQUEST); a released state starts a new flow.
	s = p.NewConnState(newFakeConn())
	if err := s.Run(HTTPRequest); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Var("trail"); got != "flow_init request " {
		t.Fatalf("trail %q", got)
	}
	s.Release()

	// Only FLOW_INIT: CLIENT_ACCEPTED is still raised for it.
	only := NewProgram(&Env{}, mustCompile(t, "only", `when FLOW_INIT { set x 1 }`))
	if !only.Handles(ClientAccepted) || only.Handles(ClientData) {
		t.Fatal("Handles with only FLOW_INIT")
	}

	// A flow FLOW_INIT rejects goes no further.
	rej := NewProgram(&Env{}, mustCompile(t, "rej", `
when FLOW_INIT { if { [active_members test_pool] < 3 } { reject } }
when CLIENT_ACCEPTED { set accepted 1 }`))
	c := newFakeConn()
	s = rej.NewConnState(c)
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if _, ran := s.Var("accepted"); ran {
		t.Error("CLIENT_ACCEPTED ran after FLOW_INIT rejected the flow")
	}
	if !strings.Contains(strings.Join(c.calls, " "), "reject") {
		t.Errorf("calls %v, want a reject", c.calls)
	}
	s.Release()
}
