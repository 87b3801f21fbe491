package dataplane

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFlowEvictionRate: bias-fast evicts the client that sent the most
// for its age, bias-slow the one that sent the least (the idle ones
// sent nothing, so the talkers are told apart by how much they sent).
func TestFlowEvictionRate(t *testing.T) {
	for i, c := range []struct {
		name   string
		policy *EvictionPolicy
		want   int
	}{
		// Client 0 sends 64 KiB, client 1 a short line, clients 2 and 3
		// nothing after their first line.
		{"bias-fast", &EvictionPolicy{High: 100, Low: 75, BiasFast: true}, 0},
		{"bias-slow", &EvictionPolicy{High: 100, Low: 75, BiasSlow: true}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			vsAddr := fmt.Sprintf("127.191.10.%d:30200", i+1)
			member := fmt.Sprintf("127.191.11.%d:30210", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			v := cfg.Virtuals["/Common/vs"]
			v.ConnectionLimit = 4
			v.Eviction = c.policy
			mustApply(t, p, cfg)
			var cl []*client
			for k := 0; k < 4; k++ {
				cl = append(cl, dialVS(t, vsAddr))
				eventually(t, "the client's flow", func() bool { return p.ConnectionCount() == k+1 })
				msg := "hi"
				switch k {
				case 0:
					msg = strings.Repeat("x", 64<<10)
				case 1:
					msg = strings.Repeat("y", 200)
				}
				cl[k].mustAsk(msg)
				time.Sleep(20 * time.Millisecond)
			}
			if fifth, err := tryAskErr(vsAddr); err != nil || fifth != "S1 Response" {
				t.Fatalf("the fifth client: %q, %v; want admitted", fifth, err)
			}
			for k, x := range cl {
				_, err := x.ask("after")
				if (err != nil) != (k == c.want) {
					t.Errorf("client %d: error %v; want evicted %v", k, err, k == c.want)
				}
			}
		})
	}
}

// TestSlowFlowThrottling: with slow-flow throttling and a maximum of
// one, the slow clients above it are reset though the virtual is far
// from its limit; the fast one and one slow one go on. Without
// throttling the slow flows are only counted.
func TestSlowFlowThrottling(t *testing.T) {
	for i, throttle := range []bool{true, false} {
		t.Run(fmt.Sprintf("throttling %v", throttle), func(t *testing.T) {
			vsAddr := fmt.Sprintf("127.191.12.%d:30220", i+1)
			member := fmt.Sprintf("127.191.13.%d:30230", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			v := cfg.Virtuals["/Common/vs"]
			v.ConnectionLimit = 100
			v.Eviction = &EvictionPolicy{High: 95, Low: 85, BiasIdle: true,
				Slow: &EvictionSlowFlow{Threshold: 1000, Grace: time.Second, Throttle: throttle, Max: 1}}
			mustApply(t, p, cfg)
			fast := dialVS(t, vsAddr)
			fast.mustAsk(strings.Repeat("x", 1<<20)) // far over 1000 bytes a second for a long while
			slow1, slow2 := dialVS(t, vsAddr), dialVS(t, vsAddr)
			eventually(t, "three flows", func() bool { return p.ConnectionCount() == 3 })
			eventually(t, "two slow flows counted", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.SlowFlows == 2 || st.SlowKilled > 0
			})
			if throttle {
				eventually(t, "a slow flow reset", func() bool {
					st, _ := p.Virtual("/Common/vs")
					return st.SlowKilled == 1 && p.ConnectionCount() == 2
				})
			} else {
				time.Sleep(2 * slowCheckInterval)
			}
			_, err1 := slow1.ask("late")
			_, err2 := slow2.ask("late")
			if got := (err1 != nil) != (err2 != nil); got != throttle {
				t.Errorf("slow clients: %v, %v; want one reset %v", err1, err2, throttle)
			}
			if throttle && err1 == nil {
				t.Errorf("the younger slow flow was reset, want the idler first")
			}
			if _, err := fast.ask("still"); err != nil {
				t.Errorf("the fast client: %v", err)
			}
			st, _ := p.Virtual("/Common/vs")
			if !throttle && st.SlowKilled != 0 {
				t.Errorf("Slow Flows Killed %d without throttling", st.SlowKilled)
			}
		})
	}
}

