package l4

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/rules"
)

// A fix profile on a TCP virtual makes its flows FIX sessions, served on
// goroutines by serveFIX (msgflow.go holds what they share with the mqtt
// profile's), over client-ssl and server-ssl too (the messages are the
// plaintext inside the records, tls.go): each message of the client is framed on BodyLength
// and checked (dataplane/fix), FIX_HEADER and FIX_MESSAGE run over it,
// and its tags are renumbered when the sender (tag 49 of the first
// message) has a tag map, from sender-tag-class or FIX::tag map set. The
// member is chosen once the first message's events have run, so that a
// rule picks the pool by SenderCompID. The member's messages are framed,
// checked with response-parsing (which runs FIX_HEADER and FIX_MESSAGE
// over them on the server side too), and mapped back. The profile's
// publishers (fix.Log) get every message, the malformed ones and the
// status reports.
//
// A malformed message is dropped with error-action dont-forward and
// resets the connection with drop-connection; one whose length cannot be
// read (or past the bound) always resets it, as the stream cannot be
// followed past it (counted in show ltm profile fix; tm.rstcause.log
// says "FIX message malformed") [M].

// fixFlow is one FIX connection's state.
type fixFlow struct {
	pr     *proxied
	opt    *fix.Options
	counts *fix.Counts
	// prog is the virtual's rules when they handle FIX_HEADER or
	// FIX_MESSAGE; nil: messages are only framed, checked and mapped.
	prog *rules.Program
	// tags is the sender's tag map toward the member, back its inverse
	// for the member's messages; nil: none.
	tags, back map[int]int
	rd         [2]fix.Reader  // the client's, the member's
	msg        [2]fix.Message // each direction's message in hand
	enc        [2][]byte      // each direction's re-encoded message
	w          msgWriter
	// log is the profile's log publishers when it names one; nil: none.
	log *fix.Log
	// srv is the member's connection once it is chosen, for the logs.
	srv *serverConn
	// clones: a rule has a clone command, which may start over a
	// client's message (clone.go, beginMsg).
	clones bool
}

// serveFIX runs a FIX connection; head is what an earlier virtual read
// of it (handoff.go). The flow holds one leg: it reads the first good
// message, runs its events, connects a member (with rules, LB_SELECTED,
// LB_FAILED and SERVER_CONNECTED run there), sends the message on and
// then pumps both directions.
func (pr *proxied) serveFIX(head []byte) {
	x := &fixFlow{pr: pr, opt: pr.snap.Cfg.FIX, counts: &pr.vs.Prof.FIX}
	x.clones = pr.rs != nil && pr.rs.clones // a rule clones: clone.go, beginMsg, beginBack and bindMsg
	x.w.cloneBack(pr, x.clones)
	if l := x.opt.Log; l.LogsMessages() || l.LogsReports() {
		x.log = l
	}
	var prog *rules.Program
	if pr.rs != nil {
		prog = irules.Program(pr.rules)
		if prog != nil && (prog.Handles(rules.FIXHeader) || prog.Handles(rules.FIXMessage)) {
			x.prog = prog
		}
	}
	var src io.Reader = pr.clientConn() // the plaintext under client-ssl (tls.go)
	if len(head) > 0 {
		src = io.MultiReader(bytes.NewReader(head), src)
	}
	x.rd[0] = fix.Reader{R: src, Max: x.opt.Max}
	var raw []byte
	for {
		var ok bool
		if raw, ok = x.next(true, nil); !ok {
			pr.finishLeg()
			return
		}
		good, ok := x.check(true, raw, true)
		if !ok {
			pr.finishLeg()
			return
		}
		if good {
			break
		}
	}
	m := &x.msg[0]
	sender, _ := m.Get(fix.TagSenderCompID)
	x.tags = x.opt.SenderTags[string(sender)]
	if t, ok := prog.FIXTagMap(string(sender)); ok {
		x.tags = t
	}
	x.back = fix.Reverse(x.tags)
	if !x.events(m, raw, true) {
		pr.finishLeg()
		return
	}
	sc := pr.bindMsg(raw, x.clones) // msgflow.go; clone.go
	if sc == nil {
		pr.finishLeg()
		return
	}
	x.srv = sc
	x.rd[1] = fix.Reader{R: sc.netConn(), Max: x.opt.Max} // through server-ssl (tls.go)
	if !x.forward(true, raw, m, sc) {
		pr.finishLeg()
		return
	}
	pr.legsLeft.Add(1)
	go x.pump(false, sc)
	x.pump(true, sc)
}

