package mblb

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// These tests listen on 127.246.200.0/24, ports 25400-25419.

// TestIIOPReusedIDHeldLateReply: a client cancels request 5 and sends a
// new request under id 5 while its window is full (max-in-flight 1,
// request 6 awaiting a slow reply): the virtual has read the new 5 and
// holds it (reserve) when the late reply to the old 5 comes. The late
// reply is dropped (the client would take it for the new one's answer),
// and the new 5 is answered once there is room; on the client's own
// connection and on a shared one. Before, the late reply reached the
// client as the new request's answer.
func TestIIOPReusedIDHeldLateReply(t *testing.T) {
	m, err := iioptest.Listen("127.246.200.40:25400", "m1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	for i, oneConnect := range []bool{false, true} {
		name := fmt.Sprintf("oneconnect=%v", oneConnect)
		logs := &seenLog{}
		cfg := iiopConfig(oneMember(m.Addr(), "m1"), IIOPOptions{})
		cfg.Events.Log = logs.add
		cfg.MaxInFlight = 1
		if oneConnect {
			cfg.OneConnect = &OneConnect{}
		}
		vs := startVS(t, fmt.Sprintf("127.246.200.%d:%d", 41+i, 25401+i), cfg)
		c := dialIIOP(t, vs)
		var reqs []byte
		reqs = iiop.AppendRequest(reqs, 2, false, 5, true, []byte("k"), "delay:500", nil) // its late reply: "5=m1"
		reqs = iiop.AppendCancelRequest(reqs, 2, false, 5)
		reqs = iiop.AppendRequest(reqs, 2, false, 6, true, []byte("k"), "delay:1500", nil) // fills the window
		reqs = iiop.AppendRequest(reqs, 2, false, 5, true, []byte("k"), "say:new", nil)    // held until 6 is answered
		if got := fmt.Sprint(iiopExchange(t, c, reqs, 2)); got != "[6=m1 5=m1/new]" {
			t.Fatalf("%s: got %s, want [6=m1 5=m1/new]", name, got)
		}
		dropped := false
		for _, l := range logs.take() {
			dropped = dropped || strings.Contains(l, "Reply") && strings.Contains(l, "dropped")
		}
		if !dropped {
			t.Fatalf("%s: the late reply's drop not logged", name)
		}
		if st := vs.e.Stats(); st.Resets != 0 {
			t.Fatalf("%s: %d resets", name, st.Resets)
		}
	}
}
