package mrf

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/timerpol"
)

// TestRouterPeerTimers: a peer connection takes the idle timeout of the
// virtual's timer policy's rule for tcp and the peer's port, in place of
// the router's (here never): with a one-second rule the router closes
// the idle connection and the next message opens another; a rule for
// another port, or no policy, leaves the connection shared. The peer is
// a real TCP member.
func TestRouterPeerTimers(t *testing.T) {
	for i, c := range []struct {
		name   string
		timers func(port uint16) *timerpol.Policy
		reopen bool
	}{
		{"the peer port's rule", func(p uint16) *timerpol.Policy {
			return &timerpol.Policy{Name: "/Common/tp", Rules: []timerpol.Rule{{Name: "peer", Proto: 6, Ports: []timerpol.PortRange{{Lo: p, Hi: p}}, Idle: time.Second}}}
		}, true},
		{"another port's rule", func(p uint16) *timerpol.Policy {
			return &timerpol.Policy{Name: "/Common/tp", Rules: []timerpol.Rule{{Name: "other", Proto: 6, Ports: []timerpol.PortRange{{Lo: p + 1, Hi: p + 1}}, Idle: time.Second}}}
		}, false},
		{"no policy", func(uint16) *timerpol.Policy { return nil }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newEchoPeer(t, "127.205.7."+string(rune('1'+i))+":0", "a")
			env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/pa": {a.addr()}}}
			pa := &Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1}
			cfg := &Config{Term: []byte("\n"), MaxRetries: 1, Routes: []*Route{{Name: "/Common/r", Peers: []*Peer{pa}}},
				Peers: map[string]*Peer{pa.Name: pa}, Timers: c.timers(a.addr().Port())}
			r := NewRouter(cfg, env, nil)
			defer r.Close()
			cl := &client{ch: make(chan string, 8)}
			s := r.NewSession(cl.write, nil)
			defer s.Close()
			ask := func(msg string) {
				t.Helper()
				if !s.Handle(s.Message([]byte(msg))) {
					t.Fatal("Handle ended the session")
				}
				if got := cl.next(t); !strings.HasSuffix(got, ":"+msg) {
					t.Fatalf("answer %q to %q", got, msg)
				}
			}
			ask("m0")
			// Pauses longer than the rule's second, at most 6: the
			// first that outlasts the idle timeout reopens.
			for j := range 6 {
				time.Sleep(1500 * time.Millisecond)
				ask("m" + string(rune('1'+j)))
				if a.accepts.Load() > 1 || (!c.reopen && j == 1) {
					break
				}
			}
			if got := a.accepts.Load() > 1; got != c.reopen {
				t.Errorf("peer connections %d: reopened %t, want %t", a.accepts.Load(), got, c.reopen)
			}
		})
	}
}
