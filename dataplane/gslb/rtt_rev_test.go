package gslb

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestProbeQuestions: dns_dot asks the LDNS for `. NS`, dns_rev for the
// PTR of the LDNS's own address; each is timed to the reply.
func TestProbeQuestions(t *testing.T) {
	ldns, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.204.90.9:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer ldns.Close()
	asked := make(chan dns.Question, 4)
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := ldns.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			q := new(dns.Msg)
			if q.Unpack(buf[:n]) != nil || len(q.Question) != 1 {
				continue
			}
			asked <- q.Question[0]
			r := new(dns.Msg)
			r.SetRcode(q, dns.RcodeRefused)
			b, _ := r.Pack()
			ldns.WriteToUDPAddrPort(b, from)
		}
	}()
	port := uint16(ldns.LocalAddr().(*net.UDPAddr).Port)
	dst := netip.MustParseAddr("127.204.90.9")
	for _, c := range []struct {
		proto, qname string
		qtype        uint16
	}{
		{"dns_dot", ".", dns.TypeNS},
		{"dns_rev", "9.90.204.127.in-addr.arpa.", dns.TypePTR},
	} {
		_, proto, err := measure(t.Context(), netip.MustParseAddr("127.204.90.1"), dst, port, 2*time.Second, []string{c.proto})
		if err != nil || proto != c.proto {
			t.Errorf("%s: %q, %v", c.proto, proto, err)
			continue
		}
		select {
		case q := <-asked:
			if q.Name != c.qname || q.Qtype != c.qtype || q.Qclass != dns.ClassINET {
				t.Errorf("%s asked %v, want %s %s", c.proto, q, c.qname, dns.TypeToString[c.qtype])
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: the LDNS saw no query", c.proto)
		}
	}
}
