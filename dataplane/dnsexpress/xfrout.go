package dnsexpress

import (
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// Client is one of a zone's transfer-clients (an ltm dns nameserver): the
// address a transfer may go to, the port its NOTIFY goes to, and the key
// its request must be signed with (nil: unsigned).
type Client struct {
	Addr netip.Addr
	Port uint16
	Key  *Key
}

// xfrChunk bounds the record bytes of one message of a transfer, well
// under TCP DNS's 64 KiB [M].
const xfrChunk = 16 << 10

// Transfer answers a zone transfer request (r, wire as received, an AXFR
// or IXFR) from src over TCP with the messages to send, each packed and,
// when the client has a key, TSIG-signed in sequence (RFC 8945: the
// first over the request's MAC, each next over the one before). A
// secondary reaches only the zones whose transfer-clients list its
// address:
//
//   - a zone the store does not hold, or holds without a copy: REFUSED
//     [M];
//   - src not among the zone's transfer-clients: REFUSED;
//   - a client with a key, asked unsigned or with another key or a bad
//     signature (or signed by a client without a key): NOTAUTH [M];
//   - an IXFR whose serial is the copy's or newer: the SOA alone (RFC
//     1995, the client is current); any other IXFR gets the whole zone
//     in AXFR form, which RFC 1995 allows [M: no history is kept];
//   - an AXFR: SOA, the records, SOA (RFC 5936), authoritative.
//
// It returns nil when nothing can be packed.
func (s *Store) Transfer(r *dns.Msg, wire []byte, src netip.Addr) [][]byte {
	z, d, t, key, fail := s.xfrAccess(r, wire, src)
	if fail != nil {
		return packed(fail)
	}
	soa := d.SOA()
	var rrs []dns.RR
	if r.Question[0].Qtype == dns.TypeIXFR && ixfrCurrent(r, soa.Serial) {
		rrs = []dns.RR{soa}
	} else {
		rrs = append(d.Records(), soa)
	}
	var msgs []*dns.Msg
	for len(rrs) > 0 {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		size := 0
		for len(rrs) > 0 && (size == 0 || size+dns.Len(rrs[0]) <= xfrChunk) {
			size += dns.Len(rrs[0])
			m.Answer = append(m.Answer, rrs[0])
			rrs = rrs[1:]
		}
		msgs = append(msgs, m)
	}
	z.xfrServed()
	if key == nil {
		return packed(msgs...)
	}
	out := make([][]byte, 0, len(msgs))
	mac := t.MAC
	for i, m := range msgs {
		m.SetTsig(key.Name, key.Algorithm, 300, time.Now().Unix())
		b, next, err := dns.TsigGenerate(m, key.Secret, mac, i > 0)
		if err != nil {
			return nil
		}
		out, mac = append(out, b), next
	}
	return out
}

// TransferUDP answers a zone transfer request that came over UDP, as
// BIND does, with the one datagram to send (nil when nothing can be
// packed); size is the requester's UDP size. An AXFR is FORMERR (RFC
// 5936 4.2: AXFR is a TCP exchange) [M: BIND's answer, before any
// access check]. An IXFR passes the checks of Transfer, then gets the
// SOA alone when the client is current, else the whole zone in AXFR
// form when it fits in size, else the SOA alone, which tells the client
// to ask again over TCP (RFC 1995 2) [M]. A signed request gets a
// signed answer.
func (s *Store) TransferUDP(r *dns.Msg, wire []byte, src netip.Addr, size int) []byte {
	if len(r.Question) == 1 && r.Question[0].Qtype == dns.TypeAXFR {
		return first(packed(refuse(r, dns.RcodeFormatError)))
	}
	z, d, t, key, fail := s.xfrAccess(r, wire, src)
	if fail != nil {
		return first(packed(fail))
	}
	soa := d.SOA()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	pack := func() []byte {
		if key == nil {
			b, err := m.Pack()
			if err != nil {
				return nil
			}
			return b
		}
		m.Extra = nil
		m.SetTsig(key.Name, key.Algorithm, 300, time.Now().Unix())
		b, _, err := dns.TsigGenerate(m, key.Secret, t.MAC, false)
		if err != nil {
			return nil
		}
		return b
	}
	z.xfrServed()
	if !ixfrCurrent(r, soa.Serial) {
		m.Answer = append(d.Records(), soa)
		if b := pack(); b != nil && len(b) <= size {
			return b
		}
	}
	m.Answer = []dns.RR{soa}
	return pack()
}

// xfrAccess finds the zone and copy a transfer request r (wire as
// received) from src asks for and checks that src may have it, with the
// key the answer is to be signed with (nil: unsigned) and the request's
// TSIG; fail is the answer to send instead when it may not.
func (s *Store) xfrAccess(r *dns.Msg, wire []byte, src netip.Addr) (z *Zone, d *dnszone.Zone, t *dns.TSIG, key *Key, fail *dns.Msg) {
	if len(r.Question) != 1 {
		return nil, nil, nil, nil, refuse(r, dns.RcodeFormatError)
	}
	q := r.Question[0]
	z = s.enabled(strings.ToLower(q.Name))
	d = z.copy()
	if d == nil {
		return nil, nil, nil, nil, refuse(r, dns.RcodeRefused)
	}
	cfg := z.cfg.Load()
	src = src.Unmap()
	known, ok := false, false
	tsigErr := uint16(dns.RcodeBadKey)
	t = r.IsTsig()
	for _, c := range cfg.TransferClients {
		if c.Addr != src {
			continue
		}
		known = true
		switch {
		case c.Key == nil && t == nil:
			ok = true
		case c.Key != nil && t != nil && strings.EqualFold(t.Hdr.Name, c.Key.Name) && strings.EqualFold(t.Algorithm, c.Key.Algorithm):
			if dns.TsigVerify(wire, c.Key.Secret, "", false) == nil {
				ok, key = true, c.Key
			} else {
				tsigErr = dns.RcodeBadSig
			}
		}
		if ok {
			break
		}
	}
	if !known {
		z.xfrRefused()
		return nil, nil, nil, nil, refuse(r, dns.RcodeRefused)
	}
	if !ok {
		z.xfrRefused()
		m := refuse(r, dns.RcodeNotAuth)
		if t != nil { // RFC 8945 5.3.2: the error in an unsigned TSIG
			m.Extra = append(m.Extra, &dns.TSIG{
				Hdr:       dns.RR_Header{Name: t.Hdr.Name, Rrtype: dns.TypeTSIG, Class: dns.ClassANY},
				Algorithm: t.Algorithm, TimeSigned: t.TimeSigned, Fudge: t.Fudge, OrigId: r.Id, Error: tsigErr,
			})
		}
		return nil, nil, nil, nil, m
	}
	return z, d, t, key, nil
}

// first is the first of msgs, nil for none.
func first(msgs [][]byte) []byte {
	if len(msgs) == 0 {
		return nil
	}
	return msgs[0]
}

// copy is the zone's copy, nil for a nil zone or one without.
func (z *Zone) copy() *dnszone.Zone {
	if z == nil {
		return nil
	}
	return z.data.Load()
}

// ixfrCurrent reports whether r, an IXFR, carries in its authority
// section a SOA whose serial is serial or newer (RFC 1982).
func ixfrCurrent(r *dns.Msg, serial uint32) bool {
	for _, rr := range r.Ns {
		if s, ok := rr.(*dns.SOA); ok {
			return int32(s.Serial-serial) >= 0
		}
	}
	return false
}

func refuse(r *dns.Msg, rcode int) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	return m
}

