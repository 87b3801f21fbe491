package gslb

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// A gtm listener's dns profile, as far as the listener acts on it: DNS
// logging (enable-logging with a log-profile), zone transfers out
// (process-xfr), Rapid Response (enable-rapid-response), which of DNS
// Express, the wide IPs and the static zones answer (enable-dns-express,
// enable-gtm, use-local-bind), its cache and unhandled-query-action, as
// a virtual with a dns profile has them (dataplane/dnsvs).

// ProfileSteps is a listener's dns profile past DNS Express and the wide
// IPs, as dataplane/dnsvs runs it for a virtual, so that a listener and
// a virtual with one profile answer alike.
type ProfileSteps interface {
	// Answer is the profile's answer to r, which neither DNS Express
	// nor a wide IP answered: its cache's, else unhandled-query-action's.
	// pass says the action is allow with nothing cached: the static
	// zones (BIG-IP's local BIND) answer, when use-local-bind lets them.
	// send is false when the query is dropped. at is where r came from
	// and to, so that a UDP query waiting for a name server's answer is
	// a row of the connection table, as on a virtual.
	Answer(r *dns.Msg, at StepQuery, udp bool) (m *dns.Msg, send, pass bool)
}

// StepQuery is a query's two ends as a listener's profile steps see
// them: what show sys connection lists while the query waits for a
// name server (the client's address and port, the listener's address),
// and the listener's name for the row's virtual. Passed by value, so
// that a query the steps answer at once costs no allocation.
type StepQuery struct {
	Client, Local netip.AddrPort
	Listener      string
}

// QueryLog logs a listener's queries and the answers it sends, in the
// form of its dns profile's logging profile; dataplane/dnsvs makes it, so
// that a listener and a dns-profile virtual log alike.
type QueryLog interface {
	// Query logs r, from client to local, as it arrives.
	Query(r *dns.Msg, client, local netip.AddrPort)
	// Response logs m as it leaves for client.
	Response(m *dns.Msg, client netip.AddrPort)
}

// Transferer is DNS Express serving its zones' copies to secondaries
// (dnsexpress.Store): a listener or a virtual whose dns profile has
// process-xfr yes hands it every AXFR and IXFR.
type Transferer interface {
	// Transfer is the messages, packed (and signed), that answer the
	// transfer request r (wire as received) from src over TCP.
	Transfer(r *dns.Msg, wire []byte, src netip.Addr) [][]byte
	// TransferUDP is the one datagram answering such a request that
	// came over UDP, within the requester's size.
	TransferUDP(r *dns.Msg, wire []byte, src netip.Addr, size int) []byte
}

// listenersDNS picks the listeners that log or serve transfers; nil when
// none does, so that a query tests one pointer.
func listenersDNS(ls map[listenerKey]Listener) map[listenerKey]*Listener {
	var out map[listenerKey]*Listener
	for k, l := range ls {
		if l.Log == nil && !l.ProcessXfr && !l.Rapid && !l.NoGTM && !l.NoExpress && !l.NoBIND && l.Steps == nil {
			continue
		}
		if out == nil {
			out = map[listenerKey]*Listener{}
		}
		out[k] = &l
	}
	return out
}

// listenerDNS is the listener k when it logs or serves transfers: one
// atomic load and a nil test when none does.
func (s *Server) listenerDNS(k listenerKey) *Listener {
	p := s.plan.Load()
	if p.listenDNS == nil {
		return nil
	}
	return p.listenDNS[k]
}

// isXfr reports whether r asks for a zone transfer.
func isXfr(r *dns.Msg) bool {
	return r.Opcode == dns.OpcodeQuery && !r.Response && len(r.Question) == 1 &&
		(r.Question[0].Qtype == dns.TypeAXFR || r.Question[0].Qtype == dns.TypeIXFR)
}

// transferer is DNS Express when it serves transfers; nil otherwise.
func (s *Server) transferer() Transferer {
	if x := s.express.Load(); x != nil {
		if t, ok := x.x.(Transferer); ok {
			return t
		}
	}
	return nil
}

// answerListenerUDP answers the query r (in as received) from from on
// the UDP listener l: logged, a transfer request given to DNS Express
// when l has process-xfr (REFUSED without DNS Express [M]), any other
// answered as usual.
func (s *Server) answerListenerUDP(l *Listener, r *dns.Msg, in []byte, from netip.AddrPort, out []byte, lk listenerKey) ([]byte, bool) {
	if l.Rapid {
		if m, done := s.rapid(l, r); done {
			if m == nil {
				return out, false
			}
			return pack(m, out)
		}
	}
	if l.Log != nil {
		l.Log.Query(r, from, lk.addr)
	}
	if l.ProcessXfr && isXfr(r) {
		s.stats.queries.Inc(0)
		if t := s.transferer(); t != nil {
			b := t.TransferUDP(r, in, from.Addr(), udpSize(r.IsEdns0()))
			return b, b != nil
		}
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		return pack(m, out)
	}
	m, send := s.answer(r, from.Addr(), true, via{key: lk, qlen: len(in), wire: in, l: l, port: from.Port()})
	if !send {
		return out, false
	}
	if l.Log != nil {
		l.Log.Response(m, from)
	}
	return pack(m, out)
}

