package l4

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/starttls"
	"github.com/openltm/openltm/rules"
)

// LDAP's StartTLS (RFC 4511 4.14) on a plaintext LDAP virtual. A
// client-ldap profile beside client-ssl makes the flow a STARTTLS offload
// as the mail profiles do (starttls.go), but read message by message: the
// client's StartTLS extended request is answered by the virtual, the
// client's handshake runs with the client-ssl profile, and the member's
// side never sees it. A server-ldap profile beside server-ssl makes the
// virtual send StartTLS to the member as soon as it is connected, and run
// the server-ssl handshake when the member agreed, before any of the
// client's bytes pass (ldapServerStartTLS, called from originate). Both
// may be on one virtual; each works alone too (LDAPS toward the member
// with client-ldap and plain server-ssl; LDAPS from the client with
// server-ldap and plain client-ssl).

// ldapBuf is the size of an LDAP flow's readers: a message up to it is
// read whole and passed in one write; a longer one passes in pieces
// through offload.pass's buffer of the same size.
const ldapBuf = offloadBuf

// ldapFlow is one client-ldap connection's state.
type ldapFlow struct {
	offload                       // offload.go
	s       *starttls.LDAPSession // (offload.mu)
}

// serveLDAPWith runs a client-ldap offload in mode (allow or require).
func (pr *proxied) serveLDAPWith(sc *serverConn, mode starttls.Mode) {
	x := &ldapFlow{offload: offload{pr: pr, sc: sc}, s: starttls.NewLDAPSession(mode)}
	pr.legsLeft.Store(2)
	go x.memberPump()
	x.clientPump()
}

// peek returns the next n bytes of br (fewer at the end of the stream)
// waiting through the flow's idle timeout; eof is a stream that ended
// before n, ok false a flow that was ended.
func (x *ldapFlow) peek(br *bufio.Reader, src *net.TCPConn, n int) (b []byte, eof, ok bool) {
	pr := x.pr
	for {
		pr.armIdle(src, pr.LastActive())
		b, err := br.Peek(n)
		switch {
		case err == nil:
			return b, false, true
		case errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(src):
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return b, true, true
		default:
			pr.lost(x.sc)
			return nil, false, false
		}
	}
}

// next reads the next message's header and its first piece (the whole
// message when it fits the reader): total is its length; eof is the
// stream's end at a message boundary (b then holds a partial message, if
// any); ok false a flow that was ended (an unreadable stream is reset).
func (x *ldapFlow) next(br *bufio.Reader, src *net.TCPConn) (b []byte, total int64, eof, ok bool) {
	for k := 2; ; k++ {
		h, eof, ok := x.peek(br, src, k)
		if !ok || eof {
			return h, 0, eof, ok
		}
		total, err := starttls.LDAPFrame(h)
		if err != nil {
			x.pr.e.env.Log.Warn("ldap: not an LDAP message, connection reset", "virtual", x.pr.vs.Name)
			x.pr.because(rstcause.LDAPMalformed)
			x.pr.end(true)
			return nil, 0, false, false
		}
		if total == 0 {
			continue
		}
		b, eof, ok = x.peek(br, src, int(min(total, int64(br.Size()))))
		return b, total, eof, ok
	}
}

// consume counts the n bytes of the piece just handled and drops them
// from br.
func (x *ldapFlow) consume(br *bufio.Reader, b []byte, up bool) {
	x.pr.count(len(b), up, x.sc)
	if up && x.pr.clone != nil {
		x.pr.clone.Client(b) // clone.go; serverside: write
	}
	br.Discard(len(b))
}

// clientPump reads the client's messages until the client's side ends.
func (x *ldapFlow) clientPump() {
	pr := x.pr
	defer pr.finishLeg()
	br := bufio.NewReaderSize(pr.client, ldapBuf)
	for {
		b, total, eof, ok := x.next(br, pr.client)
		switch {
		case !ok:
			return
		case eof:
			if len(b) > 0 && !x.toMember(b) {
				return
			}
			x.consume(br, b, true)
			if !pr.gone(x.sc) {
				closeWrite(x.sc.netConn())
			}
			return
		}
		x.mu.Lock()
		c := x.s.FromClient(b, int64(len(b)) == total)
		x.mu.Unlock()
		rest := total - int64(len(b))
		fwd := c.Forward && x.toMember(b)
		x.consume(br, b, true)
		if c.Forward && !fwd {
			return
		}
		to := x.toMember
		if !c.Forward {
			to = nil // refused: the rest is read and dropped
		}
		if rest > 0 && !x.pass(br, pr.client, rest, true, to) {
			return
		}
		if c.Reply == nil {
			continue
		}
		x.wmu.Lock()
		ok = x.toClient(c.Reply)
		x.wmu.Unlock()
		if !ok {
			return
		}
		if c.StartTLS {
			if !x.upgrade(br) {
				return
			}
			br = bufio.NewReaderSize(pr.ctls, ldapBuf)
		}
	}
}

