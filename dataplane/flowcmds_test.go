package dataplane

import (
	"strings"
	"testing"
	"time"
)

// FLOW::idle_timeout shortens one connection's idle timeout below its
// virtual's: the idle client is reset while a client of the same kind of
// virtual without the rule, idle as long, is kept. TCP::naglemode acts on
// the proxy's own member socket (Go's sockets start with TCP_NODELAY, so
// TCP::naglestate reads the change back from the kernel).
func TestRuleFlowIdleTimeoutAndNaglemode(t *testing.T) {
	t.Parallel()
	startServer(t, "127.107.0.2:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.107.0.1:9000", "127.107.0.2:9000")
	v := cfg.Virtuals["/Common/vs"]
	v.IdleTimeout = 300 * time.Second
	var lg *ruleLog
	v.Rules, lg = compileRules(t, `when CLIENT_ACCEPTED {
    FLOW::idle_timeout [FLOW::this] 1
}
when SERVER_CONNECTED {
    log local0. "before [TCP::naglemode]"
    TCP::naglemode enable
    log local0. "after [TCP::naglestate] [TCP::naglemode] idle [FLOW::idle_timeout [FLOW::peer [FLOW::this]]]"
}`)
	lg.showOnFailure(t)
	keep := *v
	keep.Name, keep.Destination, keep.Rules = "/Common/keep", ap("127.107.0.1:9001"), nil
	cfg.Virtuals["/Common/keep"] = &keep
	mustApply(t, p, cfg)

	c := dialVS(t, "127.107.0.1:9000")
	kept := dialVS(t, "127.107.0.1:9001")
	c.mustAsk("a")
	kept.mustAsk("a")
	eventually(t, "the rule's one-second idle timeout to end the client", func() bool {
		return len(flowsOf(p, "/Common/vs")) == 0
	})
	if _, err := c.ask("b"); err == nil {
		t.Fatal("the idle client was not reset")
	}
	kept.mustAsk("b") // the other virtual's client, idle as long, is kept
	got := lg.String()
	if !strings.Contains(got, "before disable") || !strings.Contains(got, "after enabled enable idle 1") {
		t.Errorf("log:\n%s", got)
	}
}

// On a UDP virtual, UDP::sendbuffer sets the flow's own member socket
// (read back from the kernel), refuses the client side's (the listener's
// socket, every client's), and UDP::mss reads the path MTU towards the
// member; FLOW::refresh restarts the flow's idle time.
func TestRuleUDPSettings(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.107.1.2:5300", "S1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.107.1.1:53", "127.107.1.2:5300")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when SERVER_DATA {
    UDP::sendbuffer 50000
    set err ""
    catch { clientside { UDP::sendbuffer 50000 } } err
    FLOW::refresh
    log local0. "sendbuffer [UDP::sendbuffer] mss [UDP::mss] idle [FLOW::idle_duration] client: $err"
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	dialUDP(t, "", "127.107.1.1:53").mustAsk("q")
	eventually(t, "SERVER_DATA's log line", func() bool { return strings.Contains(lg.String(), "sendbuffer") })
	got := lg.String()
	for _, want := range []string{"sendbuffer 50000 mss ", " idle 0 ", "client: UDP::sendbuffer: the client side's socket is the virtual server's"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}

// On a message-balanced virtual the FLOW:: commands reach the client's
// session: FLOW::idle_timeout its timeout, FLOW::refresh and
// FLOW::idle_duration the activity that timeout measures.
func TestMBLBRuleFlowActivity(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.107.2.2:9000", "S1")
	cfg := mblbConfig("127.107.2.1:9000", &MBLB{}, "127.107.2.2:9000")
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED {
    FLOW::idle_timeout 40
    FLOW::refresh
    log local0. "idle [FLOW::idle_timeout [FLOW::this]] for [FLOW::idle_duration]"
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	dialVS(t, "127.107.2.1:9000").mustAsk("a")
	eventually(t, "CLIENT_ACCEPTED's log line", func() bool { return strings.Contains(lg.String(), "idle 40 for 0") })
}
