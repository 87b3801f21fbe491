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
