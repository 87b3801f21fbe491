package mrfsip

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/mrf"
)

// rrEnv balances a pool over its members in turn.
type rrEnv struct {
	members []netip.AddrPort
	next    atomic.Uint32
}

func (e *rrEnv) Pick(_ string, avoid []netip.AddrPort) (netip.AddrPort, bool) {
	for range e.members {
		a := e.members[int(e.next.Add(1))%len(e.members)]
		ok := true
		for _, x := range avoid {
			ok = ok && x != a
		}
		if ok {
			return a, true
		}
	}
	return netip.AddrPort{}, false
}

func (e *rrEnv) Dial(_ string, addr netip.AddrPort, _ netip.Addr, _ *sockopt.Side) (net.Conn, func(), error) {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	return c, nil, err
}

// TestSessionPersistence: with the session profile's persistence, the
// requests of one call (by Call-ID: INVITE, CANCEL, ACK, BYE) or of one
// client address (Src-Addr) go to the member the first went to, though
// the pool balances new calls over both members; without it, a call's
// requests are balanced one by one.
func TestSessionPersistence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		by      mrf.PersistBy
		clients []string // the client addresses, one session each
		sticky  bool     // each call's requests reach one member
		byAddr  bool     // each client's calls reach one member
	}{
		{"call-id", mrf.PersistCallID, []string{"192.0.2.1"}, true, false},
		{"src-addr", mrf.PersistSrcAddr, []string{"192.0.2.1", "192.0.2.2"}, true, true},
		{"none", mrf.PersistNone, []string{"192.0.2.1"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newPeerAt(t, "127.144.1.1:0"), newPeerAt(t, "127.144.1.2:0")
			cfg := &mrf.Config{Proto: New(&Session{InsertVia: true, MaxForwards: true, Host: "127.144.1.9:5060", Salt: 2}),
				Peers: map[string]*mrf.Peer{}, DefaultPool: "p", Persist: tc.by, PersistTTL: time.Minute}
			r := mrf.NewRouter(cfg, &rrEnv{members: []netip.AddrPort{a.addr(), b.addr()}}, nil)
			t.Cleanup(r.Close)
			want := 0
			for ci, addr := range tc.clients {
				got := make(chan []byte, 64)
				s := r.NewSession(func(b []byte) error { got <- append([]byte(nil), b...); return nil }, nil)
				s.SetClient(netip.MustParseAddr(addr))
				send := func(method, call, branch string, answers int) {
					s.Handle(s.Message(req(method, "alice", branch, call, 70, method != "INVITE" && method != "CANCEL")))
					for range answers {
						select {
						case <-got:
						case <-time.After(15 * time.Second):
							t.Fatalf("no answer to %s of %s", method, call)
						}
					}
				}
				for i := range 4 {
					call := fmt.Sprintf("call-%d-%d@192.0.2.9", ci, i)
					br := "z9hG4bK-" + call
					send("INVITE", call, br, 2)
					send("CANCEL", call, br, 1)
					send("ACK", call, br+"a", 0)
					send("BYE", call, br+"b", 1)
					want += 4
				}
			}
			// The ACKs are one-way: wait until every request arrived.
			deadline := time.Now().Add(15 * time.Second)
			for {
				a.mu.Lock()
				b.mu.Lock()
				n := len(a.calls) + len(b.calls)
				a.mu.Unlock()
				b.mu.Unlock()
				if n >= want || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			b.mu.Lock()
			defer b.mu.Unlock()
			if n := len(a.calls) + len(b.calls); n != want {
				t.Fatalf("members got %d requests, want %d: %q %q", n, want, a.calls, b.calls)
			}
			where := map[string]map[string]bool{} // Call-ID: members
			for name, p := range map[string]*peer{"a": a, "b": b} {
				for _, c := range p.calls {
					_, id, _ := strings.Cut(c, " ")
					if where[id] == nil {
						where[id] = map[string]bool{}
					}
					where[id][name] = true
				}
			}
			split := 0
			for _, m := range where {
				if len(m) > 1 {
					split++
				}
			}
			if tc.sticky && split > 0 || !tc.sticky && split == 0 {
				t.Fatalf("%d of %d calls reached both members (a %q, b %q)", split, len(where), a.calls, b.calls)
			}
			if tc.byAddr {
				// Each client's calls all went to one member, and the
				// two clients' calls to different ones (the pool in turn).
				for ci := range tc.clients {
					first := ""
					for id, m := range where {
						if !strings.HasPrefix(id, fmt.Sprintf("call-%d-", ci)) {
							continue
						}
						for name := range m {
							if first != "" && name != first {
								t.Fatalf("client %d's calls reached both members", ci)
							}
							first = name
						}
					}
				}
			} else if tc.sticky && (len(a.calls) == 0 || len(b.calls) == 0) {
				t.Fatalf("new calls were not balanced: a %q, b %q", a.calls, b.calls)
			}
		})
	}
}
