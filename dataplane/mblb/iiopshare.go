package mblb

import (
	"errors"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
)

// One-connect beside iiop: the virtual's clients share member
// connections from its pool (oneconnect.go: source-mask, max-size,
// max-age, max-reuse, idle-timeout-override and the members' connection
// limits as for every pooled virtual). Each request is lent a
// connection as an HTTP request is: an idle one first, else a new one
// while the group has fewer than max-size, else the least busy one
// (GIOP pipelines, so the request goes on it at once); its reservation
// ends with its reply, or with its write when it expects none. As two
// clients may use the same request id, each request gets an id of its
// own on the connection (a counter, skipping ids awaiting a reply
// there), written into the message and its CancelRequest and GIOP 1.2
// Fragments, and the reply (and its 1.2 Fragments) gets the client's id
// back before it goes to that client. A GIOP 1.1 fragmented message,
// whose Fragments carry no id, holds the connection for its writer from
// its first fragment to its last, either way [M: a client slow to send
// the rest holds up the connection's other clients meanwhile].
//
// The connection's reader queues each message for its client
// (iiopout.go) rather than writing it, so that a client that stops
// reading holds up no other.
//
// Per message: the pool's lend and return (a lock each), the id map
// under the connection's lock (no allocation once grown), a 4-byte
// write into the message each way, and a pooled copy into the client's
// queue.

// iiopShared is the IIOP state of a member connection one-connect
// shares among clients; its reader is iiopSharedRead.
type iiopShared struct {
	// wmu: one write at a time (a client's 1.1 fragmented message holds
	// it from its first fragment to its last).
	wmu sync.Mutex

	mu     sync.Mutex // guards next, routes and late
	next   uint32
	routes map[uint32]iiopRoute
	// late are the routes of requests cancelled or timed out here,
	// kept for their late replies (retire); nil until the first.
	late map[uint32]iiopLate
}

// iiopLate is a retired route and when it was retired (Unix ns).
type iiopLate struct {
	r  iiopRoute
	at int64
}

// A shared connection keeps at most iiopLateMax retired routes, each
// for iiopLateKeep [M: BIG-IP's handling of a late reply on a shared
// connection is not documented; these bound what a client that cancels
// or times out many requests can make the connection keep]: a late
// reply within both goes to its client, as on a client's own
// connection; past them it is dropped.
const (
	iiopLateMax  = 1024
	iiopLateKeep = time.Minute
)

// iiopRoute is whose a request awaiting its reply on a shared
// connection is: the client's session and its own id.
type iiopRoute struct {
	is *iiopSession
	id uint32
}

func newIIOPShared() *iiopShared {
	return &iiopShared{routes: map[uint32]iiopRoute{}}
}

// assign gives a request of is (its id) an id of its own on the
// connection, routed back to is when it expects a reply.
func (sh *iiopShared) assign(is *iiopSession, id uint32, expects bool) uint32 {
	sh.mu.Lock()
	for {
		sh.next++
		if _, used := sh.routes[sh.next]; used {
			continue
		}
		if len(sh.late) > 0 {
			if _, kept := sh.late[sh.next]; kept {
				continue // (a late reply may still come under it)
			}
		}
		break
	}
	mid := sh.next
	if expects {
		sh.routes[mid] = iiopRoute{is, id}
	}
	sh.mu.Unlock()
	return mid
}

// forget ends the route of mid; true when there was one (its
// reservation in the pool is then the caller's to return).
func (sh *iiopShared) forget(mid uint32) bool {
	sh.mu.Lock()
	_, ok := sh.routes[mid]
	delete(sh.routes, mid)
	sh.mu.Unlock()
	return ok
}

// retire is forget for a request cancelled or timed out: its route is
// kept for a while (iiopLateKeep, at most iiopLateMax on the
// connection), so that its late reply still reaches the client.
func (sh *iiopShared) retire(mid uint32) bool {
	sh.mu.Lock()
	r, ok := sh.routes[mid]
	if ok {
		delete(sh.routes, mid)
		sh.keepLate(mid, r, time.Now().UnixNano())
	}
	sh.mu.Unlock()
	return ok
}

