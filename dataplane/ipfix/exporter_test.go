package ipfix

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/ipfix/ipfixtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func fixed(ms ...netip.AddrPort) func(string) ([]netip.AddrPort, error) {
	return func(string) ([]netip.AddrPort, error) { return ms, nil }
}

// flowTemplate is the template the tests send: a connection's addresses,
// ports, protocol, octets and start time.
func flowTemplate(t *testing.T, ts *Templates) *Template {
	t.Helper()
	tm, err := ts.Create(IANA(), "sourceIPv4Address destinationIPv4Address sourceTransportPort destinationTransportPort protocolIdentifier octetDeltaCount packetDeltaCount flowStartMilliseconds flowEndMilliseconds httpRequestHost")
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func flowRecord(t *testing.T, tm *Template, i int) *Record {
	t.Helper()
	r := &Record{}
	r.Reset(tm)
	now := time.Now().UnixMilli()
	for name, v := range map[string]string{
		"sourceIPv4Address":        "127.142.9.1",
		"destinationIPv4Address":   "127.142.9.2",
		"sourceTransportPort":      fmt.Sprint(40000 + i),
		"destinationTransportPort": "80",
		"protocolIdentifier":       "6",
		"octetDeltaCount":          fmt.Sprint(1000 + i),
		"packetDeltaCount":         "3",
		"flowStartMilliseconds":    fmt.Sprint(now - 1000),
		"flowEndMilliseconds":      fmt.Sprint(now),
		"httpRequestHost":          "shop.example",
	} {
		if err := r.Set(name, 0, v); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestExportUDP sends records over UDP: the first message carries the
// template before its data, the sequence numbers count the data records
// sent before each message, and each field decodes to what was set.
func TestExportUDP(t *testing.T) {
	c, addr := ipfixtest.UDP(t, "127.142.1.1:0")
	x := NewExporter(Options{Pool: "/Common/collectors", Members: fixed(addr), Retransmit: time.Hour, Domain: 7, Logger: quiet()})
	defer x.Close()
	tm := flowTemplate(t, NewTemplates())
	for i := range 5 {
		if !x.Send(flowRecord(t, tm, i)) {
			t.Fatal("not queued")
		}
	}
	ipfixtest.WaitFor(t, "5 records", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == 5 })
	msgs, errs := c.Snapshot()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, ok := msgs[0].Templates[tm.ID]; !ok {
		t.Fatalf("first message has no template %d", tm.ID)
	}
	seq := uint32(0)
	var seen []ipfixtest.Rec
	for _, m := range msgs {
		if m.Version != 10 || m.Domain != 7 {
			t.Fatalf("header: version %d domain %d", m.Version, m.Domain)
		}
		if m.Seq != seq {
			t.Fatalf("sequence %d, want %d", m.Seq, seq)
		}
		seq += uint32(len(m.Records))
		seen = append(seen, m.Records...)
	}
	for i, r := range seen {
		if got := netip.AddrFrom4([4]byte(r.Fields[0])).String(); got != "127.142.9.1" {
			t.Errorf("record %d source %s", i, got)
		}
		if got := binary.BigEndian.Uint16(r.Fields[2]); got != uint16(40000+i) {
			t.Errorf("record %d source port %d", i, got)
		}
		if got := binary.BigEndian.Uint64(r.Fields[5]); got != uint64(1000+i) {
			t.Errorf("record %d octets %d", i, got)
		}
		if got := string(r.Fields[9]); got != "shop.example" {
			t.Errorf("record %d host %q", i, got)
		}
	}
	if s := x.Stats(); s.Records != 5 || s.Dropped != 0 || s.Templates != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestTemplateRetransmit: over UDP the collector is sent the templates
// it knows again every interval, without new data.
func TestTemplateRetransmit(t *testing.T) {
	c, addr := ipfixtest.UDP(t, "127.142.1.2:0")
	x := NewExporter(Options{Pool: "p", Members: fixed(addr), Retransmit: time.Second, Logger: quiet()})
	defer x.Close()
	tm := flowTemplate(t, NewTemplates())
	x.Send(flowRecord(t, tm, 0))
	ipfixtest.WaitFor(t, "the template sent again", func() bool {
		msgs, _ := c.Snapshot()
		n := 0
		for _, m := range msgs {
			if _, ok := m.Templates[tm.ID]; ok {
				n++
			}
		}
		return n >= 3
	})
	msgs, errs := c.Snapshot()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, m := range msgs[1:] {
		if len(m.Records) != 0 || m.Seq != 1 {
			t.Fatalf("a retransmission carries %d records, sequence %d; want 0 and 1", len(m.Records), m.Seq)
		}
	}
}

// TestExportTCP: over TCP the template is sent once per connection;
// a collector that restarts gets a new session, templates first; a
// deleted template is withdrawn after the delete delay.
func TestExportTCP(t *testing.T) {
	c, addr, conns := ipfixtest.TCP(t, "127.142.1.3:0")
	ts := NewTemplates()
	x := NewExporter(Options{Pool: "p", Members: fixed(addr), TCP: true, Retransmit: time.Second, DeleteDelay: time.Second, Logger: quiet()})
	defer x.Close()
	tm := flowTemplate(t, ts)
	for i := range 3 {
		x.Send(flowRecord(t, tm, i))
	}
	ipfixtest.WaitFor(t, "3 records", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == 3 })
	time.Sleep(1500 * time.Millisecond) // past a retransmit interval: TCP sends none
	x.Send(flowRecord(t, tm, 3))
	ipfixtest.WaitFor(t, "4 records", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == 4 })
	msgs, errs := c.Snapshot()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	n := 0
	for _, m := range msgs {
		if _, ok := m.Templates[tm.ID]; ok {
			n++
		}
	}
	if n != 1 || conns() != 1 {
		t.Fatalf("%d template sends over %d connections, want 1 and 1", n, conns())
	}
	ts.Delete(tm.ID)
	ipfixtest.WaitFor(t, "the withdrawal", func() bool {
		msgs, _ := c.Snapshot()
		for _, m := range msgs {
			if len(m.Withdrawn) == 1 && m.Withdrawn[0] == tm.ID {
				return true
			}
		}
		return false
	})
}

// TestExportNetFlowV9: version 9 headers, flowset 0 templates, a
// sequence number per packet, and fixed-length strings.
func TestExportNetFlowV9(t *testing.T) {
	c, addr := ipfixtest.UDP(t, "127.142.1.4:0")
	x := NewExporter(Options{Pool: "p", Members: fixed(addr), Version: NetFlowV9, Domain: 9, Logger: quiet()})
	defer x.Close()
	tm := flowTemplate(t, NewTemplates())
	for i := range 3 {
		x.Send(flowRecord(t, tm, i))
		ipfixtest.WaitFor(t, "a record", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == i+1 })
	}
	msgs, errs := c.Snapshot()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i, m := range msgs {
		if m.Version != 9 || m.Seq != uint32(i) || m.Domain != 9 {
			t.Fatalf("message %d: version %d sequence %d source %d", i, m.Version, m.Seq, m.Domain)
		}
	}
	if got := msgs[0].Length; got != 2 {
		t.Fatalf("first packet count %d, want 2 (template and data)", got)
	}
	host := msgs[0].Records[0].Fields[9]
	if len(host) != V9Len || !strings.HasPrefix(string(host), "shop.example\x00") {
		t.Fatalf("host %q", host)
	}
}

