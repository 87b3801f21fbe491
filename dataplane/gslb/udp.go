package gslb

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"time"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/evloop"
)

// UDP serving. A UDP listener is udpSockets sockets bound with
// SO_REUSEPORT, the kernel giving queries to the first or, under load,
// to each by the receiving CPU (udpSteer), and each socket has one
// goroutine that reads a query, answers it inline and writes the answer:
// no goroutine per packet, no read deadline, and the buffers are the
// goroutine's own. The common query (one question, A,
// class IN, a wide IP, no EDNS option) is decoded from and encoded into
// wire format directly (answerWire); everything else goes through
// miekg/dns's message types and Answer, as the TCP listener does.

// udpBufSize is the largest query read; longer datagrams are cut, as
// a DNS server's receive buffer cuts them (miekg/dns reads 512 bytes).
const udpBufSize = 4096

// udpSockets is how many sockets (and readers) a UDP listener opens: one
// per P, for full speed; while the load is light only the first gets
// queries (udpSteer).
func udpSockets() int {
	return max(1, min(evloop.Procs(), 64))
}

// answerUDP answers one datagram into out; send is false when nothing
// goes back.
// batchCtx is what the queries of one UDP read batch share: the time,
// read once, and the LDNS table updates, made once per run of queries
// from one LDNS instead of once per query (both cost a shared lock or a
// clock read that the readers of every CPU would take in turn).
type batchCtx struct {
	now      time.Time
	topo     topoMemo    // kept from batch to batch by the reader
	persist  persistMemo // likewise
	shard    int         // the reader's counter shard
	seenKey  netip.Prefix
	seenAddr netip.Addr
	seenN    uint64
	port     uint16 // the requester's port of the query being answered
}

// seen counts a query of an LDNS in the batch.
func (s *Server) seen(c *batchCtx, key netip.Prefix, src netip.Addr) {
	if c.seenN > 0 && c.seenKey == key && c.seenAddr == src {
		c.seenN++
		return
	}
	s.flushSeen(c)
	c.seenKey, c.seenAddr, c.seenN = key, src, 1
}

// flushSeen records the batch's pending LDNS queries.
func (s *Server) flushSeen(c *batchCtx) {
	if c.seenN > 0 {
		s.rtt.seenN(c.seenKey, c.seenAddr, c.now, c.seenN)
		c.seenN = 0
	}
}

func (s *Server) answerUDP(in []byte, src netip.Addr, out []byte, lk listenerKey, c *batchCtx) (resp []byte, send bool) {
	if s.listenerDNS(lk) == nil { // a listener that logs or transfers sees every query unpacked
		if resp, handled, send := s.answerWire(in, src, out, c); handled {
			return resp, send
		}
	}
	return s.answerPacked(in, netip.AddrPortFrom(src, c.port), out, lk)
}

// answerPacked is the general path: unpack, Answer, pack. It rejects what
// miekg/dns's server rejects before a handler sees it, the same way.
func (s *Server) answerPacked(in []byte, from netip.AddrPort, out []byte, lk listenerKey) ([]byte, bool) {
	src := from.Addr()
	if len(in) < 12 {
		return out, false // no header: nothing to answer, nothing to amplify
	}
	dh := dns.Header{
		Id: binary.BigEndian.Uint16(in), Bits: binary.BigEndian.Uint16(in[2:]),
		Qdcount: binary.BigEndian.Uint16(in[4:]), Ancount: binary.BigEndian.Uint16(in[6:]),
		Nscount: binary.BigEndian.Uint16(in[8:]), Arcount: binary.BigEndian.Uint16(in[10:]),
	}
	req := new(dns.Msg)
	action := dns.DefaultMsgAcceptFunc(dh)
	if action == dns.MsgAccept {
		if err := req.Unpack(in); err == nil {
			if l := s.listenerDNS(lk); l != nil {
				return s.answerListenerUDP(l, req, in, from, out, lk) // listener_dns.go
			}
			m, send := s.answer(req, src, true, via{key: lk, qlen: len(in), wire: in, port: from.Port()})
			if !send {
				return out, false
			}
			return pack(m, out)
		}
		action = dns.MsgReject
	}
	if action == dns.MsgIgnore {
		return out, false
	}
	s.stats.queries.Inc(0)
	s.stats.malformed.Inc(0)
	req = new(dns.Msg)
	setHdr(req, dh)
	opcode := req.Opcode
	req.SetRcodeFormatError(req)
	req.Zero = false
	if action == dns.MsgRejectNotImplemented {
		req.Opcode = opcode
		req.Rcode = dns.RcodeNotImplemented
	}
	return pack(req, out)
}

