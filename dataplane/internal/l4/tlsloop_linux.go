//go:build linux

package l4

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/dataplane/tlsloop"
	"github.com/openltm/openltm/rules"
)

// TLS flows on the event loops. A standard virtual whose only extra is a
// client-ssl profile (no server-ssl, no rule event but CLIENT_ACCEPTED)
// runs its flows on a loop like a plain flow once the client's handshake
// is done: the handshake itself (and CLIENT_ACCEPTED before it) runs on a
// goroutine over the net package (blocking, within the profile's
// handshake-timeout), then the session moves to the loop
// (dataplane/tlsloop) with the client's socket, and the loop reads and
// writes plaintext through it. Everything else (member choice,
// persistence, SNAT, idle timeout, counters, the connection table) is the
// plain loop flow's.

// Phases of a loop TLS flow's handshake, for a close from outside.
const (
	hsRunning int32 = iota + 1
	hsDone          // the flow is the loop's
	hsKilled        // closed from outside during the handshake
)

// loopTLS reports whether a virtual's flows run on the loops with TLS:
// client-ssl only (without allow-non-ssl; not a DoH virtual, whose service
// runs its own), and no rule event but CLIENT_ACCEPTED, which runs on
// the handshake's goroutine before the handshake (acceptedOnLoop).
func loopTLS(snap *state.VirtualSnap) bool {
	t := snap.Cfg.TLS
	return t != nil && t.Client != nil && t.Server == nil && !t.AllowNonSSL && snap.BWC == nil && !snap.PF.Classes() && snap.LSN == nil && (snap.EvMask == 0 || snap.EvMask == eventBit(config.EventClientAccepted)) &&
		snap.Cfg.MBLB == nil && snap.DNS == nil && snap.Cfg.STARTTLS == nil && snap.Cfg.MQTT == nil && snap.Cfg.FIX == nil && snap.Cfg.Diameter == nil && !handlesSSL(snap.Cfg.Rules) && !sslPersists(snap.Cfg) // ssl persistence: goroutine flows (tls.go)
}

// handshakeTLS admits a client of a loopTLS virtual accepted for lr
// (whose load counts it), completes its handshake on this goroutine and
// gives the flow to lr.
func (lr *loopRT) handshakeTLS(vs *state.Virtual, fd int, client, local netip.AddrPort) {
	snap := vs.Snap.Load()
	if !loopTLS(snap) { // the configuration changed meanwhile
		lr.load.Add(-1)
		lr.e.handOff(vs, fd)
		return
	}
	ok, _, ifx := vs.AdmitArrival(snap, client, local, func() int { return rawsock.ArrivalIf(fd) })
	if !ok {
		if lr.e.refused(snap, client, local, ifx) { // rstcause.go
			rawsock.Reset(fd)
		} else {
			rawsock.CloseQuietly(fd) // over the reject rate
		}
		lr.load.Add(-1)
		return
	}
	var syn *synhdr.SYN
	if snap.SYN {
		syn = synhdr.Read(fd) // synopts.go
	}
	c, err := tlsloop.DupConn(fd)
	if err != nil {
		rawsock.Reset(fd)
		vs.Leave(snap.Addr)
		lr.load.Add(-1)
		return
	}
	var rs *ruleState
	var pers *flowPersist
	if snap.EvMask != 0 {
		if rs, pers = lr.acceptedOnLoop(vs, snap, fd, c, syn, client, local); rs == nil {
			return // not the loop's: ended, or going on as a goroutine flow
		}
	}
	lf := &loopFlow{lr: lr, cfd: fd, sfd: -1, hsConn: c}
	lf.hs.Store(hsRunning)
	pr := &lf.flow
	pr.init(lr.e, vs, snap, client, local, lf)
	pr.Flow.Arrival = int32(ifx)
	pr.syn = syn
	if rs != nil {
		pr.rs = rs // its pool, member, SNAT and LB::mode decisions (start, source, modeOverride)
		if pers != nil {
			pr.pers.Store(pers)
		}
	}
	lr.e.env.Table.Add(&pr.Flow)
	tc := snap.Cfg.TLS
	if rs != nil && rs.sslTLS != nil { // SSL::profile in CLIENT_ACCEPTED (tls.go)
		tc = rs.sslTLS
	}
	c.SetDeadline(time.Now().Add(tc.Handshake()))
	lc := tlsloop.Server(tc.WatchClient(c, tc.Client))
	lc.LimitRecords(tc.ClientMaxRecord)
	err = snap.NoteClientTLS(lc.TLS(), tc.ClientHandshake(lc.TLS().Handshake), &lf.cssl)
	if err != nil || !lf.hs.CompareAndSwap(hsRunning, hsDone) {
		if err != nil {
			pr.because(rstcause.TLSHandshake)
		}
		lf.handshakeFailed(err != nil || lf.killReset.Load())
		return
	}
	c.Close() // the net package's descriptor; fd stays
	lc.Detach(fd)
	lf.ctls = lc
	lr.Post(func() { lf.startTLS() })
}

