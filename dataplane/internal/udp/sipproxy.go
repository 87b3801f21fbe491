package udp

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// The sip profile's proxy settings over UDP, as dataplane/mblb's
// sipproxy.go applies them over TCP; a flow (one client address and
// port) plays the part of a client connection, and a leg (its socket to
// one member) that of a member connection:
//
//   - Via (insert-via-header, secure-via-header, user-via-header): every
//     request of the client gets "Via: SIP/2.0/UDP <virtual>;branch=
//     z9hG4bKltm<salt>-<hash>" on top, the hash of the client's own top
//     Via (RFC 3261 §16.11) so that a CANCEL and the ACK of a failed
//     INVITE carry their INVITE's branch; a member's answer whose top
//     Via has the flow's salt loses it (§16.7 step 3).
//   - Record-Route (insert-record-route-header): "<sip:<virtual>;lr>"
//     on top of a request that opens a dialog (UDP is sip:'s default
//     transport, so no transport parameter [M]).
//   - terminate-on-bye: once a BYE's final answer has passed, either
//     way, the leg it took is closed and its member released; the
//     client's next request opens another.
//   - dialog-aware: a dialog (Call-ID) keeps the flow's later requests
//     on its member while that member can take them, with the same
//     timers; the registration bounds answer 503 from the virtual.
//
// The CANCEL and ACK of an INVITE follow it by branch, and the client's
// answers to a member's request go back to that member's leg, as over
// TCP. Without any setting (terminate-on-bye disabled too) a flow has no
// sipState and a datagram costs a nil check.

// sipTxnLimit bounds each map of a flow's SIP state; past it about half
// is forgotten.
const sipTxnLimit = 4096

// sipState is one flow's SIP proxy state. The listener's reader handles
// the client's datagrams and the legs' goroutines their members'; mu
// guards the maps.
type sipState struct {
	cfg  *config.SIPDatagram
	via  []byte // "Via: ...;branch=" and the mark, nil for none
	mark []byte
	rr   []byte // the Record-Route line, nil for none
	salt uint64

	mu sync.Mutex
	// The client's INVITEs by branch, for CANCEL and ACK, and the
	// members' requests by branch, for the client's answers; made at
	// the first of each.
	invites map[string]*leg
	served  map[string]*leg
	// dialogs follows each dialog to its member (dialog-aware), and the
	// registrations when the profile bounds them; nil without.
	dialogs *sipmsg.Dialogs[sipDialog]

	// The reader's alone: the registration the INVITE being balanced
	// counts against, and the dialog member it should go to.
	pendingAOR string
	dlg        sipDialog
	dlgPick    func() (*state.Pool, *state.Member)
	// dropped is set when terminate-on-bye closed a leg, for the reader
	// to take it out of the flow's list.
	dropped atomic.Bool
}

// sipDialog is the member a dialog-aware flow keeps a dialog on.
type sipDialog struct {
	pool *state.Pool
	mem  *state.Member
}

// newSIPState is a flow's SIP state, nil when the profile sets none of
// the proxy settings.
func newSIPState(sc *config.SIPDatagram, local string) *sipState {
	if sc == nil || !sc.Proxies() {
		return nil
	}
	p := &sipState{cfg: sc, salt: rand.Uint64()}
	if sc.Via || sc.SecureVia || sc.UserVia != "" {
		p.via, p.mark = sipmsg.ProxyVia(p.salt, sc.UserVia, sc.SecureVia, "UDP", local)
	}
	if sc.RecordRoute {
		if sc.SecureVia {
			p.rr = []byte("Record-Route: <sips:" + local + ";lr>\r\n")
		} else {
			p.rr = []byte("Record-Route: <sip:" + local + ";lr>\r\n")
		}
	}
	if sc.DialogAware {
		p.dialogs = sipmsg.NewDialogs[sipDialog](sipTxnLimit, sc.MaxRegistrations > 0 || sc.MaxSessionsPerRegistration > 0)
		p.dlgPick = func() (*state.Pool, *state.Member) { return p.dlg.pool, p.dlg.mem }
	}
	return p
}

