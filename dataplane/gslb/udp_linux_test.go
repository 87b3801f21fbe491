package gslb

import (
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// A batch's answers to one requester, of one length and in a row, go as
// one UDP GSO send, which the requester still receives as one datagram
// per answer, each with its query's ID; answers to another requester, or
// of another length, start a new send. A group the kernel refuses (a
// device without checksum offload) goes again one answer at a time.
func TestUDPBatchGroupsAnswers(t *testing.T) {
	type q struct {
		client int    // which of two client sockets asks
		name   string // the wide IP's names have two lengths
		drop   bool   // drop-packet: no answer
	}
	short, long := wideName, "x.cdn.example.com."
	cases := []struct {
		name    string
		queries []q
		sends   []int // the segments of each send
	}{
		{"one requester", []q{{0, short, false}, {0, short, false}, {0, short, false}, {0, short, false}}, []int{4}},
		{"two requesters in turn", []q{{0, short, false}, {1, short, false}, {0, short, false}, {1, short, false}}, []int{1, 1, 1, 1}},
		{"two requesters in runs", []q{{0, short, false}, {0, short, false}, {1, short, false}, {1, short, false}, {1, short, false}}, []int{2, 3}},
		{"a longer answer ends a group", []q{{0, short, false}, {0, short, false}, {0, long, false}, {0, long, false}}, []int{2, 2}},
		{"a dropped query leaves the group whole", []q{{0, short, false}, {0, "drop.example.com.", true}, {0, short, false}}, []int{2}},
	}
	cfg := testConfig(netip.AddrPort{})
	cfg.Pools["/Common/empty"] = &Pool{Name: "/Common/empty", Mode: DropPacket, Alternate: DropPacket, Members: cfg.Pools["/Common/app_pool"].Members}
	cfg.WideIPs["/Common/drop.example.com"] = &WideIP{Name: "/Common/drop.example.com", Pools: []WideIPPool{{Pool: "/Common/empty"}}}
	s := newServer(t, cfg, Options{})
	for _, c := range cases {
		for _, refused := range []bool{false, true} {
			name := c.name
			if refused {
				name += ", refused and sent one by one"
			}
			t.Run(name, func(t *testing.T) {
				srv, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.42.0.2:0")))
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				b := s.newBatcher(srv, listenerKey{proto: "udp"})
				if !b.gso {
					t.Skip("the kernel does not take UDP_SEGMENT")
				}
				var clients [2]*net.UDPConn
				for i := range clients {
					if clients[i], err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.42.0.3"), 0))); err != nil {
						t.Fatal(err)
					}
					defer clients[i].Close()
				}
				want := [2][]uint16{} // the IDs each client should get, in order
				for i, x := range c.queries {
					m := new(dns.Msg)
					m.SetQuestion(x.name, dns.TypeA)
					m.Id = uint16(100 + i)
					wire, _ := m.Pack()
					if _, err := clients[x.client].WriteToUDPAddrPort(wire, srv.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
						t.Fatal(err)
					}
					if !x.drop {
						want[x.client] = append(want[x.client], m.Id)
					}
				}
				rc, err := srv.SyscallConn()
				if err != nil {
					t.Fatal(err)
				}
				// Loopback has queued every query by now; one read takes them all.
				if err := rc.Read(b.recv); err != nil || b.errno != 0 || b.n != len(c.queries) {
					t.Fatalf("read %d of %d queries: %v %v", b.n, len(c.queries), err, b.errno)
				}
				b.ctx.now = time.Now()
				b.answer(b.n)
				s.flushSeen(&b.ctx)
				if got := b.segs[:b.nout]; !slices.Equal(got, c.sends) {
					t.Errorf("sends %v, want %v", got, c.sends)
				}
				if refused {
					rc.Write(func(fd uintptr) bool {
						for k := range b.nout {
							b.ungroup(fd, k)
						}
						return true
					})
				} else {
					b.done = 0
					if err := rc.Write(b.send); err != nil {
						t.Fatal(err)
					}
				}
				buf := make([]byte, 2048)
				for i, cl := range clients {
					for _, id := range want[i] {
						cl.SetReadDeadline(time.Now().Add(2 * time.Second))
						n, err := cl.Read(buf)
						if err != nil {
							t.Fatalf("client %d: %v, waiting for answer %d", i, err, id)
						}
						m := new(dns.Msg)
						if err := m.Unpack(buf[:n]); err != nil || m.Id != id || len(m.Answer) == 0 {
							t.Errorf("client %d: answer %v (%v), want ID %d with records", i, m, err, id)
						}
					}
				}
			})
		}
	}
}

// TestUDPServeBursts: bursts of more queries than one batch holds, from
// one socket, are all answered, each once: the reader goes on through
// full batches and waits for readiness after a short one without losing
// what arrived meanwhile.
func TestUDPServeBursts(t *testing.T) {
	listen := freeAddr(t, "127.42.0.4")
	newServer(t, testConfig(listen), Options{})
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(listen))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2048)
	for burst := range 3 {
		n := 1 + burst*(3*udpBatch) // 1, then 3 batches' worth, then 6
		want := map[uint16]bool{}
		for i := range n {
			m := new(dns.Msg)
			m.SetQuestion(wideName, dns.TypeA)
			m.Id = uint16(burst<<12 | i)
			wire, _ := m.Pack()
			if _, err := c.Write(wire); err != nil {
				t.Fatal(err)
			}
			want[m.Id] = true
		}
		for len(want) > 0 {
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, err := c.Read(buf)
			if err != nil {
				t.Fatalf("burst %d of %d queries: %d unanswered: %v", burst, n, len(want), err)
			}
			m := new(dns.Msg)
			if err := m.Unpack(buf[:k]); err != nil || !want[m.Id] || len(m.Answer) == 0 {
				t.Fatalf("burst %d: answer %v (%v): not one awaited", burst, m, err)
			}
			delete(want, m.Id)
		}
	}
}

// TestUDPServeDrainsQueue: with more queries queued than three batches
// hold, one serve goes on through the full batches and answers them all
// before it waits (a short batch says the queue is empty).
func TestUDPServeDrainsQueue(t *testing.T) {
	s := newServer(t, testConfig(netip.AddrPort{}), Options{})
	srv, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.42.0.5:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetReadBuffer(1 << 20)
	b := s.newBatcher(srv, listenerKey{proto: "udp"})
	cl, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.SetReadBuffer(1 << 20)
	const n = 3*udpBatch + 5
	for i := range n {
		m := new(dns.Msg)
		m.SetQuestion(wideName, dns.TypeA)
		m.Id = uint16(i)
		wire, _ := m.Pack()
		if _, err := cl.Write(wire); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := srv.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Every query is queued on loopback by now; serve answers them and
	// then waits for more until the deadline ends the read.
	srv.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if err := rc.Read(b.serve); err == nil {
		t.Fatal("serve returned with the socket idle")
	}
	buf := make([]byte, 2048)
	for i := range n {
		cl.SetReadDeadline(time.Now().Add(time.Second))
		k, err := cl.Read(buf)
		if err != nil {
			t.Fatalf("%d of %d queries answered: %v", i, n, err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:k]); err != nil || len(m.Answer) == 0 {
			t.Fatalf("answer %v (%v)", m, err)
		}
	}
}
