package daemon

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dnsexpress"
	"github.com/openltm/openltm/dataplane/gslb"
)

// xfrPrimary serves one zone text by AXFR over TCP, signed with the
// key (name, secret) when one is given; set replaces the text.
type xfrPrimary struct {
	mu   sync.Mutex
	text string
}

func startXFRPrimary(t *testing.T, addr, keyName, secret, text string) *xfrPrimary {
	t.Helper()
	p := &xfrPrimary{text: text}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if keyName != "" && (r.IsTsig() == nil || w.TsigStatus() != nil) {
			m := new(dns.Msg)
			m.SetRcode(r, dns.RcodeNotAuth)
			w.WriteMsg(m)
			return
		}
		p.mu.Lock()
		text := p.text
		p.mu.Unlock()
		zp := dns.NewZoneParser(strings.NewReader(text), "", "")
		var rrs []dns.RR
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			rrs = append(rrs, rr)
		}
		ch := make(chan *dns.Envelope, 1)
		ch <- &dns.Envelope{RR: append(rrs, rrs[0])} // the SOA first and last
		close(ch)
		new(dns.Transfer).Out(w, r, ch)
		w.Close()
	})
	srv := &dns.Server{Addr: addr, Net: "tcp", Handler: h}
	if keyName != "" {
		srv.TsigSecret = map[string]string{keyName: secret}
	}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ListenAndServe()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatalf("primary %s did not start", addr)
	}
	t.Cleanup(func() { srv.Shutdown() })
	return p
}

func (p *xfrPrimary) set(text string) {
	p.mu.Lock()
	p.text = text
	p.mu.Unlock()
}

// xAsk sends m over network to addr from src and describes the answer:
// rcode, "aa" when set, then the answer's data and the authority's types.
func xAsk(t *testing.T, network, src, addr string, m *dns.Msg) string {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}}
	if network == "tcp" {
		c.Dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return "error " + err.Error()
	}
	out := []string{dns.RcodeToString[r.Rcode]}
	if r.Authoritative {
		out = append(out, "aa")
	}
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		} else {
			out = append(out, dns.TypeToString[rr.Header().Rrtype])
		}
	}
	for _, rr := range r.Ns {
		out = append(out, "ns:"+dns.TypeToString[rr.Header().Rrtype])
	}
	return strings.Join(out, " ")
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