func pack(m *dns.Msg, out []byte) ([]byte, bool) {
	b, err := m.PackBuffer(out[:cap(out)])
	if err != nil {
		return out, false
	}
	return b, true
}

// setHdr is miekg/dns's header decoding, for a query rejected before its
// body is read.
func setHdr(m *dns.Msg, dh dns.Header) {
	m.Id = dh.Id
	m.Response = dh.Bits&(1<<15) != 0
	m.Opcode = int(dh.Bits>>11) & 0xF
	m.Authoritative = dh.Bits&(1<<10) != 0
	m.Truncated = dh.Bits&(1<<9) != 0
	m.RecursionDesired = dh.Bits&(1<<8) != 0
	m.RecursionAvailable = dh.Bits&(1<<7) != 0
	m.Zero = dh.Bits&(1<<6) != 0
	m.AuthenticatedData = dh.Bits&(1<<5) != 0
	m.CheckingDisabled = dh.Bits&(1<<4) != 0
	m.Rcode = int(dh.Bits & 0xF)
}

// Header bits of the wire format.
const (
	bitQR = 1 << 15
	bitAA = 1 << 10
	bitRD = 1 << 8
	bitCD = 1 << 4
)

// wireQuery is what answerWire reads of a query.
type wireQuery struct {
	qend    int // end of the question section
	name    [255]byte
	nameLen int
	edns    bool
	do      bool
	udpSize uint16
}

// parseWire decodes the common query: a QUERY with one question of type A
// and class IN whose name is plain (letters, digits, '-' and '_'), and no
// other record but an OPT without options. ok is false for anything else.
func parseWire(in []byte, q *wireQuery) bool {
	if len(in) < 12+5 {
		return false
	}
	bits := binary.BigEndian.Uint16(in[2:])
	if bits&bitQR != 0 || (bits>>11)&0xF != dns.OpcodeQuery {
		return false
	}
	if binary.BigEndian.Uint16(in[4:]) != 1 || binary.BigEndian.Uint16(in[6:]) != 0 || binary.BigEndian.Uint16(in[8:]) != 0 {
		return false
	}
	ar := binary.BigEndian.Uint16(in[10:])
	if ar > 1 {
		return false
	}
	off, n := 12, 0
	for {
		if off >= len(in) {
			return false
		}
		l := int(in[off])
		off++
		if l == 0 {
			break
		}
		if l > 63 || off+l > len(in) || n+l+1 > len(q.name) {
			return false
		}
		for _, c := range in[off : off+l] {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			default:
				return false
			}
			q.name[n] = c
			n++
		}
		q.name[n] = '.'
		n++
		off += l
	}
	if n == 0 || off+4 > len(in) {
		return false
	}
	if binary.BigEndian.Uint16(in[off:]) != dns.TypeA || binary.BigEndian.Uint16(in[off+2:]) != dns.ClassINET {
		return false
	}
	off += 4
	q.qend, q.nameLen = off, n
	q.edns, q.do, q.udpSize = false, false, 0
	if ar == 1 {
		// root name, TYPE OPT, CLASS udp size, TTL ext-rcode/version/flags, RDLENGTH 0
		if len(in) != off+11 || in[off] != 0 || binary.BigEndian.Uint16(in[off+1:]) != dns.TypeOPT ||
			binary.BigEndian.Uint16(in[off+9:]) != 0 {
			return false
		}
		q.edns = true
		q.udpSize = binary.BigEndian.Uint16(in[off+3:])
		q.do = in[off+7]&0x80 != 0
	} else if len(in) != off {
		return false
	}
	return true
}