// acceptedOnLoop runs CLIENT_ACCEPTED, the only rule event of a loopTLS
// virtual, for the client on fd (c a duplicate of it, syn its SYN when
// kept) before its
// handshake, as the goroutine flow does (serveRules, then terminate). It
// is run by a goroutine flow over c, listed meanwhile. When the rule
// ended the client, or asked for something only a goroutine flow does
// after the event (TCP::collect, TCP::respond, a node or forward
// decision, SSL::disable, SSL::allow_nonssl, SSL::maximum_record_size,
// SSL::allow_dynamic_record_sizing, SSL::unclean_shutdown, LB::detach), that flow goes on (or ends) on
// this goroutine, fd is closed (c keeps the socket) and nil is returned.
// Otherwise the rule session is given back (no event follows), the
// goroutine flow leaves the table without being counted out, and its
// decisions and persistence state are returned for the loop flow.
func (lr *loopRT) acceptedOnLoop(vs *state.Virtual, snap *state.VirtualSnap, fd int, c *net.TCPConn, syn *synhdr.SYN, client, local netip.AddrPort) (*ruleState, *flowPersist) {
	pr := &proxied{client: c}
	pr.init(lr.e, vs, snap, client, local, pr)
	pr.syn = syn
	pr.rules, pr.evMask, pr.rs = snap.Cfg.Rules, snap.EvMask, &ruleState{clones: irules.Program(snap.Cfg.Rules).Clones()}
	lr.e.env.Table.Add(&pr.Flow)
	pr.legsLeft.Store(1)
	if !pr.runEvent(config.EventClientAccepted) {
		rawsock.Close(fd) // c, closed or closing, ends the socket as the rule said
		lr.load.Add(-1)
		pr.finishLeg()
		return nil, nil
	}
	rs := pr.rs
	rs.mu.Lock()
	goroutine := rs.side[rules.ClientSide].collecting || rs.responded || rs.Node || rs.sslOff[rules.ClientSide] || len(rs.toClient) > 0 ||
		rs.nonSSL != 0 || rs.maxRecord[rules.ClientSide].Load() != 0 || // SSL::allow_nonssl, SSL::maximum_record_size (tls.go)
		rs.dynRecords != 0 || rs.unclean[rules.ClientSide].Load() || // SSL::allow_dynamic_record_sizing, SSL::unclean_shutdown (sslsession.go)
		rs.sess != nil && rs.sess.PendingAfters() > 0 // scripts `after` scheduled run on the goroutine flow (ruleafter.go)
	rs.mu.Unlock()
	if goroutine {
		rawsock.Close(fd)
		lr.load.Add(-1)
		if !pr.terminate() { // tls.go
			pr.end(true)
			pr.finishLeg()
			return nil, nil
		}
		pr.pump(true, nil)
		return nil, nil
	}
	pr.endRules()
	lr.e.env.Table.Remove(&pr.Flow)
	return rs, pr.pers.Load()
}