// memberPump reads the member's messages until the member's side ends.
func (x *ldapFlow) memberPump() {
	pr := x.pr
	defer pr.finishLeg()
	br := bufio.NewReaderSize(x.sc.netConn(), ldapBuf)
	for {
		b, total, eof, ok := x.next(br, x.sc.conn)
		if !ok {
			return
		}
		x.wmu.Lock()
		if eof {
			if len(b) > 0 {
				x.toClient(b)
			}
			x.consume(br, b, false)
			if !pr.gone(x.sc) {
				closeWrite(pr.clientConn())
			}
			x.wmu.Unlock()
			return
		}
		x.mu.Lock()
		x.s.FromServer(b)
		x.mu.Unlock()
		rest := total - int64(len(b))
		ok = x.toClient(b)
		x.consume(br, b, false)
		ok = ok && (rest == 0 || x.pass(br, x.sc.conn, rest, false, x.toClient))
		x.wmu.Unlock()
		if !ok {
			return
		}
	}
}

// upgrade runs the client's TLS handshake after StartTLS's answer
// (offload.startTLS).
func (x *ldapFlow) upgrade(br *bufio.Reader) bool {
	return x.startTLS(br, func() { x.s.TLSStarted() })
}

// ServerLDAP implements rules.ServerLDAPConn: the settings LDAP::
// commands change for the server-ldap profile until the member is
// connected (SERVER_CONNECTED included). The rule lock is held.
func (pr *proxied) ServerLDAP() (*rules.STARTTLSSettings, error) {
	opt := pr.snap.Cfg.ServerLDAP
	rs := pr.rs
	switch {
	case opt == nil:
		return nil, errors.New("the virtual server has no server-ldap profile")
	case rs.ldapSrvStarted:
		return nil, startedError("the member's StartTLS has been sent on this connection (the activation mode applies until SERVER_CONNECTED)")
	case rs.ldapSrv == nil:
		rs.ldapSrv = &rules.STARTTLSSettings{Protocol: "LDAP", Enabled: true, Mode: opt.Mode.String()}
	}
	return rs.ldapSrv, nil
}

// startedError is the error of STARTTLS settings asked for once the
// profile read them: the profile is there (rules tell it from a missing
// one by its Started method).
type startedError string

func (e startedError) Error() string { return string(e) }

// Started marks the error for rules.
func (startedError) Started() bool { return true }

// serverLDAPMode is the server-ldap mode of this connection: the
// profile's, as rules changed it, None when they disabled it. The rule
// lock is taken when the flow has rules.
func (pr *proxied) serverLDAPMode() starttls.Mode {
	mode := pr.snap.Cfg.ServerLDAP.Mode
	rs := pr.rs
	if rs == nil {
		return mode
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.ldapSrvStarted = true
	if st := rs.ldapSrv; st != nil {
		if !st.Enabled {
			return starttls.None
		}
		mode, _ = starttls.ParseMode(st.Mode)
	}
	return mode
}

// ldapServerStartTLS sends StartTLS to the member (server-ldap) and reads
// its answer within the server-ssl profile's handshake timeout: tls is
// whether server-ssl's handshake is to run. A member that answers
// anything but success under require, or that does not answer, or not in
// LDAP, ends the flow with resets (ok false); under allow, a member that
// declines leaves the member's side in plaintext [M].
func (pr *proxied) ldapServerStartTLS(sc *serverConn, mode starttls.Mode, timeout time.Duration) (tls, ok bool) {
	if mode == starttls.None {
		return false, true
	}
	const id = 1 // no other operation is in progress on the member's side yet
	fail := func(why string) (bool, bool) {
		pr.e.env.Log.Warn("ldap: the member's StartTLS failed, connection reset", "virtual", pr.vs.Name, "profile", pr.snap.Cfg.ServerLDAP.Profile, "why", why)
		pr.because(rstcause.LDAPStartTLS)
		pr.end(true)
		return false, false
	}
	sc.conn.SetDeadline(time.Now().Add(timeout))
	defer sc.conn.SetDeadline(time.Time{})
	req := starttls.LDAPStartTLSRequest(id)
	if _, err := sc.conn.Write(req); err != nil {
		return fail(err.Error())
	}
	// Read exactly the answer: the member's next bytes are its handshake.
	hdr := make([]byte, 2, 64)
	if _, err := io.ReadFull(sc.conn, hdr); err != nil {
		return fail(err.Error())
	}
	total, err := starttls.LDAPFrame(hdr)
	for err == nil && total == 0 && len(hdr) < 6 {
		var c [1]byte
		if _, err = io.ReadFull(sc.conn, c[:]); err == nil {
			hdr = append(hdr, c[0])
			total, err = starttls.LDAPFrame(hdr)
		}
	}
	switch {
	case err != nil:
		return fail(err.Error())
	case total == 0 || total > starttls.LDAPWholeMax:
		return fail("the answer is not a StartTLS response")
	}
	m := append(hdr, make([]byte, int(total)-len(hdr))...)
	if _, err := io.ReadFull(sc.conn, m[len(hdr):]); err != nil {
		return fail(err.Error())
	}
	code, isAnswer := starttls.LDAPStartTLSAnswer(m, id)
	switch {
	case !isAnswer:
		return fail("the answer is not a StartTLS response")
	case code == starttls.LDAPSuccess:
		return true, true
	case mode == starttls.Allow:
		return false, true
	}
	return fail("the member declined StartTLS (resultCode " + strconv.Itoa(code) + ")")
}
