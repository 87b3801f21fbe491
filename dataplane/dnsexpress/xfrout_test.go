package dnsexpress

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
	"github.com/openltm/openltm/dataplane/dnszone/zonetest"
)

// serveTransfers answers each request of each TCP connection to addr
// with the store's Transfer, as a process-xfr listener does.
func serveTransfers(t *testing.T, s *Store, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				dc := &dns.Conn{Conn: c}
				buf := make([]byte, dns.MaxMsgSize)
				for range 4 {
					n, err := dc.Read(buf)
					if err != nil {
						return
					}
					r := new(dns.Msg)
					if r.Unpack(buf[:n]) != nil {
						return
					}
					src := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr()
					for _, m := range s.Transfer(r, buf[:n], src) {
						if _, err := c.Write(Frame(m)); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
}

func TestTransferOut(t *testing.T) {
	const secret = "c2VjcmV0c2VjcmV0"
	key := &Key{Name: "sec.", Algorithm: dns.HmacSHA256, Secret: secret}
	text := zoneV1
	for i := range 600 {
		text += fmt.Sprintf("t%d IN TXT \"padding record %d of a zone long enough for several messages\"\n", i, i)
	}
	s := New(Options{})
	t.Cleanup(s.Close)
	s.Apply([]ZoneConfig{{Name: "example.com.", Enabled: true, TransferClients: []Client{
		{Addr: netip.MustParseAddr("127.50.6.61")},
		{Addr: netip.MustParseAddr("127.50.6.62"), Key: key},
	}}})
	d := dnszone.Build("example.com.", zonetest.Parse(t, text))
	s.Zone("example.com").data.Store(d)
	serveTransfers(t, s, "127.50.6.1:5313")

	in := func(src string, q *dns.Msg, signed bool) (rrs []dns.RR, msgs int, err error) {
		tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second}
		if signed {
			q.SetTsig("sec.", dns.HmacSHA256, 300, time.Now().Unix())
			tr.TsigSecret = map[string]string{"sec.": secret}
		}
		dl := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := dl.Dial("tcp", "127.50.6.1:5313")
		if err != nil {
			return nil, 0, err
		}
		tr.Conn = &dns.Conn{Conn: c}
		defer tr.Close()
		ch, err := tr.In(q, "127.50.6.1:5313")
		if err != nil {
			return nil, 0, err
		}
		for env := range ch {
			if env.Error != nil {
				err = env.Error
				continue
			}
			msgs++
			rrs = append(rrs, env.RR...)
		}
		return rrs, msgs, err
	}
	axfr := func() *dns.Msg { q := new(dns.Msg); q.SetAxfr("example.com."); return q }
	ixfr := func(serial uint32) *dns.Msg {
		q := new(dns.Msg)
		q.SetIxfr("example.com.", serial, "ns1.example.com.", "hostmaster.example.com.")
		return q
	}
	whole := d.Count() + 1 // the SOA again at the end
	for _, tt := range []struct {
		name    string
		src     string
		q       *dns.Msg
		signed  bool
		records int
		err     string
	}{
		{"AXFR, unsigned client", "127.50.6.61", axfr(), false, whole, ""},
		{"AXFR, keyed client, every message verified", "127.50.6.62", axfr(), true, whole, ""},
		{"IXFR behind: the whole zone", "127.50.6.62", ixfr(0), true, whole, ""},
		{"IXFR current: the SOA", "127.50.6.61", ixfr(1), false, 1, ""},
		{"IXFR ahead (serial arithmetic): the SOA", "127.50.6.61", ixfr(1 << 30), false, 1, ""},
		{"not a client", "127.50.6.63", axfr(), false, 0, "rcode: 5"},
		{"keyed client unsigned", "127.50.6.62", axfr(), false, 0, "rcode: 9"},
	} {
		rrs, msgs, err := in(tt.src, tt.q, tt.signed)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want %s", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || len(rrs) != tt.records {
			t.Errorf("%s: %d records, %v; want %d", tt.name, len(rrs), err, tt.records)
			continue
		}
		if _, ok := rrs[0].(*dns.SOA); !ok {
			t.Errorf("%s: the first record is %s", tt.name, rrs[0])
		}
		if _, ok := rrs[len(rrs)-1].(*dns.SOA); !ok {
			t.Errorf("%s: the last record is %s", tt.name, rrs[len(rrs)-1])
		}
		if tt.records == whole && msgs < 2 {
			t.Errorf("%s: %d messages, want several", tt.name, msgs)
		}
	}
	st := s.Zone("example.com").Stats()
	if st.TransfersOut != 5 || st.TransfersOutRefused != 2 {
		t.Errorf("counters: %d answered, %d refused; want 5, 2", st.TransfersOut, st.TransfersOutRefused)
	}
	// A zone without a copy is refused.
	s.Zone("example.com").data.Store(nil)
	if _, _, err := in("127.50.6.61", axfr(), false); err == nil || !strings.Contains(err.Error(), "rcode: 5") {
		t.Errorf("a zone without a copy: %v, want REFUSED", err)
	}
}

