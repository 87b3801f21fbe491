package fqdn

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// zone is a test DNS server on loopback whose records change while it
// runs.
type zone struct {
	mu      sync.Mutex
	records map[string][]string // owner → RR text
	fail    bool                // answer SERVFAIL
	queries int
	addr    string
}

func startZone(t *testing.T, ip string) *zone {
	t.Helper()
	z := &zone{records: map[string][]string{}}
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	z.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(z.serve)}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return z
}

func (z *zone) set(owner string, rrs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(rrs) == 0 {
		delete(z.records, owner)
		return
	}
	z.records[owner] = rrs
}

func (z *zone) setFail(f bool) {
	z.mu.Lock()
	z.fail = f
	z.mu.Unlock()
}

func (z *zone) count() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries
}

func (z *zone) serve(w dns.ResponseWriter, r *dns.Msg) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.queries++
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	if z.fail {
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	}
	name := q.Name
	found := false
	for range 8 {
		rrs, ok := z.records[name]
		if !ok {
			break
		}
		found = true
		next := ""
		for _, s := range rrs {
			rr, err := dns.NewRR(s)
			if err != nil {
				panic(err)
			}
			if c, ok := rr.(*dns.CNAME); ok {
				m.Answer = append(m.Answer, rr)
				next = c.Target
			} else if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
		}
		if next == "" {
			break
		}
		name = next
	}
	if !found {
		m.Rcode = dns.RcodeNameError
		soa, _ := dns.NewRR("example. 60 IN SOA ns.example. admin.example. 1 60 60 60 7")
		m.Ns = append(m.Ns, soa)
	}
	w.WriteMsg(m)
}

func TestServerResolve(t *testing.T) {
	t.Parallel()
	z := startZone(t, "127.10.4.1")
	z.set("app.example.", "app.example. 30 IN A 10.1.1.2", "app.example. 20 IN A 10.1.1.1", "app.example. 30 IN AAAA 2001:db8::1")
	z.set("www.example.", "www.example. 40 IN CNAME app.example.")
	s := &Server{Addrs: []string{z.addr}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name  string
		fam   Family
		addrs string
		ttl   time.Duration
	}{
		{"app.example", IPv4, "[10.1.1.2 10.1.1.1]", 20 * time.Second},
		{"app.example", IPv6, "[2001:db8::1]", 30 * time.Second},
		{"www.example", IPv4, "[10.1.1.2 10.1.1.1]", 20 * time.Second},
		{"nope.example", IPv4, "[]", 7 * time.Second},
	} {
		ans, err := s.Resolve(ctx, tc.name, tc.fam)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fmt.Sprint(ans.Addrs) != tc.addrs || ans.TTL != tc.ttl {
			t.Errorf("%s %v: %v ttl %v, want %s ttl %v", tc.name, tc.fam, ans.Addrs, ans.TTL, tc.addrs, tc.ttl)
		}
	}
	z.setFail(true)
	if _, err := s.Resolve(ctx, "app.example", IPv4); err == nil || !strings.Contains(err.Error(), "SERVFAIL") {
		t.Fatalf("SERVFAIL: %v", err)
	}
	// A dead server first, then the live one.
	z.setFail(false)
	dead, _ := net.ListenPacket("udp", "127.10.4.1:0")
	deadAddr := dead.LocalAddr().String()
	dead.Close()
	s2 := &Server{Addrs: []string{deadAddr, z.addr}}
	if ans, err := s2.Resolve(ctx, "app.example", IPv4); err != nil || len(ans.Addrs) != 2 {
		t.Fatalf("fallback server: %v %v", ans, err)
	}
}

// updates collects a watcher's reports.
type updates struct{ ch chan Update }

func (u *updates) on(x Update) { u.ch <- x }

