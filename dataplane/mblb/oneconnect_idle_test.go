package mblb

import "testing"

// The per-loop idle stacks hand out the newest connection that is still
// reusable, skip the ones taken, closed, retired or down since, and stay
// bounded however often connections go idle and are taken another way.
func TestPoolGroupIdleStack(t *testing.T) {
	idle := func() *serverConn { return &serverConn{idleCounted: true} }
	cases := []struct {
		name string
		mark func(a, b *serverConn) // what happens to a and b after they went idle
		want string                 // "a", "b" or "" for none
	}{
		{"newest first", func(a, b *serverConn) {}, "b"},
		{"taken since", func(a, b *serverConn) { b.idleCounted = false }, "a"},
		{"removed since", func(a, b *serverConn) { b.removed = true }, "a"},
		{"retired since", func(a, b *serverConn) { b.retired = true }, "a"},
		{"down since", func(a, b *serverConn) { b.down.Store(true) }, "a"},
		{"uploading since", func(a, b *serverConn) { b.uploading.Store(true) }, "a"},
		{"none left", func(a, b *serverConn) { a.removed = true; b.idleCounted = false }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := idle(), idle()
			g := &poolGroup{conns: []*serverConn{a, b}}
			g.pushIdle(a)
			g.pushIdle(b)
			c.mark(a, b)
			got := g.popIdle(nil)
			name := map[*serverConn]string{a: "a", b: "b", nil: ""}[got]
			if name != c.want {
				t.Fatalf("popIdle = %q, want %q", name, c.want)
			}
		})
	}

	t.Run("another loop's stack is not used", func(t *testing.T) {
		g := &poolGroup{}
		other := &evl{}
		g.idle = append(g.idle, loopIdle{l: other, conns: []*serverConn{idle()}})
		if sc := g.popIdle(nil); sc != nil {
			t.Fatal("popIdle took a connection idle on another loop")
		}
	})

	t.Run("bounded", func(t *testing.T) {
		a := idle()
		g := &poolGroup{conns: []*serverConn{a}}
		for range 1000 {
			g.pushIdle(a)
			a.idleCounted = false // taken by a scan, not popped
			a.idleCounted = true  // idle again
		}
		if n := len(g.stack(nil).conns); n > 2*len(g.conns)+9 {
			t.Fatalf("idle stack holds %d entries for one connection", n)
		}
	})
}
