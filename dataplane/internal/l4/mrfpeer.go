package l4

import (
	"errors"
	"net/netip"
	"sync"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules"
)

// A transport-config's rules (`ltm message-routing ... transport-config
// NAME { rules { R } }`) run on the peer connections it makes, each
// connection a rule session of its own, as BIG-IP runs a transport's
// iRules on every connection that transport makes. A message leaving
// on such a connection runs MR_EGRESS then its protocol's send event
// (GENERICMESSAGE_EGRESS; SIP_REQUEST_SEND, or SIP_RESPONSE_SEND for the
// answer to the peer's own request; DIAMETER_EGRESS); a message the peer
// sends runs its protocol's event (GENERICMESSAGE_INGRESS; SIP_RESPONSE,
// or SIP_REQUEST for the peer's own request; DIAMETER_INGRESS) then
// MR_INGRESS, before it goes back to the connection its request came
// from (F5's "iRules on all transports"). The connection runs
// CLIENT_ACCEPTED as it opens and CLIENT_CLOSED as it ends [M: F5 runs
// a transport's connection events on the connections it makes and does
// not document which ones an outgoing connection raises; BIG-IP's
// message-routing connections are each the client side of their own
// flow, so openltm raises the client side's]. IP::remote_addr there is
// the peer's member, IP::local_addr the connection's own source. The
// MR::, SIP:: and DIAMETER:: commands act on the message in hand; MR::
// transport is "config NAME". `drop` and `discard` drop the message,
// `reject` or a Tcl error close the connection (its requests in flight
// fail as when the peer closes it) [M]. On an MQTT router's broker
// connections a packet to the broker runs MR_EGRESS then
// MQTT_SERVER_EGRESS, one from the broker MQTT_SERVER_INGRESS,
// MQTT_SERVER_DATA (after MQTT::collect over a PUBLISH) then MR_INGRESS
// [M: F5's MQTT events name the broker the server; its packets run the
// server side's events], with the MQTT:: commands (runMQTT).

// PeerHooks implements mrf.RuleEnv: the hooks of one peer connection
// made by a transport-config with rules, nil when they handle none of
// the events a peer connection raises.
func (x *mrfEnv) PeerHooks(rs any, c mrf.PeerConn) mrf.PeerHooks {
	pr, ok := rs.(interface{ Program() *rules.Program })
	if !ok {
		return nil
	}
	prog := pr.Program()
	if prog == nil || !handlesPeer(prog) {
		return nil
	}
	proto := irules.MRFProtocol(c.Router.Config())
	return &mrfPeerHooks{e: x.e, prog: prog, c: c, proto: proto, transport: "config " + c.Transport}
}

// handlesPeer says whether prog handles an event a peer connection
// raises.
func handlesPeer(p *rules.Program) bool {
	if irules.HandlesMRF(p) {
		return true
	}
	for _, ev := range []rules.Event{rules.SIPRequestSend, rules.SIPResponseSend, rules.ClientAccepted, rules.ClientClosed,
		rules.MQTTServerIngress, rules.MQTTServerData, rules.MQTTServerEgress} {
		if p.Handles(ev) {
			return true
		}
	}
	return false
}

// mrfPeerHooks run a transport-config's rules on one peer connection,
// one event at a time (the connection's reader and the clients routing
// to it call them from their own goroutines).
type mrfPeerHooks struct {
	e         *Engine
	prog      *rules.Program
	c         mrf.PeerConn
	proto     string
	transport string

	mu   sync.Mutex
	sess *rules.ConnState
	done bool
	// verdict is what the event's drop, discard or reject asked.
	verdict irules.Verdict
}

// Ingress runs a message the peer sent through its protocol's event,
// then MR_INGRESS.
func (h *mrfPeerHooks) Ingress(m *mrf.Message) bool {
	switch h.proto {
	case irules.MRFSIP:
		ev := rules.SIPRequest
		if m.Answer {
			ev = rules.SIPResponse
		}
		return h.run(m, ev, rules.MRIngress)
	case irules.MRFDiameter:
		return h.run(m, rules.DiameterIngress, rules.MRIngress)
	case irules.MRFMQTT:
		return h.run(m, rules.MQTTServerIngress, rules.MQTTServerData, rules.MRIngress)
	}
	return h.run(m, rules.GenericMessageIngress, rules.MRIngress)
}

