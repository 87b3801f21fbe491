package mblb

import (
	"bytes"
	"errors"
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/sipmsg"
)

// SIP sessions. SIP is not one answer per request: an INVITE gets
// provisional answers before its final one, an ACK gets none, and a
// member may send requests of its own (a BYE) down the connection. So a
// SIP client is not served by the ordered response queue: every client
// has its own connection to each member it sends to, and whatever a
// member sends on that connection goes to that client as it comes
// ("responses return on the connection their request took" [M]), while
// each request the client sends is balanced by itself:
//
//   - a CANCEL, or the ACK of a failed INVITE, goes where its INVITE went
//     (the same top Via branch, RFC 3261 §9.1 and §17.1.1.3);
//   - a response the client sends goes back to the connection whose
//     member sent the request (by its top Via branch); one that matches
//     none is balanced as a request is, so sip_info persistence still
//     finds the dialog's member;
//   - every other request asks Pick, with the sip_info key (Call-ID by
//     default) when the virtual persists on it;
//   - a keep-alive (CRLFCRLF) is answered with CRLF by the proxy and goes
//     to no member (RFC 5626 §4.4.1) [M].
//
// Sessions run on goroutines, never on event loops.
//
// With a SIPRuleHandler every request (either way) runs SIP_REQUEST and
// every response SIP_RESPONSE before it is routed: the rule may edit the
// message, discard it, or answer a request itself (SIP::respond; the
// request still goes on unless the rule also discards it [M]). Around
// each write of a message to its peer (send) run SIP_REQUEST_SEND or
// SIP_RESPONSE_SEND, which may still edit or discard it, and after it
// SIP_REQUEST_DONE or SIP_RESPONSE_DONE.

// SIPRuleHandler runs a SIP virtual's iRules over each message. Calls
// come from the client's reader and its server connections' readers; the
// handler orders them itself.
type SIPRuleHandler interface {
	// OnSIPRequest runs SIP_REQUEST.
	OnSIPRequest(x *SIPEvent) error
	// OnSIPResponse runs SIP_RESPONSE.
	OnSIPResponse(x *SIPEvent) error
	// OnSIPSend runs SIP_REQUEST_SEND or SIP_RESPONSE_SEND (request
	// says which) as x's message is about to leave, its destination
	// known; with done, SIP_REQUEST_DONE or SIP_RESPONSE_DONE once it
	// has left. Only the send events may edit or discard the message.
	OnSIPSend(x *SIPEvent, request, done bool) error
	// SIPSends says whether the rules handle a send or a done event,
	// asked once per client so that a message pays nothing for events
	// no rule handles.
	SIPSends() (send, done bool)
}

// SIPEvent is one SIP message as its rule sees and changes it.
type SIPEvent struct {
	msg, out, reply []byte
	edited, discard bool
	fromClient      bool
	target          Target
	persist         string
	persistSet      bool
	server          netip.AddrPort
}

// Server is the member a message of a send or done event goes to or
// came from; invalid for a message to or from the client only.
func (x *SIPEvent) Server() netip.AddrPort { return x.server }

// Message is the message the event is about.
func (x *SIPEvent) Message() []byte { return x.msg }

// FromClient tells a message of the client from one of a member.
func (x *SIPEvent) FromClient() bool { return x.fromClient }

// Replace sends b instead of the message (header edits): b must be one
// whole SIP message.
func (x *SIPEvent) Replace(b []byte) { x.out, x.edited = b, true }

// Select sends a request of the client to t instead of the member
// balancing would choose (`pool`, `pool … member`, `node` in
// SIP_REQUEST).
func (x *SIPEvent) Select(t Target) { x.target = t }

// Persist keys the request's persistence on key (the proxy's encoding,
// as Choice.Persist carries it) instead of the sip_info field; "" turns
// persistence off for it (`persist none`).
func (x *SIPEvent) Persist(key string) { x.persist, x.persistSet = key, true }