// answerWire answers the common query (parseWire) for a wide IP without
// unpacking it: the decision, then the answer written into out. handled
// is false when the query is not of that kind and nothing was counted;
// once it is, a case the wire form does not cover (return to DNS, NODATA,
// truncation) is completed through dns.Msg.
func (s *Server) answerWire(in []byte, src netip.Addr, out []byte, c *batchCtx) (resp []byte, handled, send bool) {
	var q wireQuery
	if !parseWire(in, &q) {
		return out, false, false
	}
	p := s.plan.Load()
	if p.anyRules {
		return out, false, false // rules see every query as a dns.Msg
	}
	if q.do && p.signer != nil {
		return out, false, false // signed answers are built as Answer builds them
	}
	qname := unsafe.String(&q.name[0], q.nameLen) // not kept past this call
	w := p.lookupName(qname)
	if w == nil || w.cfg.Disabled || w.cfg.FullResponse {
		return out, false, false // FullResponse: NS records added as Answer does
	}
	s.stats.queries.Inc(c.shard)
	s.stats.wideIP.Inc(c.shard)
	w.rt.requests.Inc(c.shard)
	w.rt.requestsA.Inc(c.shard)
	rq := request{plan: p, ldns: src, client: src, topoAddr: src, now: c.now, topo: &c.topo, pmemo: &c.persist, shard: c.shard}
	if !p.settings.NoCacheLDNS {
		s.seen(c, ldnsKey(src, &p.settings), src)
	}
	var d decision
	s.resolve(&rq, w, &d)
	w.rt.ended(d.out, c.shard)
	switch d.out {
	case outDrop:
		s.stats.dropped.Inc(c.shard)
		return out, true, false
	case outAnswer:
		size := dns.MinMsgSize
		if q.edns && int(q.udpSize) > size {
			size = min(int(q.udpSize), 1232)
		}
		n4 := 0
		for _, a := range d.addrs() {
			if a.Is4() {
				n4++
			}
		}
		total := q.qend + 16*n4
		if q.edns {
			total += 11
		}
		if n4 > 0 && total <= size {
			return writeAnswer(in, &q, &d, n4, out), true, true
		}
	}
	// The rare shapes: build them as Answer does, from the unpacked query.
	r := new(dns.Msg)
	if err := r.Unpack(in); err != nil {
		return out, true, false
	}
	m := new(dns.Msg)
	m.SetReply(r)
	dq := r.Question[0]
	opt := r.IsEdns0()
	name := strings.ToLower(dq.Name)
	if d.out == outReturnToDNS {
		m = s.unresolved(p, m, name, dq, opt, nil, true, w)
	} else {
		m = s.decided(p, m, name, dq, opt, nil, true, TypeA, &d)
	}
	resp, send = pack(m, out)
	return resp, true, send
}

// writeAnswer encodes the answer of an answerWire query: the question as
// asked, one A record per IPv4 address (its name a pointer to the
// question's), and an OPT when the query had one.
func writeAnswer(in []byte, q *wireQuery, d *decision, n4 int, out []byte) []byte {
	bits := binary.BigEndian.Uint16(in[2:])
	flags := uint16(bitQR|bitAA) | bits&(bitRD|bitCD)
	ar := uint16(0)
	if q.edns {
		ar = 1
	}
	out = append(out, in[0], in[1], byte(flags>>8), byte(flags), 0, 1, byte(n4>>8), byte(n4), 0, 0, byte(ar>>8), byte(ar))
	out = append(out, in[12:q.qend]...)
	for _, a := range d.addrs() {
		if !a.Is4() {
			continue
		}
		b := a.As4()
		out = append(out, 0xC0, 12, 0, byte(dns.TypeA), 0, byte(dns.ClassINET),
			byte(d.ttl>>24), byte(d.ttl>>16), byte(d.ttl>>8), byte(d.ttl), 0, 4, b[0], b[1], b[2], b[3])
	}
	if q.edns {
		var do byte
		if q.do {
			do = 0x80
		}
		out = append(out, 0, 0, byte(dns.TypeOPT), 1232>>8, 1232&0xFF, 0, 0, do, 0, 0, 0)
	}
	return out
}
