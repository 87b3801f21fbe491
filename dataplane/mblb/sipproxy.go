package mblb

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/sipmsg"
)

// The sip profile's proxy settings (SIPOptions): the Via and
// Record-Route the virtual inserts, dialogs followed to their member,
// and BYE ending a connection. None of them costs a message anything
// while it is off: each is one nil or false check.
//
// Via (insert-via-header, RFC 3261 §16.6 step 8): every request of a
// client gets "Via: SIP/2.0/TCP <virtual>;branch=z9hG4bKltm<salt><hash>"
// on top. The branch is computed, as a stateless proxy's is (§16.11),
// from the client's own top Via, so a CANCEL and the ACK of a failed
// INVITE, which repeat their INVITE's Via, get the INVITE's branch and
// the member matches them; the salt is the client connection's, random.
// A member's response whose top Via carries that salt has it taken off
// (§16.7 step 3) before the client gets it. secure-via-header names TLS
// as the transport (SIP/2.0/TLS) [M: the Via is inserted when either
// setting is enabled]; user-via-header replaces the sent-protocol and
// sent-by with the user's text, the branch still added [M]. Requests a
// member sends toward the client get no Via [M].
//
// Record-Route (insert-record-route-header, §16.6 step 4): a request
// that opens a dialog (INVITE, SUBSCRIBE or REFER without a To tag) gets
// "Record-Route: <sip:<virtual>;transport=tcp;lr>" (sips: with
// secure-via-header) on top, so the dialog's later requests come back
// through the virtual.

// sipProxy is a client's Via and Record-Route, made once when its
// connection opens.
type sipProxy struct {
	via  []byte // "Via: ...;branch=" and the mark
	mark []byte // the branch's start that marks the proxy's own Via
	rr   []byte // the Record-Route line, nil for none
	salt uint64
	// out and line are the client reader's scratch: one message at a
	// time is edited, and written before the next is read.
	out, line []byte
}

// newSIPProxy is the client's Via and Record-Route, nil when the
// virtual inserts neither.
func newSIPProxy(opt *SIPOptions, local netip.AddrPort) *sipProxy {
	via := opt.Via || opt.SecureVia || opt.UserVia != ""
	if !via && !opt.RecordRoute {
		return nil
	}
	p := &sipProxy{salt: rand.Uint64()}
	host := local.String()
	if via {
		p.via, p.mark = sipmsg.ProxyVia(p.salt, opt.UserVia, opt.SecureVia, "TCP", host)
	}
	if opt.RecordRoute {
		if opt.SecureVia {
			p.rr = []byte("Record-Route: <sips:" + host + ";lr>\r\n")
		} else {
			p.rr = []byte("Record-Route: <sip:" + host + ";transport=tcp;lr>\r\n")
		}
	}
	return p
}

// request is a client's request as the member gets it.
func (p *sipProxy) request(m *SIPMessage) []byte {
	out, edited := sipmsg.ProxyRequest(p.out[:0], &p.line, p.via, p.rr, p.salt, m)
	if edited {
		p.out = out // kept for the next request's append
	}
	return out
}

// response is a member's response without the proxy's Via, and whether
// it had one. Member connections read on goroutines of their own, so
// the copy is new.
func (p *sipProxy) response(m *SIPMessage) ([]byte, bool) {
	if p.via == nil || !bytes.HasPrefix(m.Branch(), p.mark) {
		return m.B, false
	}
	return sipmsg.AppendWithoutTopVia(make([]byte, 0, len(m.B)), m), true
}

// dialogMember is the member of the dialog (by Call-ID) a request of the
// client belongs to.
func (ss *sipSession) dialogMember(m *SIPMessage) (Member, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.dialogs.Member(m, time.Now().UnixNano())
}

// dialogBegins remembers the member a request that opens a dialog goes
// to, for dialog-establishment-timeout.
func (ss *sipSession) dialogBegins(m *SIPMessage, mem Member) {
	aor := ss.pendingAOR
	ss.pendingAOR = ""
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.dialogs.Begin(m, mem, aor, ss.s.e.cfg.Request.SIP.DialogTimeout, time.Now().UnixNano())
}

// dialogSeen follows a dialog through a message either way
// (sipmsg.Dialogs.Seen, sip-session-timeout once established).
func (ss *sipSession) dialogSeen(m *SIPMessage) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.dialogs.Seen(m, ss.s.e.cfg.Request.SIP.SessionTimeout, time.Now().UnixNano())
}

// byeDone reports a final answer to a BYE: the end of the BYE
// transaction, when terminate-on-bye ends the connection.
func byeDone(m *SIPMessage) bool {
	return !m.Request && m.Code >= 200 && string(m.CSeqMethod()) == "BYE"
}

// retire keeps every new request of the client off sc, a connection
// the BYE's final answer about to be relayed ends (terminate-on-bye):
// the peer may send its next request the moment it has the answer, and
// that request must open a connection of its own rather than go down
// this one while it closes, whose answers would never be read. With
// per-connection the whole client ends instead, as terminate says.
func (ss *sipSession) retire(sc *serverConn) {
	if !ss.s.e.cfg.Request.SIP.PerConnection {
		sc.down.Store(true)
	}
}

// terminate ends the connection a BYE's transaction took
// (terminate-on-bye): the member's, or the client's when the virtual
// balances the connection once.
func (ss *sipSession) terminate(sc *serverConn) {
	if ss.s.e.cfg.Request.SIP.PerConnection {
		ss.s.Close(false)
		return
	}
	sc.shutdown()
}

// Registrations (max-registrations, max-sessions-per-registration,
// registration-timeout; with dialog-aware only [M: BIG-IP shows them
// among the dialog settings]). A REGISTER of the client names an
// address of record (its To URI): Expires 0 (or a Contact of "*")
// removes it, any other refreshes it or, past max-registrations live
// ones, is answered 503 Service Unavailable by the virtual [M: BIG-IP's
// answer is not known]. A registration lasts what it asks
// (sipmsg.RegisterExpires: its Contacts' expires parameters, else its
// Expires field, else 3600, RFC 3261 §10.2.1.1), at most
// registration-timeout; expires=0 ends it like Expires: 0. An
// INVITE from a registered address (its From URI) opens one of that
// registration's sessions until the dialog ends (its BYE answered, its
// INVITE failed, or forgotten by the dialog timers); past
// max-sessions-per-registration it is answered 503 too. A request from
// an address not registered here is not bounded [M].

// admit applies the registration bounds to a request of the client: nil
// lets it go on, otherwise the answer the virtual sends instead.
func (ss *sipSession) admit(m *SIPMessage) []byte {
	opt := &ss.s.e.cfg.Request.SIP
	lim := sipmsg.RegLimits{Max: opt.MaxRegistrations, Timeout: opt.RegistrationTimeout, SessionsPer: opt.MaxSessionsPerRegistration}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	no, aor := ss.dialogs.Admit(m, lim, time.Now().UnixNano())
	if aor != "" {
		ss.pendingAOR = aor
	}
	return no
}
