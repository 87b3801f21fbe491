package daemon

import (
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// sourceEchoDNS is a DNS member on addr (UDP and TCP) answering every A
// query with the address the query came from, so that a client sees
// the source the dns virtual's member query took.
func sourceEchoDNS(t *testing.T, addr string) {
	t.Helper()
	h := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		var ip net.IP
		switch a := w.RemoteAddr().(type) {
		case *net.UDPAddr:
			ip = a.IP
		case *net.TCPAddr:
			ip = a.IP
		}
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 0}, A: ip})
		w.WriteMsg(m)
	})
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		srv := &dns.Server{Addr: addr, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		go srv.ListenAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("member %s/%s did not start", addr, network)
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
}

// dnsSourceSeen asks vip over network from the address from, a few
// times for a lost datagram, and returns the source the member saw
// ("" for no answer).
func dnsSourceSeen(t *testing.T, network, from, vip string) string {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(from)}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	q := new(dns.Msg)
	q.SetQuestion("who.example.net.", dns.TypeA)
	for range 3 {
		m, _, err := c.Exchange(q, vip)
		if err == nil && len(m.Answer) == 1 {
			if a, ok := m.Answer[0].(*dns.A); ok {
				return a.A.String()
			}
		}
	}
	return ""
}

// TestSNATVLANsDNS: a dns virtual's member queries take the client's
// arrival VLAN (lo's), over UDP and TCP: an ltm snat enabled on it
// translates them, disabled on it (or enabled on another VLAN) leaves
// them to the wider SNAT; an ltm nat likewise.
func TestSNATVLANsDNS(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	sourceEchoDNS(t, "127.247.0.11:30053")
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{cmd: "create net vlan loop interfaces { lo { } } tag 0"},
		{cmd: "create net vlan other"},
		{cmd: "create ltm pool dp members add { 127.247.0.11:30053 }"},
		{cmd: "create ltm profile dns dnsp"},
		{cmd: "create ltm virtual dns_udp destination 127.247.0.1:30053 ip-protocol udp profiles add { dnsp udp } pool dp"},
		{cmd: "create ltm virtual dns_tcp destination 127.247.0.1:30053 ip-protocol tcp profiles add { dnsp tcp } pool dp"},
		{cmd: "create ltm snat s_wide origins add { 127.247.0.0/16 } translation 127.247.0.100"},
		{cmd: "create ltm snat s_lo origins add { 127.247.1.0/24 } translation 127.247.0.101 vlans add { loop } vlans-enabled",
			out: "dns virtuals' member queries (UDP, TCP and DoH clients), rules' listen relays (TCP and UDP) and HTTP/3 clients' requests;"},
		{cmd: "create ltm nat n1 originating-address 127.247.2.10 translation-address 127.247.0.110 vlans add { loop } vlans-enabled",
			out: "dns and DoH virtuals' member queries, rules' listen relays and HTTP/3 clients"},
	})
	const vip = "127.247.0.1:30053"
	check := func(when string, probes map[string]string) {
		t.Helper()
		for _, network := range []string{"udp", "tcp"} {
			for from, want := range probes {
				if got := dnsSourceSeen(t, network, from, vip); got != want {
					t.Errorf("%s, %s from %s: the member saw %q, want %s", when, network, from, got, want)
				}
			}
		}
	}
	check("enabled on loop", map[string]string{"127.247.1.5": "127.247.0.101", "127.247.2.10": "127.247.0.110", "127.247.3.5": "127.247.0.100"})
	runSteps(t, s, []step{
		{cmd: "modify ltm snat s_lo vlans-disabled"},
		{cmd: "modify ltm nat n1 vlans-disabled"},
	})
	check("disabled on loop", map[string]string{"127.247.1.5": "127.247.0.100", "127.247.2.10": "127.247.0.100"})
	runSteps(t, s, []step{{cmd: "modify ltm snat s_lo vlans replace-all-with { other } vlans-enabled"}})
	check("enabled on another VLAN", map[string]string{"127.247.1.5": "127.247.0.100"})
}