// Discard drops the message (SIP::discard).
func (x *SIPEvent) Discard() { x.discard = true }

// Respond answers a request with b, sent back where the request came
// from (SIP::respond).
func (x *SIPEvent) Respond(b []byte) { x.reply = b }

// sipTxnLimit bounds the transactions a SIP session remembers; past it
// about half of them, chosen at random, are forgotten (a CANCEL for one
// of them is then balanced). An INVITE answered 2xx is remembered until
// then: its ACK has a branch of its own.
const sipTxnLimit = 4096

// sipSession is one SIP client connection's routing state.
type sipSession struct {
	s   *ClientConn
	wmu sync.Mutex // one write at a time to the client
	smu sync.Mutex // one write at a time to the members

	mu sync.Mutex // guards the maps and sticky
	// invites maps the branch of the client's INVITEs to their member,
	// for their CANCEL and ACK.
	invites map[string]MemberID
	// served maps the branch of requests members sent to the connection
	// that carried them, for the client's responses.
	served    map[string]*serverConn
	sticky    MemberID
	hasSticky bool

	persist SIPField
	exclude []MemberID

	// proxy inserts the virtual's Via and Record-Route (sipproxy.go);
	// nil when the profile inserts neither.
	proxy *sipProxy
	// dialogs follows each dialog to its member (dialog-aware), and the
	// registrations when the profile bounds them (sipproxy.go); nil
	// when the profile does not follow dialogs. pendingAOR is the
	// registration the INVITE being balanced counts against.
	dialogs    *sipmsg.Dialogs[Member]
	pendingAOR string

	// onSend and onDone: the rules handle the send or the done events
	// (SIPRuleHandler.SIPSends), asked once.
	onSend, onDone bool
}

// runSIP is Run for a SIP virtual.
func (s *ClientConn) runSIP() error {
	e := s.e
	opt := e.cfg.Request.SIP
	ss := &sipSession{s: s, invites: map[string]MemberID{}, served: map[string]*serverConn{}}
	if opt.PersistHeader != "" {
		ss.persist = NewSIPField(opt.PersistHeader)
	}
	ss.proxy = newSIPProxy(&opt, s.local)
	if s.sipRule != nil {
		ss.onSend, ss.onDone = s.sipRule.SIPSends()
	}
	if opt.DialogAware {
		ss.dialogs = sipmsg.NewDialogs[Member](sipTxnLimit, opt.MaxRegistrations > 0 || opt.MaxSessionsPerRegistration > 0)
	}
	fr, err := e.cfg.Request.New(e.cfg.MaxMessageSize)
	if err != nil {
		s.Close(true)
		return err
	}
	st := newStream(fr, e.cfg.MaxMessageSize)
	defer st.release()
	return s.readClient(&st, "", isTooLarge, ss.fromClient, nil)
}

// writeClient sends b to the client; false when the client is gone.
func (ss *sipSession) writeClient(b []byte) bool {
	s := ss.s
	ss.wmu.Lock()
	n, err := s.c.Write(b)
	ss.wmu.Unlock()
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(n)
	}
	s.active() // what members send keeps the client's flow alive too
	if err != nil {
		if !s.isClosed() {
			s.Close(true)
		}
		return false
	}
	return true
}

var sipPong = []byte("\r\n")

