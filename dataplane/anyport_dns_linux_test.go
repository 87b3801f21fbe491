//go:build linux

package dataplane

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startDNSMember answers every A query at addr with one record, ip.
func startDNSMember(t *testing.T, addr, ip string) {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			var q dns.Msg
			if q.Unpack(b[:n]) != nil || len(q.Question) != 1 {
				continue
			}
			m := new(dns.Msg)
			m.SetReply(&q)
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A: net.ParseIP(ip)})
			if out, err := m.Pack(); err == nil {
				c.WriteToUDPAddrPort(out, from)
			}
		}
	}()
}

// askA asks the A record of a.example. at vs from a connected socket (as
// dig does: it hears only from vs) and returns the answer's address, ""
// when none came in a few tries.
func askA(t *testing.T, vs string) string {
	t.Helper()
	u := dialUDP(t, "127.239.3.100:0", vs)
	q := new(dns.Msg)
	q.SetQuestion("a.example.", dns.TypeA)
	out, _ := q.Pack()
	buf := make([]byte, 2048)
	for range 5 {
		u.c.Write(out)
		u.c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := u.c.Read(buf)
		if err != nil {
			continue
		}
		var m dns.Msg
		if m.Unpack(buf[:n]) != nil || len(m.Answer) != 1 {
			return "a bad answer"
		}
		if a, ok := m.Answer[0].(*dns.A); ok {
			return a.A.String()
		}
		return "not an A record"
	}
	return ""
}

// TestAnyPortDNS: a UDP virtual with a dns profile on every port of
// 127.239.3.1 answers queries to two ports, each forwarded to the member
// (at port any) on the same port, each answered from the port asked (a
// connected client hears nothing else); once the virtual goes, its
// answering sockets are closed (another program may bind the port
// alone again).
func TestAnyPortDNS(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	startDNSMember(t, "127.239.3.11:30053", "127.239.9.53")
	startDNSMember(t, "127.239.3.11:30054", "127.239.9.54")
	p, _ := loggedPlane(t)
	cfg := udpBasic("127.239.3.1:0", "127.239.3.11:0")
	cfg.Virtuals["/Common/vs"].DNS = &DNSProfile{Name: "/Common/dns", Unhandled: "allow"}
	mustApply(t, p, cfg)
	for _, tc := range []struct{ vs, want string }{
		{"127.239.3.1:30053", "127.239.9.53"},
		{"127.239.3.1:30054", "127.239.9.54"},
		{"127.239.3.1:30053", "127.239.9.53"}, // the port's answering socket again
	} {
		if got := askA(t, tc.vs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.vs, got, tc.want)
		}
	}
	if v, _ := p.Virtual("/Common/vs"); v.ClientSide.PktsIn < 3 {
		t.Errorf("%d datagrams counted in, want at least 3", v.ClientSide.PktsIn)
	}
	mustApply(t, p, basic("127.239.3.2:30053", "127.239.3.11:30053"))
	for _, port := range []string{"30053", "30054"} {
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.239.3.1:"+port)))
		if err != nil {
			t.Errorf("port %s still held after the virtual went: %v", port, err)
			continue
		}
		c.Close()
	}
}
