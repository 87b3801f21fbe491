package dnsvs

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// sourceEcho serves DNS on addr (UDP or TCP) answering each query with a
// TXT record of the address and port it came from; started waits.
func sourceEcho(t *testing.T, addr, network string) {
	t.Helper()
	srv := &dns.Server{Addr: addr, Net: network, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		a := new(dns.Msg)
		a.SetReply(r)
		a.Answer = append(a.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 30}, Txt: []string{w.RemoteAddr().String()}})
		w.WriteMsg(a)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ListenAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("member did not start")
	}
	t.Cleanup(func() { srv.Shutdown() })
}

// TestExchangeStrict: source-port preserve-strict's member query leaves
// from exactly the translation address and the client's port (UDP and
// TCP), and is not sent (errStrictPort) when another socket holds that
// port.
func TestExchangeStrict(t *testing.T) {
	sourceEcho(t, "127.238.7.1:30253", "udp")
	sourceEcho(t, "127.238.7.1:30253", "tcp")
	dst := netip.MustParseAddrPort("127.238.7.1:30253")
	for _, tc := range []struct {
		name  string
		udp   bool
		src   string
		taken bool
		want  string // the source the member saw; "" refused
	}{
		{"udp free", true, "127.238.7.100:31601", false, "127.238.7.100:31601"},
		{"udp taken", true, "127.238.7.100:31602", true, ""},
		{"tcp free", false, "127.238.7.100:31603", false, "127.238.7.100:31603"},
		{"tcp taken", false, "127.238.7.100:31604", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := netip.MustParseAddrPort(tc.src)
			if tc.taken {
				if tc.udp {
					c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(src))
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
				} else {
					l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(src))
					if err != nil {
						t.Fatal(err)
					}
					defer l.Close()
				}
			}
			q := new(dns.Msg)
			q.SetQuestion("who.example.", dns.TypeTXT)
			wire, _ := q.Pack()
			m, err := exchangeStrict(src, dst, q, wire, tc.udp, nil)
			if tc.want == "" {
				if err != errStrictPort {
					t.Fatalf("port in use: %v, %v; want errStrictPort", m, err)
				}
				return
			}
			if err != nil || len(m.Answer) != 1 {
				t.Fatalf("exchange: %v %v", m, err)
			}
			if got := m.Answer[0].(*dns.TXT).Txt[0]; got != tc.want {
				t.Errorf("the member saw %s, want %s", got, tc.want)
			}
		})
	}
}
