package udp

import (
	"net"

	"github.com/openltm/openltm/dataplane/gtpmsg"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

// GTP (the gtp profile on a UDP virtual): each datagram, either way, is
// one GTP message (GTPv1-C, GTP-U, GTPv2-C or GTP'), checked by
// dataplane/gtpmsg; a malformed one (short, a length past the datagram,
// an IE past the message, an unsupported version) is dropped and counted
// with the udp profile's dropped datagrams [M: BIG-IP's own counter is
// not known]. A piggybacked GTPv2 message after the first goes on with
// it, unread [M]. A client's message is balanced by itself as
// datagram-load-balancing does: the member is chosen per message
// (state.Choose: a rule's member, persistence, then balancing), a
// subscriber's session persisting on its TEIDs and IMSI and a
// retransmitted request following its first copy (gtpsession.go).
//
// The events: GTP_SIGNALLING_INGRESS (GTP_GPDU_INGRESS for a G-PDU,
// GTP_PRIME_INGRESS for GTP') as a message arrives, on the side it
// arrived on, after CLIENT_DATA or SERVER_DATA; the matching _EGRESS
// event as it leaves toward the other side, the client's message once
// its member is chosen. GTP::respond answers the message's sender from
// the virtual's address (a client) or from the flow's address toward
// the member; GTP::forward sends a message of the rule's the way the
// message was going; GTP::clone sends a copy to an address of the rule's
// from a socket of its own [M]. A flow without the profile pays one nil
// check per datagram.

// gtpEvents are a message's ingress and egress events.
func gtpEvents(b []byte) (in, out config.Event) {
	h, _ := gtpmsg.ParseHeader(b)
	switch {
	case h.Prime:
		return config.EventGTPPrimeIngress, config.EventGTPPrimeEgress
	case h.Version == 1 && h.Type == gtpmsg.GPDU:
		return config.EventGTPGPDUIngress, config.EventGTPGPDUEgress
	}
	return config.EventGTPSignallingIngress, config.EventGTPSignallingEgress
}

// gtpCheck reports whether b is a well-formed GTP message; a malformed
// one is counted dropped.
func (f *flow) gtpCheck(b []byte) bool {
	if err := gtpmsg.Check(b); err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return false
	}
	return true
}

// gtpRun runs ev over message b, from or toward lg (nil: the client
// side's event); toSender is where GTP::respond's messages go, toward
// where GTP::forward's. It returns the message to pass on, false when
// the rule discarded it or ended the flow.
func (f *flow) gtpRun(ev config.Event, lg *leg, b []byte, toSender, toward func([]byte)) ([]byte, bool) {
	if f.rs == nil || !f.handles(ev) {
		return b, true
	}
	prog := irules.Program(f.snap.Cfg.Rules)
	if prog == nil {
		return b, true
	}
	rs := f.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return nil, false
	}
	sess := f.RuleSession(prog)
	if err := sess.BeginGTP(b); err != nil {
		rs.mu.Unlock()
		f.vs.Prof.Conns.DgDropped.Add(1)
		return nil, false
	}
	rs.ev, rs.payload, rs.cur = ev, b, lg
	err := f.snap.Cfg.Rules.Run(ev, f)
	o := sess.EndGTP()
	reject, dropped := rs.reject, rs.dropped
	toClient, toServer := rs.toClient, rs.toServer
	rs.payload, rs.cur, rs.reject, rs.dropped, rs.toClient, rs.toServer = nil, nil, false, false, nil, nil
	rs.mu.Unlock()
	if err != nil {
		f.logRuleError(ev, err)
		f.end()
		return nil, false
	}
	if reject {
		f.end()
		return nil, false
	}
	for _, d := range toClient {
		f.toClient(d)
	}
	if to := f.last.Load(); to != nil {
		for _, d := range toServer {
			to.send(d)
		}
	}
	for _, d := range o.Respond {
		toSender(d)
	}
	for _, d := range o.Forward {
		toward(d)
	}
	for _, c := range o.Clones {
		gtpClone(c)
	}
	if o.Discard || dropped {
		return nil, false
	}
	return o.Raw, true
}

// gtpClone sends a rule's copy from a socket of its own [M].
func gtpClone(c rules.GTPClone) {
	u, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(c.To))
	if err != nil {
		return
	}
	u.Write(c.Msg)
	u.Close()
}

// gtpIn runs a client's message's ingress event; ok false drops it.
func (f *flow) gtpIn(b []byte) ([]byte, bool) {
	in, _ := gtpEvents(b)
	return f.gtpRun(in, nil, b, f.toClient, func(d []byte) {
		if lg := f.last.Load(); lg != nil {
			lg.send(d)
		}
	})
}

// gtpOut runs a client's message's egress event toward lg.
func (f *flow) gtpOut(lg *leg, b []byte) ([]byte, bool) {
	_, out := gtpEvents(b)
	return f.gtpRun(out, lg, b, f.toClient, lg.send)
}

// gtpAnswer takes a member's message b from lg: checked, then its
// ingress and egress events; ok false drops it.
func (f *flow) gtpAnswer(lg *leg, b []byte) ([]byte, bool) {
	if !f.gtpCheck(b) {
		return nil, false
	}
	if f.gtps != nil && !f.gtpMember(lg, b) { // gtpsession.go
		return nil, false
	}
	if f.rs == nil {
		return b, true
	}
	in, out := gtpEvents(b)
	b, ok := f.gtpRun(in, lg, b, lg.send, f.toClient)
	if !ok {
		return nil, false
	}
	return f.gtpRun(out, lg, b, lg.send, f.toClient)
}