// Egress runs a message about to be written to the peer through
// MR_EGRESS, then its protocol's send event.
func (h *mrfPeerHooks) Egress(m *mrf.Message) bool {
	switch h.proto {
	case irules.MRFSIP:
		ev := rules.SIPRequestSend
		if m.Answer {
			ev = rules.SIPResponseSend
		}
		return h.run(m, rules.MREgress, ev)
	case irules.MRFDiameter:
		return h.run(m, rules.MREgress, rules.DiameterEgress)
	case irules.MRFMQTT:
		return h.run(m, rules.MREgress, rules.MQTTServerEgress)
	}
	return h.run(m, rules.MREgress, rules.GenericMessageEgress)
}

// Failed runs MR_FAILED over a message of the peer's own that could not
// be delivered.
func (h *mrfPeerHooks) Failed(m *mrf.Message) bool { return h.run(m, rules.MRFailed) }

// Opened runs CLIENT_ACCEPTED.
func (h *mrfPeerHooks) Opened() bool { return h.run(nil, rules.ClientAccepted) }

// Closed runs CLIENT_CLOSED and ends the connection's rule session.
func (h *mrfPeerHooks) Closed() {
	h.run(nil, rules.ClientClosed)
	h.mu.Lock()
	h.done = true
	if h.sess != nil {
		h.sess.Release()
		h.sess = nil
	}
	h.mu.Unlock()
}

// run runs evs in turn over m (nil: a connection event), stopping once
// the message is dropped; false when the rules closed the connection.
func (h *mrfPeerHooks) run(m *mrf.Message, evs ...rules.Event) bool {
	collect := false
	for _, ev := range evs {
		if ev == rules.MQTTServerData && !collect {
			continue // only after MQTT::collect over a PUBLISH
		}
		collect = false
		if !h.prog.Handles(ev) {
			continue
		}
		h.mu.Lock()
		if h.done {
			h.mu.Unlock()
			return false
		}
		if h.sess == nil {
			h.sess = h.prog.NewConnState(h)
		}
		sess := h.sess
		h.verdict = irules.GoOn
		var err error
		ok := true
		switch {
		case m == nil:
			err = sess.Run(ev)
		case ev == rules.SIPRequest || ev == rules.SIPResponse || ev == rules.SIPRequestSend || ev == rules.SIPResponseSend:
			sess.BeginMR(m, h.c.Router, h.transport)
			sess.BeginSIP(m.Data)
			err = sess.Run(ev)
			ok = irules.MRFSIPOutcome(m, sess.EndSIP())
		case h.proto == irules.MRFMQTT:
			sess.BeginMR(m, h.c.Router, h.transport)
			var end bool
			end, collect, err = h.runMQTT(sess, ev, m)
			ok = !end
		case h.proto == irules.MRFDiameter:
			// The DIAMETER:: commands read the message in the MR_
			// events too.
			sess.BeginMR(m, h.c.Router, h.transport)
			sess.BeginDiameterWith(m.Data, rules.DiameterContext{Routed: true})
			err = sess.Run(ev)
			ok = mrfDiameterOutcome(m, sess.EndDiameter())
		default:
			sess.BeginMR(m, h.c.Router, h.transport)
			err = sess.Run(ev)
		}
		var made []*mrf.Message
		if m != nil {
			sess.EndMR()
			made = sess.TakeMRMade()
		}
		v := h.verdict
		h.mu.Unlock()
		if err != nil {
			var re *rules.RuntimeError
			if !errors.As(err, &re) {
				h.e.env.Log.Error("TCL error: " + h.transport + " <" + ev.String() + "> - " + err.Error())
			}
			return false
		}
		if v == irules.Reject || !ok {
			return false
		}
		if v == irules.Drop {
			if m == nil {
				return false // a connection event's drop: the connection goes
			}
			m.Drop = true
		}
		for _, x := range made {
			if o := x.Originator(); o != nil && !o.Handle(x) {
				return false
			}
		}
		if m != nil && m.Drop {
			break
		}
	}
	return true
}

