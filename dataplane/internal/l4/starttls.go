package l4

import (
	"bufio"
	"errors"
	"io"
	"os"
	"time"

	"github.com/openltm/openltm/dataplane/starttls"
	"github.com/openltm/openltm/rules"
)

// An smtps, imap or pop3 profile beside client-ssl makes a virtual's
// flows STARTTLS offloads. Such a flow does not start TLS at accept
// (terminate leaves it to this file): it is served on goroutines that
// read each direction line by line and hand the lines to a
// starttls.Session, which adds STARTTLS (STLS) to the member's
// capability answers and answers the client's STARTTLS itself. When that
// answer has been written, the client side's handshake runs with the
// client-ssl profile (handshakeClient, as at accept on other virtuals,
// CLIENTSSL_HANDSHAKE included) and the flow goes on reading the
// plaintext under TLS; the member's side stays plaintext throughout and
// never sees the STARTTLS. Bytes the client sent after STARTTLS and
// before its answer are dropped, not decrypted or passed on (the
// plaintext injection of CVE-2011-0411).

// stlsFlow is one offloaded connection's state.
type stlsFlow struct {
	offload                   // offload.go
	s       *starttls.Session // (offload.mu)
	tlsGo   chan struct{}     // the member's pump wrote STARTTLS's answer
	down    chan struct{}     // closed when the member's pump ends
}

// STARTTLS implements rules.STARTTLSConn: the settings SMTPS::, IMAP::
// and POP3:: commands change, from the profile's, until the offload
// starts (after SERVER_CONNECTED). The rule lock is held.
func (pr *proxied) STARTTLS() (*rules.STARTTLSSettings, error) {
	opt := pr.snap.Cfg.STARTTLS
	rs := pr.rs
	switch {
	case opt == nil:
		return nil, errors.New("the virtual server has no smtps, imap, pop3 or client-ldap profile")
	case rs.mailStarted:
		return nil, startedError("the conversation has started on this connection (the activation mode applies in CLIENT_ACCEPTED, LB_SELECTED and SERVER_CONNECTED)")
	case rs.mail == nil:
		rs.mail = &rules.STARTTLSSettings{Protocol: opt.Protocol.String(), Enabled: true, Mode: opt.Mode.String()}
	}
	return rs.mail, nil
}

// mailRuleMode is the connection's activation mode: the profile's, as
// its rules changed it, None when they disabled the offload (or the
// client side's SSL). Rules cannot change it after.
func (pr *proxied) mailRuleMode() starttls.Mode {
	mode := pr.snap.Cfg.STARTTLS.Mode
	rs := pr.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.mailStarted = true
	if rs.sslOff[rules.ClientSide] {
		return starttls.None // SSL::disable clientside: no TLS to offer
	}
	if st := rs.mail; st != nil {
		if !st.Enabled {
			return starttls.None
		}
		mode, _ = starttls.ParseMode(st.Mode)
	}
	return mode
}

// serveSTARTTLSRules runs an offloaded connection whose virtual has
// rules (none that read the flow's data, which the daemon refuses beside
// the profile). CLIENT_ACCEPTED has run; LB_SELECTED and SERVER_CONNECTED
// run as the member is connected, and then the offload starts with the
// mode the rules left.
func (pr *proxied) serveSTARTTLSRules() {
	if !pr.bind() { // ruleflow.go; SERVER_CONNECTED runs there
		pr.finishLeg()
		return
	}
	sc := pr.srv.Load()
	mode := pr.mailRuleMode()
	if mode == starttls.None {
		pr.legsLeft.Add(1)
		go pr.pump(false, sc)
		pr.pump(true, nil)
		return
	}
	pr.serveSTARTTLSWith(sc, mode)
}

// serveSTARTTLS runs an offloaded connection whose member side sc is
// connected, in the profile's mode (none: the conversation passes
// untouched, in plaintext).
func (pr *proxied) serveSTARTTLS(sc *serverConn, mode starttls.Mode) {
	if mode == starttls.None {
		pr.legsLeft.Store(2)
		go pr.copy(sc.conn, pr.client, false, sc)
		pr.copy(pr.client, sc.conn, true, sc)
		return
	}
	pr.serveSTARTTLSWith(sc, mode)
}

// serveSTARTTLSWith runs the offload in mode (allow or require).
func (pr *proxied) serveSTARTTLSWith(sc *serverConn, mode starttls.Mode) {
	if pr.snap.Cfg.STARTTLS.Protocol == starttls.LDAP {
		pr.serveLDAPWith(sc, mode) // ldap.go
		return
	}
	x := &stlsFlow{offload: offload{pr: pr, sc: sc}, s: starttls.NewSession(pr.snap.Cfg.STARTTLS.Protocol, mode),
		tlsGo: make(chan struct{}, 1), down: make(chan struct{})}
	pr.legsLeft.Store(2)
	go x.memberPump()
	x.clientPump()
}

