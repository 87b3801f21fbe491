// Package mrfsip is SIP over the message-routing framework: the
// Protocol a TCP or UDP virtual with an `ltm message-routing sip profile
// session` and `sip profile router` gives its router (dataplane/mrf).
// A TCP stream is cut into SIP messages on Content-Length; over UDP each
// datagram is one message. Requests are
// routed by the router's sip routes (from-uri, to-uri, request-uri), a
// rule (MR::message route, SIP::route) or the virtual's pool, with the
// session profile's Via (insert-via-header, custom-via; over a UDP peer
// flow SIP/2.0/UDP at the flow's own address with rport) and
// Record-Route (insert-record-route-header) as the first fields and
// Max-Forwards one less (max-forwards-check); a request whose
// Max-Forwards is 0 is answered 483 by the virtual, one that carries the
// virtual's own Via 482 (loop-detection), one that would begin something
// new 503 (maintenance-mode). Responses go back to the client the request
// came from by the branch of the Via the virtual inserted (a number of
// the peer connection's), which is taken off before the response leaves;
// without Via insertion, by the client's own top Via (its sent-by and
// branch, so that clients that chose one branch do not collide on a
// shared peer connection); with honor-via disabled, by the transaction's
// Call-ID and CSeq. Provisional responses leave the request in flight;
// the final one ends it. A request no peer takes is answered 503 Service
// Unavailable when generate-response-on-failure is enabled, else
// dropped. Keep-alives (RFC 5626 CRLFCRLF) are answered CRLF.
package mrfsip

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// Session is a virtual's sip session profile, as its router applies it;
// it is the virtual's mrf.Protocol.
type Session struct {
	// InsertVia is insert-via-header; CustomVia custom-via ("": the
	// virtual's own, SIP/2.0/TCP at Host).
	InsertVia bool
	CustomVia string
	// RecordRoute is insert-record-route-header: a request that opens a
	// dialog gets the virtual's Record-Route.
	RecordRoute bool
	// MaxForwards is max-forwards-check.
	MaxForwards bool
	// Respond is generate-response-on-failure.
	Respond bool
	// MaxSize is max-msg-size and MaxHeader max-msg-header-size (0: the
	// framer's defaults).
	MaxSize, MaxHeader int
	// MaxHeaders is max-msg-header-count: a message with more header
	// fields is dropped as one the virtual cannot read (0: no bound)
	// [M: F5 bounds the count and does not say what becomes of a
	// message past it; openltm drops it, counted, as a malformed one].
	MaxHeaders int
	// Host is the virtual's address:port, for its Via and Record-Route.
	Host string
	// UDP: the virtual's own transport is UDP (its Record-Route names
	// no transport, UDP being sip:'s default).
	UDP bool
	// Salt tells this virtual's branches from another's.
	Salt uint64
	// IgnoreVia is honor-via disabled: a response goes back by the
	// router's own record of the transaction, its Call-ID and CSeq,
	// whatever the Vias say, rather than by the Via the virtual
	// inserted (or the client's own top Via) [M: F5 names the setting;
	// openltm reads it so].
	IgnoreVia bool
	// LoopDetect is loop-detection: a client's request that carries a
	// Via this virtual inserted has been here before, and is answered
	// 482 Loop Detected (RFC 3261 §16.3 step 4) [M: loose and strict
	// loop-detection-mode alike, as the virtual's branch does not say
	// what the request looked like then].
	LoopDetect bool
	// Maintenance is maintenance-mode: requests that would begin
	// something new (no To tag; not an ACK or CANCEL) are answered 503
	// Service Unavailable by the virtual, while the dialogs already up
	// go on [M: F5 names the setting, not its answer].
	Maintenance bool
	// LoopStrict is loop-detection-mode strict (route.go).
	LoopStrict bool
	// HonorRoute is honor-route-header and StrictRoute honor-route-mode
	// strict (route.go).
	HonorRoute, StrictRoute bool
	// Passthru is passthru-mode: a message the virtual cannot read as
	// SIP is forwarded as it is, one-way, rather than dropped (over
	// UDP, a datagram that is no SIP message; a TCP stream is framed by
	// its SIP head, so what cannot be read there cannot be cut into
	// messages either and ends the connection as before) [M: F5 names
	// the setting; openltm reads it so].
	Passthru bool
	// DoubleRR is record-route-mode double (session.go).
	DoubleRR bool
	// AllowUnknown is allow-unknown-methods (session.go).
	AllowUnknown bool

	via, rr []byte
	loop    []byte
	// self is Host as an address, for the Route values that name the
	// virtual.
	self netip.AddrPort
}

