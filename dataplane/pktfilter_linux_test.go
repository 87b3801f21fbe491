package dataplane

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/pktfilter"
)

// pfCopy is a copy of s for another plane: a Holder's Store fills in
// the Set and its filters, which two planes must not share.
func pfCopy(s *pktfilter.Set) *pktfilter.Set {
	if s == nil {
		return nil
	}
	c := *s
	c.Filters = nil
	for _, f := range s.Filters {
		nf := *f
		c.Filters = append(c.Filters, &nf)
	}
	return &c
}

// pfConn is a TCP client through a virtual that has had an answer.
type pfConn struct {
	c net.Conn
	r *bufio.Reader
}

// pfDial connects from src to vs and has one line answered.
func pfDial(t *testing.T, src, vs string) *pfConn {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", vs, src, err)
	}
	t.Cleanup(func() { c.Close() })
	pc := &pfConn{c: c, r: bufio.NewReader(c)}
	if got := pc.exchange(); got != "answer" {
		t.Fatalf("client from %s before the filters: %s", src, got)
	}
	return pc
}

// exchange sends a line and says what came back: "answer", "reset" or
// "closed" (EOF), or the error.
func (pc *pfConn) exchange() string {
	pc.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := pc.c.Write([]byte("again\n")); err != nil {
		if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			return "reset"
		}
		return err.Error()
	}
	line, err := pc.r.ReadString('\n')
	switch {
	case err == nil:
		return "answer"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case line == "" && err.Error() == "EOF":
		return "closed"
	}
	return err.Error()
}

// udpOutcome sends msg on u and says what came back: "answer",
// "refused" (ECONNREFUSED: an ICMP port unreachable reached the
// socket) or "nothing" (the read timed out).
func udpOutcome(u *udpClient, msg string, wait time.Duration) string {
	u.c.Write([]byte(msg))
	u.c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	_, err := u.c.Read(buf)
	switch {
	case err == nil:
		return "answer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "nothing"
	}
	return err.Error()
}

// TestPacketFilterUDPRejectICMP: a UDP datagram a filter rejects is
// answered with an ICMP port unreachable, which a connected client
// socket reads as ECONNREFUSED; a discarded one is not answered at all;
// an accepted one reaches the member. The sends are counted.
func TestPacketFilterUDPRejectICMP(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.192.20.11:30053", "U1")
	p, _ := newPlane(t)
	vs := "127.192.20.1:30053"
	mustApply(t, p, udpBasic(vs, "127.192.20.11:30053"))
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, nil,
		[4]string{"reject-21", "5", "reject", "udp and src net 127.192.21.0/24"},
		[4]string{"discard-22", "6", "discard", "udp and src net 127.192.22.0/24"},
	))
	for _, c := range []struct{ src, want string }{
		{"127.192.21.1:0", "refused"},
		{"127.192.22.1:0", "nothing"},
		{"127.192.23.1:0", "answer"},
	} {
		u := dialUDP(t, c.src, vs)
		got := ""
		for i := 0; i < 5 && got != c.want; i++ { // a loaded machine may lose a datagram
			got = udpOutcome(u, "q", time.Second)
			if c.want == "nothing" {
				break
			}
		}
		if got != c.want {
			t.Errorf("client from %s: %s, want %s", c.src, got, c.want)
		}
	}
	if p.unreach.Sent.Load() == 0 {
		t.Error("no ICMP port unreachable counted sent")
	}
}

// TestPacketFilterUDPRejectICMPv6: the same over IPv6 (::1), ICMPv6
// type 1 code 4.
func TestPacketFilterUDPRejectICMPv6(t *testing.T) {
	t.Parallel()
	if c, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
		t.Skipf("skipped: no IPv6 loopback: %v", err)
	} else {
		c.Close()
	}
	p, _ := newPlane(t)
	vs := "[::1]:30054"
	startUDPMember(t, "127.192.20.12:30054", "U1")
	mustApply(t, p, udpBasic(vs, "127.192.20.12:30054"))
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, nil, [4]string{"reject-v6", "5", "reject", "ip6 and udp"}))
	u := dialUDP(t, "", vs)
	got := ""
	for i := 0; i < 5 && got != "refused"; i++ {
		got = udpOutcome(u, "q", time.Second)
	}
	if got != "refused" {
		t.Errorf("IPv6 client: %s, want refused", got)
	}
}

