package daemon

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startDNS is a DNS server on loopback answering A and AAAA queries
// from a map the test changes (an address with a colon is an AAAA record), with a 1 s TTL.
func startDNS(t *testing.T, ip string, records map[string][]string) (addr string, set func(name string, addrs ...string)) {
	t.Helper()
	var mu sync.Mutex
	pc, err := net.ListenPacket("udp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		mu.Lock()
		defer mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA {
			for _, a := range records[strings.TrimSuffix(strings.ToLower(q.Name), ".")] {
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
	return pc.LocalAddr().String(), func(name string, addrs ...string) {
		mu.Lock()
		records[name] = addrs
		mu.Unlock()
	}
}

// TestFQDNNodeFromTmsh: an FQDN node and its pool member, resolved by the
// name server `sys dns` names, carry traffic through ephemeral members
// that follow the record, and show as BIG-IP shows them.
func TestFQDNNodeFromTmsh(t *testing.T) {
	t.Parallel()
	dnsAddr, set := startDNS(t, "127.0.161.53", map[string][]string{"app.example": {"127.0.161.11"}})
	labelServer(t, "127.0.161.11:9000", "S1 Response")
	labelServer(t, "127.0.161.12:9000", "S2 Response")
	e, p := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	out, err := run(t, s, "modify sys dns name-servers replace-all-with { "+dnsAddr+" }")
	if err != "" {
		t.Fatalf("sys dns: %s %s", out, err)
	}
	for _, c := range []string{
		"create ltm node app fqdn { name app.example autopopulate enabled interval 1 }",
		"create ltm pool p members add { app:9000 } monitor tcp",
		"create ltm virtual vs destination 127.0.161.10:9000 pool p profiles replace-all-with { tcp }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "FQDN") {
			t.Fatalf("%s: %q %q", c, out, err)
		}
	}
	ask := func() string { return firstLine("127.0.161.10:9000") }
	waitFor := func(what string, cond func() bool) { t.Helper(); eventually(t, 10*time.Second, what, cond) }
	waitFor("the ephemeral member up", func() bool {
		out, _ := run(t, s, "show ltm pool p members")
		return strings.Contains(out, "_auto_127.0.161.11:9000") && ask() == "S1 Response"
	})
	_ = p
	set("app.example", "127.0.161.12")
	waitFor("the member to follow the record", func() bool {
		out, _ := run(t, s, "show ltm pool p members")
		return strings.Contains(out, "_auto_127.0.161.12:9000") && !strings.Contains(out, "_auto_127.0.161.11:9000") && ask() == "S2 Response"
	})
	out, _ = run(t, s, "show ltm node app")
	for _, want := range []string{"Ltm::Node: app (any6)", "Monitor Status : fqdn-up", "Name           : app.example", "Addresses      : 127.0.161.12"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show ltm node app: no %q in\n%s", want, out)
		}
	}
	if _, err := run(t, s, "create ltm node bad fqdn { name x.example interval often }"); !strings.Contains(err, `interval "often" is not valid`) {
		t.Fatalf("a bad interval: %q", err)
	}
}

// TestFQDNNodeSearchDomains: a node named by a short name is resolved
// with `sys dns search` and `number-of-dots`, as a stub resolver
// completes names, and carries traffic to the address found; a new
// search list asks again. Bad values are refused and change nothing.
func TestFQDNNodeSearchDomains(t *testing.T) {
	dnsAddr, _ := startDNS(t, "127.17.5.53", map[string][]string{
		"app.corp.example": {"127.17.5.11"},
		"app.lab.example":  {"127.17.5.12"},
	})
	labelServer(t, "127.17.5.11:9000", "CORP")
	labelServer(t, "127.17.5.12:9000", "LAB")
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"modify sys dns name-servers replace-all-with { " + dnsAddr + " } search replace-all-with { corp.example lab.example } number-of-dots 1",
		"create ltm node app fqdn { name app autopopulate enabled interval 1 }",
		"create ltm pool p members add { app:9000 }",
		"create ltm virtual vs destination 127.17.5.10:9000 pool p profiles replace-all-with { tcp }",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not acted on") {
			t.Fatalf("%s: %q %q", c, out, err)
		}
	}
	ask := func() string { return firstLine("127.17.5.10:9000") }
	waitFor := func(what string, cond func() bool) { t.Helper(); eventually(t, 10*time.Second, what, cond) }
	for _, step := range []struct {
		cmd, member, answer string
	}{
		{"", "_auto_127.17.5.11:9000", "CORP"},
		{"modify sys dns search replace-all-with { lab.example corp.example }", "_auto_127.17.5.12:9000", "LAB"},
	} {
		if step.cmd != "" {
			if _, err := run(t, s, step.cmd); err != "" {
				t.Fatalf("%s: %s", step.cmd, err)
			}
		}
		waitFor(step.answer+" through "+step.member, func() bool {
			out, _ := run(t, s, "show ltm pool p members")
			return strings.Contains(out, step.member) && ask() == step.answer
		})
	}
	for _, c := range []struct{ cmd, err string }{
		{"modify sys dns number-of-dots 16", `number-of-dots "16" is not valid (0 to 15)`},
		{"modify sys dns number-of-dots -1", `number-of-dots`},
		{"modify sys dns search replace-all-with { bad/domain }", `search domain "bad/domain" is not a domain name`},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list sys dns"); !strings.Contains(out, "number-of-dots 1") || !strings.Contains(out, "search { lab.example corp.example }") {
		t.Errorf("sys dns changed by refused commands:\n%s", out)
	}
}

// firstLine sends a line to addr and returns what comes back, or the
// dial error's text (a member not there yet is a state to wait out, not a
// failure).
func firstLine(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	c.Write([]byte("hi\n"))
	b := make([]byte, 64)
	n, _ := c.Read(b)
	return strings.TrimSpace(string(b[:n]))
}
