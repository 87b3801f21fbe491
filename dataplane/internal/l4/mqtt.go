package l4

import (
	"bytes"
	"errors"
	"io"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/rules"
)

// An mqtt profile on a plain TCP virtual makes its flows MQTT
// connections. Such flows are served on goroutines by serveMQTT instead
// of the copy loops: each direction is read packet by packet
// (dataplane/mqtt frames and checks each one), and a rule's MQTT_
// events run over every packet. The member is chosen once the client's
// CONNECT has been read and its MQTT_CLIENT_INGRESS has run, so that a
// rule may pick the pool by client id or answer the CONNECT itself.
//
// A packet that is not well formed, a first packet that is not a
// CONNECT, or one past the bound resets the connection (counted in
// show ltm profile mqtt, and logged by tm.rstcause.log as "MQTT message
// malformed") [M].

// mqttFlow is one MQTT connection's state.
type mqttFlow struct {
	pr     *proxied
	counts *mqtt.Counts
	// prog is the virtual's rules when they handle an MQTT_ event; nil:
	// packets are only framed and checked.
	prog *rules.Program
	// version is the protocol level of the client's CONNECT, set before
	// the server side's pump starts.
	version uint8
	rd      [2]mqtt.Reader // the client's, the member's
	pkt     [2]mqtt.Packet // each direction's packet in hand
	w       msgWriter
	// clones: a rule has a clone command, which may start in the
	// client's packet's ingress events (clone.go, beginMsg).
	clones bool
}

// mqttHandled reports whether prog handles any MQTT_ event.
func mqttHandled(prog *rules.Program) bool {
	for ev := rules.MQTTClientIngress; ev <= rules.MQTTClientShutdown; ev++ {
		if prog.Handles(ev) {
			return true
		}
	}
	return false
}

// serveMQTT runs an MQTT connection; head is what an earlier virtual
// read of it (handoff.go). The flow holds one leg: it reads the CONNECT,
// runs its ingress event, connects a member (with rules, LB_SELECTED,
// LB_FAILED and SERVER_CONNECTED run there), sends the CONNECT on and
// then pumps both directions.
func (pr *proxied) serveMQTT(head []byte) {
	opt := pr.snap.Cfg.MQTT
	x := &mqttFlow{pr: pr, counts: &pr.vs.Prof.MQTT}
	x.clones = pr.rs != nil && pr.rs.clones // a rule clones: clone.go, beginMsg, beginBack and bindMsg
	x.w.cloneBack(pr, x.clones)
	if pr.rs != nil {
		if prog := irules.Program(pr.rules); prog != nil && mqttHandled(prog) {
			x.prog = prog
		}
	}
	max := opt.Max
	if max <= 0 {
		max = mqtt.DefaultMax
	}
	var src io.Reader = pr.clientConn() // the plaintext under client-ssl (tls.go)
	if len(head) > 0 {
		src = io.MultiReader(bytes.NewReader(head), src)
	}
	x.rd[0] = mqtt.Reader{R: src, Max: max}
	raw, ok := x.next(true, nil)
	if !ok {
		pr.finishLeg()
		return
	}
	pr.countRead(len(raw), true, nil)
	x.counts.FromClient.Add(1)
	if pr.clone != nil {
		pr.clone.Client(raw) // clone.go: as the client sent it
	}
	p := &x.pkt[0]
	if err := p.Decode(raw, 0); err != nil || p.Type != mqtt.CONNECT {
		x.malformed(err)
		pr.finishLeg()
		return
	}
	x.version = p.ProtocolVersion
	keep, edited, after, ok := x.ingress(true, p, raw, nil)
	if !ok {
		pr.finishLeg()
		return
	}
	if !keep {
		// A CONNECT the rule dropped: what it answered goes out and the
		// client is closed, as no member will ever see it [M].
		pr.closeGraceful()
		pr.finishLeg()
		return
	}
	x.version = p.ProtocolVersion
	sc := pr.bindMsg(raw, x.clones) // msgflow.go; clone.go
	if sc == nil {
		pr.finishLeg()
		return
	}
	x.rd[1] = mqtt.Reader{R: sc.netConn(), Max: max}
	if !x.egress(true, p, raw, edited, after, sc) {
		pr.finishLeg()
		return
	}
	pr.legsLeft.Add(1)
	go x.pump(false, sc)
	x.pump(true, sc)
}