// next reads one direction's next message (up: the client's); false when
// the flow ends (reset, or on a clean close half-closed toward the other
// end).
func (x *fixFlow) next(up bool, sc *serverConn) ([]byte, bool) {
	pr := x.pr
	src, rd := pr.client, &x.rd[0]
	if !up {
		src, rd = sc.conn, &x.rd[1]
	}
	raw, err := pr.readMsg(src, rd.Next) // msgflow.go
	switch {
	case err == nil:
		pr.countRead(len(raw), up, sc)
		if up {
			if pr.clone != nil {
				pr.clone.Client(raw) // clone.go: serverside pools get what the member gets (msgWriter)
			}
			x.counts.FromClient.Add(1)
		} else {
			x.counts.FromServer.Add(1)
		}
		if x.log != nil {
			x.logMsg(up, sc, raw)
		}
		return raw, true
	case err == errIdle:
		return nil, false
	case err == io.EOF:
		switch {
		case sc == nil: // the client left before its first message
			pr.closeGraceful()
		case pr.gone(sc):
		case up:
			closeWrite(sc.netConn()) // tls.go: close_notify, then the FIN
		default:
			closeWrite(pr.clientConn())
		}
		return nil, false
	}
	var fe *fix.Error
	if errors.As(err, &fe) || err == fix.ErrTooLarge {
		x.counts.Malformed.Add(1)
		if x.log != nil {
			x.logMalformed(up, sc, err, "connection reset")
		}
		x.reset()
		return nil, false
	}
	pr.lost(sc)
	return nil, false
}

// check parses a message that is to be read (the client's; the member's
// with response-parsing or a tag map to apply) into x.msg. good: it is
// well formed; ok false: the flow was reset for it (error-action
// drop-connection), while a bad one under dont-forward is dropped.
func (x *fixFlow) check(up bool, raw []byte, first bool) (good, ok bool) {
	d := 0
	if !up {
		d = 1
	}
	m := &x.msg[d]
	err := m.Parse(raw, x.opt.Quick)
	if err == nil && first && x.opt.FullLogon && m.MsgType() != "A" {
		err = errors.New("the first message is not a Logon")
	}
	if err == nil {
		return true, true
	}
	x.counts.Malformed.Add(1)
	if x.opt.DropConnection {
		if x.log != nil {
			x.logMalformed(up, x.srv, err, "connection reset")
		}
		x.reset()
		return false, false
	}
	if x.log != nil {
		x.logMalformed(up, x.srv, err, "dropped")
	}
	return false, true
}

// reset ends the flow for a message the profile refused.
func (x *fixFlow) reset() {
	x.pr.because(rstcause.FIXMalformed)
	x.pr.end(true)
}

// pump reads one direction (up: the client's messages) until it ends.
func (x *fixFlow) pump(up bool, sc *serverConn) {
	defer x.pr.finishLeg()
	d := 0
	if !up {
		d = 1
	}
	m := &x.msg[d]
	for {
		raw, ok := x.next(up, sc)
		if !ok {
			return
		}
		if !up {
			x.w.fromMember(raw) // clone.go, startBackClones: as the member sent it
		}
		if up || x.opt.Response || x.back != nil {
			good, ok := x.check(up, raw, false)
			if !ok {
				return
			}
			if !good {
				continue
			}
			if (up || x.opt.Response) && !x.events(m, raw, up) {
				return
			}
		} else {
			m = nil
		}
		if !x.forward(up, raw, m, sc) {
			return
		}
		m = &x.msg[d]
	}
}

