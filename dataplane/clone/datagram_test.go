package clone

import (
	"net"
	"testing"
	"time"
)

// TestAddDatagrams: a rule's clone socket joins a flow's (nil: a new
// one) and copies the side it was asked for; the counters count it; the
// flow's Close ends it and tells its pool.
func TestAddDatagrams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server bool
		want   string // what the clone member gets of Client("c") then Server("s")
	}{
		{"clientside", false, "c"},
		{"serverside", true, "s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 189, 3, 1)})
			if err != nil {
				t.Skipf("loopback unavailable: %v", err)
			}
			defer pc.Close()
			s := &Set{Counters: &Counters{}}
			done := 0
			d := Dest{Addr: pc.LocalAddr().(*net.UDPAddr).AddrPort(), Done: func(bool) { done++ }}
			g := s.AddDatagrams(nil, d, tc.server)
			if g == nil || s.Counters.Conns.Load() != 1 {
				t.Fatalf("AddDatagrams: %v, %d sockets counted", g, s.Counters.Conns.Load())
			}
			g.Client([]byte("c"))
			g.Server([]byte("s"))
			pc.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 16)
			n, err := pc.Read(buf)
			if err != nil || string(buf[:n]) != tc.want {
				t.Fatalf("clone member got %q, %v; want %q", buf[:n], err, tc.want)
			}
			pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if n, err := pc.Read(buf); err == nil {
				t.Errorf("clone member got %q from the other side too", buf[:n])
			}
			g.Close()
			if done != 1 || s.Counters.Bytes.Load() != 1 {
				t.Errorf("after Close: Done called %d times, %d bytes counted; want 1 and 1", done, s.Counters.Bytes.Load())
			}
		})
	}
}

// TestDatagramsJoinBoth: a rule's clone socket opened on its own joins
// the flow's (nil joins as the other); Both copies a datagram to the
// clientside and serverside sockets alike, Client to the clientside
// ones alone.
func TestDatagramsJoinBoth(t *testing.T) {
	var pcs [2]*net.UDPConn
	for i := range pcs {
		pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 217, 3, byte(1+i)), Port: 20301})
		if err != nil {
			t.Skipf("loopback unavailable: %v", err)
		}
		defer pc.Close()
		pcs[i] = pc
	}
	s := &Set{Counters: &Counters{}}
	dest := func(pc *net.UDPConn) Dest { return Dest{Addr: pc.LocalAddr().(*net.UDPAddr).AddrPort()} }
	g := (*Datagrams)(nil).Join(s.AddDatagrams(nil, dest(pcs[0]), false))
	g = g.Join(s.AddDatagrams(nil, dest(pcs[1]), true)).Join(nil)
	if g == nil || len(g.socks) != 2 {
		t.Fatalf("joined flow: %v", g)
	}
	g.Both([]byte("b"))
	g.Client([]byte("c"))
	defer g.Close()
	buf := make([]byte, 16)
	for i, want := range [][]string{{"b", "c"}, {"b"}} {
		pcs[i].SetReadDeadline(time.Now().Add(5 * time.Second))
		for _, w := range want {
			n, err := pcs[i].Read(buf)
			if err != nil || string(buf[:n]) != w {
				t.Fatalf("clone member %d got %q, %v; want %q", i, buf[:n], err, w)
			}
		}
		pcs[i].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, err := pcs[i].Read(buf); err == nil {
			t.Errorf("clone member %d got %q more", i, buf[:n])
		}
	}
	if got := s.Counters.Bytes.Load(); got != 3 {
		t.Errorf("%d bytes counted, want 3", got)
	}
}
