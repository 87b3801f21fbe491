package l4

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// BenchmarkFlowRuleWork measures what the routing rule costs one flow
// without the sockets: on a fresh goroutine, as the proxy serves each
// connection, it makes the flow's rule state, runs CLIENT_ACCEPTED (which
// picks a pool) and ends the rules (session back to its pool). "none" is
// the fresh goroutine alone.
func BenchmarkFlowRuleWork(b *testing.B) {
	route := `when CLIENT_ACCEPTED {
    if { [TCP::local_port] >= 10000 and [TCP::local_port] < 10500 } {
        pool WSH_1_pool
    } elseif { [TCP::local_port] >= 10500 and [TCP::local_port] < 11000 } {
        pool WSH_2_pool
    } else {
        drop
    }
}`
	for _, bc := range []struct {
		name string
		rule string
	}{{"none", ""}, {"route", route}} {
		b.Run(bc.name, func(b *testing.B) {
			var r config.Rules
			if bc.rule != "" {
				rule, err := rules.Compile("/Common/r1", bc.rule)
				if err != nil {
					b.Fatal(err)
				}
				prog := rules.NewProgram(&rules.Env{}, rule)
				if err := prog.Init(); err != nil {
					b.Fatal(err)
				}
				r = irules.New(prog)
			}
			pools := state.Pools{"/Common/WSH_1_pool": {Name: "/Common/WSH_1_pool"}, "/Common/WSH_2_pool": {Name: "/Common/WSH_2_pool"}}
			e := New(Env{Pools: func() state.Pools { return pools }})
			mask := config.EventMask(r)
			snap := &state.VirtualSnap{Cfg: &config.Virtual{}}
			done := make(chan *proxied)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				go func() {
					pr := &proxied{flow: flow{e: e, snap: snap}}
					pr.Virtual = "/Common/vs"
					pr.Local = netip.MustParseAddrPort("127.0.76.9:10017")
					if mask != 0 {
						warmStack()
						pr.rules, pr.evMask, pr.rs = r, mask, &ruleState{}
						if !pr.runEvent(config.EventClientAccepted) {
							panic("rule ended the flow")
						}
						pr.endRules()
					}
					done <- pr
				}()
				if pr := <-done; pr.rs != nil && pr.rs.Pool == nil {
					b.Fatal("no pool chosen")
				}
			}
		})
	}
}
