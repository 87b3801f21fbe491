package mrf

import (
	"net/netip"
	"strings"
	"testing"
)

// TestPersistence: messages with a persistence key go to the member the
// key's first message went to, though the virtual's pool balances the
// others over both members; a forgotten key is balanced anew.
func TestPersistence(t *testing.T) {
	a := newEchoPeer(t, "127.138.6.1:0", "a")
	b := newEchoPeer(t, "127.138.6.2:0", "b")
	env := &testEnv{pools: map[string][]netip.AddrPort{"/Common/p": {a.addr(), b.addr()}}}
	r := NewRouter(&Config{Term: []byte("\n"), DefaultPool: "/Common/p", Peers: map[string]*Peer{}}, env, nil)
	defer r.Close()
	c := &client{ch: make(chan string, 8)}
	s := r.NewSession(c.write, nil)
	send := func(text, key string) string {
		m := s.Message([]byte(text))
		m.Persist = key
		s.Handle(m)
		got := c.next(t)
		who, _, _ := strings.Cut(got, ":")
		return who
	}
	first := send("k1", "key")
	for i := range 4 {
		if who := send("k", "key"); who != first {
			t.Fatalf("message %d with the key went to %s, its first to %s", i, who, first)
		}
	}
	seen := map[string]bool{}
	for range 4 {
		seen[send("x", "")] = true
	}
	if len(seen) != 2 {
		t.Fatalf("the messages without a key went to %v, want both members", seen)
	}
	r.Unpersist("key")
	seen = map[string]bool{}
	for range 4 {
		r.Unpersist("key")
		seen[send("k", "key")] = true
	}
	if len(seen) != 2 {
		t.Fatalf("a forgotten key went to %v, want both members in turn", seen)
	}
}
