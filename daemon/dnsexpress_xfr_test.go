package daemon

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// xfrIn transfers zone from addr over TCP from src (an IXFR from serial
// when ixfr), signed with key (name, secret) when name is set, and
// describes it: the rcode or error, the records, the messages, and the
// serials of the first and last SOA.
func xfrIn(t *testing.T, src, addr, zone string, ixfr bool, serial uint32, name, secret string) string {
	t.Helper()
	q := new(dns.Msg)
	if ixfr {
		q.SetIxfr(zone, serial, "ns1."+zone, "h."+zone)
	} else {
		q.SetAxfr(zone)
	}
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}
	if name != "" {
		q.SetTsig(name, dns.HmacSHA256, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{name: secret}
	}
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return "error " + err.Error()
	}
	tr.Conn = &dns.Conn{Conn: c}
	defer tr.Close()
	ch, err := tr.In(q, addr)
	if err != nil {
		return "error " + err.Error()
	}
	var rrs []dns.RR
	msgs := 0
	for env := range ch {
		if env.Error != nil {
			for range ch {
			}
			return "error " + env.Error.Error()
		}
		msgs++
		rrs = append(rrs, env.RR...)
	}
	first, last := rrs[0].(*dns.SOA), rrs[len(rrs)-1].(*dns.SOA)
	return fmt.Sprintf("%d records %d messages soa %d..%d", len(rrs), msgs, first.Serial, last.Serial)
}

// xfrRefusal asks for an AXFR of zone over TCP from src, signed with
// key (name, secret) when name is set, and describes the first answer:
// its rcode and, when it carries one, its TSIG's error (the signature
// is not checked: a refusal to a bad key cannot be signed with it).
func xfrRefusal(t *testing.T, src, addr, zone, name, secret string) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetAxfr(zone)
	wire, err := q.Pack()
	if name != "" {
		q.SetTsig(name, dns.HmacSHA256, 300, time.Now().Unix())
		wire, _, err = dns.TsigGenerate(q, secret, "", false)
	}
	if err != nil {
		t.Fatal(err)
	}
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return "error " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	dc := &dns.Conn{Conn: c}
	if _, err := dc.Write(wire); err != nil {
		return "error " + err.Error()
	}
	buf := make([]byte, dns.MaxMsgSize)
	n, err := dc.Read(buf)
	if err != nil {
		return "error " + err.Error()
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil {
		return "error " + err.Error()
	}
	out := dns.RcodeToString[r.Rcode]
	if ts := r.IsTsig(); ts != nil {
		out += " tsig " + dns.RcodeToString[int(ts.Error)]
	}
	return out
}

