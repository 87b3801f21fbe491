//go:build linux

package dataplane

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortRuleNodeReselect: under a TCP wildcard on every port, in a
// namespace of its own, the nodes an L4 virtual's rule computes in
// LB_FAILED (`LB::reselect node ADDR PORT`, after its pool member
// refused) and in LB_SELECTED (`node`, replacing the member chosen)
// reach the real servers on those local addresses, not the wildcard's
// member: both connect through l4's dialDirect, which passes the
// computed destination over for its connect (Env.Pass, passPort); the
// passes are gone once the connections are open. Without the pass the
// plane's connections are the wildcard's (its member answers "W").
func TestAnyPortRuleNodeReselect(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startServer(t, "127.26.201.11:30001", "N1")
	startServer(t, "127.26.201.12:30002", "N2")
	startServer(t, "127.26.201.30:30030", "W") // the wildcard's member
	startServer(t, "127.26.201.31:30031", "M") // vs2's member, replaced in LB_SELECTED
	p, logs := loggedPlane(t)
	// vs: its member refuses (nothing listens there; a member is passed
	// over at commit, so the kernel refuses it, not the wildcard).
	cfg := basic("127.26.201.1:30080", "127.26.201.20:30099")
	withPool(cfg, "/Common/pw", "127.26.201.30:30030")
	withPool(cfg, "/Common/p2", "127.26.201.31:30031")
	cfg.Virtuals["/Common/w"] = wildcardOf("/Common/w", "/Common/pw", ProtoTCP)
	rs, lg := compileRules(t, `when LB_FAILED {
	set a "127.26.201."
	append a 11
	LB::reselect node $a [expr {30000 + 1}]
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	cfg.Virtuals["/Common/vs2"] = &Virtual{Name: "/Common/vs2", Destination: ap("127.26.201.2:30080"),
		Enabled: true, TranslateAddress: true, TranslatePort: true, Pool: "/Common/p2", SNAT: SNAT{Type: SNATNone}}
	rs2, lg2 := compileRules(t, `when LB_SELECTED {
	node [format "%s.%d" 127.26.201 12] [expr {30000 + 2}]
}`)
	lg2.showOnFailure(t)
	cfg.Virtuals["/Common/vs2"].Rules = rs2
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for range 3 {
		if got, err := askOnce("127.26.201.1:30080"); got != "N1 Response" {
			t.Errorf("LB_FAILED, LB::reselect node $a $port: %q (%v)\n%s", got, err, logs)
		}
		if got, err := askOnce("127.26.201.2:30080"); got != "N2 Response" {
			t.Errorf("LB_SELECTED, node [format ...]: %q (%v)", got, err)
		}
	}
	p.mu.Lock()
	passed := p.steer.PassedCount()
	p.mu.Unlock()
	if passed != 0 {
		t.Errorf("%d destinations still passed over once the connections are open", passed)
	}
	if v, _ := p.Virtual("/Common/w"); v.ClientSide.TotConns != 0 {
		t.Errorf("the wildcard: %d client connections, want none", v.ClientSide.TotConns)
	}
}

// TestAnyPortRuleNodeReselectHTTP: the same for an http virtual (the
// message engine's connect, mblbvs, passNode): the node computed in
// LB_FAILED (`LB::reselect node`, the member refusing) reaches the web
// server on that local address, not the wildcard's member; the pass
// ends within the connect timeout. (`node` in an http virtual's
// LB_SELECTED goes through the same connect: TestHTTPLBSelectedDecisions.)
func TestAnyPortRuleNodeReselectHTTP(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startPortEcho(t, "127.26.201.15:30015", "H15")
	startPortEcho(t, "127.26.201.30:30030", "W")
	p, logs := loggedPlane(t)
	cfg := basic("127.26.201.5:30080", "127.26.201.20:30099") // refuses
	cfg.Virtuals["/Common/vs"].MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	withPool(cfg, "/Common/pw", "127.26.201.30:30030")
	cfg.Virtuals["/Common/w"] = wildcardOf("/Common/w", "/Common/pw", ProtoTCP)
	rs, lg := compileRules(t, `when LB_FAILED {
	set a "127.26.201.1"
	append a 5
	LB::reselect node $a [expr {30000 + 15}]
}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	hc := &http.Client{Timeout: 5 * time.Second}
	for range 2 {
		resp, err := hc.Get("http://127.26.201.5:30080/x")
		if err != nil {
			t.Fatalf("LB_FAILED, LB::reselect node: %v\n%s", err, logs)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(body), "H15 ") {
			t.Errorf("LB_FAILED, LB::reselect node: %d %q, want H15", resp.StatusCode, body)
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
