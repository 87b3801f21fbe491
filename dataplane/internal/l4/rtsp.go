package l4

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strings"
	"sync"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/rules"
)

// An rtsp profile on a plain TCP virtual makes its flows RTSP control
// connections (BIG-IP's RTSP ALG), served on goroutines like the other
// message-framed flows (msgflow.go): each direction is read message by
// message (dataplane/rtsp), interleaved $ frames passing untouched.
// RTSP_REQUEST runs over each request of the client, RTSP_RESPONSE over
// each answer of the member. The member is chosen once the client's
// first request is in, so that a rule can pick the pool by URI; a
// request naming a session the virtual saw set up goes to that
// session's member.
//
// SETUP's UDP transports get data channels: the client's client_port
// becomes a pair of ports on the server side's address (the member's
// datagrams come there; translations of its lsn pool when the control
// connection has one, lsn.go), and the member's server_port in its answer a
// pair on the virtual's address (the client's come there), source= the
// virtual's address; datagrams are relayed between them
// (dataplane/rtsp/channel.go) until the member answers TEARDOWN or they
// idle for idle-timeout. A message past max-header-size or
// max-queued-data, or one that does not parse, resets the connection
// (the stream cannot be followed past it) [M].

// rtspFlow is one control connection's state.
type rtspFlow struct {
	pr   *proxied
	opt  *rtsp.Options
	prog *rules.Program // the rules when they handle RTSP_ events
	// clones: a rule has a clone command, which may start in the
	// client's request's RTSP_REQUEST (clone.go, beginMsg).
	clones bool
	table  *rtsp.Table
	// counts are the virtual's rtsp profile figures.
	counts *rtsp.Counts
	sc     *serverConn
	// member is the member's address and port, server the server side's
	// own address (where the member sees the data channels come from).
	member netip.AddrPort
	server netip.Addr
	rd     [2]*rtsp.Reader
	msg    [2]rtsp.Message
	enc    [2][]byte
	w      msgWriter

	mu      sync.Mutex
	pending []rtspPending // the client's requests the member has yet to answer
}

// rtspPending is a forwarded request awaiting its answer.
type rtspPending struct {
	method  string
	cseq    int
	session string
	// chans are the data channels opened for a SETUP's UDP transports,
	// by the client_port the member was told.
	chans map[string]*rtsp.Channel
}

// serveRTSP runs a control connection; head is what an earlier virtual
// read of it (handoff.go). It holds one leg until the member is
// connected.
func (pr *proxied) serveRTSP(head []byte) {
	opt := pr.snap.Cfg.RTSP
	x := &rtspFlow{pr: pr, opt: opt, table: rtsp.TableFor(pr.Local.String(), opt.Idle), counts: &pr.vs.Prof.RTSP}
	x.clones = pr.rs != nil && pr.rs.clones // a rule clones: clone.go, beginMsg and bindMsg
	if pr.rs != nil {
		if prog := irules.Program(pr.rules); prog != nil && (prog.Handles(rules.RTSPRequest) || prog.Handles(rules.RTSPResponse)) {
			x.prog = prog
		}
	}
	var src io.Reader = pr.client
	if len(head) > 0 {
		src = io.MultiReader(bytes.NewReader(head), pr.client)
	}
	if pr.clone != nil || x.clones {
		// clone.go: as the client sent it, to the flow's clone
		// connections as they are at each read (RTSP_REQUEST may add
		// one on this goroutine).
		src = io.TeeReader(src, cloneClient{pr})
	}
	x.rd[0] = rtsp.NewReader(src, opt.MaxHeader, opt.MaxBody)
	m := &x.msg[0]
	for {
		frame, ok := x.next(true)
		if !ok {
			pr.finishLeg()
			return
		}
		if frame != nil || !m.Request {
			x.reset() // no member to pass it to yet
			pr.finishLeg()
			return
		}
		fwd, ok := x.request(m)
		if !ok {
			pr.finishLeg()
			return
		}
		if fwd {
			break
		}
	}
	if member, ok := x.table.Member(m.Session()); ok {
		pr.rtspWant = member
	}
	var first []byte // a clone in the member's choice starts from the request (clone.go)
	if x.clones {
		first = m.Encode(nil)
	}
	sc := pr.bindMsg(first, x.clones) // msgflow.go
	if sc == nil {
		pr.finishLeg()
		return
	}
	x.sc = sc
	x.member = rtsp.AddrOf(sc.conn.RemoteAddr())
	x.server = rtsp.AddrOf(sc.conn.LocalAddr()).Addr()
	x.rd[1] = rtsp.NewReader(sc.conn, opt.MaxHeader, opt.MaxBody)
	if !x.forwardRequest(m) {
		pr.finishLeg()
		return
	}
	pr.legsLeft.Add(1)
	go x.pump(false)
	x.pump(true)
}

