package gslb

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// FuzzAnswerUDP feeds datagrams to a UDP reader's answer path, which
// parses the common query itself (answerWire) and hands the rest to
// miekg/dns: whatever arrives, it must not panic, and what it sends must
// be a DNS message. A datagram that miekg/dns's server accepts and reads
// as a query gets the answer Answer gives for it, from a second server
// that saw the same queries in the same order (so round-robin turns
// match): the wire path may be faster than Answer, never different.
func FuzzAnswerUDP(f *testing.F) {
	seeds := []func(q *dns.Msg){
		func(q *dns.Msg) {},
		func(q *dns.Msg) { q.SetEdns0(1232, true) },
		func(q *dns.Msg) { q.SetEdns0(100, false) },
		func(q *dns.Msg) {
			q.SetEdns0(4096, false)
			q.IsEdns0().Option = append(q.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IP{127, 0, 86, 0}})
		},
		func(q *dns.Msg) { q.Question[0].Qtype = dns.TypeAAAA },
		func(q *dns.Msg) { q.Question[0].Qtype = dns.TypeANY },
		func(q *dns.Msg) { q.Question[0].Name = "WWW.Example.COM." },
		func(q *dns.Msg) { q.Question[0].Name = "static.example.com." },
		func(q *dns.Msg) { q.Question[0].Name = "x.cdn.example.com." },
		func(q *dns.Msg) { q.Question[0].Qclass = dns.ClassCHAOS },
		func(q *dns.Msg) { q.RecursionDesired, q.CheckingDisabled = true, true },
	}
	for _, edit := range seeds {
		q := new(dns.Msg)
		q.SetQuestion(wideName, dns.TypeA)
		edit(q)
		in, err := q.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(in)
	}
	viaUDP := newServer(f, testConfig(netip.AddrPort{}), Options{})
	viaAnswer := newServer(f, testConfig(netip.AddrPort{}), Options{})
	var bc batchCtx
	out := make([]byte, 0, 2048)
	f.Fuzz(func(t *testing.T, in []byte) {
		bc.now = time.Now()
		resp, send := viaUDP.answerUDP(in, ldnsCNC, out[:0], listenerKey{}, &bc)
		viaUDP.flushSeen(&bc)
		got := new(dns.Msg)
		if send {
			if err := got.Unpack(resp); err != nil {
				t.Fatalf("sent what does not unpack (%v): %x", err, resp)
			}
		}
		if len(in) < 12 {
			if send {
				t.Fatalf("answered a datagram without a header: %x", in)
			}
			return
		}
		// What miekg/dns's server refuses before a handler sees it is
		// refused the same way (TestUDPRejects); the rest is compared.
		dh := dns.Header{
			Id: binary.BigEndian.Uint16(in), Bits: binary.BigEndian.Uint16(in[2:]),
			Qdcount: binary.BigEndian.Uint16(in[4:]), Ancount: binary.BigEndian.Uint16(in[6:]),
			Nscount: binary.BigEndian.Uint16(in[8:]), Arcount: binary.BigEndian.Uint16(in[10:]),
		}
		q := new(dns.Msg)
		if dns.DefaultMsgAcceptFunc(dh) != dns.MsgAccept || q.Unpack(in) != nil || q.Opcode != dns.OpcodeQuery || len(q.Question) != 1 {
			return
		}
		want, wantSend := viaAnswer.Answer(q, ldnsCNC, true)
		if send != wantSend {
			t.Fatalf("sent %v, Answer's %v, for\n%s", send, wantSend, q)
		}
		if !send {
			return
		}
		wb, err := want.Pack()
		if err != nil {
			t.Fatalf("Answer's response does not pack: %v", err)
		}
		want = new(dns.Msg)
		if err := want.Unpack(wb); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("for\n%s\ngot\n%s\nAnswer's:\n%s", q, got, want)
		}
	})
}
