package http3

import (
	"hash/maphash"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// TestArrivalCollide: clients whose addresses hash to the same set each
// keep their own arrival, read from the socket as quic-go reads it
// (ReadBatch); past the set's ways the oldest is given up; a
// short-header packet is not noted.
func TestArrivalCollide(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo:", err)
	}
	u, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.247.200.1:27020")))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c := newArrivalConn(u)
	c.setArrival(true)

	// Six clients of one set (the hash is keyed per process: ports are
	// tried up to 40000, some 50 of them in each set), the first five
	// in turn, the sixth's packet a short header.
	first := netip.MustParseAddrPort("127.247.200.2:27021")
	clients := []netip.AddrPort{first}
	for p := uint16(27022); len(clients) < 6 && p < 40000; p++ {
		if a := netip.AddrPortFrom(netip.MustParseAddr("127.247.200.3"), p); slotOf(a) == slotOf(first) {
			clients = append(clients, a)
		}
	}
	if len(clients) < 6 {
		t.Fatalf("found %d clients of one set", len(clients))
	}
	send := func(from netip.AddrPort, first byte) {
		t.Helper()
		s, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(from), u.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Write([]byte{first, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
			t.Fatal(err)
		}
		// Read what came, as quic-go does, so that the packets are noted
		// in the order they were sent.
		ms := make([]ipv4.Message, 4)
		for i := range ms {
			ms[i].Buffers = [][]byte{make([]byte, 1500)}
			ms[i].OOB = make([]byte, 128)
		}
		u.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.ReadBatch(ms, 0); err != nil || n != 1 {
			t.Fatalf("read from %s: %d packets, %v", from, n, err)
		}
	}
	for _, a := range clients[:2] {
		send(a, 0xc0) // a long header: an Initial
	}
	for _, a := range clients[:2] {
		if got := c.arrival(a); got != lo.Index {
			t.Errorf("arrival of %s (set %d, shared) = %d, want lo's %d", a, slotOf(a), got, lo.Index)
		}
	}
	// Five in a set of four: the oldest (first, the earliest noted)
	// is given up.
	for _, a := range clients[2:5] {
		send(a, 0xc0)
	}
	if got := c.arrival(first); got != 0 {
		t.Errorf("arrival of the oldest of five = %d, want 0 (given up)", got)
	}
	for _, a := range clients[1:5] {
		if got := c.arrival(a); got != lo.Index {
			t.Errorf("arrival of %s = %d, want lo's %d", a, got, lo.Index)
		}
	}
	send(clients[5], 0x40) // a short header: a connection under way
	if got := c.arrival(clients[5]); got != 0 {
		t.Errorf("a short header's arrival = %d, want 0 (not noted)", got)
	}
	c.setArrival(false)
	if got := c.arrival(clients[1]); got != 0 {
		t.Errorf("arrival while off = %d, want 0", got)
	}
}

// TestArrivalPut: a client noted again keeps its entry (and becomes the
// newest); the set's oldest is the one given up.
func TestArrivalPut(t *testing.T) {
	c := &arrivalConn{}
	c.on.Store(true)
	base := netip.MustParseAddrPort("127.247.200.2:27030")
	same := []netip.AddrPort{base}
	for p := uint16(27031); len(same) < arrivalWays+1 && p < 40000; p++ {
		if a := netip.AddrPortFrom(base.Addr(), p); slotOf(a) == slotOf(base) {
			same = append(same, a)
		}
	}
	if len(same) < arrivalWays+1 {
		t.Fatalf("found %d clients of one set", len(same))
	}
	for i, a := range same[:arrivalWays] {
		c.put(a, 10+i)
	}
	c.put(same[0], 20)           // noted again: now the newest, its interface the last seen
	c.put(same[arrivalWays], 30) // takes the oldest: same[1]
	want := map[netip.AddrPort]int{same[0]: 20, same[1]: 0, same[2]: 12, same[3]: 13, same[arrivalWays]: 30}
	for a, w := range want {
		if got := c.arrival(a); got != w {
			t.Errorf("arrival(%s) = %d, want %d", a, got, w)
		}
	}
	// The sequence wrapping past 0 leaves the ages right.
	c.seq = ^uint32(0) - 1
	c.put(same[2], 40) // newest
	c.put(same[3], 41) // seq wraps to 1 here
	c.put(same[1], 42) // the oldest now: same[0] (noted before the wrap)
	if got := c.arrival(same[0]); got != 0 {
		t.Errorf("after the wrap, the oldest kept: %d", got)
	}
	for a, w := range map[netip.AddrPort]int{same[2]: 40, same[3]: 41, same[1]: 42, same[arrivalWays]: 30} {
		if got := c.arrival(a); got != w {
			t.Errorf("after the wrap, arrival(%s) = %d, want %d", a, got, w)
		}
	}
}

// TestArrivalSeed: the sets' hash is keyed: the table's sets are the
// process key's, and under another key the clients of one set are spread over others, so
// that addresses chosen to meet in a set of one process do not meet in
// another's.
func TestArrivalSeed(t *testing.T) {
	a, b := maphash.MakeSeed(), maphash.MakeSeed()
	first := netip.MustParseAddrPort("127.26.205.2:27021")
	var same []netip.AddrPort // clients of first's set under a
	for p := uint16(27022); len(same) < 16 && p < 40000; p++ {
		c := netip.AddrPortFrom(netip.MustParseAddr("127.26.205.3"), p)
		if slotWith(a, c) == slotWith(a, first) {
			same = append(same, c)
		}
	}
	if len(same) < 16 {
		t.Fatalf("found %d clients of one set", len(same))
	}
	spread := map[int]bool{}
	for _, c := range same {
		spread[slotWith(b, c)] = true
	}
	// 16 clients all in one set of 256 under a second key: 256^-15.
	if len(spread) < 2 {
		t.Errorf("16 clients of one set under one key are in %d set(s) under another", len(spread))
	}
	if slotOf(first) != slotWith(arrivalSeed, first) {
		t.Errorf("the table's set is not the process key's")
	}
}

// TestArrivalNoAlloc: noting a client's arrival and reading it
// allocate nothing, IPv4 or IPv6.
func TestArrivalNoAlloc(t *testing.T) {
	c := &arrivalConn{}
	c.on.Store(true)
	v4 := netip.MustParseAddrPort("127.26.205.2:27040")
	v6 := netip.MustParseAddrPort("[fd00:26::2]:27041")
	if n := testing.AllocsPerRun(100, func() {
		c.put(v4, 1)
		c.put(v6, 2)
		if c.arrival(v4) != 1 || c.arrival(v6) != 2 {
			t.Fatal("arrivals lost")
		}
	}); n != 0 {
		t.Errorf("%v allocations per note and read", n)
	}
}

// TestArrivalIPv6: an IPv6 client's Initial on an IPv6 socket ([::1])
// is noted by its address, from IPV6_PKTINFO, read as quic-go reads it;
// another client of the same address is not taken for it.
func TestArrivalIPv6(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo:", err)
	}
	u, err := net.ListenUDP("udp6", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("[::1]:27050")))
	if err != nil {
		t.Skip("no [::1]:", err)
	}
	defer u.Close()
	c := newArrivalConn(u)
	c.setArrival(true)
	from := netip.MustParseAddrPort("[::1]:27051")
	s, err := net.DialUDP("udp6", net.UDPAddrFromAddrPort(from), u.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Write([]byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	ms := make([]ipv4.Message, 4)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, 1500)}
		ms[i].OOB = make([]byte, 128)
	}
	u.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.ReadBatch(ms, 0); err != nil || n != 1 {
		t.Fatalf("read: %d packets, %v", n, err)
	}
	if got := c.arrival(from); got != lo.Index {
		t.Errorf("arrival of %s = %d, want lo's %d", from, got, lo.Index)
	}
	if got := c.arrival(netip.MustParseAddrPort("[::1]:27052")); got != 0 {
		t.Errorf("arrival of another port of ::1 = %d, want 0", got)
	}
}