// fromClient routes one framed message of the client; false when the
// session ended.
func (ss *sipSession) fromClient(b []byte) bool {
	s, e := ss.s, ss.s.e
	if IsSIPKeepAlive(b) {
		if bytes.Contains(b, []byte("\r\n\r\n")) {
			return ss.writeClient(sipPong)
		}
		return true
	}
	m, err := ParseSIP(b)
	if err != nil {
		e.logf("mblb: client %s: %v, reset", s.client, err)
		s.Close(true)
		return false
	}
	s.msgsIn.Add(1)
	e.stats.messages.Add(1)
	received := b // as the client sent it, for the clones
	var target Target
	var rp *SIPEvent // the rule's persist decision, when it made one
	if s.sipRule != nil {
		x := SIPEvent{msg: b, fromClient: true}
		var err error
		if m.Request {
			err = s.sipRule.OnSIPRequest(&x)
		} else {
			err = s.sipRule.OnSIPResponse(&x)
		}
		if err != nil || s.isClosed() {
			if !s.isClosed() {
				s.Close(true)
			}
			return false
		}
		if x.reply != nil && !ss.writeClient(x.reply) {
			return false
		}
		if x.discard {
			return true
		}
		if x.edited {
			if m, err = ParseSIP(x.out); err != nil {
				e.logf("mblb: client %s: a rule's edit of %s is not a SIP message, reset", s.client, m.String())
				s.Close(true)
				return false
			}
			b = x.out
		}
		target = x.target
		if x.persistSet {
			rp = &x
		}
	}
	// The clone pools and a rule's clone get each message the client
	// sent: serverside with the rule's edits, before the Via and
	// Record-Route the proxy itself adds on the way to a member [M].
	if c := e.cfg.Clone; c != nil {
		c(s.client, received, b)
	}
	if s.clone != nil {
		s.clone(received, b)
	}
	branch := m.Branch()
	if !m.Request {
		ss.mu.Lock()
		sc := ss.served[string(branch)]
		if sc != nil && m.Code >= 200 {
			delete(ss.served, string(branch))
		}
		ss.mu.Unlock()
		if ss.dialogs != nil {
			ss.dialogSeen(&m)
		}
		if sc != nil && !sc.down.Load() {
			bye := e.cfg.Request.SIP.TerminateOnBye && byeDone(&m)
			if bye {
				ss.retire(sc)
			}
			ok := ss.send(sc, &m, b)
			if bye {
				ss.terminate(sc)
			}
			if ok {
				return true
			}
		}
	}
	if m.Request && (bytes.Equal(m.Method, []byte("CANCEL")) || bytes.Equal(m.Method, []byte("ACK"))) && len(branch) > 0 {
		ss.mu.Lock()
		id, ok := ss.invites[string(branch)]
		if ok && bytes.Equal(m.Method, []byte("ACK")) {
			delete(ss.invites, string(branch))
		}
		ss.mu.Unlock()
		if ok {
			if sc := s.ownConn(id); sc != nil && ss.send(sc, &m, ss.toMember(&m)) {
				return true
			}
		}
	}
	if ss.dialogs != nil && m.Request {
		ss.dialogSeen(&m)
		if ss.dialogs.Bounded() {
			if no := ss.admit(&m); no != nil {
				return ss.writeClient(no)
			}
		}
	}
	return ss.balance(&m, b, branch, target, rp)
}

// ownConn is the client's live connection to member id, or nil.
func (s *ClientConn) ownConn(id MemberID) *serverConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.conns {
		if sc.leg.Member.ID == id && !sc.down.Load() {
			return sc
		}
	}
	return nil
}