// next reads the next packet of one direction (up: the client's); false
// when the flow ends (already reset or closed, or, on a clean close,
// half-closed toward the other end).
func (x *mqttFlow) next(up bool, sc *serverConn) ([]byte, bool) {
	pr := x.pr
	src, rd := pr.client, &x.rd[0]
	if !up {
		src, rd = sc.conn, &x.rd[1]
	}
	raw, err := pr.readMsg(src, rd.Next) // msgflow.go
	switch {
	case err == nil:
		return raw, true
	case err == errIdle:
		return nil, false
	case err == io.EOF:
		x.closed(up, sc)
		return nil, false
	}
	var me *mqtt.Error
	if errors.As(err, &me) || err == mqtt.ErrTooLarge {
		x.malformed(err)
		return nil, false
	}
	pr.lost(sc)
	return nil, false
}

// closed passes a clean close (after whole packets) on: the client's
// runs MQTT_CLIENT_SHUTDOWN, whose MQTT::insert after packets go to the
// member first.
func (x *mqttFlow) closed(up bool, sc *serverConn) {
	pr := x.pr
	if sc == nil { // the client left before its CONNECT
		pr.closeGraceful()
		return
	}
	if up && x.prog != nil && x.prog.Handles(rules.MQTTClientShutdown) {
		o, ok := x.run(rules.MQTTClientShutdown, nil, nil, false)
		if !ok {
			return
		}
		if len(o.After) > 0 && !x.write(true, sc, o.After...) {
			return
		}
	}
	if pr.gone(sc) {
		return
	}
	if up {
		closeWrite(sc.netConn()) // tls.go: close_notify, then the FIN
	} else {
		closeWrite(pr.clientConn())
	}
}

// malformed resets the flow for a packet the codec refused.
func (x *mqttFlow) malformed(err error) {
	if err == mqtt.ErrTooLarge {
		x.counts.TooLarge.Add(1)
	} else {
		x.counts.Malformed.Add(1)
	}
	x.pr.because(rstcause.MQTTMalformed)
	x.pr.end(true)
}

// pump reads one direction (up: the client's packets) until it ends.
func (x *mqttFlow) pump(up bool, sc *serverConn) {
	pr := x.pr
	defer pr.finishLeg()
	d := 0
	if !up {
		d = 1
	}
	for {
		raw, ok := x.next(up, sc)
		if !ok {
			return
		}
		pr.countRead(len(raw), up, sc)
		if up {
			x.counts.FromClient.Add(1)
			if pr.clone != nil {
				pr.clone.Client(raw)
			}
		} else {
			x.counts.FromServer.Add(1)
			x.w.fromMember(raw) // clone.go, startBackClones: as the member sent it
		}
		p := &x.pkt[d]
		if err := p.Decode(raw, x.version); err != nil || p.Type == mqtt.CONNECT {
			// A second CONNECT is a protocol violation (section 3.1).
			x.malformed(err)
			return
		}
		if x.prog == nil {
			if !x.write(up, sc, raw) {
				return
			}
			continue
		}
		keep, edited, after, ok := x.ingress(up, p, raw, sc)
		if !ok {
			return
		}
		if keep && !x.egress(up, p, raw, edited, after, sc) {
			return
		}
	}
}

// ingress runs a packet's INGRESS event (and DATA, after
// MQTT::collect) and sends what the rule answered to the sender. keep
// is false when the rule dropped the packet; after are the packets
// MQTT::insert after put behind it; ok false when the flow ended.
func (x *mqttFlow) ingress(up bool, p *mqtt.Packet, raw []byte, sc *serverConn) (keep, edited bool, after [][]byte, ok bool) {
	if x.prog == nil {
		return true, false, nil, true
	}
	var msg []byte // the packet: a clone starts from it
	if x.clones {
		msg = raw
	}
	ev, data := rules.MQTTClientIngress, rules.MQTTClientData
	if !up {
		ev, data = rules.MQTTServerIngress, rules.MQTTServerData
	}
	o, ok := x.run(ev, p, msg, !up)
	if !ok {
		return false, false, nil, false
	}
	if o.Collect && p.Type == mqtt.PUBLISH {
		o2, ok := x.run(data, p, msg, !up)
		if !ok {
			return false, false, nil, false
		}
		o = merge(o, o2)
	}
	return x.apply(up, o, sc)
}

