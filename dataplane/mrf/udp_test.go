package mrf

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// udpEnv opens UDP flows to its pools' addresses.
type udpEnv struct{ testEnv }

func (e *udpEnv) DialUDP(_ string, a netip.AddrPort, _ netip.Addr) (net.Conn, func(), error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(a))
	return c, nil, err
}

// TestUDPPeers: over UDP each datagram is one message and answers one
// request; a peer that hears but never answers has its requests failed
// once it stayed silent for udpAnswerMax; one nobody listens on fails
// them at once (the kernel's port unreachable).
func TestUDPPeers(t *testing.T) {
	old := udpAnswerMax
	udpAnswerMax = time.Second
	t.Cleanup(func() { udpAnswerMax = old })
	listen := func(addr string) *net.UDPConn {
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	echo, mute, gone := listen("127.147.6.1:0"), listen("127.147.6.2:0"), listen("127.147.6.3:0")
	goneAddr := gone.LocalAddr().(*net.UDPAddr).AddrPort()
	gone.Close()
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			echo.WriteToUDPAddrPort(append([]byte("E:"), buf[:n]...), from)
		}
	}()
	addr := func(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }
	for _, tc := range []struct {
		name   string
		member netip.AddrPort
		answer string // "": the request fails
	}{
		{"answers", addr(echo), "E:ping"},
		{"silent", addr(mute), ""},
		{"nobody listens", goneAddr, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &udpEnv{testEnv{pools: map[string][]netip.AddrPort{"/Common/p": {tc.member}}}}
			r := NewRouter(&Config{Term: []byte("\n"), UDP: true, Idle: time.Minute, DefaultPool: "/Common/p"}, env, nil)
			t.Cleanup(r.Close)
			got := make(chan string, 4)
			s := r.NewSession(func(b []byte) error { got <- string(b); return nil }, nil)
			s.Handle(s.Message([]byte("ping")))
			if tc.answer != "" {
				select {
				case a := <-got:
					if a != tc.answer+"\n" {
						t.Fatalf("answer %q", a)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no answer")
				}
				return
			}
			deadline := time.Now().Add(20 * time.Second)
			for r.C.Failed.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if r.C.Failed.Load() != 1 || len(got) != 0 {
				t.Fatalf("failed %d, answers %d", r.C.Failed.Load(), len(got))
			}
		})
	}
}

// TestConnectBack: an answer that comes once its client's session has
// ended still reaches the client with ConnectBack (do-not-connect-back
// disabled on a UDP virtual), and is dropped without.
func TestConnectBack(t *testing.T) {
	for _, back := range []bool{true, false} {
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.147.6.4:0")))
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		member := c.LocalAddr().(*net.UDPAddr).AddrPort()
		env := &udpEnv{testEnv{pools: map[string][]netip.AddrPort{"/Common/p": {member}}}}
		r := NewRouter(&Config{Term: []byte("\n"), UDP: true, Idle: time.Minute, DefaultPool: "/Common/p", ConnectBack: back}, env, nil)
		t.Cleanup(r.Close)
		got := make(chan string, 4)
		s := r.NewSession(func(b []byte) error { got <- string(b); return nil }, nil)
		s.Handle(s.Message([]byte("ping")))
		buf := make([]byte, 1500)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatal(err)
		}
		s.Close() // the client's flow ends before the answer comes
		c.WriteToUDPAddrPort([]byte("pong\n"), from)
		if back {
			select {
			case a := <-got:
				if a != "pong\n" {
					t.Fatalf("answer %q", a)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer connected back")
			}
			continue
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.C.Dropped.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if r.C.Dropped.Load() != 1 || len(got) != 0 {
			t.Fatalf("dropped %d, delivered %d", r.C.Dropped.Load(), len(got))
		}
	}
}