// TestPacketFilterEstablished: with packetfilter.established enable,
// the connections and flows open when new filters come in force are
// matched again: a rejected TCP client is reset, a discarded one closed,
// a rejected UDP flow ended (the client's next datagram, a new flow, is
// refused with an ICMP port unreachable), the others go on; without it
// nothing open is touched.
func TestPacketFilterEstablished(t *testing.T) {
	t.Parallel()
	startServer(t, "127.192.24.11:30081", "S1")
	startUDPMember(t, "127.192.24.11:30055", "U1")
	p, _ := newPlane(t)
	p2, _ := newPlane(t) // the UDP virtual's, with a connection table of its own
	tvs, uvs := "127.192.24.1:30081", "127.192.24.1:30055"
	mustApply(t, p, basic(tvs, "127.192.24.11:30081"))
	mustApply(t, p2, udpBasic(uvs, "127.192.24.11:30055"))
	rej, disc, keep := pfDial(t, "127.192.25.1", tvs), pfDial(t, "127.192.25.2", tvs), pfDial(t, "127.192.25.3", tvs)
	urej, ukeep := dialUDP(t, "127.192.26.1:0", uvs), dialUDP(t, "127.192.26.2:0", uvs)
	for _, u := range []*udpClient{urej, ukeep} {
		if a := u.mustAsk("q"); label(a) != "U1" {
			t.Fatalf("UDP answer %q", a)
		}
	}
	set := func(established bool) *pktfilter.Set {
		s := pfSet(t, pktfilter.Accept, nil,
			[4]string{"rej", "1", "reject", "src host 127.192.25.1 or src host 127.192.26.1"},
			[4]string{"disc", "2", "discard", "src host 127.192.25.2"},
		)
		s.Established = established
		return s
	}
	p.SetPacketFilter(set(false))
	p2.SetPacketFilter(set(false))
	if n := p.RecheckPacketFilter() + p2.RecheckPacketFilter(); n != 0 {
		t.Fatalf("established disable: %d flows closed", n)
	}
	if got := rej.exchange(); got != "answer" {
		t.Fatalf("established disable: an open connection the filters reject: %s", got)
	}
	p.SetPacketFilter(set(true))
	p2.SetPacketFilter(set(true))
	if n := p.RecheckPacketFilter(); n != 2 {
		t.Errorf("established enable: %d TCP connections closed, want 2", n)
	}
	if n := p2.RecheckPacketFilter(); n != 1 {
		t.Errorf("established enable: %d UDP flows closed, want 1", n)
	}
	if got := rej.exchange(); got != "reset" {
		t.Errorf("rejected connection: %s, want reset", got)
	}
	if got := disc.exchange(); got != "closed" && got != "reset" { // a write after the FIN may draw an RST
		t.Errorf("discarded connection: %s, want closed", got)
	}
	if got := keep.exchange(); got != "answer" {
		t.Errorf("accepted connection: %s", got)
	}
	got := ""
	for i := 0; i < 5 && got != "refused"; i++ {
		got = udpOutcome(urej, "q", time.Second)
	}
	if got != "refused" {
		t.Errorf("rejected UDP flow's next datagram: %s, want refused", got)
	}
	if a := ukeep.mustAsk("q"); label(a) != "U1" {
		t.Errorf("accepted UDP flow: %q", a)
	}
	if n := p.PacketFilter().Stats("rej").Matches; n != 1 {
		t.Errorf("rej: %d TCP matches, want 1", n)
	}
	if n := p2.PacketFilter().Stats("rej").Matches; n < 2 { // the flow, then each refused datagram
		t.Errorf("rej: %d UDP matches, want at least 2", n)
	}
	if n := p.PacketFilter().Stats("disc").Matches; n != 1 {
		t.Errorf("disc: %d matches, want 1", n)
	}
}