// read appends one line (or, past starttls.LineMax, a piece of one)
// from br to *partial, counting it on the flow, and reports whether it
// ended a line; err is the read's error (deadlines are the caller's).
func (x *stlsFlow) read(br *bufio.Reader, up bool, partial *[]byte) (whole bool, err error) {
	chunk, err := br.ReadSlice('\n')
	*partial = append(*partial, chunk...)
	if len(chunk) > 0 {
		x.pr.count(len(chunk), up, x.sc)
		if up && x.pr.clone != nil {
			x.pr.clone.Client(chunk) // clone.go; serverside: write
		}
	}
	return err == nil, err
}

// clientPump reads the client's commands until the client's side ends.
func (x *stlsFlow) clientPump() {
	pr := x.pr
	defer pr.finishLeg()
	br := bufio.NewReaderSize(pr.client, starttls.LineMax)
	var partial []byte
	long := 0 // 1: the rest of a long line passes; 2: the rest of a refused one is dropped
	for {
		pr.armIdle(pr.client, pr.LastActive())
		whole, err := x.read(br, true, &partial)
		switch {
		case whole:
			line := partial
			partial = partial[:0]
			if long != 0 {
				if long == 1 && !x.toMember(line) {
					return
				}
				long = 0
				continue
			}
			x.mu.Lock()
			c := x.s.FromClient(line)
			x.mu.Unlock()
			if c.Forward && !x.toMember(line) {
				return
			}
			if (c.Raw > 0 && !x.pass(br, pr.client, c.Raw, true, x.toMember)) || (c.Drop > 0 && !x.pass(br, pr.client, c.Drop, true, nil)) {
				return
			}
			if !c.Reply {
				continue
			}
			tls, ok := x.flush()
			if !ok {
				return
			}
			if c.StartTLS && !tls && !x.awaitTLS() {
				return
			}
			if c.StartTLS || tls {
				if !x.upgrade(br) {
					return
				}
				br = bufio.NewReaderSize(pr.ctls, starttls.LineMax)
			}
		case errors.Is(err, bufio.ErrBufferFull) || len(partial) >= starttls.LineMax:
			if long == 0 {
				long = 1
				x.mu.Lock()
				refused := x.s.Long(partial)
				x.mu.Unlock()
				if refused {
					long = 2
					if _, ok := x.flush(); !ok {
						return
					}
				}
			}
			if long == 1 && !x.toMember(partial) {
				return
			}
			partial = partial[:0]
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(pr.client):
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if len(partial) > 0 && long != 2 && !x.toMember(partial) {
				return
			}
			if !pr.gone(x.sc) {
				x.sc.conn.CloseWrite()
			}
			return
		default:
			pr.lost(x.sc)
			return
		}
	}
}

// memberPump reads the member's answers until the member's side ends.
func (x *stlsFlow) memberPump() {
	pr := x.pr
	defer pr.finishLeg()
	defer close(x.down)
	br := bufio.NewReaderSize(x.sc.conn, starttls.LineMax)
	var partial, out []byte
	for {
		pr.armIdle(x.sc.conn, pr.LastActive())
		whole, err := x.read(br, false, &partial)
		switch {
		case whole:
			x.wmu.Lock()
			x.mu.Lock()
			var raw int64
			var tls bool
			out, raw, tls = x.s.FromServer(out[:0], partial)
			x.mu.Unlock()
			partial = partial[:0]
			ok := x.toClient(out) && (raw == 0 || x.pass(br, x.sc.conn, raw, false, x.toClient))
			x.wmu.Unlock()
			if !ok {
				return
			}
			if tls {
				select {
				case x.tlsGo <- struct{}{}:
				default:
				}
			}
		case errors.Is(err, bufio.ErrBufferFull) || len(partial) >= starttls.LineMax:
			// A line too long to read passes as the member wrote it [M].
			x.wmu.Lock()
			ok := x.toClient(partial)
			x.wmu.Unlock()
			if !ok {
				return
			}
			partial = partial[:0]
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(x.sc.conn):
		case errors.Is(err, io.EOF):
			x.wmu.Lock()
			if len(partial) > 0 && !x.toClient(partial) {
				x.wmu.Unlock()
				return
			}
			if !pr.gone(x.sc) {
				closeWrite(pr.clientConn())
			}
			x.wmu.Unlock()
			return
		default:
			pr.lost(x.sc)
			return
		}
	}
}

// flush writes the virtual's answers whose turn has come; tls reports
// that STARTTLS's was one.
func (x *stlsFlow) flush() (tls, ok bool) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	out, tls := x.s.Flush(nil)
	x.mu.Unlock()
	return tls, x.toClient(out)
}

// awaitTLS holds the client's side until the member's pump wrote
// STARTTLS's answer (after those the member owed before it), the
// member's side ends, or the flow idles.
func (x *stlsFlow) awaitTLS() bool {
	idle := x.pr.IdleTimeout()
	if idle <= 0 {
		idle = defaultIdleTimeout
	}
	t := time.NewTimer(idle)
	defer t.Stop()
	select {
	case <-x.tlsGo:
		return true
	case <-x.down:
	case <-t.C:
	}
	x.pr.lost(x.sc)
	return false
}

// upgrade runs the client's TLS handshake after STARTTLS's answer
// (offload.startTLS).
func (x *stlsFlow) upgrade(br *bufio.Reader) bool {
	return x.startTLS(br, func() { x.s.TLSStarted() })
}