func TestDNSExpressTransferOut(t *testing.T) {
	const (
		secret = "c2VjcmV0c2VjcmV0"
		other  = "b3RoZXJvdGhlcm90aGVy"
	)
	// A zone of 1000 TXT records: several messages, each signed.
	var b strings.Builder
	b.WriteString("example.net. 300 IN SOA ns1.example.net. h.example.net. 7 3600 600 86400 60\n")
	b.WriteString("example.net. 300 IN NS ns1.example.net.\nns1.example.net. 300 IN A 127.50.3.53\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "t%d.example.net. 300 IN TXT \"record number %d of the zone\"\n", i, i)
	}
	primary := startXFRPrimary(t, "127.50.3.53:5311", "", "", b.String())
	// The keyed secondary takes NOTIFYs at 127.50.3.62:5311: it notes
	// each serial, and whether the signature held.
	notified := make(chan string, 8)
	sec := &dns.Server{Addr: "127.50.3.62:5311", Net: "udp", TsigSecret: map[string]string{"sec-key.": secret},
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			m := new(dns.Msg)
			m.SetReply(r)
			if r.IsTsig() != nil {
				m.SetTsig("sec-key.", dns.HmacSHA256, 300, time.Now().Unix())
			}
			w.WriteMsg(m)
			serial := "none"
			if len(r.Answer) == 1 {
				if soa, ok := r.Answer[0].(*dns.SOA); ok {
					serial = fmt.Sprint(soa.Serial)
				}
			}
			notified <- fmt.Sprintf("%s %s signed=%v verified=%v", dns.OpcodeToString[r.Opcode], serial, r.IsTsig() != nil, w.TsigStatus() == nil)
		})}
	started := make(chan struct{})
	sec.NotifyStartedFunc = func() { close(started) }
	go sec.ListenAndServe()
	<-started
	t.Cleanup(func() { sec.Shutdown() })
	x, s := dnsExpressEngine(t, "127.50.3.100")

	if _, err := run(t, s, "create ltm dns zone example.net transfer-clients { nosuch }"); !strings.Contains(err, "01020036") {
		t.Errorf("a missing transfer client: %q, want 01020036", err)
	}
	mustRun(t, s,
		`create ltm dns tsig-key sec-key algorithm hmac-sha256 secret "`+secret+`"`,
		`create ltm dns tsig-key other-key algorithm hmac-sha256 secret "`+other+`"`,
		"create ltm dns nameserver primary address 127.50.3.53 port 5311",
		"create ltm dns nameserver open address 127.50.3.61",
		"create ltm dns nameserver signed address 127.50.3.62 port 5311 tsig-key sec-key",
		"create ltm dns zone example.net dns-express-server primary transfer-clients { open signed }",
		"create ltm profile dns xfr process-xfr yes",
		"create ltm profile dns noxfr",
		"create ltm virtual xfr_tcp destination 127.50.3.1:5311 ip-protocol tcp profiles add { xfr tcp }",
		"create ltm virtual noxfr_tcp destination 127.50.3.2:5311 ip-protocol tcp profiles add { noxfr tcp }",
	)
	if _, err := run(t, s, "delete ltm dns nameserver signed"); !strings.Contains(err, "in use") {
		t.Errorf("deleting a transfer client: %q, want in use", err)
	}
	// The copy arrives first.
	for i := 0; ; i++ {
		if st := x.Zone("example.net").Stats(); st.Loaded {
			break
		}
		if i == 200 {
			t.Fatal("the zone was not transferred in")
		}
		time.Sleep(25 * time.Millisecond)
	}
	const whole = "1004 records 4 messages soa 7..7"
	for _, tt := range []struct {
		name, src   string
		ixfr        bool
		serial      uint32
		key, secret string
		want        string
	}{
		{"AXFR from an unsigned client", "127.50.3.61", false, 0, "", "", whole},
		{"AXFR signed, each message checked", "127.50.3.62", false, 0, "sec-key.", secret, whole},
		{"IXFR from an old serial: the whole zone", "127.50.3.62", true, 3, "sec-key.", secret, whole},
		{"IXFR from the current serial: the SOA", "127.50.3.61", true, 7, "", "", "1 records 1 messages soa 7..7"},
		{"IXFR from a newer serial: the SOA", "127.50.3.61", true, 9, "", "", "1 records 1 messages soa 7..7"},
	} {
		if got := xfrIn(t, tt.src, "127.50.3.1:5311", "example.net.", tt.ixfr, tt.serial, tt.key, tt.secret); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name, src, zone, key, secret, want string
	}{
		{"a client not listed", "127.50.3.63", "example.net.", "", "", "REFUSED"},
		{"a keyed client unsigned", "127.50.3.62", "example.net.", "", "", "NOTAUTH"},
		{"signed with another key", "127.50.3.62", "example.net.", "other-key.", other, "NOTAUTH tsig BADKEY"},
		{"signed with the key's name, another secret", "127.50.3.62", "example.net.", "sec-key.", other, "NOTAUTH tsig BADSIG"},
		{"signed by a client without a key", "127.50.3.61", "example.net.", "sec-key.", secret, "NOTAUTH tsig BADKEY"},
		{"a zone not held", "127.50.3.61", "example.org.", "", "", "REFUSED"},
	} {
		if got := xfrRefusal(t, tt.src, "127.50.3.1:5311", tt.zone, tt.key, tt.secret); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// process-xfr no: the request is a query as before, answered in one
	// message (here by the zone, with no record of that type).
	if got := xfrRefusal(t, "127.50.3.61", "127.50.3.2:5311", "example.net.", "", ""); got != "NOERROR" {
		t.Errorf("process-xfr no: %q, want NOERROR", got)
	}
	// The connection carries on after a transfer: a query behind it.
	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	conn, err := c.Dial("127.50.3.1:5311")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	ixfr := new(dns.Msg)
	ixfr.SetIxfr("example.net.", 7, "ns1.example.net.", "h.example.net.")
	if err := conn.WriteMsg(ixfr); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.ReadMsg(); err != nil || r.Rcode != dns.RcodeRefused {
		t.Errorf("an IXFR from 127.0.0.1 (not listed): %v %v", r, err)
	}
	if err := conn.WriteMsg(query("ns1.example.net.", dns.TypeA)); err != nil {
		t.Fatal(err)
	}
	if r, err := conn.ReadMsg(); err != nil || len(r.Answer) != 1 {
		t.Errorf("a query after a transfer on one connection: %v %v", r, err)
	}

	// A new serial: the keyed secondary is told, signed (it was told of
	// the first copy too).
	wantNotify := func(serial string) {
		t.Helper()
		want := "NOTIFY " + serial + " signed=true verified=true"
		for {
			select {
			case got := <-notified:
				if got == want {
					return
				}
				if !strings.HasPrefix(got, "NOTIFY 7 ") {
					t.Fatalf("NOTIFY: %q, want %q", got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no %q", want)
			}
		}
	}
	wantNotify("7")
	primary.set(strings.Replace(b.String(), " 7 3600", " 8 3600", 1))
	x.Zone("example.net").Refresh()
	wantNotify("8")
	for i := 0; x.Zone("example.net").Stats().NotifiesSent < 2; i++ { // counted once the answer is read
		if i == 200 {
			t.Fatal("the NOTIFYs' answers were not counted")
		}
		time.Sleep(10 * time.Millisecond)
	}

	out, _ := run(t, s, "show ltm dns zone example.net")
	for _, re := range []string{`(?m)^Answered +5$`, `(?m)^Refused +6$`, `(?m)^NOTIFY Sent +2$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("show ltm dns zone lacks %s:\n%s", re, out)
		}
	}
}
