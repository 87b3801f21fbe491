package mblb

import "errors"

// A pool's connection queue on a message-balanced virtual: when every
// member of the pool is at its connection limit, the proxy's Pick holds
// the message (returns *Queued) instead of failing it, and the engine
// parks it until the queue wakes it; then it is sent as if it had just
// been read (Pick, LB_SELECTED, a server connection). The client's other
// requests are framed meanwhile, and its answers still leave in request
// order. A parked message costs nothing to anyone else: the engine keeps
// it on its session, and the proxy's queue holds the wake.

// QueueTicket is a message's place in a pool's connection queue, kept by
// the proxy that made it.
type QueueTicket interface {
	// Park gives the ticket the function that sends the message again.
	// The queue calls it once, from any goroutine, when it wakes the
	// message (room was made, or its time or the queue is up, which the
	// next Pick reports); at once when that wake came first.
	Park(resume func())
	// Cancel gives up the place: the client went away.
	Cancel()
}

// Queued is the error a Pick returns when the message waits in a
// connection queue: the engine parks it and calls Ticket.Park. The next
// Pick for the message gets Ticket back in Choice.Ticket, and settles it
// (served, queued again, or given up).
type Queued struct {
	Ticket QueueTicket
}

func (*Queued) Error() string { return "mblb: message queued for a member with room" }

// queueable reports whether m may wait in a connection queue: not a
// streamed upload (its body arrives behind it and must go somewhere), nor
// a request that makes the connection a tunnel, nor an answer the proxy
// made.
func (m *msg) queueable() bool {
	return !m.hx.upload && m.hx.tunnel == 0 && !m.hx.local
}

// queuedTicket returns the ticket a Pick's error carries, if it is one.
func queuedTicket(err error) QueueTicket {
	var q *Queued
	if errors.As(err, &q) && q.Ticket != nil {
		return q.Ticket
	}
	return nil
}

// park keeps m on the session until its ticket wakes it.
func (s *ClientConn) park(m *msg) {
	t := m.ticket
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		m.ticket = nil
		t.Cancel()
		m.unref()
		return
	}
	s.parked = append(s.parked, m)
	s.mu.Unlock()
	t.Park(func() { s.unpark(m) })
}

// unpark sends a woken message again, on the client's event loop when
// it has one, else on a goroutine of its own (the wake runs on whoever
// made room, which must not be held up by a connect).
func (s *ClientConn) unpark(m *msg) {
	s.mu.Lock()
	found := false
	for i, x := range s.parked {
		if x == m {
			last := len(s.parked) - 1
			s.parked[i] = s.parked[last]
			s.parked[last] = nil
			s.parked = s.parked[:last]
			found = true
			break
		}
	}
	s.mu.Unlock()
	if !found {
		return // the session closed and cancelled it
	}
	if s.lp != nil {
		s.lp.l.Post(func() { s.send(m, true, s.lp.loop()) })
		return
	}
	go s.send(m, true, nil)
}

// cancelParked gives up the places of a closed session's parked
// messages (taken off the session under its lock).
func cancelParked(parked []*msg) {
	for _, m := range parked {
		if t := m.ticket; t != nil {
			m.ticket = nil
			t.Cancel()
		}
		m.unref()
	}
}

// IdleConns counts the OneConnect connections to member id that wait
// idle for a message, less those being dialled: the proxy's connection limit may let a message
// reuse one while the member has no room for a new connection.
func (e *Engine) IdleConns(id MemberID) int {
	p := e.pool
	if p == nil {
		return 0
	}
	p.mu.Lock()
	idle, dialing := p.idleOfLocked(id)
	p.mu.Unlock()
	return max(idle-dialing, 0)
}

// idleOfLocked counts the idle connections to member id, and those
// being dialled (not yet on the member's count). The caller holds p.mu.
func (p *connPool) idleOfLocked(id MemberID) (idle, dialing int) {
	for k, g := range p.groups {
		if k.id != id {
			continue
		}
		dialing += g.dialing
		for _, sc := range g.conns {
			if reusable(sc) {
				idle++
			}
		}
	}
	return idle, dialing
}

// closeIdleOf takes one idle connection to member id out of the pool
// (limit-type idle: it makes room for a new one under the member's
// connection limit). The caller holds p.mu and shuts the connection
// down once the lock is released; nil when there is none.
func (p *connPool) closeIdleOf(id MemberID) *serverConn {
	for k, g := range p.groups {
		if k.id != id {
			continue
		}
		for _, sc := range g.conns {
			if reusable(sc) {
				p.removeLocked(sc)
				return sc
			}
		}
	}
	return nil
}

// errNoRoom: the member's connection limit leaves no room for a new
// connection and no idle one to reuse (another message took the room
// between Pick and the connection); the message chooses again, and
// queues when the pool queues.
var errNoRoom = errors.New("mblb: member at its connection limit")

// mayOpen asks MayOpen whether a new connection to m may open, and
// reports limited when the limit refused it. While an idle connection
// of the group could be reused (idleHere), every connection counts: one
// is not opened beside it, even on another event loop. The caller holds
// p.mu.
func (oc *OneConnect) mayOpen(p *connPool, m Member, idleHere bool) (room, limited bool) {
	if oc.Limited != nil && !oc.Limited(m) {
		return true, false
	}
	idle, dialing := p.idleOfLocked(m.ID)
	if oc.MayOpen(m, 0, dialing) {
		return true, false
	}
	if idleHere || !oc.MayOpen(m, idle, dialing) {
		return false, true
	}
	return true, false
}