// xfrReader is the TCP listener k's message reader (miekg/dns's, one per
// connection): on a listener with process-xfr it answers the transfer
// requests itself, with the request's bytes for its TSIG and the
// connection to write the transfer's messages on, and hands the server
// every other message. Elsewhere it costs an atomic load and a nil test
// per message.
func (s *Server) xfrReader(k listenerKey) dns.DecorateReader {
	return func(r dns.Reader) dns.Reader { return &xfrConnReader{Reader: r, s: s, k: k} }
}

type xfrConnReader struct {
	dns.Reader
	s *Server
	k listenerKey
}

// maxTransfers bounds the transfers one connection gets [M].
const maxTransfers = 1000

var errTransfers = errors.New("gtm listener: too many transfers on one connection")

func (x *xfrConnReader) ReadTCP(c net.Conn, timeout time.Duration) ([]byte, error) {
	for range maxTransfers {
		b, err := x.Reader.ReadTCP(c, timeout)
		if err != nil {
			return b, err
		}
		l := x.s.listenerDNS(x.k)
		if l == nil || !l.ProcessXfr || len(b) < 12 || binary.BigEndian.Uint16(b[4:]) != 1 {
			return b, nil
		}
		r := new(dns.Msg)
		if r.Unpack(b) != nil || !isXfr(r) {
			return b, nil
		}
		client := addrPortOf(c.RemoteAddr())
		if l.Log != nil {
			l.Log.Query(r, client, x.k.addr)
		}
		if err := x.s.transferTCP(c, r, b, client.Addr(), timeout); err != nil {
			return nil, err
		}
	}
	return nil, errTransfers
}

// transferTCP writes DNS Express's answer to the transfer request r (b
// as received) from src on c; REFUSED without DNS Express [M].
func (s *Server) transferTCP(c net.Conn, r *dns.Msg, b []byte, src netip.Addr, timeout time.Duration) error {
	s.stats.queries.Inc(0)
	var msgs [][]byte
	if t := s.transferer(); t != nil {
		msgs = t.Transfer(r, b, src)
	} else {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		out, err := m.Pack()
		if err != nil {
			return err
		}
		msgs = [][]byte{out}
	}
	if timeout < 2*time.Second {
		timeout = 2 * time.Second
	}
	for _, m := range msgs {
		var n [2]byte
		binary.BigEndian.PutUint16(n[:], uint16(len(m)))
		c.SetWriteDeadline(time.Now().Add(timeout))
		bufs := net.Buffers{n[:], m}
		if _, err := bufs.WriteTo(c); err != nil {
			return err
		}
	}
	return nil
}

// rapid is enable-rapid-response on the UDP listener l, as on a virtual
// (dataplane/dnsvs): DNS Express answers the query r before the logging,
// the listener's iRules and the wide IPs; a query it does not answer
// gets l.RapidLast, allow sending it on as usual (done false, as for a
// message that is not a plain query). m is nil when nothing is sent.
func (s *Server) rapid(l *Listener, r *dns.Msg) (m *dns.Msg, done bool) {
	if r.Response || r.Opcode != dns.OpcodeQuery || len(r.Question) != 1 || r.Question[0].Qclass != dns.ClassINET {
		return nil, false
	}
	q := r.Question[0]
	opt := r.IsEdns0()
	if q.Qtype != dns.TypeAXFR && q.Qtype != dns.TypeIXFR {
		if xm := s.expressAnswer(r, strings.ToLower(q.Name)); xm != nil {
			s.stats.queries.Inc(0)
			return s.finishMsg(xm, opt, nil, true), true
		}
	}
	rcode := dns.RcodeSuccess
	switch l.RapidLast {
	case "allow":
		return nil, false
	case "noerror", "truncate":
	case "nxdomain":
		rcode = dns.RcodeNameError
		s.stats.nxdomain.Inc(0)
	case "refuse":
		rcode = dns.RcodeRefused
		s.stats.refused.Inc(0)
	default: // drop
		s.stats.queries.Inc(0)
		s.stats.dropped.Inc(0)
		return nil, true
	}
	s.stats.queries.Inc(0)
	m = new(dns.Msg)
	m.SetRcode(r, rcode)
	m.Truncated = l.RapidLast == "truncate" // the client asks again over TCP
	return s.finishMsg(m, opt, nil, true), true
}

// profileAnswer is the listener l's dns profile step for r, which DNS
// Express and the wide IPs did not answer; ok is false when the static
// zones are next (no steps, or allow). port is the client's port and
// local the listener's address (invalid when the query came through
// Answer).
func (s *Server) profileAnswer(l *Listener, r *dns.Msg, src netip.Addr, port uint16, local netip.AddrPort, udp bool) (m *dns.Msg, send, ok bool) {
	if l == nil || l.Steps == nil {
		return nil, false, false
	}
	m, send, pass := l.Steps.Answer(r, StepQuery{Client: netip.AddrPortFrom(src, port), Local: local, Listener: l.Name}, udp)
	if pass {
		return nil, false, false
	}
	if !send || m == nil {
		s.stats.dropped.Inc(0)
		return nil, false, true
	}
	switch m.Rcode {
	case dns.RcodeRefused:
		s.stats.refused.Inc(0)
	case dns.RcodeNameError:
		s.stats.nxdomain.Inc(0)
	}
	if udp {
		m.Truncate(udpSize(r.IsEdns0()))
	}
	return m, true, true
}
