package udp

import (
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules"
)

// Message routing on a UDP virtual (a sip session and sip router
// profile, or a generic protocol and router profile, beside its udp
// profile): each client datagram is one message (RFC 3261 §18.3) of the flow's session of the virtual's router (dataplane/mrf),
// the flow playing the part a client connection plays on a TCP virtual:
// its client's address and port name it, it lasts the udp profile's
// idle-timeout, and what the router answers it (the peers' responses,
// the protocol's own, the rules') goes to that client from the
// virtual's address. Requests are routed as on TCP (the router's
// routes, MR::message route, SIP::route, the virtual's pool,
// persistence), over peer flows the router keeps (UDP, as the virtual's
// own transport or a peer's transport-config says; a transport-config
// with a tcp profile makes them TCP connections). The rules' events run
// as on TCP (internal/l4/mrf.go): the protocol's ingress event and
// MR_INGRESS; MR_EGRESS and the protocol's egress
// event on what goes back; MR_FAILED. The flow's legs, balancing and
// the sip profile's datagram path are not used. An answer due once the
// flow has ended still goes to its client's address unless the session
// profile has do-not-connect-back enabled (mrf.Config.ConnectBack). A datagram costs what
// the router's session costs (one copy of the message, kept while its
// request is in flight); a flow without the profiles, a nil check.

// newMRFSession is the flow's session of its virtual's router, nil
// when the virtual routes no messages.
func newMRFSession(f *flow) *mrf.Session {
	cfg := f.snap.Cfg.MRF
	if cfg == nil || f.l.e.env.MRFRouter == nil {
		return nil
	}
	r := f.l.e.env.MRFRouter(f.vs.Name, cfg, &f.vs.Prof.MRF)
	var hooks mrf.Hooks
	if f.rs != nil {
		if prog := irules.Program(f.snap.Cfg.Rules); prog != nil && irules.HandlesMRF(prog) {
			h := &mrfHooks{f: f, prog: prog, r: r, transport: "virtual " + f.vs.Name, proto: irules.MRFProtocol(cfg)}
			if prog.Clones() {
				f.mrh = h // clone.go: a clone in the ingress events
			}
			hooks = h
		}
	}
	s := r.NewSession(f.mrfWrite, hooks)
	if cfg.Persist == mrf.PersistSrcAddr {
		s.SetClient(f.Client.Addr())
	}
	if cfg.Translates() { // an lsn pool: the flow's client is the subscriber of the peer flows its messages open
		s.SetSubscriber(f.Client)
	}
	return s
}

// mrfWrite sends a message to the flow's client: the router's write,
// from any peer flow's goroutine (the session serializes them). An
// answer keeps the flow alive as a client's datagram does. Once the
// flow has ended, an answer still due (connect-back) goes to the port
// a rule named with MR::connect_back_port, else the client's own.
func (f *flow) mrfWrite(b []byte) error {
	if f.ended.Load() && f.mr != nil {
		if to := f.mr.ConnectBack(f.Client); to != f.Client {
			f.out.WriteToUDPAddrPort(b, to)
			return nil
		}
	}
	f.Touch(f.l.e.now.Load())
	f.toClient(b)
	return nil
}

// mrfIn takes a client datagram as a message of the flow's session:
// what the protocol answers by itself (a keep-alive, Max-Forwards 0, a
// loop, maintenance-mode), else routed. (Rules that read the datagrams
// themselves, CLIENT_DATA, are refused beside message routing.)
func (f *flow) mrfIn(b []byte) {
	s := f.mr
	if handled, _ := s.Local(b); handled {
		return // a datagram ends nothing [M]
	}
	m := s.Message(b)
	h := f.mrh
	if h != nil {
		// A clone in its ingress events starts from it (clone.go).
		h.inRaw = b
		h.inHand.Store(m)
	}
	ok := s.Handle(m)
	if h != nil {
		h.inHand.Store(nil)
		h.inRaw = nil
	}
	if !ok {
		f.end()
	}
}

// mrfHooks runs the message events of one flow under its rules' lock
// (answers and failures come from the peer flows' goroutines).
type mrfHooks struct {
	f         *flow
	prog      *rules.Program
	r         *mrf.Router
	transport string
	proto     string
	// inHand is the client's message the goroutine reading the client
	// is handling when the rules clone (mrfIn), inRaw its datagram as
	// the client sent it, which only that goroutine reads: the session
	// may run a message's ingress on a peer flow's goroutine too (one
	// handled later), which must not start a clone from it.
	inHand atomic.Pointer[mrf.Message]
	inRaw  []byte
}

// Ingress runs a client's message through its protocol's event, then
// MR_INGRESS.
func (h *mrfHooks) Ingress(m *mrf.Message) bool {
	evs := irules.MRFIngress(h.proto)
	var in []byte
	if h.f.mrh != nil && h.inHand.Load() == m {
		in = h.inRaw
	}
	return h.runIn(m, in, evs...)
}

// Egress runs a message going to the client through MR_EGRESS, then its
// protocol's event.
func (h *mrfHooks) Egress(m *mrf.Message) bool {
	evs := irules.MRFEgress(h.proto)
	return h.run(m, evs...)
}

// Failed runs MR_FAILED.
func (h *mrfHooks) Failed(m *mrf.Message) bool { return h.run(m, rules.MRFailed) }

// run runs evs in turn over m, stopping once the message is dropped or
// sent back; false when the rule ended the flow (reject, an error).
// drop and discard drop the message.
func (h *mrfHooks) run(m *mrf.Message, evs ...rules.Event) bool {
	return h.runIn(m, nil, evs...)
}

// runIn is run; in is the client's datagram when m is its message, on
// the goroutine reading the client and the rules clone: a clone in the
// events starts from it (clone.go).
func (h *mrfHooks) runIn(m *mrf.Message, in []byte, evs ...rules.Event) bool {
	f, rs := h.f, h.f.rs
	for _, ev := range evs {
		if !h.prog.Handles(ev) {
			continue
		}
		rs.mu.Lock()
		if rs.done {
			// The flow has ended and its rules with it: what is still
			// delivered to its client (do-not-connect-back disabled)
			// goes without events [M].
			rs.mu.Unlock()
			return f.ended.Load()
		}
		sess := f.RuleSession(h.prog)
		rs.ev = config.Event(ev.String())
		rs.mrIn = in
		sess.BeginMR(m, h.r, h.transport)
		var err error
		ok := true
		if ev == rules.SIPRequest || ev == rules.SIPResponse {
			sess.BeginSIP(m.Data)
			err = sess.Run(ev)
			ok = irules.MRFSIPOutcome(m, sess.EndSIP())
		} else {
			err = sess.Run(ev)
		}
		sess.EndMR()
		made := sess.TakeMRMade()
		reject, dropped := rs.reject, rs.dropped
		rs.reject, rs.dropped = false, false
		rs.toClient, rs.toServer = nil, nil
		rs.mrIn = nil
		rs.mu.Unlock()
		if err != nil {
			f.logRuleError(config.Event(ev.String()), err)
		}
		if err != nil || reject || !ok {
			f.end()
			return false
		}
		if dropped {
			m.Drop = true
		}
		for _, x := range made {
			if o := x.Originator(); o != nil && !o.Handle(x) {
				return false
			}
		}
		if m.Drop || m.Return {
			break
		}
	}
	return true
}