// keepLate files a retired route, first forgetting those past
// iiopLateKeep when full; still full, r is not kept (its late reply
// will be dropped). The caller holds mu.
func (sh *iiopShared) keepLate(mid uint32, r iiopRoute, now int64) {
	if sh.late == nil {
		sh.late = map[uint32]iiopLate{}
	}
	if len(sh.late) >= iiopLateMax {
		for id, l := range sh.late {
			if now-l.at > int64(iiopLateKeep) {
				delete(sh.late, id)
			}
		}
		if len(sh.late) >= iiopLateMax {
			return
		}
	}
	sh.late[mid] = iiopLate{r, now}
}

// route is mid's route, ended when last; late: a retired one (its
// request cancelled or timed out), within iiopLateKeep.
func (sh *iiopShared) route(mid uint32, last bool) (r iiopRoute, ok, late bool) {
	// (Plain unlocks at each return: a reply's hot path.)
	sh.mu.Lock()
	if r, ok = sh.routes[mid]; ok {
		if last {
			delete(sh.routes, mid)
		}
		sh.mu.Unlock()
		return r, true, false
	}
	if len(sh.late) == 0 {
		sh.mu.Unlock()
		return r, false, false
	}
	l, ok := sh.late[mid]
	if !ok {
		sh.mu.Unlock()
		return r, false, false
	}
	stale := time.Now().UnixNano()-l.at > int64(iiopLateKeep)
	if last || stale {
		delete(sh.late, mid)
	}
	sh.mu.Unlock()
	if stale || l.r.is.s.isClosed() {
		return r, false, false // (kept too long, or its client is gone)
	}
	return l.r, true, true
}

// dropLate forgets the retired route of mid (its late reply dropped).
func (sh *iiopShared) dropLate(mid uint32) {
	sh.mu.Lock()
	delete(sh.late, mid)
	sh.mu.Unlock()
}

// iiopSkip stands for the client of a member's GIOP 1.1 reply in
// fragments that goes to no client: its Fragments are dropped too.
var iiopSkip iiopSession

// errMemberError ends a shared connection whose member sent
// MessageError: no client can be told which of its messages it was [M].
var errMemberError = errors.New("mblb: IIOP member sent MessageError on a shared connection")

// errStrayReplyFragment ends a shared connection whose member sent a
// GIOP 1.1 Fragment of no fragmented message.
var errStrayReplyFragment = errors.New("mblb: IIOP member sent a GIOP 1.1 Fragment of no fragmented message")

// iiopSharedRead passes what the member sends on a shared connection to
// the clients whose requests it answers, until the connection ends;
// then each client with requests on it has them sent again (the
// member's CloseConnection) or settled as for a member gone.
func (sc *serverConn) iiopSharedRead() {
	e, sh := sc.e, sc.iiop
	st := newStream(iiop.Framer{Max: e.cfg.MaxMessageSize}, e.cfg.MaxMessageSize)
	defer st.release()
	var chain *iiopSession // the client of a member's 1.1 fragmented reply, its wmu held
	closed := false
	sc.readMember(&st, "IIOP", func(b []byte) error {
		err := sh.fromMember(sc, b, &chain)
		closed = closed || err == errMemberClose
		return err
	})
	if chain != nil {
		chain.wmu.Unlock()
	}
	sh.mu.Lock()
	var sessions []*iiopSession
	for mid, r := range sh.routes {
		delete(sh.routes, mid)
		if !containsSession(sessions, r.is) {
			sessions = append(sessions, r.is)
		}
	}
	sh.mu.Unlock()
	for _, is := range sessions {
		if closed {
			is.resend(sc)
		}
		is.memberGone(sc, closed)
	}
}

func containsSession(l []*iiopSession, is *iiopSession) bool {
	for _, x := range l {
		if x == is {
			return true
		}
	}
	return false
}

