package daemon

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestSNATTranslationLimitDNS: a dns virtual's member queries hold their
// translation address for the exchange: with connection-limit 1 and a
// member slow to answer, of two concurrent queries one is answered and
// the other is refused (counted), and sequential queries are all
// answered (each exchange gives the address back).
func TestSNATTranslationLimitDNS(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	// The member is slow only to the concurrent queries (slow.example.net),
	// which must overlap; the sequential ones are answered at once.
	srv := &dns.Server{Addr: "127.227.0.31:30053", Net: "udp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if r.Question[0].Name == "slow.example.net." {
			time.Sleep(time.Second)
		}
		a := new(dns.Msg)
		a.SetReply(r)
		rr, _ := dns.NewRR(r.Question[0].Name + " 30 IN A 192.0.2.7")
		a.Answer = append(a.Answer, rr)
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
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool dp members add { 127.227.0.31:30053 }",
		"create ltm virtual v_dns destination 127.227.0.3:30053 ip-protocol udp profiles replace-all-with { udp dns } pool dp",
		"create ltm snat-translation 127.227.0.104 address 127.227.0.104 connection-limit 1",
		"create ltm snat s_dns origins add { 127.227.5.0/24 } translation 127.227.0.104",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	ask := func(from, name string) bool {
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeA)
		c := &dns.Client{Net: "udp", Timeout: 3 * time.Second, Dialer: &net.Dialer{Timeout: 3 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(from)}}}
		m, _, err := c.Exchange(q, "127.227.0.3:30053")
		return err == nil && m.Rcode == dns.RcodeSuccess && len(m.Answer) == 1
	}
	for i := 0; i < 3; i++ {
		if !ask("127.227.5.5", "www.example.net.") {
			t.Fatalf("sequential query %d not answered", i)
		}
	}
	var wg sync.WaitGroup
	answered := make([]bool, 2)
	for i, from := range []string{"127.227.5.6", "127.227.5.7"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answered[i] = ask(from, "slow.example.net.")
		}()
	}
	wg.Wait()
	l, ok := p.SNATTranslationLimit(netip.MustParseAddr("127.227.0.104"))
	if !ok || l.Refused != 1 || l.Cur != 0 || l.Max != 1 {
		t.Errorf("after two concurrent queries: %+v (%v), want 1 refused, 0 current, 1 maximum (answered %v)", l, ok, answered)
	}
	if answered[0] == answered[1] {
		t.Errorf("two concurrent queries at a limit of 1: answered %v, want one of them", answered)
	}
}