// runMQTT runs an MR_ or MQTT_SERVER_ event over a packet on a broker
// connection with the MQTT:: commands reading and editing it, as on
// the client's side (mrfHooks.runMQTT), and applies what the rule
// asked: its edits (the packet encoded again), MQTT::drop,
// MQTT::respond (to the packet's sender: the broker for one it sent,
// the client for one going to the broker), MQTT::insert (around the
// packet toward its destination: toward the client, both ways; toward
// the broker, those before it written at once and those after it sent
// with it -- an inserted packet's answer from the broker matches no
// packet of the client's and is dropped) and MQTT::disconnect (the
// broker connection closes). end: the connection is to close;
// collect: the rule asked for MQTT_SERVER_DATA over a PUBLISH. The
// session's protocol version is the one of the CONNECT that went out on
// the connection.
func (h *mrfPeerHooks) runMQTT(sess *rules.ConnState, ev rules.Event, m *mrf.Message) (end, collect bool, err error) {
	o, collect, parsed, err := runMQTTPacket(sess, ev, m) // mrf.go
	if !parsed {
		return false, false, err
	}
	toBroker := ev == rules.MREgress || ev == rules.MQTTServerEgress
	if toBroker {
		for _, b := range o.Respond {
			if s := m.Originator(); s != nil && s.Send(b) != nil {
				return true, false, err
			}
		}
		for _, b := range o.Before {
			if h.c.Send == nil || h.c.Send(b) != nil {
				return true, false, err
			}
		}
		for _, b := range o.After {
			m.Data = append(m.Data, b...)
		}
	} else {
		for _, b := range o.Respond {
			if h.c.Send == nil || h.c.Send(b) != nil {
				return true, false, err
			}
		}
		surroundMQTT(m, o.Before, o.After) // mrf.go
	}
	return o.Disconnect, collect, err
}

// ---- The iRules view of a peer connection (rules.Conn) ----

var errPeerConn = errors.New("not valid on a message-routing peer connection")

// Addr implements rules.Conn: the connection's own address is the
// local end, the peer's member the remote one.
func (h *mrfPeerHooks) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient, rules.EndServer:
		return h.c.Remote
	case rules.EndVirtual, rules.EndServerLocal:
		return h.c.Local
	}
	return netip.AddrPort{}
}

// Protocol implements rules.Conn.
func (h *mrfPeerHooks) Protocol() int {
	if h.c.UDP {
		return 17
	}
	return 6
}

// Decide implements rules.Conn: drop, discard and reject act on the
// message and connection; choosing a pool or member is not for a
// connection already made.
func (h *mrfPeerHooks) Decide(d rules.Decision) error {
	switch d.Kind {
	case rules.DecideDrop, rules.DecideDiscard:
		h.verdict = irules.Drop
		return nil
	case rules.DecideReject:
		h.verdict = irules.Reject
		return nil
	}
	return errPeerConn
}

// Collect implements rules.Conn.
func (h *mrfPeerHooks) Collect(rules.Side, int, int) error { return errPeerConn }

// Release implements rules.Conn.
func (h *mrfPeerHooks) Release(rules.Side, int) error { return errPeerConn }

// Payload implements rules.Conn.
func (h *mrfPeerHooks) Payload(rules.Side) []byte { return nil }

// ReplacePayload implements rules.Conn.
func (h *mrfPeerHooks) ReplacePayload(rules.Side, int, int, []byte) error { return errPeerConn }

// Respond implements rules.Conn.
func (h *mrfPeerHooks) Respond(rules.Side, []byte) error { return errPeerConn }

// Close implements rules.Conn.
func (h *mrfPeerHooks) Close(rules.Side) error { return errPeerConn }

// Notify implements rules.Conn.
func (h *mrfPeerHooks) Notify(rules.Side, rules.NotifyKind) error { return errPeerConn }

// LBSelect implements rules.Conn.
func (h *mrfPeerHooks) LBSelect() (string, netip.AddrPort, error) {
	return "", netip.AddrPort{}, errPeerConn
}

// LBServer implements rules.Conn: the member the connection reached.
func (h *mrfPeerHooks) LBServer() (string, netip.AddrPort, bool) { return "", h.c.Remote, true }

// MemberStatus implements rules.Conn.
func (h *mrfPeerHooks) MemberStatus(string, netip.AddrPort) (string, error) { return "", errPeerConn }

// ActiveMembers implements rules.Conn.
func (h *mrfPeerHooks) ActiveMembers(string) ([]netip.AddrPort, error) { return nil, errPeerConn }