func packed(msgs ...*dns.Msg) [][]byte {
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		b, err := m.Pack()
		if err != nil {
			return nil
		}
		out = append(out, b)
	}
	return out
}

// Frame is b with its TCP length prefix (RFC 1035 4.2.2).
func Frame(b []byte) []byte {
	out := make([]byte, 2+len(b))
	binary.BigEndian.PutUint16(out, uint16(len(b)))
	copy(out[2:], b)
	return out
}

func (z *Zone) xfrServed() {
	z.mu.Lock()
	z.st.TransfersOut++
	z.mu.Unlock()
}

func (z *Zone) xfrRefused() {
	z.mu.Lock()
	z.st.TransfersOutRefused++
	z.mu.Unlock()
}

// notifyTimeout bounds the wait for a transfer client's answer to a
// NOTIFY; notifyTries the tries (RFC 1996 4.3: it is sent again when
// unanswered) [M].
var notifyTimeout, notifyTries = time.Second, 3

// notifyClients tells the zone's transfer-clients that the copy has a
// new serial, soa (RFC 1996), each over UDP at its port, signed with its key,
// from the store's source address; it does not wait for them.
func (z *Zone) notifyClients(cfg *ZoneConfig, soa *dns.SOA) {
	for _, c := range cfg.TransferClients {
		if c.Port == 0 {
			continue
		}
		go z.notifyClient(cfg.Name, c, soa)
	}
}

func (z *Zone) notifyClient(zone string, c Client, soa *dns.SOA) {
	n := new(dns.Msg)
	n.SetNotify(zone)
	n.Authoritative = true
	n.Answer = []dns.RR{soa} // the new serial (RFC 1996 3.7)
	cl := &dns.Client{Net: "udp", Timeout: notifyTimeout}
	if src := z.s.opts.Source; src.IsValid() && src.Is4() == c.Addr.Is4() {
		cl.Dialer = &net.Dialer{Timeout: notifyTimeout, LocalAddr: &net.UDPAddr{IP: src.AsSlice()}}
	}
	if c.Key != nil {
		cl.TsigSecret = map[string]string{c.Key.Name: c.Key.Secret}
	}
	to := netip.AddrPortFrom(c.Addr, c.Port).String()
	var err error
	for range notifyTries {
		select {
		case <-z.stop:
			return
		default:
		}
		if c.Key != nil {
			n.SetTsig(c.Key.Name, c.Key.Algorithm, 300, time.Now().Unix())
		}
		var r *dns.Msg
		if r, _, err = cl.Exchange(n, to); err == nil {
			z.mu.Lock()
			z.st.NotifiesSent++
			z.mu.Unlock()
			if r.Rcode != dns.RcodeSuccess {
				z.s.opts.Logger.Warn("DNS Express NOTIFY refused", "zone", zone, "client", to, "rcode", dns.RcodeToString[r.Rcode])
			}
			return
		}
		n.Extra = nil // signed again on the next try
	}
	z.s.opts.Logger.Warn("DNS Express NOTIFY unanswered", "zone", zone, "client", to, "err", err)
}