// balance sends a message to the member Pick chooses (toward a rule's
// target when it named one), choosing again when a connection cannot be
// opened or written.
func (ss *sipSession) balance(m *SIPMessage, b []byte, branch []byte, target Target, rp *SIPEvent) bool {
	s, e := ss.s, ss.s.e
	c := Choice{Client: s.client, Tag: s.tag, Target: target}
	switch {
	case rp != nil && rp.persist == "":
		c.NoPersist = true
	case rp != nil:
		c.Persist = rp.persist
	case !ss.persist.IsZero():
		if v, ok := m.Header(ss.persist); ok && len(v) > 0 {
			c.SIPKey = string(v)
		}
	}
	ss.exclude = ss.exclude[:0]
	if m.Request {
		b = ss.toMember(m)
	}
	for attempt := 0; attempt < maxPickAttempts; attempt++ {
		if s.isClosed() {
			return false
		}
		c.Exclude = ss.exclude
		var sc *serverConn
		if ss.dialogs != nil && m.Request && target.IsZero() {
			sc = ss.dialogConn(m)
		}
		ss.mu.Lock()
		sticky, has := ss.sticky, ss.hasSticky
		ss.mu.Unlock()
		if sc == nil && has && e.cfg.Request.SIP.PerConnection && target.IsZero() {
			sc = s.ownConn(sticky)
		}
		if sc == nil {
			mem, err := e.cfg.Pick(c)
			if err == nil && excluded(ss.exclude, mem.ID) {
				err = ErrNoMember
			}
			if err != nil {
				e.logf("mblb: client %s: %v for SIP %s, reset", s.client, err, m.String())
				s.Close(true)
				return false
			}
			if sc = s.ownConn(mem.ID); sc == nil {
				if sc, err = ss.dial(mem); err != nil {
					if errors.Is(err, errClosed) {
						return false
					}
					ss.exclude = append(ss.exclude, mem.ID)
					continue
				}
			}
			ss.mu.Lock()
			ss.sticky, ss.hasSticky = mem.ID, true
			ss.mu.Unlock()
		}
		if ss.dialogs != nil {
			ss.dialogBegins(m, sc.leg.Member)
		}
		if m.Request && len(branch) > 0 && bytes.Equal(m.Method, []byte("INVITE")) {
			ss.mu.Lock()
			if len(ss.invites) >= sipTxnLimit {
				sipmsg.ForgetHalf(ss.invites)
			}
			ss.invites[string(branch)] = sc.leg.Member.ID
			ss.mu.Unlock()
		}
		if ss.send(sc, m, b) {
			return true
		}
		ss.exclude = append(ss.exclude, sc.leg.Member.ID)
	}
	e.logf("mblb: client %s: no server connection after %d attempts, reset", s.client, maxPickAttempts)
	s.Close(true)
	return false
}

// dial opens the client's own connection to mem and starts its reader.
func (ss *sipSession) dial(mem Member) (*serverConn, error) {
	return ss.s.dialRouted(mem, func(sc *serverConn) { sc.sipRead(ss) })
}

// toServer writes one message to a member; false when the write failed
// (the connection is then failed and its reader reports it).
func (ss *sipSession) toServer(sc *serverConn, b []byte) bool {
	ss.smu.Lock()
	n, err := sc.conn.Write(b)
	ss.smu.Unlock()
	sc.leg.BytesOut.Add(uint64(n))
	if mt := sc.leg.Meter; mt != nil && n > 0 {
		mt.Sent(n)
	}
	if err != nil {
		sc.fail(err)
		return false
	}
	sc.ms.requests.Add(1)
	sc.leg.MsgsOut.Add(1)
	sc.leg.lastActive.Store(sc.e.now())
	return true
}

// sipRead passes what a member sends to the client that owns the
// connection, until it ends.
func (sc *serverConn) sipRead(ss *sipSession) {
	e := sc.e
	fr, _ := e.cfg.Request.New(e.cfg.MaxMessageSize)
	st := newStream(fr, e.cfg.MaxMessageSize)
	defer st.release()
	sc.readMember(&st, "SIP", func(b []byte) error {
		ss.fromServer(sc, b)
		return nil
	})
}