// next reads one direction's next unit into x.msg (up: the client's):
// a frame, or nil and a message; false when the flow ends.
func (x *rtspFlow) next(up bool) ([]byte, bool) {
	pr := x.pr
	d, src := 0, pr.client
	if !up {
		d, src = 1, x.sc.conn
	}
	m := &x.msg[d]
	frame, err := pr.readMsg(src, func() ([]byte, error) { return x.rd[d].Next(m) }) // msgflow.go
	switch {
	case err == nil:
		n := len(frame)
		switch {
		case frame != nil:
			x.counts.Interleaved.Add(1)
		case up && m.Request:
			x.counts.Requests.Add(1)
		case !up && !m.Request:
			x.counts.Responses.Add(1)
		}
		if frame == nil {
			n = len(m.Body) + 64 // the head's bytes are not kept [M: counted roughly]
		}
		pr.countRead(n, up, x.sc)
		return frame, true
	case err == errIdle:
		return nil, false
	case err == io.EOF:
		switch {
		case x.sc == nil:
			pr.closeGraceful()
		case pr.gone(x.sc):
		case up:
			x.sc.conn.CloseWrite()
		default:
			pr.client.CloseWrite()
		}
		return nil, false
	}
	if errors.Is(err, rtsp.ErrMalformed) || errors.Is(err, rtsp.ErrHeaderTooLarge) || errors.Is(err, rtsp.ErrBodyTooLarge) || errors.Is(err, io.ErrUnexpectedEOF) {
		x.reset()
		return nil, false
	}
	pr.lost(x.sc)
	return nil, false
}

// reset ends the flow for a message the gateway cannot follow.
func (x *rtspFlow) reset() {
	x.counts.Malformed.Add(1)
	x.pr.because(rstcause.RTSPMalformed)
	x.pr.end(true)
}

// pump reads one direction until it ends.
func (x *rtspFlow) pump(up bool) {
	defer x.pr.finishLeg()
	d := 0
	if !up {
		d = 1
	}
	m := &x.msg[d]
	for {
		frame, ok := x.next(up)
		if !ok {
			return
		}
		if frame != nil {
			if !x.w.write(x.pr, up, x.sc, frame) {
				return
			}
			continue
		}
		switch {
		case up && m.Request:
			fwd, ok := x.request(m)
			if !ok {
				return
			}
			if fwd && !x.forwardRequest(m) {
				return
			}
		case !up && !m.Request:
			if !x.response(m) {
				return
			}
		default:
			// The member's requests (ANNOUNCE, GET_PARAMETER) and the
			// client's answers to them pass as they are [M].
			if !x.send(up, m) {
				return
			}
		}
	}
}

// send encodes m and writes it toward the member (up) or the client.
func (x *rtspFlow) send(up bool, m *rtsp.Message) bool {
	d := 0
	if !up {
		d = 1
	}
	x.enc[d] = m.Encode(x.enc[d][:0])
	return x.w.write(x.pr, up, x.sc, x.enc[d])
}