// TestPacketFilterVLAN: a filter's vlan and the trusted vlans, on the
// loopback interface every connection of this test arrives on: a
// reject filter on lo resets a TCP client and refuses a UDP one, the
// same filter on another interface lets them in, a trusted lo exempts
// them from a default reject; a flow opened while the filters read the
// arrival interface keeps it, and established filtering matches it
// again with it.
func TestPacketFilterVLAN(t *testing.T) {
	t.Parallel()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	other := lo.Index + 1000 // no interface has it
	startServer(t, "127.192.28.11:30082", "S1")
	startUDPMember(t, "127.192.28.11:30056", "U1")
	p, _ := newPlane(t)
	tvs, uvs := "127.192.28.1:30082", "127.192.28.1:30056"
	mustApply(t, p, basic(tvs, "127.192.28.11:30082"))
	p2, _ := newPlane(t)
	mustApply(t, p2, udpBasic(uvs, "127.192.28.11:30056"))
	mk := func(deflt pktfilter.Action, vlan []int, trusted []int) *pktfilter.Set {
		s := pfSet(t, deflt, nil, [4]string{"on-vlan", "1", "reject", ""})
		s.Filters[0].VLAN = vlan
		s.TrustedIf = trusted
		return s
	}
	for i, c := range []struct {
		name     string
		set      *pktfilter.Set
		tcp, udp string
	}{
		{"reject on lo", mk(pktfilter.Accept, []int{lo.Index}, nil), "reset", "refused"},
		{"reject on another", mk(pktfilter.Accept, []int{other}, nil), "answer", "answer"},
		{"reject on a vlan without interfaces", mk(pktfilter.Accept, []int{}, nil), "answer", "answer"},
		{"lo trusted, default reject", mk(pktfilter.Reject, []int{other}, []int{lo.Index}), "answer", "answer"},
		{"another trusted, default reject", mk(pktfilter.Reject, []int{other}, []int{other}), "reset", "refused"},
	} {
		p2.SetPacketFilter(pfCopy(c.set))
		p.SetPacketFilter(c.set)
		if got := pfOutcome(t, "127.192.29."+string(rune('1'+i)), tvs); got != c.tcp {
			t.Errorf("%s: TCP %s, want %s", c.name, got, c.tcp)
		}
		u := dialUDP(t, "127.192.30."+string(rune('1'+i))+":0", uvs)
		got := ""
		for j := 0; j < 5 && got != c.udp; j++ {
			got = udpOutcome(u, "q", time.Second)
		}
		if got != c.udp {
			t.Errorf("%s: UDP %s, want %s", c.name, got, c.udp)
		}
	}
	// A connection opened while the arrival is read keeps it: a reject on
	// lo, established, closes it.
	p.SetPacketFilter(mk(pktfilter.Accept, []int{other}, nil))
	// The cases' connections are gone from the table first (their
	// closes are handled apart from the clients'), so that the recheck
	// finds this one alone.
	eventually(t, "the earlier connections' end", func() bool { return p.ConnectionCount() == 0 })
	c := pfDial(t, "127.192.31.1", tvs)
	eventually(t, "the connection in the table", func() bool { return p.ConnectionCount() == 1 })
	s := mk(pktfilter.Accept, []int{lo.Index}, nil)
	s.Established = true
	p.SetPacketFilter(s)
	if n := p.RecheckPacketFilter(); n != 1 {
		t.Errorf("established reject on lo: %d flows closed, want 1", n)
	}
	if got := c.exchange(); got != "reset" {
		t.Errorf("established reject on lo: %s, want reset", got)
	}
	// Without VLANs in the filters the arrival is no longer read.
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, nil))
	if p.PacketFilter().Arrival() {
		t.Error("filters without VLANs still read the arrival")
	}
}

// TestPacketFilterDNSQueries: a UDP virtual with a dns profile answers
// each query by itself, without a flow; the filters match each query:
// a rejected client is refused with an ICMP port unreachable, a
// discarded one unanswered, the others answered (here REFUSED, the
// profile's unhandled-query-action reject, which is an answer).
func TestPacketFilterDNSQueries(t *testing.T) {
	t.Parallel()
	p, _ := newPlane(t)
	vs := "127.192.33.1:30057"
	cfg := udpBasic(vs)
	cfg.Virtuals["/Common/vs"].DNS = &DNSProfile{Name: "/Common/dns", Unhandled: "reject"}
	mustApply(t, p, cfg)
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, nil,
		[4]string{"dns-reject", "1", "reject", "udp and dst port 30057 and src host 127.192.34.1"},
		[4]string{"dns-discard", "2", "discard", "src host 127.192.34.2"},
	))
	// A query for example.com A, id 0x1234.
	q := "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
	for _, c := range []struct{ src, want string }{
		{"127.192.34.1:0", "refused"},
		{"127.192.34.2:0", "nothing"},
		{"127.192.34.3:0", "answer"},
	} {
		u := dialUDP(t, c.src, vs)
		got := ""
		for i := 0; i < 5 && got != c.want; i++ {
			got = udpOutcome(u, q, time.Second)
			if c.want == "nothing" {
				break
			}
		}
		if got != c.want {
			t.Errorf("client from %s: %s, want %s", c.src, got, c.want)
		}
	}
	if n := p.PacketFilter().Stats("dns-discard").Matches; n != 1 {
		t.Errorf("dns-discard: %d matches, want 1", n)
	}
}