func (u *updates) waitFor(t *testing.T, what string, ok func(Update) bool) Update {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case x := <-u.ch:
			if ok(x) {
				return x
			}
		case <-deadline:
			t.Fatalf("no update with %s", what)
		}
	}
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestWatchFollowsChanges(t *testing.T) {
	t.Parallel()
	z := startZone(t, "127.10.4.2")
	z.set("svc.example.", "svc.example. 300 IN A 10.2.0.1", "svc.example. 300 IN A 10.2.0.2")
	u := &updates{ch: make(chan Update, 64)}
	w := Watch(Spec{Name: "svc.example", Interval: 30 * time.Millisecond, DownInterval: 30 * time.Millisecond, Autopopulate: true},
		&Server{Addrs: []string{z.addr}}, u.on)
	defer w.Stop()

	first := u.waitFor(t, "the first answer", func(x Update) bool { return x.Status == UpStatus })
	if !slices.Equal(first.Addrs, addrs("10.2.0.1", "10.2.0.2")) || !slices.Equal(first.Added, first.Addrs) {
		t.Fatalf("first update %+v", first)
	}
	z.set("svc.example.", "svc.example. 300 IN A 10.2.0.2", "svc.example. 300 IN A 10.2.0.3")
	ch := u.waitFor(t, "the change", func(x Update) bool { return len(x.Added) > 0 })
	if !slices.Equal(ch.Added, addrs("10.2.0.3")) || !slices.Equal(ch.Removed, addrs("10.2.0.1")) || !slices.Equal(ch.Addrs, addrs("10.2.0.2", "10.2.0.3")) {
		t.Fatalf("change %+v", ch)
	}
	// The resolver fails: fqdn-down, members kept.
	z.setFail(true)
	down := u.waitFor(t, "fqdn-down", func(x Update) bool { return x.Status == Down })
	if !slices.Equal(down.Addrs, addrs("10.2.0.2", "10.2.0.3")) || len(down.Removed) != 0 || !strings.Contains(down.LastError, "SERVFAIL") {
		t.Fatalf("down %+v", down)
	}
	z.setFail(false)
	u.waitFor(t, "recovery", func(x Update) bool { return x.Status == UpStatus && x.LastError == "" })
	// The name disappears: fqdn-up-no-addr, members removed.
	z.set("svc.example.")
	gone := u.waitFor(t, "fqdn-up-no-addr", func(x Update) bool { return x.Status == UpNoAddr })
	if len(gone.Addrs) != 0 || len(gone.Removed) != 2 {
		t.Fatalf("gone %+v", gone)
	}
	if c := w.Current(); c.Status != UpNoAddr {
		t.Fatalf("Current %+v", c)
	}
}

func TestWatchFollowsTTL(t *testing.T) {
	t.Parallel()
	z := startZone(t, "127.10.4.3")
	z.set("ttl.example.", "ttl.example. 1 IN A 10.3.0.1")
	u := &updates{ch: make(chan Update, 64)}
	w := Watch(Spec{Name: "ttl.example", Autopopulate: true}, &Server{Addrs: []string{z.addr}}, u.on)
	defer w.Stop()
	first := u.waitFor(t, "the first answer", func(x Update) bool { return x.Status == UpStatus })
	if d := time.Until(first.Next); d > 2*time.Second {
		t.Fatalf("next query in %v with a TTL of 1 s", d)
	}
	z.set("ttl.example.", "ttl.example. 1 IN A 10.3.0.9")
	ch := u.waitFor(t, "the change at the TTL", func(x Update) bool { return len(x.Added) > 0 })
	if !slices.Equal(ch.Addrs, addrs("10.3.0.9")) {
		t.Fatalf("after TTL: %+v", ch)
	}
}

func TestWatchNoAutopopulateKeepsOne(t *testing.T) {
	t.Parallel()
	z := startZone(t, "127.10.4.4")
	z.set("one.example.", "one.example. 300 IN A 10.4.0.5", "one.example. 300 IN A 10.4.0.1")
	u := &updates{ch: make(chan Update, 64)}
	w := Watch(Spec{Name: "one.example", Interval: 20 * time.Millisecond}, &Server{Addrs: []string{z.addr}}, u.on)
	defer w.Stop()
	first := u.waitFor(t, "the first answer", func(x Update) bool { return x.Status == UpStatus })
	if !slices.Equal(first.Addrs, addrs("10.4.0.5")) {
		t.Fatalf("first %+v, want the answer's first address", first)
	}
	// Reordered answers keep the address in service.
	z.set("one.example.", "one.example. 300 IN A 10.4.0.1", "one.example. 300 IN A 10.4.0.5")
	start := z.count()
	for i := 0; i < 1000 && z.count() < start+3; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if z.count() < start+3 {
		t.Fatal("the watcher stopped asking")
	}
	if c := w.Current(); !slices.Equal(c.Addrs, addrs("10.4.0.5")) {
		t.Fatalf("reordered answer changed the address: %+v", c)
	}
	z.set("one.example.", "one.example. 300 IN A 10.4.0.7")
	ch := u.waitFor(t, "the replacement", func(x Update) bool { return len(x.Added) > 0 })
	if !slices.Equal(ch.Added, addrs("10.4.0.7")) || !slices.Equal(ch.Removed, addrs("10.4.0.5")) {
		t.Fatalf("replacement %+v", ch)
	}
}

