package mrf

import (
	"net/netip"
	"testing"
	"time"
)

// fakeHold is a SourceHold counting its releases.
type fakeHold struct {
	released *int
	tcp, udp time.Duration
}

func (h fakeHold) Release()                       { *h.released++ }
func (h fakeHold) TCPIdle() (time.Duration, bool) { return h.tcp, h.tcp > 0 }
func (h fakeHold) UDPIdle() (time.Duration, bool) { return h.udp, h.udp > 0 }

// fakeHolder holds addresses up to a limit each.
type fakeHolder struct {
	Env
	limit    map[netip.Addr]int
	held     map[netip.Addr]int
	refused  map[netip.Addr]int
	released int
}

func (f *fakeHolder) HoldSNAT(_ string, a netip.Addr) (SourceHold, bool) {
	if l, ok := f.limit[a]; ok && f.held[a] >= l {
		return nil, false
	}
	f.held[a]++
	return fakeHold{released: &f.released, tcp: 2 * time.Second}, true
}

func (f *fakeHolder) RefusedSNAT(_ string, a netip.Addr) { f.refused[a]++ }

// TestTransportSourceHeld: a transport-config's snatpool takes its
// addresses in turn through the Env, passes over a full one, fails with
// ErrSNATFull (each of the family counted refused) when all are, gives
// the host's choice when it has none of the family; a rule's source
// (MR::message snat, automap) and a transport without a snatpool are
// not held.
func TestTransportSourceHeld(t *testing.T) {
	a1, a2, v6 := netip.MustParseAddr("127.247.30.1"), netip.MustParseAddr("127.247.30.2"), netip.MustParseAddr("::1")
	dst4, dst6 := netip.MustParseAddr("127.247.30.9"), netip.MustParseAddr("::2")
	f := &fakeHolder{limit: map[netip.Addr]int{a1: 1, a2: 1}, held: map[netip.Addr]int{}, refused: map[netip.Addr]int{}}
	tc := &Transport{Name: "/Common/tc", SNAT: SNATPool, SNATPool: "/Common/sp", SNATAddrs: []netip.Addr{a1, a2, v6}}
	local := netip.MustParseAddr("127.247.30.5")

	if _, ok := tc.holds(&Message{}, local, dst4, &struct{ Env }{}); ok {
		t.Fatal("an Env that is no SNATHolder holds")
	}
	if _, ok := (&Transport{SNAT: SNATAutomap}).holds(&Message{}, local, dst4, f); ok {
		t.Fatal("automap held")
	}
	if _, ok := tc.holds(&Message{SNAT: a2}, local, dst4, f); ok {
		t.Fatal("a rule's MR::message snat held")
	}
	h, ok := tc.holds(&Message{}, local, dst4, f)
	if !ok {
		t.Fatal("the snatpool is not held")
	}
	got := map[netip.Addr]bool{}
	for i := range 2 {
		a, hold, err := tc.sourceHeld(h, dst4)
		if err != nil || hold == nil || !a.Is4() {
			t.Fatalf("pick %d: %v %v %v", i, a, hold, err)
		}
		got[a] = true
	}
	if !got[a1] || !got[a2] {
		t.Fatalf("picked %v, want a1 and a2 in turn", got)
	}
	if a, hold, err := tc.sourceHeld(h, dst4); err != ErrSNATFull || a.IsValid() || hold != nil {
		t.Fatalf("both full: %v %v %v, want ErrSNATFull", a, hold, err)
	}
	if f.refused[a1] != 1 || f.refused[a2] != 1 || f.refused[v6] != 0 {
		t.Fatalf("refused %v, want a1 and a2 once", f.refused)
	}
	if a, hold, err := tc.sourceHeld(h, dst6); err != nil || a != v6 || hold == nil {
		t.Fatalf("v6: %v %v %v", a, hold, err)
	}
	tc4 := &Transport{SNAT: SNATPool, SNATPool: "/Common/sp", SNATAddrs: []netip.Addr{a1}}
	if a, hold, err := tc4.sourceHeld(h, dst6); err != nil || a.IsValid() || hold != nil {
		t.Fatalf("none of the family: %v %v %v, want the host's choice", a, hold, err)
	}

	// The hold goes with the connection's done, and its idle timeout
	// replaces the connection's idle time.
	ran := false
	done := withHold(func() { ran = true }, fakeHold{released: &f.released, tcp: 2 * time.Second})
	done()
	if !ran || f.released != 1 {
		t.Fatalf("done ran %v, released %d", ran, f.released)
	}
	if d := heldIdle(time.Minute, fakeHold{released: &f.released, tcp: 2 * time.Second}, false); d != 2*time.Second {
		t.Fatalf("TCP idle %v, want the translation's 2s", d)
	}
	if d := heldIdle(time.Minute, fakeHold{released: &f.released, tcp: 2 * time.Second}, true); d != time.Minute {
		t.Fatalf("UDP idle %v, want the connection's own (no udp-idle-timeout)", d)
	}
	if d := heldIdle(time.Minute, nil, false); d != time.Minute {
		t.Fatalf("no hold: %v", d)
	}
}
