package gslbtest

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// Probes are answered with REFUSED over UDP and TCP, and counted by
// source; the delay of a source holds its answer back.
func TestLDNSAnswersProbes(t *testing.T) {
	l, err := NewLDNS(netip.MustParseAddr("127.0.89.1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	slow, fast := netip.MustParseAddr("127.0.89.2"), netip.MustParseAddr("127.0.89.3")
	l.SetDelay(slow, 30*time.Millisecond)
	srv := netip.AddrPortFrom(l.Addr(), l.Port())
	for _, src := range []netip.Addr{slow, fast} {
		for _, network := range []string{"udp", "tcp"} {
			m, err := Query(src, srv, network, ".", dns.TypeNS, 2*time.Second)
			if err != nil {
				t.Fatalf("%s from %s: %v", network, src, err)
			}
			if m.Rcode != dns.RcodeRefused {
				t.Errorf("%s from %s: rcode %s", network, src, dns.RcodeToString[m.Rcode])
			}
		}
		if n := l.Probes(src); n != 2 {
			t.Errorf("%d probes counted from %s, want 2", n, src)
		}
	}
	// Garbage is ignored, not answered.
	c, err := net.Dial("udp", srv.String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{1, 2, 3})
	c.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAddrs(t *testing.T) {
	m := new(dns.Msg)
	a, _ := dns.NewRR("x. 30 IN A 192.0.2.1")
	aaaa, _ := dns.NewRR("x. 30 IN AAAA 2001:db8::1")
	txt, _ := dns.NewRR(`x. 30 IN TXT "t"`)
	m.Answer = []dns.RR{a, txt, aaaa}
	got := Addrs(m)
	if len(got) != 2 || got[0] != netip.MustParseAddr("192.0.2.1") || got[1] != netip.MustParseAddr("2001:db8::1") {
		t.Errorf("Addrs = %v", got)
	}
}