// TestExportFailover: a collector that refuses TCP is skipped and the
// records go to the other member.
func TestExportFailover(t *testing.T) {
	c, addr, _ := ipfixtest.TCP(t, "127.142.1.5:0")
	dead := netip.MustParseAddrPort("127.142.1.6:9")
	x := NewExporter(Options{Pool: "p", Members: fixed(dead, addr), TCP: true, Logger: quiet()})
	defer x.Close()
	tm := flowTemplate(t, NewTemplates())
	for i := range 4 {
		x.Send(flowRecord(t, tm, i))
	}
	ipfixtest.WaitFor(t, "4 records", func() bool { m, _ := c.Snapshot(); return ipfixtest.Records(m) == 4 })
	if s := x.Stats(); s.Failures == 0 {
		t.Fatalf("stats %+v: the dead member was never tried", s)
	}
}

// TestNfcapd sends IPFIX and NetFlow v9 to nfcapd, a real collector, and
// reads the flows back with nfdump.
func TestNfcapd(t *testing.T) {
	for _, v := range []Version{IPFIX, NetFlowV9} {
		t.Run(v.String(), func(t *testing.T) {
			port := 4739
			if v == NetFlowV9 {
				port = 4740
			}
			out := ipfixtest.Nfcapd(t, "127.142.1.7", port, func(addr netip.AddrPort) {
				x := NewExporter(Options{Pool: "p", Members: fixed(addr), Version: v, Logger: quiet()})
				defer x.Close()
				tm := flowTemplate(t, NewTemplates())
				for i := range 3 {
					x.Send(flowRecord(t, tm, i))
				}
				ipfixtest.WaitFor(t, "3 records sent", func() bool { return x.Stats().Records == 3 })
			})
			for i := range 3 {
				want := fmt.Sprintf("127.142.9.1:%d", 40000+i)
				if !strings.Contains(out, want) {
					t.Errorf("nfdump shows no flow from %s:\n%s", want, out)
				}
			}
			if !strings.Contains(out, "127.142.9.2:80") || !strings.Contains(out, "TCP") {
				t.Errorf("nfdump output:\n%s", out)
			}
		})
	}
}

// BenchmarkExportUDP is one record filled and exported over UDP, the
// records packed into messages by the exporter; after warm-up neither
// side allocates per record.
func BenchmarkExportUDP(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.142.1.8:0")
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	addr := netip.MustParseAddrPort(pc.LocalAddr().String())
	x := NewExporter(Options{Pool: "p", Members: fixed(addr), Retransmit: time.Hour, Logger: quiet(), Queue: 1 << 16})
	defer x.Close()
	tm, err := NewTemplates().Create(IANA(), "sourceIPv4Address destinationIPv4Address sourceTransportPort destinationTransportPort protocolIdentifier octetDeltaCount")
	if err != nil {
		b.Fatal(err)
	}
	var r Record
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(tm)
		r.Set("sourceIPv4Address", 0, "10.0.0.1")
		r.Set("destinationIPv4Address", 0, "10.0.0.2")
		r.Set("sourceTransportPort", 0, "40000")
		r.Set("destinationTransportPort", 0, "443")
		r.Set("protocolIdentifier", 0, "6")
		r.Set("octetDeltaCount", 0, "123456")
		for !x.Send(&r) {
			time.Sleep(time.Millisecond)
		}
	}
}