func TestIxfrCurrent(t *testing.T) {
	for _, tt := range []struct {
		asked, have uint32
		want        bool
	}{
		{1, 1, true},
		{0, 1, false},
		{5, 1, true},
		{1<<31 + 2, 1, false}, // more than half the space ahead is behind (RFC 1982)
		{1, 0xfffffff0, true}, // wrapped past ours
		{0xfffffff0, 1, false},
	} {
		q := new(dns.Msg)
		q.SetIxfr("example.com.", tt.asked, "ns1.example.com.", "h.example.com.")
		if got := ixfrCurrent(q, tt.have); got != tt.want {
			t.Errorf("asked %d, have %d: %v, want %v", tt.asked, tt.have, got, tt.want)
		}
	}
	if ixfrCurrent(new(dns.Msg), 1) {
		t.Error("an IXFR without a SOA is current")
	}
}

func TestTransferUDP(t *testing.T) {
	const secret = "c2VjcmV0c2VjcmV0"
	key := &Key{Name: "sec.", Algorithm: dns.HmacSHA256, Secret: secret}
	s := New(Options{})
	t.Cleanup(s.Close)
	s.Apply([]ZoneConfig{{Name: "example.com.", Enabled: true, TransferClients: []Client{
		{Addr: netip.MustParseAddr("127.53.6.61")},
		{Addr: netip.MustParseAddr("127.53.6.62"), Key: key},
	}}})
	d := dnszone.Build("example.com.", zonetest.Parse(t, zoneV1))
	s.Zone("example.com").data.Store(d)
	whole := d.Count() + 1
	ixfr := func(serial uint32) *dns.Msg {
		q := new(dns.Msg)
		q.SetIxfr("example.com.", serial, "ns1.example.com.", "hostmaster.example.com.")
		return q
	}
	axfr := new(dns.Msg)
	axfr.SetAxfr("example.com.")
	for _, tt := range []struct {
		name    string
		src     string
		q       *dns.Msg
		signed  bool
		size    int
		rcode   int
		records int
	}{
		{"AXFR over UDP: FORMERR before any check", "127.53.6.63", axfr, false, 4096, dns.RcodeFormatError, 0},
		{"IXFR behind, fits: the whole zone", "127.53.6.61", ixfr(0), false, 4096, dns.RcodeSuccess, whole},
		{"IXFR behind, too big: the SOA, ask over TCP", "127.53.6.61", ixfr(0), false, 512, dns.RcodeSuccess, 1},
		{"IXFR current: the SOA", "127.53.6.61", ixfr(1), false, 4096, dns.RcodeSuccess, 1},
		{"IXFR signed: whole zone signed", "127.53.6.62", ixfr(0), true, 4096, dns.RcodeSuccess, whole},
		{"IXFR signed, too big: the SOA signed", "127.53.6.62", ixfr(0), true, 512, dns.RcodeSuccess, 1},
		{"not a client", "127.53.6.63", ixfr(0), false, 4096, dns.RcodeRefused, 0},
		{"keyed client unsigned", "127.53.6.62", ixfr(0), false, 4096, dns.RcodeNotAuth, 0},
	} {
		q := tt.q.Copy()
		wire, err := q.Pack()
		if tt.signed {
			q.SetTsig("sec.", dns.HmacSHA256, 300, time.Now().Unix())
			wire, _, err = dns.TsigGenerate(q, secret, "", false)
		}
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(wire); err != nil {
			t.Fatal(err)
		}
		out := s.TransferUDP(r, wire, netip.MustParseAddr(tt.src), tt.size)
		m := new(dns.Msg)
		if err := m.Unpack(out); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if m.Rcode != tt.rcode || len(m.Answer) != tt.records || len(out) > tt.size {
			t.Errorf("%s: rcode %d, %d records, %d bytes; want %d, %d, at most %d", tt.name, m.Rcode, len(m.Answer), len(out), tt.rcode, tt.records, tt.size)
			continue
		}
		if tt.records > 0 {
			if soa, ok := m.Answer[0].(*dns.SOA); !ok || soa.Serial != 1 || !m.Authoritative {
				t.Errorf("%s: starts with %s (AA %v)", tt.name, m.Answer[0], m.Authoritative)
			}
		}
		if tt.signed {
			if err := dns.TsigVerify(out, secret, r.IsTsig().MAC, false); err != nil {
				t.Errorf("%s: answer's TSIG: %v", tt.name, err)
			}
		}
	}
}