// request runs RTSP_REQUEST (and RTSP_REQUEST_DATA) over the client's
// request m: fwd false when a rule answered it (RTSP::respond), ok false
// when the flow ended.
func (x *rtspFlow) request(m *rtsp.Message) (fwd, ok bool) {
	if x.prog == nil || !x.prog.Handles(rules.RTSPRequest) {
		return true, true
	}
	collect, resp, ok := x.run(rules.RTSPRequest, m, false)
	if ok && resp == nil && collect && x.prog.Handles(rules.RTSPRequestData) {
		_, resp, ok = x.run(rules.RTSPRequestData, m, false)
	}
	if !ok {
		return false, false
	}
	if resp != nil {
		return false, x.w.write(x.pr, false, x.sc, resp.Encode(nil))
	}
	return true, true
}

// forwardRequest sends the client's request on, SETUP's Transport
// rewritten to data channels on the server side's address.
func (x *rtspFlow) forwardRequest(m *rtsp.Message) bool {
	p := rtspPending{method: strings.ToUpper(m.Method), cseq: m.CSeq(), session: m.Session()}
	if p.method == "SETUP" {
		if tv, ok := m.Get("Transport"); ok {
			specs := rtsp.ParseTransport(tv)
			client := x.pr.Client.Addr()
			for i := range specs {
				sp := &specs[i]
				cv, ok := sp.Get("client_port")
				if !ok || !sp.UDP() || sp.Multicast() {
					continue
				}
				ports, ok := rtsp.ParsePorts(cv)
				if !ok {
					continue
				}
				ch, err := x.rtspChannel(client, ports) // lsn.go
				if err == errLSN {
					// No translation for its data channel: the control
					// connection is reset, as a connection the pool cannot
					// translate is (the pool counted it) [M].
					closeChans(p.chans, "")
					x.pr.because(rstcause.LSNPort)
					x.pr.end(true)
					return false
				}
				if err != nil {
					continue // the transport passes as the client wrote it
				}
				mp := ch.MemberPorts()
				sp.Set("client_port", mp.String())
				if _, ok := sp.Get("destination"); ok {
					sp.Set("destination", x.server.String())
				}
				if p.chans == nil {
					p.chans = map[string]*rtsp.Channel{}
				}
				p.chans[mp.String()] = ch
			}
			if p.chans != nil {
				m.Set("Transport", rtsp.FormatTransport(specs))
			}
		}
	}
	x.mu.Lock()
	x.pending = append(x.pending, p)
	x.mu.Unlock()
	if !x.send(true, m) {
		closeChans(p.chans, "")
		return false
	}
	return true
}

// response acts on the member's answer m to the oldest pending request
// (the one of its CSeq when they differ) and sends it on.
func (x *rtspFlow) response(m *rtsp.Message) bool {
	p, ok := x.take(m.CSeq())
	if x.prog != nil && x.prog.Handles(rules.RTSPResponse) {
		collect, _, ok := x.run(rules.RTSPResponse, m, true)
		if ok && collect && x.prog.Handles(rules.RTSPResponseData) {
			_, _, ok = x.run(rules.RTSPResponseData, m, true)
		}
		if !ok {
			closeChans(p.chans, "")
			return false
		}
	}
	good := m.Status >= 200 && m.Status < 300
	sess := m.Session()
	if sess == "" {
		sess = p.session
	}
	switch {
	case !ok:
	case p.method == "SETUP":
		kept := ""
		if good {
			kept = x.setupAnswer(m, p, sess)
		}
		closeChans(p.chans, kept)
		if good && sess != "" && kept == "" {
			x.table.Add(sess, x.member, nil) // interleaved: the member only
		}
	case p.method == "TEARDOWN" && good:
		x.table.Teardown(sess)
	case good && sess != "":
		x.table.Add(sess, x.member, nil)
	}
	return x.send(false, m)
}