// fromMember routes one message of the member: a reply (or a 1.2
// Fragment of one) to the client of its id there, with the client's id
// back; a 1.1 reply's Fragments after it, with nothing between. A late
// reply (its request cancelled or timed out, its client still there)
// goes to its client, as on a client's own connection [M], unless the
// client awaits a newer request under the same id (it would take the
// late reply for that one's answer); one to no request (its client
// gone, or retired past iiopLateKeep or iiopLateMax) is dropped [M],
// a 1.1 one's Fragments with it; so is a message of a type a member does not send to a
// client of a shared connection (a Request: bidirectional GIOP is not
// run) [M]. CloseConnection, MessageError and a malformed stream end
// the connection (an error).
func (sh *iiopShared) fromMember(sc *serverConn, b []byte, chain **iiopSession) error {
	e := sc.e
	m, err := iiop.Parse(b)
	if err != nil {
		return err
	}
	sc.leg.MsgsIn.Add(1)
	var r iiopRoute
	counted := false // a reply settling its request: in the client's window until written
	switch m.Type {
	case iiop.Reply, iiop.LocateReply:
		last := m.Minor < 2 || !m.More() // a 1.2 reply's Fragments carry its id
		var ok, late bool
		if r, ok, late = sh.route(m.RequestID, last); ok && late && r.is.awaits(r.id) {
			// The client reused the id meanwhile: the late reply is not
			// the answer to its new request [M].
			if !last {
				sh.dropLate(m.RequestID) // (and its 1.2 Fragments)
			}
			ok = false
		}
		if !ok {
			e.logf("mblb: IIOP %s: GIOP %v for request id %d, which no client awaits, dropped", sc.leg.Member.Name, m.Type, m.RequestID)
			if m.Minor == 1 && m.More() {
				*chain = &iiopSkip // its 1.1 Fragments dropped with it
			}
			return nil
		}
		if !late { // (a retired route's loan has ended already)
			if last {
				e.pool.released(sc)
			}
			counted = r.is.settle(sc, r.id, m.RequestID)
		}
		sc.ms.responses.Add(1)
		e.stats.responses.Add(1)
		m.SetRequestID(b, r.id)
		if m.Minor == 1 && m.More() {
			r.is.wmu.Lock() // until the reply's last fragment
			*chain = r.is
			r.is.deliver(b, true, counted)
			return nil
		}
	case iiop.Fragment:
		if m.Minor < 2 {
			is := *chain
			if is == nil {
				return errStrayReplyFragment
			}
			if is == &iiopSkip {
				if !m.More() {
					*chain = nil
					sc.iiopDrained()
				}
				return nil
			}
			is.deliver(b, true, false)
			if !m.More() {
				*chain = nil
				is.wmu.Unlock()
				sc.iiopDrained()
			}
			return nil
		}
		var ok, late bool
		if r, ok, late = sh.route(m.RequestID, !m.More()); !ok {
			return nil // (its reply was dropped)
		}
		if !m.More() && !late {
			e.pool.released(sc)
		}
		m.SetRequestID(b, r.id)
	case iiop.CloseConnection:
		return errMemberClose
	case iiop.MessageError:
		return errMemberError
	default:
		e.logf("mblb: IIOP %s: GIOP %v on a shared connection, dropped (bidirectional GIOP is not run)", sc.leg.Member.Name, m.Type)
		return nil
	}
	r.is.deliver(b, false, counted)
	if !m.More() {
		sc.iiopDrained() // (a member drained by a commit)
	}
	return nil
}

// awaits: the client awaits a reply under its request id id (a
// request it sent, still pending, or one its reader holds in reserve).
func (is *iiopSession) awaits(id uint32) bool {
	s := is.s
	s.mu.Lock()
	ok := is.reused(id)
	s.mu.Unlock()
	return ok
}

// settle ends the wait for the client's request id, answered on sc as
// mid. The reply stays in the client's window (is.replied) until the
// client's writer has written it, so that a client that reads slower
// than it asks is slowed (its reader stops in reserve) rather than its
// queue filled; it reports whether the reply was counted so (the
// caller queues it with deliver's counted).
func (is *iiopSession) settle(sc *serverConn, id, mid uint32) bool {
	s := is.s
	s.mu.Lock()
	p, ok := is.pending[id]
	ok = ok && p.sc == sc && p.mid == mid
	if ok {
		delete(is.pending, id)
		is.replied++ // (no room freed: no wakeup)
	}
	s.mu.Unlock()
	if ok {
		p.drop() // (its route has ended already)
	}
	return ok
}

// unwindow takes a written (or dropped) counted reply out of the
// client's window and wakes its reader, paused in reserve or drain.
func (is *iiopSession) unwindow() {
	s := is.s
	s.mu.Lock()
	is.replied--
	s.cond.Broadcast()
	s.mu.Unlock()
}

// deliver queues a member's message for the client (iiopOut), so
// that the shared connection's reader never waits for this client's
// socket (held: the caller holds wmu, through a member's GIOP 1.1
// fragments, so that nothing is queued between them); counted: a
// reply settle counted in the client's window.
func (is *iiopSession) deliver(b []byte, held, counted bool) {
	if !held {
		is.wmu.Lock()
	}
	is.out.put(is, b, counted)
	if !held {
		is.wmu.Unlock()
	}
}
