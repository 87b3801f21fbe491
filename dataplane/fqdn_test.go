package dataplane

import (
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/fqdn"
)

// testZone is a DNS server on loopback answering A queries from a map
// the test changes, with a 1 s TTL.
type testZone struct {
	mu   sync.Mutex
	a    map[string][]string
	fail bool
	addr string
}

func startTestZone(t *testing.T, ip string) *testZone {
	t.Helper()
	z := &testZone{a: map[string][]string{}}
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	z.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		z.mu.Lock()
		defer z.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		if z.fail {
			m.Rcode = dns.RcodeServerFailure
		} else if q := r.Question[0]; q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA {
			for _, a := range z.a[strings.ToLower(q.Name)] {
				if v6 := strings.Contains(a, ":"); v6 == (q.Qtype == dns.TypeAAAA) {
					rr, _ := dns.NewRR(q.Name + " 1 IN " + dns.TypeToString[q.Qtype] + " " + a)
					m.Answer = append(m.Answer, rr)
				}
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return z
}

func (z *testZone) set(name string, addrs ...string) {
	z.mu.Lock()
	z.a[dns.Fqdn(name)] = addrs
	z.mu.Unlock()
}

func (z *testZone) setFail(f bool) {
	z.mu.Lock()
	z.fail = f
	z.mu.Unlock()
}

func memberNames(p *Plane, pool string) string {
	ps, ok := p.Pool(pool)
	if !ok {
		return ""
	}
	var out []string
	for _, m := range ps.Members {
		out = append(out, m.Name)
	}
	return strings.Join(out, " ")
}

// TestFQDNNodes follows an FQDN node's name through a DNS server on
// loopback: one ephemeral member per address, added and removed as the
// answer changes, carrying traffic; a failing server keeps the members in
// service and shows fqdn-down.
func TestFQDNNodes(t *testing.T) {
	z := startTestZone(t, "127.0.160.53")
	z.set("app.example", "127.0.160.11")
	startServer(t, "127.0.160.11:9000", "S1")
	startServer(t, "127.0.160.12:9000", "S2")
	p := New(Options{Logger: slog.New(slog.NewTextHandler(&logBuf{}, nil)), ConnectTimeout: time.Second,
		FQDNResolver: &fqdn.Server{Addrs: []string{z.addr}}})
	t.Cleanup(p.Close)

	cfg := basic("127.0.160.10:9000", "127.0.160.13:9000")
	cfg.Pools["/Common/pool"].Members = nil
	cfg.Nodes = map[string]*Node{"/Common/app.example": {Name: "/Common/app.example",
		FQDN: &FQDN{Name: "app.example", Interval: 0, DownInterval: time.Second, Autopopulate: true}}}
	cfg.Pools["/Common/pool"].FQDNMembers = []Member{{Node: "/Common/app.example", Addr: netip.AddrPortFrom(netip.Addr{}, 9000)}}
	mustApply(t, p, cfg)

	eventually(t, "the first address as a member", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.0.160.11:9000"
	})
	if got := once(t, "127.0.160.10:9000"); got != "S1 Response" {
		t.Fatalf("through the FQDN member: %q", got)
	}
	z.set("app.example", "127.0.160.11", "127.0.160.12")
	eventually(t, "the second address", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.0.160.11:9000 /Common/_auto_127.0.160.12:9000"
	})
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[once(t, "127.0.160.10:9000")] = true
	}
	if !seen["S1 Response"] || !seen["S2 Response"] {
		t.Fatalf("both ephemeral members should answer: %v", seen)
	}
	n, ok := p.Node("/Common/app.example")
	if !ok || n.FQDN == nil || n.MonitorStatus != "fqdn-up" || len(n.FQDN.Addrs) != 2 {
		t.Fatalf("show ltm node of the FQDN node: %+v %v", n, ok)
	}
	if _, ok := p.Node("/Common/_auto_127.0.160.12"); !ok {
		t.Fatal("no ephemeral node _auto_127.0.160.12")
	}

	z.set("app.example", "127.0.160.12")
	eventually(t, "the first address to leave", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.0.160.12:9000"
	})

	// A failing server: fqdn-down, the member stays.
	z.setFail(true)
	eventually(t, "fqdn-down", func() bool {
		n, _ := p.Node("/Common/app.example")
		return n.MonitorStatus == "fqdn-down"
	})
	if got := memberNames(p, "/Common/pool"); got != "/Common/_auto_127.0.160.12:9000" {
		t.Fatalf("members while the resolver fails: %q", got)
	}
	if got := once(t, "127.0.160.10:9000"); got != "S2 Response" {
		t.Fatalf("while the resolver fails: %q", got)
	}

	// Removing the node from the configuration stops the watch and its
	// members.
	cfg2 := basic("127.0.160.10:9000", "127.0.160.11:9000")
	mustApply(t, p, cfg2)
	if _, ok := p.Node("/Common/app.example"); ok {
		t.Fatal("the FQDN node outlived its configuration")
	}
}