// TestEvictionContexts: two virtuals in route domain 0 share its
// connection-limit 4: a fifth client of either is admitted by evicting
// a connection of the low-priority virtual (though the other's are
// idler), or, without a policy, refused. A virtual in another route
// domain is neither counted nor evicted. The global context does the
// same for every virtual against its capacity.
func TestEvictionContexts(t *testing.T) {
	pol := func() *EvictionPolicy {
		return &EvictionPolicy{High: 100, Low: 75, BiasIdle: true, LowVirtuals: map[string]bool{"/Common/vsb": true}}
	}
	for i, c := range []struct {
		name string
		ctx  EvictionContext
		want int // the client evicted; -1: the fifth refused
	}{
		{"route domain", EvictionContext{Name: "0", RouteDomain: 0, Limit: 4, Policy: pol()}, 2},
		{"route domain, limit alone", EvictionContext{Name: "0", RouteDomain: 0, Limit: 4}, -1},
		{"route domain, no low priority", EvictionContext{Name: "0", RouteDomain: 0, Limit: 4, Policy: &EvictionPolicy{High: 100, Low: 75, BiasIdle: true}}, 0},
		{"global", EvictionContext{Name: "global", Global: true, Limit: 5, Policy: &EvictionPolicy{High: 100, Low: 80, BiasIdle: true, LowVirtuals: map[string]bool{"/Common/vsb": true}}}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := fmt.Sprintf("127.191.14.%d:30240", i+1)
			b := fmt.Sprintf("127.191.15.%d:30250", i+1)
			other := fmt.Sprintf("127.191.16.%d:30260", i+1)
			member := fmt.Sprintf("127.191.17.%d:30270", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(a, member)
			for name, addr := range map[string]string{"/Common/vsb": b, "/Common/vso": other} {
				w := *cfg.Virtuals["/Common/vs"]
				w.Name, w.Destination = name, ap(addr)
				cfg.Virtuals[name] = &w
			}
			cfg.Virtuals["/Common/vso"].RouteDomain = 1
			ctx := c.ctx
			cfg.EvictionContexts = []*EvictionContext{&ctx}
			mustApply(t, p, cfg)
			// The other route domain's client: not counted in route
			// domain 0 (the global context counts it: its limit is one
			// more).
			o := dialVS(t, other)
			o.mustAsk("hi")
			// Clients 0 and 1 on vs (the idlest), 2 and 3 on vsb.
			var cl []*client
			for k, addr := range []string{a, a, b, b} {
				cl = append(cl, dialVS(t, addr))
				cl[k].mustAsk("hi")
				time.Sleep(20 * time.Millisecond)
			}
			fifth, err := tryAskErr(a)
			if c.want < 0 {
				if err == nil {
					t.Fatalf("the fifth client admitted past the route domain's connection-limit (%q)", fifth)
				}
			} else if err != nil || fifth != "S1 Response" {
				t.Fatalf("the fifth client: %q, %v; want admitted", fifth, err)
			}
			for k, x := range cl {
				_, err := x.ask("after")
				if (err != nil) != (k == c.want) {
					t.Errorf("client %d: error %v; want evicted %v", k, err, k == c.want)
				}
			}
			if _, err := o.ask("after"); err != nil {
				t.Errorf("the other route domain's client: %v", err)
			}
			if c.want < 0 {
				// The refusal is counted on the client's virtual and on
				// the context.
				if st, _ := p.Virtual("/Common/vs"); st.EvictRefused != 1 {
					t.Errorf("Eviction Refused Connections %d, want 1", st.EvictRefused)
				}
				if n := p.EvictionContextCounts()[RouteDomainContext(c.ctx.Name)]; n[2] != 1 {
					t.Errorf("context %s: refused %d, want 1", c.ctx.Name, n[2])
				}
			} else if st, _ := p.Virtual("/Common/vs"); st.EvictRefused != 0 {
				t.Errorf("Eviction Refused Connections %d with a client admitted, want 0", st.EvictRefused)
			}
			if c.want >= 0 {
				name := "/Common/vs"
				if c.want >= 2 {
					name = "/Common/vsb"
				}
				if st, _ := p.Virtual(name); st.Evicted != 1 {
					t.Errorf("%s: Evicted Connections %d, want 1", name, st.Evicted)
				}
				key := RouteDomainContext(c.ctx.Name)
				if c.ctx.Global {
					key = GlobalContext
				}
				if n := p.EvictionContextCounts()[key]; n[0] != 1 {
					t.Errorf("context %s: evicted %d, want 1", key, n[0])
				}
			}
		})
	}
}