func TestDNSExpressZone(t *testing.T) {
	const (
		secret = "c2VjcmV0c2VjcmV0"
		v1     = "example.com. 300 IN SOA ns1.example.com. h.example.com. 1 3600 600 86400 60\n" +
			"example.com. 300 IN NS ns1.example.com.\nns1.example.com. 300 IN A 127.32.2.53\nwww.example.com. 300 IN A 127.32.2.80\n"
	)
	primary := startXFRPrimary(t, "127.32.2.53:5310", "xfer-key.", secret, v1)
	x, s := dnsExpressEngine(t, "127.32.2.100")

	// Refused: what is missing, what is in use, what cannot be acted on;
	// nothing of a refused line is kept.
	refusals := []struct{ cmd, want string }{
		{"create ltm dns zone example.com dns-express-server nosuch", "01020036"},
		{"create ltm dns nameserver ns0 tsig-key nosuch", "01020036"},
		{"create ltm dns tsig-key bad secret not-base64!", "not base64"},
		{"create ltm dns zone example.com dns-express-allow-notify { nothing }", "not an IP address"},
		{"create ltm dns zone example.com dns-express-notify-action drop", "drop"},
	}
	for _, r := range refusals {
		if _, err := run(t, s, r.cmd); !strings.Contains(err, r.want) {
			t.Errorf("%s: %q, want %q", r.cmd, err, r.want)
		}
	}
	if out, _ := run(t, s, "list ltm dns"); strings.Contains(out, "example.com") || strings.Contains(out, "bad") {
		t.Fatalf("a refused object is kept:\n%s", out)
	}

	mustRun(t, s,
		`create ltm dns tsig-key xfer-key algorithm hmac-sha256 secret "`+secret+`"`,
		"create ltm dns nameserver primary address 127.32.2.53 port 5310 tsig-key xfer-key",
		"create ltm dns zone example.com dns-express-server primary",
		"create ltm profile dns dnsx",
		"create ltm virtual dnsx_udp destination 127.32.2.1:5310 ip-protocol udp profiles add { dnsx udp }",
		"create ltm virtual dnsx_tcp destination 127.32.2.1:5310 ip-protocol tcp profiles add { dnsx tcp }",
		"create gtm listener gl address 127.32.2.2 port 5310 ip-protocol udp",
	)
	for _, del := range []struct{ cmd, want string }{
		{"delete ltm dns tsig-key xfer-key", "in use"},
		{"delete ltm dns nameserver primary", "in use"},
	} {
		if _, err := run(t, s, del.cmd); !strings.Contains(err, del.want) {
			t.Errorf("%s: %q, want %q", del.cmd, err, del.want)
		}
	}
	poll := func(network, addr string, m *dns.Msg, want string) {
		t.Helper()
		var got string
		for i := 0; i < 200; i++ {
			if got = xAsk(t, network, "127.32.2.100", addr, m); got == want {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("%s %s %s: %q, want %q", network, addr, m.Question[0].Name, got, want)
	}
	poll("udp", "127.32.2.1:5310", query("www.example.com.", dns.TypeA), "NOERROR aa 127.32.2.80")
	for _, tt := range []struct {
		network, addr, name string
		qtype               uint16
		want                string
	}{
		{"tcp", "127.32.2.1:5310", "www.example.com.", dns.TypeA, "NOERROR aa 127.32.2.80"},
		{"udp", "127.32.2.2:5310", "www.example.com.", dns.TypeA, "NOERROR aa 127.32.2.80"}, // the gtm listener
		{"udp", "127.32.2.1:5310", "nope.example.com.", dns.TypeA, "NXDOMAIN aa ns:SOA"},
		{"udp", "127.32.2.1:5310", "www.example.com.", dns.TypeMX, "NOERROR aa ns:SOA"},
	} {
		if got := xAsk(t, tt.network, "127.32.2.100", tt.addr, query(tt.name, tt.qtype)); got != tt.want {
			t.Errorf("%s %s %s: %q, want %q", tt.network, tt.addr, tt.name, got, tt.want)
		}
	}

	// A new serial on the primary, and its NOTIFY to the virtual: signed
	// and from the primary's address it is taken, otherwise refused.
	primary.set(strings.Replace(strings.Replace(v1, " 1 3600", " 2 3600", 1), "127.32.2.80", "127.32.2.81", 1))
	signed := func() *dns.Msg {
		n := new(dns.Msg)
		n.SetNotify("example.com.")
		n.SetTsig("xfer-key.", dns.HmacSHA256, 300, time.Now().Unix())
		return n
	}
	sendNotify := func(src string, m *dns.Msg, key bool) string {
		c := &dns.Client{Net: "udp", Timeout: 2 * time.Second, Dialer: &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.UDPAddr{IP: net.ParseIP(src)}}}
		if key {
			c.TsigSecret = map[string]string{"xfer-key.": secret}
		}
		r, _, err := c.Exchange(m, "127.32.2.1:5310")
		if err != nil {
			return "error " + err.Error()
		}
		return dns.RcodeToString[r.Rcode]
	}
	unsigned := new(dns.Msg)
	unsigned.SetNotify("example.com.")
	if got := sendNotify("127.32.2.53", unsigned, false); got != "NOTAUTH" {
		t.Errorf("an unsigned NOTIFY: %s, want NOTAUTH", got)
	}
	if got := sendNotify("127.32.2.99", signed(), true); got != "REFUSED" {
		t.Errorf("a NOTIFY from elsewhere: %s, want REFUSED", got)
	}
	if got := xAsk(t, "udp", "127.32.2.100", "127.32.2.1:5310", query("www.example.com.", dns.TypeA)); got != "NOERROR aa 127.32.2.80" {
		t.Errorf("after refused NOTIFYs: %q", got)
	}
	if got := sendNotify("127.32.2.53", signed(), true); got != "NOERROR" {
		t.Errorf("the primary's NOTIFY: %s, want NOERROR", got)
	}
	poll("udp", "127.32.2.1:5310", query("www.example.com.", dns.TypeA), "NOERROR aa 127.32.2.81")

	out, _ := run(t, s, "show ltm dns zone example.com")
	for _, re := range []string{`(?m)^SOA Serial +2$`, `(?m)^Records +4$`, `(?m)^Status +loaded$`, `(?m)^Accepted +1$`, `(?m)^Rejected +2$`, `(?m)^Transfers +2$`, `(?m)^Last Result +axfr$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("show ltm dns zone lacks %s:\n%s", re, out)
		}
	}

	// notify-action repeat: taken, and the pool's member sees it too (its
	// answer goes back); bypass: only the member sees it.
	member := startDNSPoolMember(t, "127.32.2.11:5310", nil)
	mustRun(t, s,
		"create ltm pool dnsx_pool members add { 127.32.2.11:5310 }",
		"modify ltm virtual dnsx_udp pool dnsx_pool",
		"modify ltm dns zone example.com dns-express-notify-action repeat",
	)
	for _, tt := range []struct {
		action          string
		taken, atMember int64
	}{{"repeat", 2, 1}, {"bypass", 2, 2}} {
		mustRun(t, s, "modify ltm dns zone example.com dns-express-notify-action "+tt.action)
		got := sendNotify("127.32.2.53", signed(), true)
		st := x.Zone("example.com").Stats()
		if got != "NXDOMAIN" || int64(st.Notifies) != tt.taken || member.queries.Load() != tt.atMember {
			t.Errorf("notify-action %s: %s (the member's is NXDOMAIN), %d taken, %d at the member; want %d, %d", tt.action, got, st.Notifies, member.queries.Load(), tt.taken, tt.atMember)
		}
	}
	mustRun(t, s, "modify ltm virtual dnsx_udp pool none")

	// enable-dns-express no on the profile: the virtual no longer answers
	// from the zone (no pool: unhandled-query-action allow sends nothing),
	// while the gtm listener still does.
	mustRun(t, s, "modify ltm profile dns dnsx enable-dns-express no unhandled-query-action reject")
	if got := xAsk(t, "udp", "127.32.2.100", "127.32.2.1:5310", query("www.example.com.", dns.TypeA)); got != "REFUSED" {
		t.Errorf("enable-dns-express no: %q, want REFUSED", got)
	}
	if got := xAsk(t, "udp", "127.32.2.100", "127.32.2.2:5310", query("www.example.com.", dns.TypeA)); got != "NOERROR aa 127.32.2.81" {
		t.Errorf("the gtm listener: %q", got)
	}
	// Deleted, the zone answers nowhere.
	mustRun(t, s, "delete ltm dns zone example.com")
	if got := xAsk(t, "udp", "127.32.2.100", "127.32.2.2:5310", query("www.example.com.", dns.TypeA)); got != "REFUSED" {
		t.Errorf("a deleted zone: %q, want REFUSED", got)
	}
}

// dnsExpressEngine is an engine with a dataplane, a GSLB and a DNS
// Express store attached, the store transferring from source, and an
// admin session: what the DNS Express, transfer-out and DNS logging
// tests each begin with.
func dnsExpressEngine(t *testing.T, source string) (*dnsexpress.Store, *Session) {
	t.Helper()
	e := openTest(t, t.TempDir())
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	t.Cleanup(func() { p.Close() })
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	g := gslb.New(gslb.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { g.Close() })
	stopG, err := e.AttachGSLB(g, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopG)
	x := dnsexpress.New(dnsexpress.Options{Logger: e.Logger(), Source: netip.MustParseAddr(source)})
	stopX, err := e.AttachDNSExpress(x, g, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopX)
	return x, e.NewSession("admin").(*Session)
}
