package mblb

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
)

// IIOP sessions (the iiop profile): CORBA's GIOP over TCP, balanced per
// request. A GIOP client pipelines requests on one connection and matches
// each Reply to its Request by request id, in any order; so, as with SIP,
// an IIOP client is not served by the ordered response queue: it has its
// own connection to each member it sends to, and a member's replies go to
// that client as they come, out of order when they come so. Each Request
// and LocateRequest (or its first fragment) is balanced by itself:
//
//   - persist-object-key: a request for an object key another request of
//     the virtual went with goes to that member (while it can take it);
//   - persist-request-id: a request whose request id another request of
//     the virtual carried goes to that request's member [M: BIG-IP
//     documents only "persists on the request id"];
//   - a request expecting a reply is pending until its Reply or
//     LocateReply; unanswered after timeout, the client is reset
//     (abort-on-timeout) or the request is forgotten (its late reply, if
//     any, is still passed on [M]);
//   - a CancelRequest goes to its request's member and forgets it; one
//     for no pending request goes nowhere [M];
//   - a Fragment follows its first message: by request id in GIOP 1.2,
//     after the last fragmented message in 1.1 (which allows no
//     interleaving); a member's 1.1 fragments reach the client with no
//     other member's message between them;
//   - a client's CloseConnection, MessageError, Reply or LocateReply
//     (bidirectional GIOP is not run) closes the client [M]; a member's
//     CloseConnection closes that member's connection only, not passed
//     on [M]; what else a member sends goes to the client.
//
// A stream that is not GIOP (a bad header, a body short of its fields, a
// Fragment of nothing) resets the client, or fails the member's
// connection [M]. Sessions run on goroutines, never on event loops.
//
// Per message: a framer call, Parse (no allocation), one Pick, one write
// and, for a request awaiting its reply, a map entry under the client's
// lock; persistence adds a lookup in the engine's table, and an
// allocation only when a key is learnt.

// IIOPOptions is the iiop profile.
type IIOPOptions struct {
	// PersistObjectKey and PersistRequestID are persist-object-key and
	// persist-request-id.
	PersistObjectKey, PersistRequestID bool
	// Timeout is how long a request may wait for its reply; 0: forever.
	Timeout time.Duration
	// AbortOnTimeout resets the client whose request timed out.
	AbortOnTimeout bool
}

// iiopPersistLimit bounds each persistence table; past it about half of
// the records, chosen at random, are forgotten [M].
const iiopPersistLimit = 1 << 16

// iiopPersist is a virtual's object-key and request-id persistence.
type iiopPersist struct {
	mu   sync.Mutex
	keys map[string]Member
	ids  map[uint32]Member
}

func (p *iiopPersist) lookup(key []byte, id uint32, byKey, byID bool) (Member, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if byKey && key != nil {
		if m, ok := p.keys[string(key)]; ok {
			return m, true
		}
	}
	if byID {
		if m, ok := p.ids[id]; ok {
			return m, true
		}
	}
	return Member{}, false
}

func (p *iiopPersist) record(key []byte, id uint32, byKey, byID bool, m Member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if byKey && key != nil {
		if old, ok := p.keys[string(key)]; !ok || old.ID != m.ID {
			if len(p.keys) >= iiopPersistLimit {
				forgetHalf(p.keys)
			}
			p.keys[string(key)] = m
		}
	}
	if byID {
		if old, ok := p.ids[id]; !ok || old.ID != m.ID {
			if len(p.ids) >= iiopPersistLimit {
				forgetHalf(p.ids)
			}
			p.ids[id] = m
		}
	}
}

func forgetHalf[K comparable, V any](m map[K]V) {
	n := len(m) / 2
	for k := range m {
		if n == 0 {
			return
		}
		delete(m, k)
		n--
	}
}

// iiopPending is a request awaiting its reply.
type iiopPending struct {
	sc   *serverConn
	sent int64 // Unix nanoseconds
	// mid is the request's id on sc: the client's own, or on a
	// connection one-connect shares the one it was given there.
	mid uint32
	// kept is the request as sent, for a member's CloseConnection
	// (GIOP: requests unanswered then were not processed and may be
	// sent again): a fragmented one's messages one after another; nil
	// once sent again, or for a fragmented one past MaxMessageSize.
	kept *msg
	// partial: kept holds a fragmented request whose last fragment has
	// not been sent yet (it is not sent again yet).
	partial bool
	// orphan: sc's member sent CloseConnection while the request was
	// partial; its further Fragments are kept, not written to sc, and
	// with the last one it is sent again whole (resendOrphan).
	orphan bool
	// mapped: on the client's own connection sc, the request went
	// under mid rather than its own id (is.mapped), a late reply to
	// an earlier request under that id being still due there.
	mapped bool
	// The request's GIOP minor version, byte order and type, for the
	// system exception answering it when it cannot be passed on
	// (answerFailed).
	minor          uint8
	little, locate bool
}

// iiopWire is a request id on a client's own member connection.
type iiopWire struct {
	sc  *serverConn
	mid uint32
}

// iiopLateOwn is a request cancelled or timed out on a client's own
// connection whose late reply may still come: the client's id, and
// when it was forgotten (Unix ns).
type iiopLateOwn struct {
	id uint32
	at int64
	// skip: its reply is being dropped (the client reused the id, or
	// awaits it elsewhere): its GIOP 1.2 Fragments too.
	skip bool
}

// drop recycles what p keeps; the caller has taken p out of pending.
func (p iiopPending) drop() {
	if p.kept != nil {
		p.kept.unref()
	}
}