// egress runs a packet's EGRESS event and sends it (with what the rules
// inserted around it) to the other end. raw is the packet as it came,
// sent as is unless a rule edited it.
func (x *mqttFlow) egress(up bool, p *mqtt.Packet, raw []byte, edited bool, after [][]byte, sc *serverConn) bool {
	var before [][]byte
	if x.prog != nil {
		ev := rules.MQTTServerEgress
		if !up {
			ev = rules.MQTTClientEgress
		}
		o, ok := x.run(ev, p, nil, false)
		if !ok {
			return false
		}
		keep, e, a, ok := x.apply(up, rules.MQTTOutcome{Respond: o.Respond, Drop: o.Drop, Disconnect: o.Disconnect, Edited: o.Edited}, sc)
		if !ok {
			return false
		}
		before = o.Before
		after = append(after, o.After...)
		after = append(after, a...)
		edited = edited || e
		if !keep {
			raw = nil
		}
	}
	if edited && raw != nil {
		raw = p.Encode(nil, x.version)
	}
	out := before
	if raw != nil {
		out = append(out, raw)
	}
	out = append(out, after...)
	if len(out) == 0 {
		return true
	}
	return x.write(up, sc, out...)
}

// apply sends what an event answered to the sender, and ends the flow
// after MQTT::disconnect.
func (x *mqttFlow) apply(up bool, o rules.MQTTOutcome, sc *serverConn) (keep, edited bool, after [][]byte, ok bool) {
	if len(o.Respond) > 0 && !x.write(!up, sc, o.Respond...) {
		return false, false, nil, false
	}
	if o.Disconnect {
		x.pr.closeGraceful()
		return false, false, nil, false
	}
	return !o.Drop, o.Edited, o.After, true
}

// merge is two events' outcomes over one packet.
func merge(a, b rules.MQTTOutcome) rules.MQTTOutcome {
	a.Edited = a.Edited || b.Edited
	a.Drop = a.Drop || b.Drop
	a.Disconnect = a.Disconnect || b.Disconnect
	a.Respond = append(a.Respond, b.Respond...)
	a.Before = append(a.Before, b.Before...)
	a.After = append(a.After, b.After...)
	return a
}

// run runs one MQTT_ event over p (nil in MQTT_CLIENT_SHUTDOWN) and
// applies its verdict as runEvent does; false when the flow ended. msg
// is the packet as it came when the event is over it (an ingress event)
// and a rule clones (nil otherwise): a clone there starts from it. back:
// msg is the member's, the event running on the goroutine reading the
// member (clone.go, beginBack); otherwise the client's, on the one
// reading the client (beginMsg).
func (x *mqttFlow) run(ev rules.Event, p *mqtt.Packet, msg []byte, back bool) (rules.MQTTOutcome, bool) {
	pr, rs := x.pr, x.pr.rs
	if !x.prog.Handles(ev) {
		return rules.MQTTOutcome{}, true
	}
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return rules.MQTTOutcome{}, false
	}
	sess := pr.RuleSession(x.prog)
	sess.SetMQTT()
	st := sess.MQTT()
	if st.Disabled {
		rs.mu.Unlock()
		return rules.MQTTOutcome{}, true
	}
	st.Version = x.version
	rs.ev = config.Event(ev.String())
	switch {
	case msg != nil && back:
		rs.beginBack(msg) // clone.go
	case msg != nil:
		rs.beginMsg(msg, nil, false) // clone.go
	}
	sess.BeginMQTT(p)
	err := sess.Run(ev)
	o := sess.EndMQTT()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	var late []lateClone
	if msg != nil {
		late = rs.endMsg()
	}
	rs.mu.Unlock()
	if back {
		pr.startBackClones(late, &x.w)
	} else {
		pr.startMsgClones(late, &x.w.mu[1])
	}
	return o, pr.applyRule(config.Event(ev.String()), err, v, detach)
}

// write sends packets toward the member (toServer) or the client.
func (x *mqttFlow) write(toServer bool, sc *serverConn, pkts ...[]byte) bool {
	return x.w.write(x.pr, toServer, sc, pkts...) // msgflow.go
}