// New readies s (its Via and Record-Route lines) and returns it.
func New(s *Session) *Session {
	s.via = s.viaPrefix()
	if s.RecordRoute {
		s.rr = appendRR(nil, s.Host, s.UDP)
	}
	s.loop = []byte("branch=" + s.mark())
	s.self, _ = netip.ParseAddrPort(s.Host)
	return s
}

// Name is the protocol's name to MR::protocol.
func (s *Session) Name() string { return "sip" }

func (s *Session) String() string {
	return fmt.Sprintf("%t %q %t %t %t %d %d %q %d %t %t %t %t %t %t %t %t %d %t %t", s.InsertVia, s.CustomVia, s.RecordRoute, s.MaxForwards, s.Respond, s.MaxSize, s.MaxHeader, s.Host, s.Salt,
		s.UDP, s.IgnoreVia, s.LoopDetect, s.Maintenance, s.LoopStrict, s.HonorRoute, s.StrictRoute, s.Passthru, s.MaxHeaders, s.DoubleRR, s.AllowUnknown)
}

// mark is the start of the branch of every Via the virtual inserts.
func (s *Session) mark() string {
	return "z9hG4bK-ltm" + strconv.FormatUint(s.Salt&0xffffffff, 36) + "-"
}

// viaPrefix is the Via line up to the branch's number.
func (s *Session) viaPrefix() []byte {
	v := "Via: SIP/2.0/TCP " + s.Host
	if s.CustomVia != "" {
		v = "Via: " + strings.TrimSpace(s.CustomVia)
	}
	return []byte(v + ";branch=" + s.mark())
}

// NewFramer cuts the stream on Content-Length (the TCP proxy's framer).
func (s *Session) NewFramer() mrf.Framer {
	return &mblb.SIPFramer{Max: s.MaxSize, MaxHeader: s.MaxHeader}
}

// Classify: a response answers the request its top Via's branch names
// (final from 200 on); an ACK is a request with no answer.
func (s *Session) Classify(data []byte) mrf.Class {
	m, err := sipmsg.Parse(data)
	if err != nil {
		if s.Passthru {
			return mrf.Class{OneWay: true}
		}
		return mrf.Class{Bad: true}
	}
	if s.MaxHeaders > 0 && headerCount(data) > s.MaxHeaders {
		return mrf.Class{Bad: true}
	}
	if m.Request {
		return mrf.Class{OneWay: string(m.Method) == "ACK"}
	}
	return mrf.Class{Answer: true, Final: m.Code >= 200, Key: s.key(&m, false)}
}