// unpend is drop, and on a shared connection the end of the request's
// route there and of its reservation in the pool. The caller has taken
// p out of pending and holds no session lock (the pool's lock is taken
// before the session's elsewhere).
func (is *iiopSession) unpend(p iiopPending) {
	p.drop()
	if p.mapped {
		is.s.mu.Lock()
		delete(is.mapped, iiopWire{p.sc, p.mid})
		is.s.mu.Unlock()
	}
	if sh := p.sc.iiop; sh != nil && sh.forget(p.mid) {
		is.oc.released(p.sc)
	}
	p.sc.iiopDrained() // (a drained connection with nothing owed now)
}

// retire is unpend for a request cancelled or timed out: on a shared
// connection its route is kept a while for a late reply (retire). The
// caller then closes a drained connection nothing is owed on any more
// (iiopDrained), after writing what it writes there.
func (is *iiopSession) retire(p iiopPending) {
	p.drop() // (an own connection's late route: keepLateOwn)
	if sh := p.sc.iiop; sh != nil && sh.retire(p.mid) {
		is.oc.released(p.sc)
	}
}

// iiopFrag is where a GIOP 1.2 fragmented message of the client goes
// on: its connection and its request id there.
type iiopFrag struct {
	sc  *serverConn
	mid uint32
	// drop: the message could not go on (fragFailed): its further
	// Fragments are dropped.
	drop bool
}

// iiopSession is one IIOP client connection's routing state.
type iiopSession struct {
	s   *ClientConn
	opt IIOPOptions
	p   *iiopPersist // nil without persistence
	wmu sync.Mutex   // one write at a time to the client
	// smu: one write at a time to the client's own member connections
	// (the client's reader, and a member's reader sending again what a
	// CloseConnection left); a shared connection has its own lock
	// (lockFor). The client's reader holds the lock of a GIOP 1.1
	// fragmented message's connection through it (chain), so that
	// nothing lands between its fragments.
	smu   sync.Mutex
	chain *sync.Mutex
	// oc is the virtual's one-connect pool: member connections shared
	// with the virtual's other clients; nil without one-connect.
	oc *connPool
	// out queues what the shared connections' readers pass to the
	// client, written by the client's own writer (iiopout.go); used
	// with one-connect only.
	out iiopOut

	// pending (guarded by s.mu) are the requests awaiting their reply
	// by request id; the client is not read while MaxInFlight are.
	pending map[uint32]iiopPending
	// lateOwn (guarded by s.mu; nil until the first) are the requests
	// cancelled or timed out on the client's own connections whose late
	// reply may still come, by their id there; mapped those sent under
	// another id there than their own (the client's id by it), because a
	// late reply under their id was due there. See keepLateOwn.
	lateOwn map[iiopWire]iiopLateOwn
	mapped  map[iiopWire]uint32
	nextMid uint32
	// replied (guarded by s.mu; one-connect only): replies that settled
	// their request and wait in out, not yet written to the client;
	// counted in the window with pending, so that the client's reader
	// stops reading requests while its unread replies fill the window
	// (reserve), the writer waking it as it writes them (unwindow).
	replied int
	// holding (guarded by s.mu): the client's reader waits in reserve
	// with a request under holdID, read and not yet sent (reused).
	holding bool
	holdID  uint32
	// ownLate: lateOwn or mapped has been used (set once): a member's
	// GIOP 1.2 Fragment on an own connection is looked up then only.
	ownLate atomic.Bool

	// Reader only: where a 1.1 fragmented message goes on (fragTo),
	// and 1.2 fragmented messages by request id.
	fragTo *serverConn
	fragID uint32 // the client's id of the 1.1 fragmented message
	// fragDrop: the 1.1 fragmented message could not go on
	// (fragFailed): its further Fragments are dropped.
	fragDrop bool
	frags    map[uint32]iiopFrag
	exclude  []MemberID
}

// runIIOP is Run for an IIOP virtual.
func (s *ClientConn) runIIOP() error {
	e := s.e
	is := &iiopSession{s: s, opt: e.cfg.Request.IIOP, p: e.iiop, pending: map[uint32]iiopPending{}, oc: e.pool}
	s.iiop = is
	if is.oc != nil {
		is.out.init(e.cfg.MaxInFlight * e.cfg.MaxMessageSize)
	}
	if is.opt.Timeout > 0 {
		go is.timeouts()
	}
	st := newStream(iiop.Framer{Max: e.cfg.MaxMessageSize}, e.cfg.MaxMessageSize)
	defer st.release()
	defer is.leave()
	defer is.endChain()
	return s.readClient(&st, "IIOP ", func(err error) bool {
		return errors.Is(err, ErrTooLarge) || errors.Is(err, iiop.ErrTooLarge)
	}, is.fromClient, is.drain)
}

// bad resets the client for a message it should not have sent.
func (is *iiopSession) bad(format string, args ...any) bool {
	s := is.s
	s.e.logf("mblb: IIOP client %s: %s, reset", s.client, fmt.Sprintf(format, args...))
	s.Close(true)
	return false
}