// sipClient handles a client's message before it is balanced: true when
// it was dealt with (answered by the virtual, or sent to the leg it
// belongs to), false to balance it. For a request of a known dialog it
// readies the dialog's member for pickOnce.
func (f *flow) sipClient(m *sipmsg.Message) bool {
	p := f.sip
	branch := m.Branch()
	if !m.Request {
		if p.dialogs != nil {
			p.dialogSeen(m)
		}
		p.mu.Lock()
		lg := p.served[string(branch)]
		if lg != nil && m.Code >= 200 {
			delete(p.served, string(branch))
		}
		p.mu.Unlock()
		if lg == nil || lg.gone.Load() {
			return false
		}
		f.sipSend(lg, m.B)
		if p.cfg.TerminateOnBye && byeDone(m) {
			f.dropLeg(lg)
		}
		return true
	}
	if meth := string(m.Method); (meth == "CANCEL" || meth == "ACK") && len(branch) > 0 {
		p.mu.Lock()
		lg := p.invites[string(branch)]
		if lg != nil && meth == "ACK" {
			delete(p.invites, string(branch))
		}
		p.mu.Unlock()
		if lg != nil && !lg.gone.Load() {
			f.sipSend(lg, p.request(m))
			return true
		}
	}
	if p.dialogs != nil {
		p.dialogSeen(m)
		if p.dialogs.Bounded() {
			if no := p.admit(m); no != nil {
				f.toClient(no)
				return true
			}
		}
		p.dlg = p.dialogOf(m)
	}
	return false
}

// sipSend sends a client's message to a leg at once, as the member
// gets it.
func (f *flow) sipSend(lg *leg, b []byte) {
	b, ok := f.sipOut(lg, b)
	if !ok {
		return
	}
	if lg.member != nil {
		lg.member.Stats.Requests.Add(1)
		lg.member.Node.Stats.Requests.Add(1)
		lg.pool.Stats.Requests.Add(1)
	}
	if f.clone != nil {
		f.clone.Server(b)
	}
	lg.send(b)
	f.sipSent(lg, b)
}

// sipChosen notes the leg a client's request was balanced to (its
// dialog, its INVITE's branch) and returns the request as the member
// gets it.
func (f *flow) sipChosen(m *sipmsg.Message, lg *leg) []byte {
	p := f.sip
	p.dlg = sipDialog{}
	if !m.Request {
		return m.B
	}
	if string(m.Method) == "INVITE" {
		if br := m.Branch(); len(br) > 0 {
			p.mu.Lock()
			if p.invites == nil {
				p.invites = map[string]*leg{}
			} else if len(p.invites) >= sipTxnLimit {
				sipmsg.ForgetHalf(p.invites)
			}
			p.invites[string(br)] = lg
			p.mu.Unlock()
		}
	}
	if p.dialogs != nil && lg.member != nil {
		p.dialogBegins(m, lg)
	}
	p.pendingAOR = ""
	return p.request(m)
}

// unchosen forgets the request no member took: its dialog, and the
// session admit counted for it.
func (p *sipState) unchosen() {
	p.dlg = sipDialog{}
	if p.pendingAOR == "" {
		return
	}
	p.mu.Lock()
	p.dialogs.Release(p.pendingAOR)
	p.mu.Unlock()
	p.pendingAOR = ""
}

// request is a client's request with the virtual's Via and Record-Route
// on top, when the profile inserts them: a copy, since the datagram
// waits in the batch until it is sent.
func (p *sipState) request(m *sipmsg.Message) []byte {
	line := make([]byte, 0, len(p.via)+16) // the hash in base 36 and CRLF
	out, _ := sipmsg.ProxyRequest(nil, &line, p.via, p.rr, p.salt, m)
	return out
}

// fromMember is a member's datagram as the client gets it (without the
// flow's Via), and whether it is a BYE's final answer after which
// terminate-on-bye closes the leg. A datagram that is not a SIP message
// goes as it is.
func (p *sipState) fromMember(lg *leg, b []byte) ([]byte, bool) {
	if sipmsg.IsKeepAlive(b) {
		return b, false
	}
	m, err := sipmsg.Parse(b)
	if err != nil {
		return b, false
	}
	if !m.Request {
		if p.via != nil && bytes.HasPrefix(m.Branch(), p.mark) {
			b = sipmsg.AppendWithoutTopVia(make([]byte, 0, len(b)), &m)
			if m, err = sipmsg.Parse(b); err != nil {
				return b, false
			}
		}
	} else if br := m.Branch(); len(br) > 0 {
		p.mu.Lock()
		if p.served == nil {
			p.served = map[string]*leg{}
		} else if len(p.served) >= sipTxnLimit {
			sipmsg.ForgetHalf(p.served)
		}
		p.served[string(br)] = lg
		p.mu.Unlock()
	}
	if p.dialogs != nil {
		p.dialogSeen(&m)
	}
	return b, p.cfg.TerminateOnBye && byeDone(&m)
}