// key is the key of a message's transaction: the number of the branch
// the virtual inserted (ours: the top Via is the virtual's, on a
// response coming back), else a hash of the top Via's sent-by and branch.
func (s *Session) key(m *sipmsg.Message, request bool) uint64 {
	if s.IgnoreVia {
		return txKey(m)
	}
	br := m.Branch()
	if s.InsertVia && !request {
		mark := s.mark()
		if len(br) > len(mark) && string(br[:len(mark)]) == mark {
			num := br[len(mark):]
			if i := bytes.IndexByte(num, '.'); i >= 0 {
				num = num[:i] // loop-detection-mode strict's hash follows
			}
			if n, err := strconv.ParseUint(string(num), 36, 64); err == nil {
				return n
			}
		}
	}
	// The client's own Via: its sent-by as well as its branch, so that
	// two clients that chose one branch on a shared peer connection do
	// not take each other's responses (the parameters a server adds,
	// received and rport, are left out).
	h := uint64(14695981039346656037)
	via := m.TopVia()
	if i := bytes.IndexByte(via, ';'); i >= 0 {
		via = via[:i]
	}
	for _, b := range [2][]byte{bytes.TrimSpace(via), br} {
		for _, c := range b {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return h | 1<<63 // never a connection's request number
}

// txKey is the key of a message's transaction by the router's own
// record (honor-via disabled): its Call-ID and CSeq, which a response
// copies from its request (RFC 3261 §8.2.6.2).
func txKey(m *sipmsg.Message) uint64 {
	h := uint64(14695981039346656037)
	id, _ := m.Header(sipmsg.CallID)
	cseq, _ := m.Header(sipmsg.CSeq)
	for _, b := range [2][]byte{id, cseq} {
		for _, c := range bytes.TrimSpace(b) {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return h | 1<<63
}

// CallID is a request's Call-ID, for the session profile's persistence
// by Call-ID (a CANCEL, an ACK and the later requests of a call carry
// their INVITE's).
func (s *Session) CallID(data []byte) []byte {
	m, err := sipmsg.Parse(data)
	if err != nil {
		return nil
	}
	v, _ := m.Header(sipmsg.CallID)
	return bytes.TrimSpace(v)
}

// Local answers a keep-alive, and a client's request whose Max-Forwards
// is 0 (483 Too Many Hops) under max-forwards-check.
func (s *Session) Local(dst, data []byte, fromPeer bool) ([]byte, bool, bool) {
	if sipmsg.IsKeepAlive(data) {
		if len(data) >= 4 {
			return append(dst, "\r\n"...), true, false
		}
		return nil, true, false
	}
	if fromPeer || !s.MaxForwards && !s.LoopDetect && !s.Maintenance && s.AllowUnknown {
		return nil, false, false
	}
	m, err := sipmsg.Parse(data)
	if err != nil || !m.Request || string(m.Method) == "ACK" {
		return nil, false, false
	}
	if !s.AllowUnknown && !knownMethod(m.Method) {
		return append(dst, rejectUnknown(&m)...), true, false
	}
	if s.LoopDetect && s.looped(&m) {
		return append(dst, sipmsg.Reject(&m, 482, "Loop Detected")...), true, false
	}
	if s.MaxForwards {
		if n, ok := m.MaxForwardsValue(); ok && n == 0 {
			return append(dst, sipmsg.Reject(&m, 483, "Too Many Hops")...), true, false
		}
	}
	if s.Maintenance && string(m.Method) != "CANCEL" && !m.HasToTag() {
		return append(dst, sipmsg.Reject(&m, 503, "Service Unavailable")...), true, false
	}
	return nil, false, false
}

// looped says whether a request carries a Via this virtual inserted
// (its branch's mark), in any Via field.
func (s *Session) looped(m *sipmsg.Message) bool {
	for i := 0; i < maxVias; i++ {
		v, ok := m.HeaderAt(sipmsg.Via, i)
		if !ok {
			return false
		}
		if at := bytes.Index(v, s.loop); at >= 0 {
			if !s.LoopStrict || s.sameLoopHash(m, v, at, i) {
				return true
			}
		}
	}
	return false
}

// maxVias bounds the Via fields loop detection reads.
const maxVias = 70

// Route fields: from-uri, to-uri, request-uri, most specific last.
const (
	KeyFrom = iota
	KeyTo
	KeyRequest
)

// RouteKeys are a request's From and To URIs and Request-URI (views of
// its bytes).
func (s *Session) RouteKeys(msg *mrf.Message) mrf.RouteKeys {
	var k mrf.RouteKeys
	m, err := sipmsg.Parse(msg.Data)
	if err != nil || !m.Request {
		return k
	}
	if v, ok := m.Header(sipmsg.From); ok {
		k[KeyFrom] = mrf.BytesKey(sipmsg.AddrOfRecord(v))
	}
	if v, ok := m.Header(sipmsg.To); ok {
		k[KeyTo] = mrf.BytesKey(sipmsg.AddrOfRecord(v))
	}
	k[KeyRequest] = mrf.BytesKey(m.URI)
	return k
}

// MatchKey compares a route's URI with a message's, ignoring case and
// the message's URI parameters; a route's value without a scheme matches
// the URI's user@host, its user or its host alone [M: F5 documents the
// fields, not how they match].
func (s *Session) MatchKey(_ int, route, msg string) bool {
	u := msg
	if i := strings.IndexByte(u, ';'); i >= 0 {
		u = u[:i]
	}
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	if strings.EqualFold(route, u) {
		return true
	}
	if strings.Contains(route, ":") {
		return false
	}
	rest := u
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.EqualFold(route, rest) {
		return true
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		if strings.EqualFold(route, rest[:i]) {
			return true
		}
		rest = rest[i+1:]
	}
	return strings.EqualFold(route, rest)
}

// Outbound is a request as the virtual forwards it on a TCP
// connection: OutboundOn.
func (s *Session) Outbound(bufs *[2][]byte, msg *mrf.Message, seq uint64) ([]byte, uint64) {
	return s.OutboundOn(nil, bufs, msg, seq)
}

// OutboundOn is a request as the virtual forwards it on link l (nil: a
// TCP connection): its Via, a Record-Route when it opens a dialog,
// Max-Forwards one less. Over UDP the Via is "SIP/2.0/UDP" at the
// flow's own address, with rport (RFC 3581), so that the peer's
// responses come back to the flow that sent the request.
func (s *Session) OutboundOn(link *mrf.Link, bufs *[2][]byte, msg *mrf.Message, seq uint64) ([]byte, uint64) {
	m, err := sipmsg.Parse(msg.Data)
	if err != nil {
		return append(bufs[0][:0], msg.Data...), 0
	}
	if s.HonorRoute && m.Request {
		if b := s.reroute(&m); b != nil {
			m, _ = sipmsg.Parse(b)
		}
	}
	var lines [3][]byte
	n := 0
	key := seq
	if s.InsertVia {
		var l []byte
		if link != nil && link.UDP && s.CustomVia == "" {
			l = append(bufs[1][:0], "Via: SIP/2.0/UDP "...)
			l = link.Local.AppendTo(l)
			l = append(l, ";rport;branch="...)
			l = append(l, s.loop[len("branch="):]...)
		} else {
			l = append(bufs[1][:0], s.via...)
		}
		l = strconv.AppendUint(l, seq, 36)
		if s.LoopDetect && s.LoopStrict && m.Request {
			l = append(l, '.')
			top, _ := m.Header(sipmsg.Via)
			l = strconv.AppendUint(l, loopHash(&m, sipmsg.FirstValue(top)), 36)
		}
		l = append(l, "\r\n"...)
		bufs[1] = l
		lines[n] = l
		n++
	}
	if !s.InsertVia || s.IgnoreVia {
		key = s.key(&m, true)
	}
	if s.rr != nil && sipmsg.OpensDialog(&m) {
		if s.DoubleRR && link != nil && s.crosses(link) {
			// The peer's side first: the UAS's route set starts with
			// it, the UAC's (reversed) with the client's side.
			lines[n] = s.peerRR(link)
			n++
		}
		lines[n] = s.rr
		n++
	}
	bufs[0] = sipmsg.AppendForward(bufs[0][:0], &m, s.MaxForwards && m.Request, lines[:n]...)
	return bufs[0], key
}

// Inbound takes the virtual's Via off a response going back.
func (s *Session) Inbound(a *mrf.Message, _ *mrf.Message) {
	if !s.InsertVia {
		return
	}
	m, err := sipmsg.Parse(a.Data)
	if err != nil || !bytes.HasPrefix(m.Branch(), []byte(s.mark())) {
		return
	}
	a.Data = sipmsg.AppendWithoutTopVia(a.Data[:0], &m)
}

// Open: SIP has no handshake.
func (s *Session) Open(net.Conn, *mrf.Reader) error { return nil }

// Failed is 503 Service Unavailable under generate-response-on-failure
// [M: F5 names the setting, not the code].
func (s *Session) Failed(msg *mrf.Message) []byte {
	if !s.Respond {
		return nil
	}
	m, err := sipmsg.Parse(msg.Data)
	if err != nil || !m.Request || string(m.Method) == "ACK" {
		return nil
	}
	return sipmsg.Reject(&m, 503, "Service Unavailable")
}

// headerCount is the number of header lines of a message's head (a
// folded field's continuation lines counted as lines).
func headerCount(data []byte) int {
	head := data
	if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 {
		head = data[:i+2]
	}
	return max(bytes.Count(head, []byte("\r\n"))-1, 0)
}