// fromClient routes one framed message of the client; false when the
// session ended.
func (is *iiopSession) fromClient(b []byte) bool {
	s, e := is.s, is.s.e
	m, err := iiop.Parse(b)
	if err != nil {
		return is.bad("%v", err)
	}
	switch m.Type {
	case iiop.Request, iiop.LocateRequest:
		s.msgsIn.Add(1)
		e.stats.messages.Add(1)
		if m.Expects && !is.reserve(m.RequestID) {
			return false
		}
		sc, mid := is.balance(&m, b)
		if sc == nil {
			return false
		}
		if m.More() {
			if m.Minor >= 2 {
				if is.frags == nil {
					is.frags = map[uint32]iiopFrag{}
				}
				is.frags[m.RequestID] = iiopFrag{sc: sc, mid: mid}
			} else {
				is.fragTo, is.fragID, is.fragDrop = sc, m.RequestID, false // (place took its lock for the chain)
			}
		}
		return true
	case iiop.Fragment:
		var sc *serverConn
		id := m.RequestID
		if m.Minor >= 2 {
			f := is.frags[m.RequestID]
			sc = f.sc
			if !m.More() {
				delete(is.frags, m.RequestID)
			}
			if f.drop {
				return true // (fragFailed)
			}
			if sc != nil && f.mid != m.RequestID {
				m.SetRequestID(b, f.mid)
			}
		} else {
			if is.fragDrop {
				is.fragDrop = m.More() // (fragFailed)
				return true
			}
			sc, id = is.fragTo, is.fragID
			if !m.More() {
				is.fragTo = nil
			}
		}
		if sc == nil {
			return is.bad("GIOP 1.%d Fragment (request id %d) of no fragmented message", m.Minor, m.RequestID)
		}
		if is.keepFragment(id, sc, b, !m.More()) {
			// Its member closed before the request was whole: kept,
			// and sent again whole once its last fragment is here.
			if !m.More() {
				if m.Minor < 2 {
					is.endChain()
				}
				is.resendOrphan(sc, id)
			}
			return true
		}
		ok := is.toServer(sc, b)
		if m.Minor < 2 && (!m.More() || !ok) {
			is.endChain()
		}
		if !ok && !is.fragFailed(sc, id, !m.More()) && m.More() {
			// Not to be sent again: its further Fragments dropped.
			if m.Minor >= 2 {
				is.frags[m.RequestID] = iiopFrag{drop: true}
			} else {
				is.fragTo, is.fragDrop = nil, true
			}
		}
		return true
	case iiop.CancelRequest:
		s.mu.Lock()
		p, ok := is.pending[m.RequestID]
		if ok {
			delete(is.pending, m.RequestID)
			is.keepLateOwn(m.RequestID, p)
			s.cond.Broadcast()
		}
		s.mu.Unlock()
		if ok {
			is.retire(p)
			if p.mid != m.RequestID {
				m.SetRequestID(b, p.mid)
			}
			is.toServer(p.sc, b)
			p.sc.iiopDrained() // (a late reply does not hold a drained connection)
		}
		return true
	case iiop.CloseConnection:
		s.Close(false)
		return false
	}
	return is.bad("GIOP %v from a client (bidirectional GIOP is not run)", m.Type)
}

// drain waits, after the client half-closed, until every request it
// awaits a reply to has one (or timed out, or its member's connection
// ended), so that a client that sends its requests and shuts its side
// down still gets its replies; the engine's idle timeout bounds the wait.
func (is *iiopSession) drain() {
	s := is.s
	s.mu.Lock()
	for len(is.pending) > 0 && !s.closed {
		s.cond.Wait()
	}
	s.mu.Unlock()
	if is.oc != nil {
		is.out.flush() // the replies queued for the client written
	}
}