// fromServer hands one message of a member to the client.
func (ss *sipSession) fromServer(sc *serverConn, b []byte) {
	e := sc.e
	if IsSIPKeepAlive(b) {
		return
	}
	m, err := ParseSIP(b)
	if err != nil {
		return
	}
	sc.leg.MsgsIn.Add(1)
	if ss.proxy != nil && !m.Request {
		var own bool
		if b, own = ss.proxy.response(&m); own {
			if m, err = ParseSIP(b); err != nil {
				return
			}
		}
	}
	if s := ss.s; s.sipRule != nil {
		x := SIPEvent{msg: b}
		if m.Request {
			err = s.sipRule.OnSIPRequest(&x)
		} else {
			err = s.sipRule.OnSIPResponse(&x)
		}
		if err != nil {
			s.Close(true)
			return
		}
		if x.reply != nil {
			ss.toServer(sc, x.reply)
		}
		if x.discard {
			return
		}
		if x.edited {
			if m, err = ParseSIP(x.out); err != nil {
				e.logf("mblb: a rule's edit of a message from %s is not a SIP message, dropped", sc.leg.Member.Name)
				return
			}
			b = x.out
		}
	}
	if m.Request {
		if br := m.Branch(); len(br) > 0 {
			ss.mu.Lock()
			if len(ss.served) >= sipTxnLimit {
				sipmsg.ForgetHalf(ss.served)
			}
			ss.served[string(br)] = sc
			ss.mu.Unlock()
		}
	} else {
		sc.ms.responses.Add(1)
		e.stats.responses.Add(1)
	}
	if ss.dialogs != nil {
		ss.dialogSeen(&m)
	}
	bye := e.cfg.Request.SIP.TerminateOnBye && byeDone(&m)
	if bye {
		ss.retire(sc)
	}
	if ss.send(nil, &m, b) {
		ss.s.msgsOut.Add(1)
	}
	if bye {
		ss.terminate(sc)
	}
}

// toMember is a request of the client as its member gets it: with the
// virtual's Via and Record-Route when the profile inserts them.
func (ss *sipSession) toMember(m *SIPMessage) []byte {
	if ss.proxy == nil {
		return m.B
	}
	return ss.proxy.request(m)
}

// dialogConn is the connection to the member of the dialog a request
// belongs to (dialog-aware), nil when it is new or its member cannot be
// reached; it is then balanced.
func (ss *sipSession) dialogConn(m *SIPMessage) *serverConn {
	mem, ok := ss.dialogMember(m)
	if !ok || excluded(ss.exclude, mem.ID) {
		return nil
	}
	if sc := ss.s.ownConn(mem.ID); sc != nil {
		return sc
	}
	sc, err := ss.dial(mem)
	if err != nil {
		return nil
	}
	return sc
}

// send passes message b (m parsed from it) on to member connection sc,
// or to the client when sc is nil: SIP_REQUEST_SEND or SIP_RESPONSE_SEND
// first, where the rule may still edit or discard it (a request of the
// client then carries the profile's Via and Record-Route, the member is
// chosen), then the write, then SIP_REQUEST_DONE or SIP_RESPONSE_DONE.
// False when the write failed or the session ended; a discarded message
// counts as passed on. Without a rule handling either event it is the
// write alone.
func (ss *sipSession) send(sc *serverConn, m *SIPMessage, b []byte) bool {
	s := ss.s
	if ss.onSend {
		x := SIPEvent{msg: b, fromClient: sc != nil}
		if sc != nil {
			x.server = sc.leg.Member.Addr
		}
		if err := s.sipRule.OnSIPSend(&x, m.Request, false); err != nil || s.isClosed() {
			if !s.isClosed() {
				s.Close(true)
			}
			return false
		}
		if x.discard {
			return true
		}
		if x.edited {
			if _, err := ParseSIP(x.out); err != nil {
				s.e.logf("mblb: client %s: a rule's edit of %s is not a SIP message, reset", s.client, m.String())
				s.Close(true)
				return false
			}
			b = x.out
		}
	}
	var ok bool
	if sc != nil {
		ok = ss.toServer(sc, b)
	} else {
		ok = ss.writeClient(b)
	}
	if ok && ss.onDone {
		x := SIPEvent{msg: b, fromClient: sc != nil}
		if sc != nil {
			x.server = sc.leg.Member.Addr
		}
		if err := s.sipRule.OnSIPSend(&x, m.Request, true); err != nil || s.isClosed() {
			if !s.isClosed() {
				s.Close(true)
			}
			return false
		}
	}
	return ok
}