// forward sends a message on, its tags mapped (toward the member) or
// mapped back (toward the client) when the sender has a tag map; m is
// raw parsed, or nil when it was only framed.
func (x *fixFlow) forward(up bool, raw []byte, m *fix.Message, sc *serverConn) bool {
	tags, d := x.tags, 0
	if !up {
		tags, d = x.back, 1
	}
	if m != nil && m.Remap(tags) {
		x.enc[d] = m.Encode(x.enc[d][:0])
		raw = x.enc[d]
		x.counts.Mapped.Add(1)
	}
	return x.w.write(x.pr, up, sc, raw) // msgflow.go
}

// events runs FIX_HEADER then FIX_MESSAGE over the message m, the
// client's (up) or, with response-parsing, the member's (then on the
// server side: [serverside] and TCP:: commands read the member's
// connection [M: BIG-IP documents the events without a side]), and
// applies their verdicts as runEvent does (reject resets the session,
// drop closes it, on either side); false when the flow ended.
func (x *fixFlow) events(m *fix.Message, raw []byte, up bool) bool {
	if x.prog == nil {
		return true
	}
	for _, ev := range [2]rules.Event{rules.FIXHeader, rules.FIXMessage} {
		if x.prog.Handles(ev) && !x.run(ev, m, raw, up) {
			return false
		}
	}
	return true
}

// run runs ev over m (raw as it came); a clone in the client's
// message's events starts from it (clone.go, beginMsg), one in the
// member's (response-parsing, on the goroutine reading the member)
// copies the member's messages from it on (beginBack).
func (x *fixFlow) run(ev rules.Event, m *fix.Message, raw []byte, up bool) bool {
	pr, rs := x.pr, x.pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return false
	}
	sess := pr.RuleSession(x.prog)
	rs.ev = config.Event(ev.String())
	msg := x.clones
	switch {
	case msg && up:
		rs.beginMsg(raw, nil, false)
	case msg:
		rs.beginBack(raw)
	}
	if up {
		sess.BeginFIX(m)
	} else {
		sess.BeginFIXServer(m)
	}
	err := sess.Run(ev)
	sess.EndFIX()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	var late []lateClone
	if msg {
		late = rs.endMsg()
	}
	rs.mu.Unlock()
	if up {
		pr.startMsgClones(late, &x.w.mu[1])
	} else {
		pr.startBackClones(late, &x.w)
	}
	return pr.applyRule(config.Event(ev.String()), err, v, detach)
}

// logMsg gives a message read from one end to message-log-publisher, and
// sends report-log-publisher's status report when it is due.
func (x *fixFlow) logMsg(up bool, sc *serverConn, raw []byte) {
	pr := x.pr
	if x.log.LogsMessages() {
		x.log.Msg(x.opt.Profile, pr.Virtual, !up, pr.Client.String(), serverAddr(sc), raw)
	}
	if x.log.Interval > 0 {
		x.log.Status(x.opt.Profile, pr.Virtual, x.counts, time.Now().UnixNano())
	}
}

// logMalformed tells report-log-publisher of a message refused for err.
func (x *fixFlow) logMalformed(up bool, sc *serverConn, err error, action string) {
	reason := err.Error()
	var fe *fix.Error
	if errors.As(err, &fe) {
		reason = fe.Reason
	}
	x.log.Malformed(x.opt.Profile, x.pr.Virtual, !up, x.pr.Client.String(), serverAddr(sc), reason, action)
}

// serverAddr is the member's address for the logs, "" before one is
// chosen.
func serverAddr(sc *serverConn) string {
	if sc == nil || sc.conn == nil {
		return ""
	}
	return sc.conn.RemoteAddr().String()
}