// memberGone settles the requests whose member's connection ended
// (EOF, a reset, an error, or closed by openltm) unanswered. Unless the
// member sent CloseConnection first (closed: resend has sent them again
// or answered them), each request sent whole there is answered at once
// with a COMM_FAILURE system exception, COMPLETED_MAYBE (answerLost):
// the member had it and may have run it, as a CORBA client's own ORB
// reports a connection lost under a request [M: the client is told at
// once rather than the request forgotten or left to the timeout; with
// or without a timeout]. A fragmented request still incomplete becomes
// an orphan without a timeout (sent again whole with its last fragment:
// the member ran none of it); with one, its next Fragment's failed
// write does that (fragFailed). After a CloseConnection, what is left
// there is left to the timeout, or forgotten at once without one, so
// that the client's window does not fill [M]; likewise when the client's
// session has ended.
func (is *iiopSession) memberGone(sc *serverConn, closed bool) {
	s := is.s
	timeout := is.opt.Timeout > 0
	s.mu.Lock()
	answer := !closed && !s.closed
	if timeout && !answer {
		s.mu.Unlock()
		return
	}
	var gone []iiopPending
	var lost []iiopLost
	for id, p := range is.pending {
		switch {
		case p.sc != sc || p.orphan: // (an orphan waits for its last fragment)
		case p.partial:
			// Still being sent: an orphan, sent again whole (or
			// answered) with its last fragment (fragFailed).
			if !timeout {
				p.orphan = true
				is.pending[id] = p
			}
		case answer:
			delete(is.pending, id)
			lost = append(lost, iiopLost{id, p})
		case !timeout:
			delete(is.pending, id)
			gone = append(gone, p)
		}
	}
	if len(gone)+len(lost) > 0 {
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	for _, p := range gone {
		is.unpend(p)
	}
	if n := len(gone); n > 0 {
		s.e.logf("mblb: IIOP client %s: %d requests unanswered by %s, whose connection ended", s.client, n, sc.leg.Member.Name)
	}
	if len(lost) > 0 {
		is.answerLost(sc, lost)
	}
}

// iiopLost is a request (the client's id) sent whole to a member whose
// connection ended without CloseConnection before its reply.
type iiopLost struct {
	id uint32
	p  iiopPending
}

// answerLost answers each lost request, taken out of pending, with a
// COMM_FAILURE system exception, COMPLETED_MAYBE, counted in
// Stats.IIOPLost (memberGone).
func (is *iiopSession) answerLost(sc *serverConn, lost []iiopLost) {
	s := is.s
	s.e.stats.iiopLost.Add(uint64(len(lost)))
	s.e.logf("mblb: IIOP client %s: %d requests sent to %s unanswered when its connection ended without CloseConnection: answered with COMM_FAILURE, COMPLETED_MAYBE", s.client, len(lost), sc.leg.Member.Name)
	for _, l := range lost {
		is.unpend(l.p)
		is.answerCommFailure(l.p, l.id, iiop.CompletedMaybe)
	}
}

// reserve waits for room in the client's window of requests awaiting
// their reply, for the client's request id (read, not yet sent); false
// when the session ended meanwhile. While it waits the id counts as
// awaited (reused), so that a late reply to an earlier request under
// it is not passed to the client as this one's answer.
func (is *iiopSession) reserve(id uint32) bool {
	s := is.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(is.pending)+is.replied >= s.e.cfg.MaxInFlight && !s.closed {
		is.holding, is.holdID = true, id
		for len(is.pending)+is.replied >= s.e.cfg.MaxInFlight && !s.closed {
			s.cond.Wait()
		}
		is.holding = false
	}
	return !s.closed
}

// reused: the client awaits a reply under its request id id: a request
// pending, or one read and waiting in reserve. The caller holds s.mu.
func (is *iiopSession) reused(id uint32) bool {
	_, ok := is.pending[id]
	return ok || (is.holding && is.holdID == id)
}

// balance sends a request (or its first fragment) to the member its
// persistence or Pick chooses, choosing again when a connection cannot
// be had or written, and files it as pending when it expects a reply.
// It returns the connection and the request's id there; nil when the
// session ended.
func (is *iiopSession) balance(m *iiop.Message, b []byte) (*serverConn, uint32) {
	s, e := is.s, is.s.e
	byKey, byID := is.opt.PersistObjectKey, is.opt.PersistRequestID
	c := Choice{Client: s.client, Tag: s.tag}
	if is.p != nil {
		if mem, ok := is.p.lookup(m.Key, m.RequestID, byKey, byID); ok {
			c.Target = Target{Member: mem.Addr}
		}
	}
	is.exclude = is.exclude[:0]
	for attempt := 0; attempt < maxPickAttempts; attempt++ {
		if s.isClosed() {
			return nil, 0
		}
		c.Exclude = is.exclude
		mem, err := e.cfg.Pick(c)
		if err == nil && excluded(is.exclude, mem.ID) {
			err = ErrNoMember
		}
		if err != nil && !c.Target.IsZero() {
			c.Target = Target{} // the persisted member cannot take it: balance
			continue
		}
		if err != nil {
			is.bad("%v for GIOP %v (request id %d)", err, m.Type, m.RequestID)
			return nil, 0
		}
		sc, err := is.conn(mem)
		if err != nil {
			if errors.Is(err, errClosed) {
				return nil, 0
			}
			is.exclude = append(is.exclude, mem.ID)
			continue
		}
		if f := iiopBeforePlace.Load(); f != nil {
			(*f)(sc)
		}
		mid, how := is.place(sc, m, b, true)
		switch how {
		case placedOK:
			if is.p != nil {
				is.p.record(m.Key, m.RequestID, byKey, byID, sc.leg.Member)
			}
			return sc, mid
		case placeEnded:
			continue // the member again, over a live connection (sc is down)
		}
		is.exclude = append(is.exclude, sc.leg.Member.ID)
		e.stats.retries.Add(1)
	}
	is.bad("no server connection after %d attempts", maxPickAttempts)
	return nil, 0
}

// conn is a connection to mem for one request: the client's own
// (opened on first use), or with one-connect one the pool lends,
// reserved for the request until its reply (or its write, when it
// expects none).
func (is *iiopSession) conn(mem Member) (*serverConn, error) {
	if is.oc != nil {
		return is.oc.acquire(is.s, mem, "", nil)
	}
	if sc := is.s.ownConn(mem.ID); sc != nil {
		return sc, nil
	}
	return is.dial(mem)
}

// placed is what place did with a request.
type placed uint8

const (
	// placedOK: written (or settled meanwhile: not to be sent elsewhere).
	placedOK placed = iota
	// placeFailed: the write failed; nothing is pending. Another member.
	placeFailed
	// placeEnded: sc's reader had ended (sc down) before the request
	// could be filed there, so it was neither filed nor written: the
	// member may be asked again over another connection.
	placeEnded
)

// iiopBeforePlace, when set (tests only), runs before a client's request
// is placed on the connection chosen for it.
var iiopBeforePlace atomic.Pointer[func(*serverConn)]

// place writes request b (m parsed from it, m.RequestID the client's
// id) to sc: on a shared connection under an id of its own there (b is
// rewritten), filed as pending when it expects a reply, its bytes kept
// for a member's CloseConnection when the client's reader sends it (a
// request sent again is not kept: it is sent again at most once). From
// the client's reader (reader) or a member's (sending again). It returns
// the id on sc and placedOK; placeFailed when the write failed (nothing
// is then pending), unless the request was settled meanwhile (answered
// as lost when sc ended under the write, timed out, or the session
// ended): not to be sent elsewhere then.
//
// A connection chosen while live may end before the request is filed
// (its member closed it; its reader has marked it down and settled what
// was pending there, memberGone, or is about to). Filed after that
// settling, a request written there would wait for a reply that cannot
// come, until the timeout or, without one, until the client left. So
// whether sc is down is read under s.mu as the request is filed: the
// reader marks sc down before it takes s.mu to settle (and, on a shared
// connection, before it collects the sessions routed there), so a
// request filed while sc was not down is one the settling finds, and
// one that finds sc down is not sent there (placeEnded).
func (is *iiopSession) place(sc *serverConn, m *iiop.Message, b []byte, reader bool) (uint32, placed) {
	s := is.s
	mid := m.RequestID
	sh := sc.iiop
	if sh != nil {
		mid = sh.assign(is, m.RequestID, m.Expects)
		if reader {
			m.SetRequestID(b, mid)
		} else {
			setChainID(b, mid) // (a fragmented request sent again whole)
		}
	}
	if !m.Expects && sc.down.Load() {
		// A one-way request owes no reply, but written to a connection
		// already ended it would be lost for nothing.
		if sh != nil {
			is.oc.released(sc)
		}
		return mid, placeEnded
	}
	if m.Expects {
		p := iiopPending{sc: sc, mid: mid, sent: is.clock(), partial: reader && m.More(),
			minor: m.Minor, little: m.Little(), locate: m.Type == iiop.LocateRequest}
		if reader { // (one sent again is not kept: at most once [M])
			p.kept = getMsg(len(b))
			copy(p.kept.b, b)
		}
		s.mu.Lock()
		if sc.down.Load() {
			s.mu.Unlock()
			is.unpend(p) // (its kept bytes, its route and reservation on a shared sc)
			return mid, placeEnded
		}
		old, had := is.pending[m.RequestID]
		if had && reader && old.sc.iiop == nil {
			// The client reused an id awaiting its reply: a reply
			// to the old one is late now (iiopown.go).
			is.keepLateOwn(m.RequestID, old)
			old.mapped = false // (keepLateOwn ended its mapping)
		}
		if sh == nil && (is.lateOwn != nil || is.mapped != nil) {
			mid = is.mapOwn(sc, m.RequestID)
			p.mid, p.mapped = mid, mid != m.RequestID
		}
		is.pending[m.RequestID] = p
		s.mu.Unlock()
		if p.mapped {
			if reader {
				m.SetRequestID(b, mid)
			} else {
				setChainID(b, mid)
			}
		}
		if had {
			is.unpend(old) // the client reused an id awaiting its reply
		}
	}
	var ok bool
	if reader {
		if m.Minor == 1 && m.More() {
			is.startChain(sc) // before the first fragment: nothing between
		}
		ok = is.toServer(sc, b)
		if !ok {
			is.endChain()
		}
	} else {
		mu := is.lockFor(sc)
		mu.Lock()
		ok = is.write(sc, b)
		mu.Unlock()
	}
	if sh != nil && !m.Expects {
		is.oc.released(sc) // a one-way request's reservation ends with its write
	}
	if !ok && m.Expects {
		s.mu.Lock()
		p, had := is.pending[m.RequestID]
		mine := had && p.sc == sc && p.mid == mid
		if mine {
			delete(is.pending, m.RequestID)
		}
		s.mu.Unlock()
		if mine {
			is.unpend(p)
		} else if !had {
			// Settled meanwhile: answered as lost by sc's reader
			// (memberGone, its connection ended under the write),
			// timed out, or the session ending. Not to be chosen
			// again: the client has its answer, or awaits none.
			ok = true
		}
	}
	if !ok {
		return mid, placeFailed
	}
	return mid, placedOK
}

// leave, when the client's reader ends, forgets what the client still
// awaits: its routes on shared connections and their reservations (a
// reply coming later goes nowhere), and the bytes kept.
func (is *iiopSession) leave() {
	s := is.s
	s.mu.Lock()
	var left []iiopPending
	for id, p := range is.pending {
		delete(is.pending, id)
		left = append(left, p)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	for _, p := range left {
		is.unpend(p)
	}
	if is.oc != nil {
		is.out.finish()
	}
}

// clock is the time requests are stamped with: read only when a timeout
// is set.
func (is *iiopSession) clock() int64 {
	if is.opt.Timeout <= 0 {
		return 0
	}
	return time.Now().UnixNano()
}

// dial opens the client's own connection to mem and starts its reader.
func (is *iiopSession) dial(mem Member) (*serverConn, error) {
	return is.s.dialRouted(mem, func(sc *serverConn) { sc.iiopRead(is) })
}

// toServer writes one message to a member (only the client's reader
// writes to its members); false when the write failed (the connection
// is then failed and its reader reports it).
func (is *iiopSession) toServer(sc *serverConn, b []byte) bool {
	if mu := is.lockFor(sc); mu != is.chain {
		mu.Lock()
		defer mu.Unlock()
	}
	return is.write(sc, b)
}

// lockFor is the lock of writes to sc: the session's for its own
// connections, the connection's when one-connect shares it.
func (is *iiopSession) lockFor(sc *serverConn) *sync.Mutex {
	if sh := sc.iiop; sh != nil {
		return &sh.wmu
	}
	return &is.smu
}

// startChain takes sc's write lock for a GIOP 1.1 fragmented message
// of the client, held until its last fragment (endChain). Reader only.
func (is *iiopSession) startChain(sc *serverConn) {
	is.endChain()
	is.chain = is.lockFor(sc)
	is.chain.Lock()
}

// endChain lets others write to the members again after a GIOP 1.1
// fragmented message (or when the client's reader ends within one).
func (is *iiopSession) endChain() {
	if is.chain != nil {
		is.chain.Unlock()
		is.chain = nil
	}
}

// write is toServer for a caller holding smu.
func (is *iiopSession) write(sc *serverConn, b []byte) bool {
	n, err := sc.conn.Write(b)
	sc.leg.BytesOut.Add(uint64(n))
	if mt := sc.leg.Meter; mt != nil && n > 0 {
		mt.Sent(n)
	}
	if err != nil {
		sc.fail(err)
		return false
	}
	sc.ms.requests.Add(1)
	sc.leg.MsgsOut.Add(1)
	sc.leg.lastActive.Store(sc.e.now())
	return true
}

// writeClient sends b to the client; false when the client is gone.
// held: the caller holds wmu already (a member's 1.1 fragments).
func (is *iiopSession) writeClient(b []byte, held bool) bool {
	s := is.s
	if !held {
		is.wmu.Lock()
	}
	n, err := s.c.Write(b)
	if !held {
		is.wmu.Unlock()
	}
	s.bytesOut.Add(uint64(n))
	if s.meter != nil && n > 0 {
		s.meter.Sent(n)
	}
	s.active()
	if err != nil {
		if !s.isClosed() {
			s.Close(true)
		}
		return false
	}
	return true
}

// iiopRead passes what a member sends to the client that owns the
// connection, until it ends.
func (sc *serverConn) iiopRead(is *iiopSession) {
	e := sc.e
	st := newStream(iiop.Framer{Max: e.cfg.MaxMessageSize}, e.cfg.MaxMessageSize)
	defer st.release()
	held := false // wmu held for this member's 1.1 fragment chain
	skip := false // this member's 1.1 fragment chain is being dropped
	defer func() {
		if held {
			is.wmu.Unlock()
		}
	}()
	closed := false // the member sent CloseConnection
	sc.readMember(&st, "IIOP", func(b []byte) error {
		err := is.fromServer(sc, b, &held, &skip)
		closed = closed || err == errMemberClose
		return err
	})
	if closed {
		is.resend(sc)
	}
	is.memberGone(sc, closed)
	s := is.s
	s.mu.Lock()
	if is.lateOwn != nil {
		is.forgetOwn(sc)
	}
	s.mu.Unlock()
}

// errMemberClose ends a member's connection that sent CloseConnection.
var errMemberClose = errors.New("mblb: IIOP member sent CloseConnection")

// fromServer hands one message of a member to the client: a reply
// settles its pending request. A late reply whose id the client reused,
// or awaits from another connection, is dropped (iiopown.go), with its
// fragments (skip: a 1.1 chain's). An error ends the member's
// connection.
func (is *iiopSession) fromServer(sc *serverConn, b []byte, held, skip *bool) error {
	s, e := is.s, sc.e
	m, err := iiop.Parse(b)
	if err != nil {
		return err
	}
	sc.leg.MsgsIn.Add(1)
	switch m.Type {
	case iiop.Reply, iiop.LocateReply:
		last := m.Minor < 2 || !m.More()
		id, ok := m.RequestID, true
		s.mu.Lock()
		if is.lateOwn != nil || is.mapped != nil {
			id, ok = is.ownRoute(sc, m.RequestID, true, last)
		}
		if p, had := is.pending[id]; ok && had {
			if p.sc == sc && p.mid == m.RequestID {
				delete(is.pending, id)
				p.drop()
				s.cond.Broadcast()
			} else {
				ok = false // (not its answer: the client awaits it elsewhere)
				if !last {
					is.fileLateOwn(iiopWire{sc, m.RequestID}, iiopLateOwn{id: id, at: time.Now().UnixNano(), skip: true})
				}
			}
		}
		s.mu.Unlock()
		if !ok {
			e.logf("mblb: IIOP client %s: GIOP %v from %s for request id %d, which the client awaits from a newer request, dropped", s.client, m.Type, sc.leg.Member.Name, m.RequestID)
			*skip = m.Minor == 1 && m.More()
			if !m.More() {
				sc.iiopDrained()
			}
			return nil
		}
		if id != m.RequestID {
			m.SetRequestID(b, id)
		}
		sc.ms.responses.Add(1)
		e.stats.responses.Add(1)
	case iiop.Fragment:
		if m.Minor < 2 {
			if *skip {
				*skip = m.More()
				if !m.More() {
					sc.iiopDrained()
				}
				return nil
			}
			break
		}
		id, ok := m.RequestID, true
		if is.ownLate.Load() {
			s.mu.Lock()
			if is.lateOwn != nil || is.mapped != nil {
				id, ok = is.ownRoute(sc, m.RequestID, false, !m.More())
			}
			s.mu.Unlock()
		}
		if !ok {
			if !m.More() {
				sc.iiopDrained()
			}
			return nil
		}
		if id != m.RequestID {
			m.SetRequestID(b, id)
		}
	case iiop.CloseConnection:
		return errMemberClose
	}
	// A member's GIOP 1.1 message in fragments reaches the client whole:
	// no other member's message may come between its fragments.
	chain := m.Minor == 1 && (m.More() || m.Type == iiop.Fragment)
	if chain && !*held {
		is.wmu.Lock()
		*held = true
	}
	ok := is.writeClient(b, *held)
	if *held && !m.More() {
		*held = false
		is.wmu.Unlock()
	}
	if ok {
		s.msgsOut.Add(1)
	}
	if !m.More() {
		sc.iiopDrained() // (a member drained by a commit)
	}
	return nil
}

// timeouts looks for requests unanswered past the timeout, a quarter of
// it apart (at least 10 ms, at most a second, so that it also sees the
// session end soon), until the session ends.
func (is *iiopSession) timeouts() {
	s, e := is.s, is.s.e
	to := is.opt.Timeout
	tick := min(max(to/4, 10*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for range t.C {
		if s.isClosed() {
			return
		}
		limit := time.Now().Add(-to).UnixNano()
		var late []uint32
		var forgot []iiopPending
		s.mu.Lock()
		for id, p := range is.pending {
			if p.sent <= limit {
				late = append(late, id)
			}
		}
		if !is.opt.AbortOnTimeout {
			for _, id := range late {
				p := is.pending[id]
				forgot = append(forgot, p)
				delete(is.pending, id)
				is.keepLateOwn(id, p)
			}
			if len(late) > 0 {
				s.cond.Broadcast()
			}
		}
		s.mu.Unlock()
		for _, p := range forgot {
			is.retire(p)
			p.sc.iiopDrained() // (a late reply does not hold a drained connection)
		}
		if len(late) == 0 {
			continue
		}
		e.stats.iiopTimeouts.Add(uint64(len(late)))
		if is.opt.AbortOnTimeout {
			e.logf("mblb: IIOP client %s: request id %d unanswered after %v, reset (abort-on-timeout)", s.client, late[0], to)
			s.Close(true)
			return
		}
	}
}

// resend sends again, once each [M], the requests a member's
// CloseConnection left unanswered on sc (GIOP: the server did not
// process them, and the client may send them again): to the member
// persistence ties the request to, over a new connection, else to a new
// pick that leaves sc's member out while another can take it; a
// fragmented one whole, once its last fragment has gone. Each counts as
// a retry. A fragmented request still incomplete becomes an orphan: its
// further Fragments are kept (not written to sc) and the client's
// reader sends it again whole with the last one (resendOrphan) [M]. One
// not kept (past MaxMessageSize), one sent again already, and one that
// no member takes again (none to pick, or every write failing) is
// answered with a COMM_FAILURE system exception, COMPLETED_NO
// (answerFailed) [M: CloseConnection says the member did not process
// it, and a failed write did not deliver it whole].
func (is *iiopSession) resend(sc *serverConn) {
	s := is.s
	type again struct {
		id   uint32
		kept *msg
	}
	var todo []again
	var orphans, failed []uint32
	s.mu.Lock()
	for id, p := range is.pending {
		switch {
		case p.sc != sc || p.orphan:
		case p.kept == nil:
			// Sent again already, or past MaxMessageSize: no member
			// takes it again; answered below.
			failed = append(failed, id)
		case p.partial:
			p.orphan = true
			is.pending[id] = p
			orphans = append(orphans, id)
		default:
			todo = append(todo, again{id, p.kept})
			p.kept = nil // not a third time
			is.pending[id] = p
		}
	}
	s.mu.Unlock()
	for _, id := range orphans {
		s.e.logf("mblb: IIOP client %s: request id %d incomplete at %s's CloseConnection, kept to be sent again whole with its last fragment", s.client, id, sc.leg.Member.Name)
	}
	for _, id := range failed {
		s.e.logf("mblb: IIOP client %s: request id %d left unanswered by %s's CloseConnection is not sent again (sent again once already, or past the message size bound): answered with COMM_FAILURE", s.client, id, sc.leg.Member.Name)
		is.answerFailed(sc, id)
	}
	for _, a := range todo {
		is.resendOne(sc, a.id, a.kept.b)
		a.kept.unref()
	}
}

// resendOne sends request b (the client's id) again, away from closed;
// when no member takes it, it is answered with COMM_FAILURE
// (answerFailed).
func (is *iiopSession) resendOne(closed *serverConn, id uint32, b []byte) {
	s, e := is.s, is.s.e
	h, err := iiop.ParseHeader(b)
	if err != nil || int(h.Size)+iiop.HeaderSize > len(b) {
		return
	}
	m, err := iiop.Parse(b[:int(h.Size)+iiop.HeaderSize]) // the first message of a fragmented one
	if err != nil {
		return
	}
	setChainID(b, id) // (kept as sent: a shared connection's id)
	m.RequestID = id
	c := Choice{Client: s.client, Tag: s.tag}
	persisted := false
	if is.p != nil {
		if mem, ok := is.p.lookup(m.Key, m.RequestID, is.opt.PersistObjectKey, is.opt.PersistRequestID); ok {
			c.Target, persisted = Target{Member: mem.Addr}, true
		}
	}
	var exclude []MemberID
	if !persisted {
		exclude = append(exclude, closed.leg.Member.ID)
	}
	for attempt := 0; attempt < maxPickAttempts; attempt++ {
		if s.isClosed() {
			return
		}
		c.Exclude = exclude
		mem, err := e.cfg.Pick(c)
		if err == nil && excluded(exclude, mem.ID) {
			err = ErrNoMember
		}
		if err != nil && !c.Target.IsZero() {
			c.Target = Target{}
			continue
		}
		if err != nil && len(exclude) == 1 && exclude[0] == closed.leg.Member.ID {
			exclude = exclude[:0] // the closed member is the only one left
			continue
		}
		if err != nil {
			break
		}
		sc, err := is.conn(mem)
		if err != nil {
			if errors.Is(err, errClosed) {
				return
			}
			exclude = append(exclude, mem.ID)
			continue
		}
		s.mu.Lock()
		p, ok := is.pending[id]
		gone := !ok || p.sc != closed // answered, cancelled or timed out meanwhile
		s.mu.Unlock()
		if gone {
			if is.oc != nil {
				is.oc.released(sc)
			}
			return
		}
		// Counted before the write: the member's reply can reach the
		// client before place returns, and whoever reads the counters
		// after that reply must find the retry there.
		e.stats.retries.Add(1)
		_, how := is.place(sc, &m, b, false)
		if how == placedOK {
			// (place's pending entry took the place of closed's, whose
			// route had ended with its connection.)
			e.logf("mblb: IIOP client %s: request id %d sent again to %s after its connection to %s ended", s.client, id, sc.leg.Member.Name, closed.leg.Member.Name)
			return
		}
		e.stats.retries.Add(^uint64(0)) // not sent after all
		s.mu.Lock()
		if _, ok := is.pending[id]; !ok {
			is.pending[id] = iiopPending{sc: closed, mid: p.mid, sent: p.sent,
				minor: p.minor, little: p.little, locate: p.locate}
		}
		s.mu.Unlock()
		if how == placeEnded {
			continue // (sc ended too: the member again, over a live connection)
		}
		exclude = append(exclude, sc.leg.Member.ID)
	}
	e.logf("mblb: IIOP client %s: request id %d left by %s's connection could not be sent again: no member took it, answered with COMM_FAILURE", s.client, id, closed.leg.Member.Name)
	is.answerFailed(closed, id)
}

// keepFragment adds a Fragment the client's reader sends to sc to the
// kept bytes of its request (the client's id), so that a member's
// CloseConnection sends a fragmented request again as a whole one;
// last: its final fragment, the request whole then. Each Fragment is
// appended to the kept buffer, which is replaced by one at least twice
// its size (within MaxMessageSize) only when full, so that a request's
// fragments are copied about twice in all rather than the whole kept so
// far on each. Past MaxMessageSize in all, the request is no longer
// kept (not sent again) [M]. It reports whether the request is an
// orphan (its member closed before it was whole): the Fragment is then
// not to be written to sc.
func (is *iiopSession) keepFragment(id uint32, sc *serverConn, b []byte, last bool) (orphan bool) {
	s := is.s
	s.mu.Lock()
	p, ok := is.pending[id]
	if !ok || p.sc != sc || p.kept == nil || !p.partial {
		orphan = ok && p.sc == sc && p.orphan
		s.mu.Unlock()
		return orphan
	}
	old, limit := p.kept, s.e.cfg.MaxMessageSize
	n := len(old.b) + len(b)
	if n > limit {
		p.kept, p.partial = nil, false
	} else {
		if n > cap(old.b) {
			p.kept = getMsg(min(max(n, 2*cap(old.b)), limit))
			p.kept.b = append(p.kept.b[:0], old.b...)
		}
		p.kept.b = append(p.kept.b, b...) // within its capacity
		p.partial = !last
	}
	is.pending[id] = p
	s.mu.Unlock()
	if p.kept != old {
		old.unref()
	}
	return p.orphan
}

// resendOrphan sends a fragmented request whose member (closed) sent
// CloseConnection before its last fragment came again whole, now that
// it is whole, as resend does (a retry); from the client's reader, which
// holds no write lock then. One not kept (past MaxMessageSize) or that
// no member takes is answered with COMM_FAILURE (answerFailed).
func (is *iiopSession) resendOrphan(closed *serverConn, id uint32) {
	s := is.s
	s.mu.Lock()
	p, ok := is.pending[id]
	var kept *msg
	if ok && p.sc == closed && p.orphan {
		kept, p.kept = p.kept, nil
		is.pending[id] = p
	}
	s.mu.Unlock()
	if kept != nil {
		is.resendOne(closed, id, kept.b)
		kept.unref()
	} else if ok && p.sc == closed && p.orphan {
		s.e.logf("mblb: IIOP client %s: request id %d, incomplete when %s's connection ended, past the message size bound: not sent again, answered with COMM_FAILURE", s.client, id, closed.leg.Member.Name)
		is.answerFailed(closed, id)
		return
	}
	if is.opt.Timeout > 0 {
		return // (left to the timeout, as memberGone leaves what a CloseConnection left)
	}
	s.mu.Lock()
	p, ok = is.pending[id]
	ok = ok && p.sc == closed
	if ok {
		delete(is.pending, id)
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	if ok {
		is.unpend(p)
	}
}

// setChainID writes id into a kept request b: its first message's
// request id and, for a fragmented one kept whole, each GIOP 1.2
// Fragment's (1.1 Fragments carry none).
func setChainID(b []byte, id uint32) {
	for first := true; len(b) >= iiop.HeaderSize; first = false {
		h, err := iiop.ParseHeader(b)
		n := int(h.Size) + iiop.HeaderSize
		if err != nil || n > len(b) {
			return
		}
		if first || (h.Type == iiop.Fragment && h.Minor >= 2) {
			if m, err := iiop.Parse(b[:n]); err == nil {
				m.SetRequestID(b[:n], id)
			}
		}
		b = b[n:]
	}
}

// fragFailed handles a Fragment of the client (its request the client's
// id; last: its final fragment) whose write to sc failed: the member's
// connection ended (its CloseConnection not read yet, or a failure)
// while the request was incomplete. A request still awaited becomes an
// orphan, as at a CloseConnection (resend): its further Fragments are
// kept and it is sent again whole with the last one, or answered with a
// COMM_FAILURE system exception when it is past the bound of what is
// kept (resendOrphan) [M: the member processed nothing of an incomplete
// message, so sending it again is safe; the client is not reset]. It
// reports whether the request became an orphan; else (cancelled, timed
// out, expecting no reply, or settled meanwhile) the caller drops its
// further Fragments [M: nothing awaits an answer to it].
func (is *iiopSession) fragFailed(sc *serverConn, id uint32, last bool) bool {
	s := is.s
	s.mu.Lock()
	p, ok := is.pending[id]
	ok = ok && p.sc == sc
	if ok && !p.orphan {
		p.orphan = true
		is.pending[id] = p
	}
	s.mu.Unlock()
	if !ok {
		s.e.logf("mblb: IIOP client %s: a fragment of request id %d could not be written to %s; no reply awaited, its further fragments dropped", s.client, id, sc.leg.Member.Name)
		return false
	}
	s.e.logf("mblb: IIOP client %s: request id %d incomplete when %s's connection ended, kept to be sent again whole with its last fragment", s.client, id, sc.leg.Member.Name)
	if last {
		is.resendOrphan(sc, id)
	}
	return true
}

// answerFailed settles the client's request id, left on closed, with a
// system exception reply (COMM_FAILURE, COMPLETED_NO: the member did
// not get it whole, or said by CloseConnection that it did not process
// it, and no member took it again), so that the client's ORB may send
// it again or fail it at once rather than wait.
func (is *iiopSession) answerFailed(closed *serverConn, id uint32) {
	s := is.s
	s.mu.Lock()
	p, ok := is.pending[id]
	ok = ok && p.sc == closed
	if ok {
		delete(is.pending, id)
		s.cond.Broadcast()
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	is.unpend(p)
	is.answerCommFailure(p, id, iiop.CompletedNo)
}

// answerCommFailure writes the client the answer to its request id (p,
// taken out of pending) that openltm gives for a member: a Reply with a
// COMM_FAILURE system exception of the completion status given, in the
// request's GIOP version and byte order (a LocateRequest's:
// iiop.AppendSystemException), queued for the client's writer with
// one-connect.
func (is *iiopSession) answerCommFailure(p iiopPending, id, completed uint32) {
	b := iiop.AppendSystemException(nil, p.minor, p.little, id, p.locate, iiop.CommFailure, 0, completed)
	if is.oc != nil {
		is.deliver(b, false, false)
	} else if is.writeClient(b, false) {
		is.s.msgsOut.Add(1)
	}
}