func TestSystemResolver(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ans, err := (&System{}).Resolve(ctx, "localhost", IPv4)
	if err != nil {
		t.Skipf("the system resolver cannot resolve localhost here: %v", err)
	}
	if !slices.Contains(ans.Addrs, netip.MustParseAddr("127.0.0.1")) || ans.TTL != 0 {
		t.Fatalf("localhost: %+v", ans)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		addr string
		port uint16
		node string
		mem  string
	}{
		{"10.1.1.1", 80, "_auto_10.1.1.1", "_auto_10.1.1.1:80"},
		{"::ffff:10.1.1.1", 443, "_auto_10.1.1.1", "_auto_10.1.1.1:443"},
		{"2001:db8::1", 80, "_auto_2001:db8::1", "_auto_2001:db8::1.80"},
	} {
		a := netip.MustParseAddr(tc.addr)
		if NodeName(a) != tc.node || MemberName(a, tc.port) != tc.mem {
			t.Errorf("%s: %s %s", tc.addr, NodeName(a), MemberName(a, tc.port))
		}
	}
	for in, want := range map[string]time.Duration{"ttl": 0, "3600": time.Hour} {
		if d, err := ParseInterval(in); err != nil || d != want {
			t.Errorf("ParseInterval(%q) = %v %v", in, d, err)
		}
	}
	if _, err := ParseInterval("0"); err == nil {
		t.Fatal("interval 0 accepted")
	}
	if _, err := ParseFamily("ipv5"); err == nil {
		t.Fatal("ipv5 accepted")
	}
}

// TestServerSearch: names are completed with the search domains as a
// stub resolver completes them (ndots), against a DNS server on
// loopback: the first candidate with an address answers; names that
// do not exist or have no address of the family move on to the next.
func TestServerSearch(t *testing.T) {
	t.Parallel()
	z := startZone(t, "127.17.4.1")
	z.set("app.corp.example.", "app.corp.example. 30 IN A 10.2.0.1")
	z.set("app.lab.example.", "app.lab.example. 30 IN A 10.2.0.2", "app.lab.example. 30 IN AAAA 2001:db8::2")
	z.set("db.lab.example.", "db.lab.example. 30 IN A 10.2.0.3")
	z.set("db.lab.example.corp.example.", "db.lab.example.corp.example. 30 IN A 10.2.0.4")
	z.set("web.", "web. 30 IN A 10.2.0.5")
	z.set("web.corp.example.", "web.corp.example. 30 IN A 10.2.0.6")
	search := []string{"corp.example", "lab.example."}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name   string
		search []string
		ndots  int
		fam    Family
		cands  string
		addrs  string
	}{
		// ndots 1: a bare name is completed first, then asked as is.
		{"app", search, 1, IPv4, "[app.corp.example app.lab.example app]", "[10.2.0.1]"},
		// No AAAA in the first domain: the second one answers.
		{"app", search, 1, IPv6, "[app.corp.example app.lab.example app]", "[2001:db8::2]"},
		{"web", search, 1, IPv4, "[web.corp.example web.lab.example web]", "[10.2.0.6]"},
		// ndots 0 (BIG-IP's default): asked as is first.
		{"web", search, 0, IPv4, "[web web.corp.example web.lab.example]", "[10.2.0.5]"},
		// Enough dots: as is first, even though a completion exists.
		{"db.lab.example", search, 2, IPv4, "[db.lab.example db.lab.example.corp.example db.lab.example.lab.example]", "[10.2.0.3]"},
		// Too few dots: completions first.
		{"db.lab.example", search, 3, IPv4, "[db.lab.example.corp.example db.lab.example.lab.example db.lab.example]", "[10.2.0.4]"},
		// A trailing dot: never completed.
		{"app.", search, 1, IPv4, "[app]", "[]"},
		// No search domains: the name only.
		{"app", nil, 1, IPv4, "[app]", "[]"},
		// Nowhere: no address, no error.
		{"nope", search, 1, IPv4, "[nope.corp.example nope.lab.example nope]", "[]"},
	} {
		s := &Server{Addrs: []string{z.addr}, Search: tc.search, NDots: tc.ndots}
		if got := fmt.Sprint(s.Candidates(tc.name)); got != tc.cands {
			t.Errorf("%s ndots %d: candidates %s, want %s", tc.name, tc.ndots, got, tc.cands)
		}
		ans, err := s.Resolve(ctx, tc.name, tc.fam)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fmt.Sprint(ans.Addrs) != tc.addrs {
			t.Errorf("%s ndots %d %v: %v, want %s", tc.name, tc.ndots, tc.fam, ans.Addrs, tc.addrs)
		}
	}
	// A server failure ends the search with its error.
	z.setFail(true)
	s := &Server{Addrs: []string{z.addr}, Search: search, NDots: 1}
	if _, err := s.Resolve(ctx, "app", IPv4); err == nil || !strings.Contains(err.Error(), "SERVFAIL") {
		t.Fatalf("SERVFAIL: %v", err)
	}
}