// TestFlowEvictionUDP: a UDP virtual with connection-limit 2 and a
// policy keeps two flows; a third client's datagram is answered, the
// idlest flow is ended (its client's next datagram opens a new flow,
// which evicts again), and the count stays at the limit.
func TestFlowEvictionUDP(t *testing.T) {
	startUDPMember(t, "127.191.19.1:30290", "U1")
	p, _ := newPlane(t)
	cfg := udpBasic("127.191.18.1:30280", "127.191.19.1:30290")
	v := cfg.Virtuals["/Common/vs"]
	v.ConnectionLimit = 2
	v.Eviction = &EvictionPolicy{High: 100, Low: 50, BiasIdle: true}
	mustApply(t, p, cfg)
	c1 := dialUDP(t, "127.191.20.1:0", "127.191.18.1:30280")
	c2 := dialUDP(t, "127.191.20.2:0", "127.191.18.1:30280")
	// The UDP engine stamps a flow's activity with its coarse clock
	// (200 ms ticks): the steps are further apart than that.
	step := func() { time.Sleep(300 * time.Millisecond) }
	c1.mustAsk("one")
	step()
	c2.mustAsk("two")
	step()
	c1.mustAsk("one again") // c2 is now the idlest
	step()
	eventually(t, "two flows", func() bool { return p.ConnectionCount() == 2 })
	c3 := dialUDP(t, "127.191.20.3:0", "127.191.18.1:30280")
	if got := c3.mustAsk("three"); got != "U1:three" {
		t.Fatalf("the third client got %q", got)
	}
	flowOf := func(c *udpClient) bool {
		found := false
		p.Connections(ConnFilter{Protocol: "udp"}, func(r *Connection) bool {
			found = found || r.CSClient == c.local()
			return true
		})
		return found
	}
	eventually(t, "c2's flow ended", func() bool { return !flowOf(c2) })
	if !flowOf(c1) || !flowOf(c3) {
		t.Errorf("c1's flow %v, c3's %v; want both kept", flowOf(c1), flowOf(c3))
	}
	st, _ := p.Virtual("/Common/vs")
	if st.Evicted != 1 {
		t.Errorf("Evicted Connections %d, want 1", st.Evicted)
	}
	eventually(t, "two flows", func() bool { return p.ConnectionCount() == 2 })
	step()
	// c2 comes back: admitted again, as a new flow, in place of the
	// idlest (c1 answered before c3 did).
	if got := c2.mustAsk("back"); got != "U1:back" {
		t.Fatalf("c2 back: %q", got)
	}
	eventually(t, "c1's flow ended", func() bool { return !flowOf(c1) })
	if st, _ := p.Virtual("/Common/vs"); st.Evicted != 2 {
		t.Errorf("Evicted Connections %d, want 2", st.Evicted)
	}
}
