package dataplane

import (
	"strings"
	"testing"
)

// TestListenTCPEphemeral: a rule's TCP listen connection is counted in
// the virtual's Ephemeral column (current and total while it lasts, its
// bytes and packets when it ends) as well as on the client side, where
// its admission counts it [M]; the control connection is not. The
// rule's server is a real TCP member.
func TestListenTCPEphemeral(t *testing.T) {
	startServer(t, "127.205.5.2:30301", "C")
	startServer(t, "127.205.5.3:30302", "D")
	p, _ := newPlane(t)
	cfg := basic("127.205.5.1:30301", "127.205.5.2:30301")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, strings.NewReplacer("127.152.1.3 2000", "127.205.5.3 30302", "%TIMEOUT%", "30").Replace(listenRule))
	mustApply(t, p, cfg)
	ctl := dialFrom(t, "127.205.5.9", "127.205.5.1:30301")
	data := dataAddr(t, ctl)
	if st, _ := p.Virtual("/Common/vs"); st.Ephemeral.TotConns != 0 || st.ClientSide.TotConns != 1 {
		t.Fatalf("before the related connection: ephemeral %+v, client side %+v", st.Ephemeral, st.ClientSide)
	}
	dc := dialFrom(t, "127.205.5.9", data)
	if got := dc.mustAsk("list"); got != "D Response" {
		t.Fatalf("related connection: %q, want the rule's server", got)
	}
	st, _ := p.Virtual("/Common/vs")
	if st.Ephemeral.CurConns != 1 || st.Ephemeral.TotConns != 1 || st.Ephemeral.MaxConns != 1 {
		t.Errorf("while the related connection lasts: ephemeral %+v, want 1 current, 1 total", st.Ephemeral)
	}
	if st.ClientSide.TotConns != 2 {
		t.Errorf("client side total %d, want 2 (the control and the related connection)", st.ClientSide.TotConns)
	}
	dc.c.Close()
	eventually(t, "the related connection to leave the Ephemeral column", func() bool {
		st, _ = p.Virtual("/Common/vs")
		return st.Ephemeral.CurConns == 0
	})
	// "list\n" in, "D Response\n" out, at least.
	if st.Ephemeral.TotConns != 1 || st.Ephemeral.BitsIn < 8*5 || st.Ephemeral.BitsOut < 8*11 || st.Ephemeral.PktsIn == 0 || st.Ephemeral.PktsOut == 0 {
		t.Errorf("after the related connection: ephemeral %+v", st.Ephemeral)
	}
}
