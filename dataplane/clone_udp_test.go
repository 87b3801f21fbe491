package dataplane

import (
	"net"
	"slices"
	"sync"
	"testing"
)

// udpCollector is a UDP clone member: it keeps every datagram it gets and
// answers none.
type udpCollector struct {
	mu  sync.Mutex
	got []string
}

func startUDPCollector(t *testing.T, addr string) *udpCollector {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatalf("clone member %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	uc := &udpCollector{}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			uc.mu.Lock()
			uc.got = append(uc.got, string(buf[:n]))
			uc.mu.Unlock()
		}
	}()
	return uc
}

// udpCloneSides sends three datagrams through the UDP virtual at vs,
// whose rule prefixes "r-" in CLIENT_DATA, and checks the copies: the
// clientside collector cs gets them as sent, the serverside one ss as
// rewritten, each on one socket of a clone pool named /Common/cs and
// /Common/ss, counted on the virtual and the pools.
func udpCloneSides(t *testing.T, p *Plane, vs string, cs, ss *udpCollector) {
	t.Helper()
	c := dialUDP(t, "", vs)
	sent := []string{"one", "two", "three"}
	for _, m := range sent {
		if got := c.mustAsk(m); got != "S:r-"+m {
			t.Fatalf("%s: answer %q, want %q", m, got, "S:r-"+m)
		}
	}
	var rewritten []string
	for _, m := range sent {
		rewritten = append(rewritten, "r-"+m)
	}
	eventually(t, "both clone members got every datagram", func() bool {
		return len(cs.datagrams()) == len(sent) && len(ss.datagrams()) == len(sent)
	})
	if got := cs.datagrams(); !slices.Equal(got, sent) {
		t.Errorf("clientside clone got %q, want %q", got, sent)
	}
	if got := ss.datagrams(); !slices.Equal(got, rewritten) {
		t.Errorf("serverside clone got %q, want %q", got, rewritten)
	}
	st, _ := p.Virtual("/Common/vs")
	if st.Clone == nil || st.Clone.Conns != 2 || st.Clone.Dropped != 0 || st.Clone.Bytes != uint64(len("onetwothree")*2+6) {
		t.Errorf("virtual's clone counters %+v, want 2 sockets, 28 bytes, no drop", st.Clone)
	}
	for _, name := range []string{"/Common/cs", "/Common/ss"} {
		ps, _ := p.Pool(name)
		if ps.ServerSide.TotConns != 1 || ps.ServerSide.PktsOut != 3 {
			t.Errorf("%s: %d connections, %d packets out; want 1 and 3", name, ps.ServerSide.TotConns, ps.ServerSide.PktsOut)
		}
	}
}

func (uc *udpCollector) datagrams() []string {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	return slices.Clone(uc.got)
}

// TestClonePoolUDP: a UDP virtual's clone members get each datagram of a
// flow, clientside as the client sent it and serverside as the member got
// it (after a rule rewrote it), on one socket per flow and clone pool;
// the answers still come from the default pool, and the virtual and the
// clone pools count the copies. A clone pool with no member to give
// counts a drop and changes nothing for the client.
func TestClonePoolUDP(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.11.0.2:5300", "S")
	cs := startUDPCollector(t, "127.11.0.3:5301")
	ss := startUDPCollector(t, "127.11.0.4:5302")
	p, _ := newPlane(t)
	cfg := udpBasic("127.11.0.1:53", "127.11.0.2:5300")
	withClone(cfg, "/Common/cs", false, "127.11.0.3:5301")
	withClone(cfg, "/Common/ss", true, "127.11.0.4:5302")
	r, _ := compileRules(t, `when CLIENT_DATA { UDP::payload replace 0 0 "r-" }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)

	udpCloneSides(t, p, "127.11.0.1:53", cs, ss) // three datagrams each

	// A clone pool whose only member is disabled gives none: counted as a
	// drop, and the flow is served as before.
	mustApply(t, p, setMember(cfg, "/Common/cs", 0, func(m *Member) { m.Session = SessionUserDisabled }))
	c2 := dialUDP(t, "", "127.11.0.1:53")
	if got := c2.mustAsk("four"); got != "S:r-four" {
		t.Fatalf("four: %q", got)
	}
	eventually(t, "the serverside clone got the second flow's datagram", func() bool {
		return len(ss.datagrams()) == 3+1
	})
	st, _ := p.Virtual("/Common/vs")
	if st.Clone.Dropped != 1 || len(cs.datagrams()) != 3 {
		t.Errorf("after disabling the clientside member: %d dropped, clientside got %d datagrams; want 1 and 3", st.Clone.Dropped, len(cs.datagrams()))
	}
}
