package dataplane

import (
	"fmt"
	"strings"
	"testing"
)

// TestListenTCPEphemeral: a rule's TCP related connection, made with
// listen or FLOW::create_related, is a row of the connection table and
// is counted in the virtual's Ephemeral column (current and total while
// it lasts, its bytes and packets when it ends) as well as on the client
// side, where its admission counts it [M]; the control connection is
// not. The related connection's server is a real TCP member.
func TestListenTCPEphemeral(t *testing.T) {
	for i, c := range []struct {
		name string
		rule string // %d: the related member's port
	}{
		{"listen", `when CLIENT_ACCEPTED {
    set l [listen { proto 6; timeout 30; server 127.205.5.3 %d; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`},
		{"FLOW::create_related", `when CLIENT_ACCEPTED {
    set f [split [FLOW::create_related { proto 6; clientflow [IP::client_addr] 0 0; serverflow 127.205.5.3 %d 0 }] ,]
    TCP::respond "DATA [lindex $f 0] [lindex $f 1]\n"
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := 30310 + 10*i
			vsAddr, member, related := fmt.Sprintf("127.205.5.1:%d", base), fmt.Sprintf("127.205.5.2:%d", base), fmt.Sprintf("127.205.5.3:%d", base+1)
			startServer(t, member, "C")
			startServer(t, related, "D")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, fmt.Sprintf(c.rule, base+1))
			mustApply(t, p, cfg)
			ctl := dialFrom(t, "127.205.5.9", vsAddr)
			data := dataAddr(t, ctl)
			if !strings.HasPrefix(data, "127.205.5.1:") {
				t.Fatalf("related listener at %s, want the virtual's address", data)
			}
			if st, _ := p.Virtual("/Common/vs"); st.Ephemeral.TotConns != 0 || st.ClientSide.TotConns != 1 {
				t.Fatalf("before the related connection: ephemeral %+v, client side %+v", st.Ephemeral, st.ClientSide)
			}
			dc := dialFrom(t, "127.205.5.9", data)
			if got := dc.mustAsk("list"); got != "D Response" {
				t.Fatalf("related connection: %q, want the rule's server", got)
			}
			listed := false
			for _, r := range flowsOf(p, "/Common/vs") {
				listed = listed || r.SSServer == ap(related)
			}
			if !listed {
				t.Error("the related connection is not in the connection table")
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
		})
	}
}