// handshakeFailed ends a flow whose handshake failed or was cut short:
// the client is reset (reset) or closed.
func (lf *loopFlow) handshakeFailed(reset bool) {
	lf.hsConn.Close()
	if reset {
		lf.flow.rst(true, false)
		rawsock.Reset(lf.cfd)
	} else {
		rawsock.Close(lf.cfd)
	}
	lf.closed = true
	lf.retire()
	lf.lr.load.Add(-1)
}

// killHandshake is the flow's Closer while its handshake runs: the
// handshake is cut short, and its goroutine ends the flow. False means the
// flow is already the loop's.
func (lf *loopFlow) killHandshake(reset bool) bool {
	if lf.hs.Load() != hsRunning {
		return false
	}
	lf.killReset.Store(reset)
	if !lf.hs.CompareAndSwap(hsRunning, hsKilled) {
		return false
	}
	lf.hsConn.SetDeadline(time.Unix(1, 0))
	return true
}

// startTLS starts a handshaken flow on its loop.
func (lf *loopFlow) startTLS() {
	if lf.closed { // closed from outside once handshaken, before this
		lf.lr.load.Add(-1)
		return
	}
	lr := lf.lr
	lf.idx = len(lr.flows)
	lr.flows = append(lr.flows, lf)
	lf.start()
}

// pumpTLSUp reads the client's plaintext and writes it to the server.
func (lf *loopFlow) pumpTLSUp() {
	d := &lf.up
	for i := 0; i < pumpReads; i++ {
		buf := bufPool.Get().(*[]byte)
		n, err := lf.ctls.Read(*buf)
		if lf.ctls.Buffered() > 0 && !lf.down.tlsOut {
			// An answer of the session's own (a key update's).
			if lf.ctls.Flush() != nil {
				bufPool.Put(buf)
				lf.abort(true)
				return
			}
			lf.down.tlsOut = lf.ctls.Buffered() > 0
		}
		if n > 0 {
			lf.count(n, true)
			if lf.clone != nil {
				lf.clone.Both((*buf)[:n]) // clone.go
			}
			w, werr := rawsock.WriteAll(lf.sfd, (*buf)[:n])
			if werr != nil {
				bufPool.Put(buf)
				lf.flow.peerReset(true)
				lf.abort(true)
				return
			}
			if w < n {
				// The server's next edge resumes; an error after the bytes
				// (close_notify) is sticky and read again then.
				d.buf, d.off, d.n = buf, w, n
				return
			}
			if err == nil && !lf.ctls.More() {
				bufPool.Put(buf)
				return // the client's next edge tells of more
			}
		}
		bufPool.Put(buf)
		switch {
		case err == nil:
		case err == tlsloop.ErrWouldBlock:
			return
		case errors.Is(err, io.EOF):
			lf.sourceEOF(true)
			return
		default:
			lf.flow.peerReset(false)
			lf.abort(true)
			return
		}
	}
	lf.again(true)
}

// pumpTLSDown reads the server's bytes and writes them to the client as
// records; records the client's socket does not take wait in the session
// (tlsOut) and the server is not read until they went.
func (lf *loopFlow) pumpTLSDown() {
	d := &lf.down
	for i := 0; i < pumpReads; i++ {
		buf, n := lf.readSource(lf.sfd, false)
		if buf == nil {
			return
		}
		_, werr := lf.ctls.Write((*buf)[:n])
		bufPool.Put(buf)
		if werr == nil {
			werr = lf.ctls.Flush()
		}
		if werr != nil {
			lf.flow.peerReset(false)
			lf.abort(true)
			return
		}
		if lf.ctls.Buffered() > 0 {
			d.tlsOut = true // the client's next edge resumes
			return
		}
		if n < len(*buf) {
			if d.rdhup {
				lf.sourceEOF(false)
			}
			return
		}
	}
	lf.again(false)
}

// flushTLS sends the records waiting for the client's socket; once they
// went, the server's FIN follows them or the server is read again.
func (lf *loopFlow) flushTLS() {
	d := &lf.down
	if err := lf.ctls.Flush(); err != nil {
		lf.abort(true)
		return
	}
	if lf.ctls.Buffered() > 0 {
		return
	}
	d.tlsOut = false
	if d.eof {
		lf.passFIN(false)
		return
	}
	lf.pump(false)
}
