package daemon

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// heldMember is a DNS member that answers many.test. with three A
// records at once, and holds its answers to hold.test. until released:
// the queries out to it can be counted while they wait.
type heldMember struct {
	held    atomic.Int64
	release chan struct{}
	once    sync.Once
}

func startHeldMember(t *testing.T, addr string) *heldMember {
	t.Helper()
	h := &heldMember{release: make(chan struct{})}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		switch strings.ToLower(r.Question[0].Name) {
		case "hold.test.":
			h.held.Add(1)
			select {
			case <-h.release:
			case <-time.After(5 * time.Second):
			}
			m.Answer = append(m.Answer, mustRR(t, "hold.test. 60 IN A 127.67.4.70"))
		case "many.test.":
			for _, a := range []string{"127.67.4.71", "127.67.4.72", "127.67.4.73"} {
				m.Answer = append(m.Answer, mustRR(t, "many.test. 60 IN A "+a))
			}
		default:
			m.Rcode = dns.RcodeRefused
		}
		w.WriteMsg(m)
	})
	for _, network := range []string{"udp", "tcp"} {
		srv := &dns.Server{Addr: addr, Net: network, Handler: handler}
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go srv.ListenAndServe()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("member %s/%s did not start", addr, network)
		}
		t.Cleanup(func() { srv.Shutdown() })
	}
	t.Cleanup(h.free)
	return h
}

func (h *heldMember) free() { h.once.Do(func() { close(h.release) }) }

// askID sends name's A query with id over network to addr from the
// test's client address and describes the answer: the rcode and the A
// records in order.
func askID(t *testing.T, network, addr, name string, id uint16) string {
	t.Helper()
	q := query(name, dns.TypeA)
	q.Id = id
	return xAsk(t, network, "127.67.4.100", addr, q)
}

// TestDNSCacheTransparentSettings: a transparent cache's
// max-concurrent-udp and max-concurrent-tcp bound the queries out to the
// pool (one beyond is answered SERVFAIL), and rrset-rotate query-id
// rotates the record sets it answers from what it keeps, on a real
// virtual with a real member.
func TestDNSCacheTransparentSettings(t *testing.T) {
	e, _ := dnsProfileEngine(t, false)
	member := startHeldMember(t, "127.67.4.11:5300")
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dns_pool members add { 127.67.4.11:5300 }",
		"create ltm dns cache transparent tc max-concurrent-udp 1 max-concurrent-tcp 1 rrset-rotate query-id",
		"create ltm profile dns tp enable-cache yes cache tc",
		"create ltm virtual t_udp destination 127.67.4.1:5300 ip-protocol udp profiles add { tp udp } pool dns_pool",
		"create ltm virtual t_tcp destination 127.67.4.1:5300 ip-protocol tcp profiles add { tp tcp } pool dns_pool",
	)
	const vip = "127.67.4.1:5300"
	// rrset-rotate: the member's order first (the miss), then the kept
	// set rotated by each query's ID.
	for _, tt := range []struct {
		id   uint16
		want string
	}{
		{7, "NOERROR 127.67.4.71 127.67.4.72 127.67.4.73"},
		{3, "NOERROR 127.67.4.71 127.67.4.72 127.67.4.73"},
		{4, "NOERROR 127.67.4.72 127.67.4.73 127.67.4.71"},
		{5, "NOERROR 127.67.4.73 127.67.4.71 127.67.4.72"},
	} {
		if got := askID(t, "udp", vip, "many.test.", tt.id); got != tt.want {
			t.Errorf("many.test id %d: %q, want %q", tt.id, got, tt.want)
		}
	}
	// max-concurrent-udp 1: one query held at the member, the next
	// is SERVFAIL; TCP has its own slot.
	first := make(chan string, 1)
	go func() { first <- askID(t, "udp", vip, "hold.test.", 1) }()
	waitUntil(t, "the first query to reach the member", func() bool { return member.held.Load() == 1 })
	if got := askID(t, "udp", vip, "hold.test.", 2); got != "SERVFAIL" {
		t.Errorf("a second UDP query while one is out: %q, want SERVFAIL", got)
	}
	tcp := make(chan string, 1)
	go func() { tcp <- askID(t, "tcp", vip, "hold.test.", 3) }()
	waitUntil(t, "the TCP query to reach the member", func() bool { return member.held.Load() == 2 })
	if got := askID(t, "tcp", vip, "hold.test.", 4); got != "SERVFAIL" {
		t.Errorf("a second TCP query while one is out: %q, want SERVFAIL", got)
	}
	member.free()
	for _, ch := range []chan string{first, tcp} {
		if got := <-ch; got != "NOERROR 127.67.4.70" {
			t.Errorf("a held query: %q", got)
		}
	}
	out, _ := run(t, s, "show ltm dns cache transparent tc")
	if !regexp.MustCompile(`(?m)^\s*Over max-concurrent\s+2$`).MatchString(out) {
		t.Errorf("show ltm dns cache transparent tc:\n%s", out)
	}
}

// waitUntil polls cond for up to ten seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 1000 {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
