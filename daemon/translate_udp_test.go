package daemon

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnsMember is a DNS server on loopback answering every A query with its
// own address, so a client can tell which member answered.
func dnsMember(t *testing.T, addr string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ip := net.ParseIP(strings.Split(addr, ":")[0])
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: ip})
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
}

// askA sends one A query from conn (one client address and port) and
// returns the answer's address, retrying a lost datagram a few times.
func askA(t *testing.T, c *dns.Client, conn *dns.Conn) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion("www.example.com.", dns.TypeA)
	for i := 0; i < 5; i++ {
		r, _, err := c.ExchangeWithConn(q, conn)
		if err == nil && len(r.Answer) == 1 {
			return r.Answer[0].(*dns.A).A.String()
		}
	}
	t.Fatal("no answer through the udp virtual")
	return ""
}

func udpClient(t *testing.T, vs string) (*dns.Client, *dns.Conn) {
	t.Helper()
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	conn, err := c.Dial(vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return c, conn
}

func TestUDPVirtualFromTmsh(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	dnsMember(t, "127.41.20.11:5353")
	dnsMember(t, "127.41.20.12:5353")
	labelServer(t, "127.41.20.13:9000", "T1")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool dns_pool members add { 127.41.20.11:5353 127.41.20.12:5353 }",
		"create ltm pool tcp_pool members add { 127.41.20.13:9000 }",
		"create ltm virtual dns_udp destination 127.41.20.1:53 ip-protocol udp pool dns_pool profiles replace-all-with { udp }",
		"create ltm virtual dns_tcp destination 127.41.20.1:53 ip-protocol tcp pool tcp_pool profiles replace-all-with { tcp }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// One client address and port stays on its member.
	c, conn := udpClient(t, "127.41.20.1:53")
	first := askA(t, c, conn)
	for i := 0; i < 3; i++ {
		if got := askA(t, c, conn); got != first {
			t.Fatalf("one flow answered by %s then %s", first, got)
		}
	}
	// The tcp virtual on the same address and port runs too.
	tc, err := net.DialTimeout("tcp", "127.41.20.1:53", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tc.SetDeadline(time.Now().Add(3 * time.Second))
	tc.Write([]byte("hi\n"))
	buf := make([]byte, 16)
	if n, _ := tc.Read(buf); !strings.HasPrefix(string(buf[:n]), "T1") {
		t.Fatalf("tcp virtual answered %q", buf[:n])
	}
	tc.Close()

	out, errs := run(t, s, "show sys connection protocol udp")
	if errs != "" || !strings.Contains(out, "127.41.20.1:53") || !strings.Contains(out, ":5353") || !strings.Contains(out, "udp") {
		t.Fatalf("show sys connection: %s %s", out, errs)
	}
	out, _ = run(t, s, "show ltm virtual dns_udp")
	if !strings.Contains(out, "Total Connections") {
		t.Fatalf("show ltm virtual: %s", out)
	}

	// datagram-load-balancing: each query balanced on its own.
	for _, cmd := range []string{
		"create ltm profile udp udp_dlb defaults-from udp datagram-load-balancing enabled idle-timeout 30",
		"modify ltm virtual dns_udp profiles replace-all-with { udp_dlb }",
	} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	c2, conn2 := udpClient(t, "127.41.20.1:53")
	a, b := askA(t, c2, conn2), askA(t, c2, conn2)
	if a == b {
		t.Fatalf("datagram-load-balancing sent two queries to %s", a)
	}
	out, _ = run(t, s, "show sys connection cs-client-port "+strings.Split(conn2.LocalAddr().String(), ":")[1])
	if !strings.Contains(out, "udp") || strings.Count(out, ":5353") != 2 {
		t.Fatalf("datagram flow rows: %s", out)
	}

	// A udp virtual created without profiles gets fastL4, as on BIG-IP,
	// and carries datagrams.
	if _, err := run(t, s, "create ltm virtual dns_plain destination 127.41.20.2:53 ip-protocol udp pool dns_pool"); err != "" {
		t.Fatal(err)
	}
	c3, conn3 := udpClient(t, "127.41.20.2:53")
	askA(t, c3, conn3)
}

func TestUDPVirtualRefusals(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if _, err := run(t, s, "create ltm pool p members add { 127.41.21.11:53 }"); err != "" {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, err string }{
		{"create ltm virtual v1 destination 127.41.21.1:53 ip-protocol tcp pool p profiles replace-all-with { udp }", "needs ip-protocol udp"},
		{"create ltm virtual v2 destination 127.41.21.1:53 ip-protocol udp pool p profiles replace-all-with { udp http }", "needs ip-protocol tcp"},
		{"create ltm virtual v3 destination 127.41.21.1:53 ip-protocol udp pool p profiles replace-all-with { tcp }", "needs ip-protocol tcp"},
	} {
		if _, err := run(t, s, c.cmd); !strings.Contains(err, c.err) {
			t.Errorf("%s: err %q, want %q", c.cmd, err, c.err)
		}
	}
	if out, _ := run(t, s, "list ltm virtual"); strings.Contains(out, "v1") || strings.Contains(out, "v2") {
		t.Fatalf("a refused virtual was stored: %s", out)
	}
}

// A bigip.conf with a udp and a tcp virtual on one address and port loads
// and both run.
func TestUDPAndTCPVirtualsLoad(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	dnsMember(t, "127.41.23.11:5353")
	labelServer(t, "127.41.23.12:9000", "T1")
	conf := `ltm pool /Common/dns_pool {
    members { /Common/127.41.23.11:5353 { address 127.41.23.11 } }
}
ltm pool /Common/tcp_pool {
    members { /Common/127.41.23.12:9000 { address 127.41.23.12 } }
}
ltm profile udp /Common/udp_dns {
    defaults-from /Common/udp
    idle-timeout 30
}
ltm virtual /Common/dns_udp {
    destination /Common/127.41.23.1:53
    ip-protocol udp
    pool /Common/dns_pool
    profiles { /Common/udp_dns { } }
}
ltm virtual /Common/dns_tcp {
    destination /Common/127.41.23.1:53
    ip-protocol tcp
    pool /Common/tcp_pool
    profiles { /Common/tcp { } }
}
`
	path := dir + "/both.conf"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("admin").(*Session)
	if out, err := run(t, s, "load sys config merge file "+path); err != "" {
		t.Fatalf("load: %s %s", out, err)
	}
	c, conn := udpClient(t, "127.41.23.1:53")
	if got := askA(t, c, conn); got != "127.41.23.11" {
		t.Fatalf("udp answer %s", got)
	}
	tc, err := net.DialTimeout("tcp", "127.41.23.1:53", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(3 * time.Second))
	tc.Write([]byte("hi\n"))
	buf := make([]byte, 16)
	if n, _ := tc.Read(buf); !strings.HasPrefix(string(buf[:n]), "T1") {
		t.Fatalf("tcp virtual answered %q", buf[:n])
	}
	out, _ := run(t, s, "show sys connection protocol udp")
	if !strings.Contains(out, "127.41.23.1:53") {
		t.Fatalf("no udp row: %s", out)
	}
}

// TestUDPHoldBounds: the udp profile's buffer-max-packets and
// buffer-max-bytes bound UDP::hold and are set without a warning.
func TestUDPHoldBounds(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	mustRun(t, s, "create ltm pool p members add { 127.9.0.11:53 }")
	out, err := run(t, s, "create ltm profile udp u_hold defaults-from udp buffer-max-packets 3 buffer-max-bytes 1000")
	if err != "" || strings.Contains(out, "not act") {
		t.Fatalf("create: %q %q", out, err)
	}
	mustRun(t, s, "create ltm virtual v destination 127.9.0.1:53 ip-protocol udp pool p profiles replace-all-with { u_hold }")
	dc, _ := Translate(e.schema, e.Config())
	v := dc.Virtuals["/Common/v"]
	if v == nil || v.HoldPackets != 3 || v.HoldBytes != 1000 {
		t.Fatalf("virtual %+v", v)
	}
	if _, err := run(t, s, "modify ltm profile udp u_hold buffer-max-packets -1"); err == "" {
		t.Fatal("a negative buffer-max-packets was taken")
	}
}
