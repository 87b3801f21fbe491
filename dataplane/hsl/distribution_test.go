package hsl

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
)

// udpSinks listens on n loopback UDP addresses and counts the messages
// each receives.
func udpSinks(t *testing.T, first int, n int) ([]netip.AddrPort, func() []int) {
	t.Helper()
	var mu sync.Mutex
	counts := make([]int, n)
	var addrs []netip.AddrPort
	for i := range n {
		c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.253.%d:0", first+i))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		addrs = append(addrs, netip.MustParseAddrPort(c.LocalAddr().String()))
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
				mu.Lock()
				counts[i]++
				mu.Unlock()
			}
		}()
	}
	return addrs, func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), counts...)
	}
}

// TestDistributions sends four messages over a two-member pool with each
// distribution: balanced alternates, adaptive stays on one member,
// replicated gives every message to both.
func TestDistributions(t *testing.T) {
	cases := []struct {
		d      Distribution
		first  int
		counts []int
	}{
		{Balanced, 1, []int{2, 2}},
		{Adaptive, 3, []int{4, 0}},
		{Replicated, 5, []int{4, 4}},
	}
	for _, c := range cases {
		t.Run(c.d.String(), func(t *testing.T) {
			addrs, counts := udpSinks(t, c.first, 2)
			h := New(Options{Members: (&pools{m: map[string][]netip.AddrPort{"/Common/logs": addrs}}).members, Logger: quiet()})
			defer h.Close()
			handle, err := h.OpenDistributed("UDP", "/Common/logs", c.d)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := h.OpenDistributed("UDP", "/Common/logs", c.d); again != handle {
				t.Errorf("a second open made another sender: %q, %q", again, handle)
			}
			for i := range 4 {
				if ok, err := h.Send(handle, []byte(fmt.Sprintf("m%d", i))); !ok || err != nil {
					t.Fatalf("send %d: %v %v", i, ok, err)
				}
			}
			total := c.counts[0] + c.counts[1]
			waitFor(t, "every datagram", func() bool { got := counts(); return got[0]+got[1] == total })
			if got := counts(); fmt.Sprint(got) != fmt.Sprint(c.counts) {
				t.Errorf("members received %v; want %v", got, c.counts)
			}
			st := h.Stats()
			if len(st) != 1 || st[0].Distribution != c.d || st[0].Sent != 4 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestAdaptiveLeavesAFailedMember: over TCP, a member that refuses the
// connection is left for the next, which then keeps every message.
func TestAdaptiveLeavesAFailedMember(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.253.7:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := netip.MustParseAddrPort(closed.Addr().String())
	closed.Close()
	ln, err := net.Listen("tcp", "127.0.253.8:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	got := 0
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			mu.Lock()
			got++
			mu.Unlock()
		}
	}()
	live := netip.MustParseAddrPort(ln.Addr().String())
	h := New(Options{Members: (&pools{m: map[string][]netip.AddrPort{"/Common/logs": {dead, live}}}).members, Logger: quiet()})
	defer h.Close()
	handle, err := h.OpenDistributed("TCP", "/Common/logs", Adaptive)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.Send(handle, []byte("x"))
	}
	waitFor(t, "three bytes at the live member", func() bool { mu.Lock(); defer mu.Unlock(); return got == 3 })
	st := h.Stats()
	if len(st) != 1 || st[0].Sent != 3 || st[0].Connects != 1 || st[0].DroppedNoMember != 0 {
		t.Errorf("stats %+v: want 3 sent over one connection", st)
	}
}

// TestParseDistribution reads tmsh's words.
func TestParseDistribution(t *testing.T) {
	for in, want := range map[string]Distribution{"adaptive": Adaptive, "balanced": Balanced, "replicated": Replicated, "": Adaptive} {
		if d, err := ParseDistribution(in); err != nil || d != want {
			t.Errorf("ParseDistribution(%q) = %v, %v", in, d, err)
		}
	}
	if _, err := ParseDistribution("random"); err == nil {
		t.Error("ParseDistribution(random) took it")
	}
}