// dropLeg closes a leg once its BYE was answered (terminate-on-bye): its
// socket, its member's count, its record in the flow; the reader takes
// it out of the flow's list before its next choice.
func (f *flow) dropLeg(lg *leg) {
	if f.retireLeg(lg) {
		f.closeLeg(lg)
	}
}

// retireLeg marks a leg closed for the reader's next choice; false when
// it was already. A member's BYE answer retires its leg before it goes
// to the client, and closeLeg closes it after: the client's next
// request, sent once it has the answer, is never given to a leg about
// to close, which would lose that request's answers.
func (f *flow) retireLeg(lg *leg) bool {
	if !lg.gone.CompareAndSwap(false, true) {
		return false
	}
	f.sip.dropped.Store(true)
	return true
}

// closeLeg closes a retired leg and gives back what it held.
func (f *flow) closeLeg(lg *leg) {
	lg.conn.Close()
	lg.release()
	f.RemoveLeg(&lg.rec)
}

// pruneLegs takes the legs terminate-on-bye closed out of the flow's
// list; the reader alone calls it.
func (f *flow) pruneLegs() {
	if f.sip == nil || !f.sip.dropped.Swap(false) {
		return
	}
	f.mu.Lock()
	keep := f.legs[:0:0]
	for _, lg := range f.legs {
		if !lg.gone.Load() {
			keep = append(keep, lg)
		}
	}
	f.legs = keep
	f.mu.Unlock()
	if lg := f.last.Load(); lg != nil && lg.gone.Load() {
		f.last.Store(nil)
	}
	p := f.sip
	p.mu.Lock()
	for k, lg := range p.invites {
		if lg.gone.Load() {
			delete(p.invites, k)
		}
	}
	for k, lg := range p.served {
		if lg.gone.Load() {
			delete(p.served, k)
		}
	}
	p.mu.Unlock()
}

// byeDone reports a BYE's final answer: the end of the BYE transaction.
func byeDone(m *sipmsg.Message) bool {
	return !m.Request && m.Code >= 200 && string(m.CSeqMethod()) == "BYE"
}

// dialogOf is the dialog a request of the client belongs to, its member
// nil when none is known (or it was forgotten).
func (p *sipState) dialogOf(m *sipmsg.Message) sipDialog {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, _ := p.dialogs.Member(m, time.Now().UnixNano())
	return d
}

// dialogBegins remembers the member a request that opens a dialog went
// to, for dialog-establishment-timeout.
func (p *sipState) dialogBegins(m *sipmsg.Message, lg *leg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialogs.Begin(m, sipDialog{pool: lg.pool, mem: lg.member}, p.pendingAOR, p.cfg.DialogTimeout, time.Now().UnixNano())
}

// dialogSeen follows a dialog through a message either way
// (sipmsg.Dialogs.Seen, sip-session-timeout once established).
func (p *sipState) dialogSeen(m *sipmsg.Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialogs.Seen(m, p.cfg.SessionTimeout, time.Now().UnixNano())
}

// admit applies the registration bounds to a request of the client, as
// over TCP (sipmsg.Registrar): nil lets it go on, otherwise the
// virtual's 503 answer.
func (p *sipState) admit(m *sipmsg.Message) []byte {
	opt := p.cfg
	lim := sipmsg.RegLimits{Max: opt.MaxRegistrations, Timeout: opt.RegistrationTimeout, SessionsPer: opt.MaxSessionsPerRegistration}
	p.mu.Lock()
	defer p.mu.Unlock()
	no, aor := p.dialogs.Admit(m, lim, time.Now().UnixNano())
	if aor != "" {
		p.pendingAOR = aor
	}
	return no
}