// setupAnswer rewrites a good SETUP answer's Transport toward the
// client: the data channel whose client_port the member names opens its
// side on the virtual's address. It returns that channel's key ("" for
// none).
func (x *rtspFlow) setupAnswer(m *rtsp.Message, p rtspPending, sess string) string {
	tv, ok := m.Get("Transport")
	if !ok || p.chans == nil {
		return ""
	}
	specs := rtsp.ParseTransport(tv)
	kept := ""
	for i := range specs {
		sp := &specs[i]
		cv, _ := sp.Get("client_port")
		ch := p.chans[cv]
		if ch == nil && len(p.chans) == 1 {
			for k, c := range p.chans {
				cv, ch = k, c
			}
		}
		if ch == nil || kept != "" || !sp.UDP() {
			continue
		}
		got := rtsp.Ports{}
		if sv, ok := sp.Get("server_port"); ok {
			got, _ = rtsp.ParsePorts(sv)
		}
		vp, err := ch.Open(x.pr.Local.Addr(), x.member.Addr(), got, x.opt.Idle)
		if err != nil {
			continue
		}
		kept = cv
		x.passOver(ch, vp)
		ch.Track(x.pr.e.env.Table, x.pr.vs.Name, &x.pr.vs.Ephemeral) // show sys connection, the Ephemeral column [M]
		x.counts.Channels.Add(1)
		sp.Set("client_port", rtsp.PortsOf(ch.ClientPeers()).String())
		sp.Set("server_port", vp.String())
		if _, ok := sp.Get("source"); ok {
			sp.Set("source", x.pr.Local.Addr().String())
		}
		x.table.Add(sess, x.member, ch)
	}
	if kept != "" {
		m.Set("Transport", rtsp.FormatTransport(specs))
	}
	return kept
}

// passOver makes the steering of virtuals on every port pass over the
// client side of an open channel (its ports vp on the virtual's
// address) until it closes, when this virtual is on every port: a UDP
// virtual on every port of the same address would take its datagrams.
// On a virtual on one port, one boolean test per channel.
func (x *rtspFlow) passOver(ch *rtsp.Channel, vp rtsp.Ports) {
	pr := x.pr
	if !pr.snap.Cfg.AnyPort() || pr.e.env.Pass == nil {
		return
	}
	var releases []func()
	for i := range vp.Count() {
		releases = append(releases, pr.e.env.Pass(netip.AddrPortFrom(pr.Local.Addr(), vp.Port(i)), true))
	}
	go func() {
		<-ch.Done()
		for _, r := range releases {
			r()
		}
	}()
}

// take removes the pending request cseq answers (the oldest when no
// CSeq matches).
func (x *rtspFlow) take(cseq int) (rtspPending, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.pending) == 0 {
		return rtspPending{}, false
	}
	i := 0
	for j, p := range x.pending {
		if p.cseq == cseq && cseq >= 0 {
			i = j
			break
		}
	}
	p := x.pending[i]
	x.pending = append(x.pending[:i], x.pending[i+1:]...)
	return p, true
}

// closeChans closes the channels a SETUP opened but for kept's.
func closeChans(chans map[string]*rtsp.Channel, kept string) {
	for k, ch := range chans {
		if k != kept {
			ch.Close()
		}
	}
}

// run runs ev over m and applies its verdicts as runEvent does; ok
// false when the flow ended.
func (x *rtspFlow) run(ev rules.Event, m *rtsp.Message, fromServer bool) (collect bool, respond *rtsp.Message, ok bool) {
	pr, rs := x.pr, x.pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return false, nil, false
	}
	sess := pr.RuleSession(x.prog)
	rs.ev = config.Event(ev.String())
	// The client's request's events run on the goroutine reading the
	// client: a clone there starts from the request, as openltm read
	// it (encoded again [M]: the reader keeps no copy of its bytes).
	msg := x.clones && !fromServer
	if msg {
		rs.beginMsg(m.Encode(nil), nil, false)
	}
	sess.BeginRTSP(m, fromServer)
	err := sess.Run(ev)
	collect, respond = sess.EndRTSP()
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	var late []lateClone
	if msg {
		late = rs.endMsg()
	}
	rs.mu.Unlock()
	pr.startMsgClones(late, &x.w.mu[1])
	return collect, respond, pr.applyRule(config.Event(ev.String()), err, v, detach)
}
