package rulelisten

import (
	"sync"

	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
)

// TestOpenUDP: the first allowed peer's datagrams reach the server and
// its answers come back from the listener; a stranger's datagram is
// dropped; the relay ends when both sides are quiet for idle.
func TestOpenUDP(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.152.6.3")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := make(chan string, 8)
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			got <- string(b[:n])
			srv.WriteToUDPAddrPort(append([]byte("re "), b[:n]...), from)
		}
	}()
	server := netip.MustParseAddrPort(srv.LocalAddr().String())
	l, err := OpenUDP(Spec{Bind: netip.MustParseAddrPort("127.152.6.1:0"), Allow: netip.MustParseAddr("127.152.6.2"), Timeout: 30 * time.Second},
		server, func(netip.AddrPort, int) Source {
			return Source{Src: netip.AddrPortFrom(netip.MustParseAddr("127.152.6.1"), 0)}
		}, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(src string) *net.UDPConn {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, net.UDPAddrFromAddrPort(l.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	stranger, peer := dial("127.152.6.9"), dial("127.152.6.2")
	stranger.Write([]byte("stranger"))
	b := make([]byte, 2048)
	for _, msg := range []string{"one", "two"} {
		peer.SetDeadline(time.Now().Add(10 * time.Second))
		peer.Write([]byte(msg))
		n, err := peer.Read(b)
		if err != nil || string(b[:n]) != "re "+msg {
			t.Fatalf("%s: %q %v", msg, b[:n], err)
		}
		if s := <-got; s != msg {
			t.Fatalf("the server got %q, want %q", s, msg)
		}
	}
	select {
	case <-l.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the relay did not end when both sides were quiet")
	}
	select {
	case s := <-got:
		t.Errorf("the server got %q too", s)
	default:
	}
}

// countsRecord is a Counter for the tests.
type countsRecord struct {
	mu                     sync.Mutex
	cur, tot, in, out, pIn int
}

func (c *countsRecord) TryOpen(int) bool { c.mu.Lock(); c.cur++; c.tot++; c.mu.Unlock(); return true }
func (c *countsRecord) Close()           { c.mu.Lock(); c.cur--; c.mu.Unlock() }
func (c *countsRecord) In(n int, pk uint64) {
	c.mu.Lock()
	c.in += n
	c.pIn += int(pk)
	c.mu.Unlock()
}
func (c *countsRecord) Out(n int, _ uint64) { c.mu.Lock(); c.out += n; c.mu.Unlock() }

// TestOpenUDPTracked: a tracked relay is a flow of the table while it
// lasts (the peer and the listener on the client side, the relay's
// source and the server on the server side, its bytes both ways), is
// counted once, and ends when the flow is deleted (its Closer) or when
// both sides are quiet; either way it leaves the table.
func TestOpenUDPTracked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete bool // end it as delete sys connection does
		idle   time.Duration
	}{
		{"deleted", true, time.Minute}, // only the delete can end it within the test's wait
		{"idle", false, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.200.6.3")})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			go func() {
				b := make([]byte, 2048)
				for {
					n, from, err := srv.ReadFromUDPAddrPort(b)
					if err != nil {
						return
					}
					srv.WriteToUDPAddrPort(append([]byte("re "), b[:n]...), from)
				}
			}()
			server := netip.MustParseAddrPort(srv.LocalAddr().String())
			table, cnt := flows.NewTable(), &countsRecord{}
			l, err := OpenUDP(Spec{Bind: netip.MustParseAddrPort("127.200.6.1:0"), Timeout: 30 * time.Second}, server,
				func(netip.AddrPort, int) Source {
					return Source{Src: netip.AddrPortFrom(netip.MustParseAddr("127.200.6.1"), 0)}
				},
				tc.idle, &Track{Table: table, Virtual: "/Common/vs", Counts: cnt})
			if err != nil {
				t.Fatal(err)
			}
			peer, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.200.6.2")}, net.UDPAddrFromAddrPort(l.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			b := make([]byte, 2048)
			for _, msg := range []string{"one", "two"} {
				peer.SetDeadline(time.Now().Add(10 * time.Second))
				peer.Write([]byte(msg))
				if n, err := peer.Read(b); err != nil || string(b[:n]) != "re "+msg {
					t.Fatalf("%s: %q %v", msg, b[:n], err)
				}
			}
			var f *flows.Flow
			table.Each(func(x *flows.Flow) bool { f = x; return false })
			if f == nil || table.Len() != 1 {
				t.Fatalf("the relay is not in the table (%d flows)", table.Len())
			}
			legs := f.Legs()
			if f.Client.Addr() != netip.MustParseAddr("127.200.6.2") || f.Local != l.Addr() || f.Virtual != "/Common/vs" || f.Protocol != "udp" ||
				len(legs) != 1 || legs[0].Server != server || legs[0].Client.Addr() != netip.MustParseAddr("127.200.6.1") {
				t.Fatalf("flow %v -> %v (%s %s), legs %d", f.Client, f.Local, f.Virtual, f.Protocol, len(legs))
			}
			// The server's answer may be counted a moment after the peer read it.
			for i := 0; i < 100 && f.BytesOut.Load() < 12; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if f.BytesIn.Load() != 6 || f.BytesOut.Load() != 12 || legs[0].BytesOut.Load() != 6 || legs[0].BytesIn.Load() != 12 {
				t.Errorf("bytes: client in %d out %d, server out %d in %d", f.BytesIn.Load(), f.BytesOut.Load(), legs[0].BytesOut.Load(), legs[0].BytesIn.Load())
			}
			if tc.delete {
				f.Abort()
			}
			select {
			case <-l.Done():
			case <-time.After(15 * time.Second):
				t.Fatal("the relay did not end")
			}
			cnt.mu.Lock()
			defer cnt.mu.Unlock()
			if table.Len() != 0 || cnt.cur != 0 || cnt.tot != 1 || cnt.in != 6 || cnt.pIn != 2 || cnt.out != 12 {
				t.Errorf("after: %d flows, counts %+v", table.Len(), cnt)
			}
		})
	}
}
