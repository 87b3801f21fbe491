package mblb

import "sync"

// iiopOut is a one-connect IIOP client's queue of what its members send
// it: a shared connection's reader puts each message for the client
// here and goes on, and the client's own writer goroutine (started with
// the first message) writes them out in order, so that a client that
// stops reading holds up no other client of the connections it shares.
// A reply that settles its request stays in the client's window
// (iiopSession.replied) until written, so a client that reads slower
// than it asks is slowed: its reader stops reading requests while its
// unwritten replies fill the window, and the writer wakes it as it
// writes them [M]. The queue is bounded in bytes (limit: MaxInFlight x
// MaxMessageSize); what the window does not count (late replies, a
// reply's Fragments) may still take it past the bound, which resets
// the client, its queue freed, and the connection's other clients go
// on; the reset is logged once (the queue is dead then: what comes
// later for the client is dropped quietly) and counted in
// Stats.IIOPSlowResets as well as Stats.Resets. Each queued message is a pooled
// copy (getMsg), and the queue's slices are reused: no allocation per
// message once they have grown.
type iiopOut struct {
	mu    sync.Mutex
	wcond sync.Cond // the writer waits for messages
	fcond sync.Cond // flush waits for the queue to be written
	q     []*msg    // waiting, in order
	spare []*msg    // the writer's last batch, reused as q
	// qc[i]: q[i] is a reply counted in the client's window
	// (is.replied), taken out of it once written (unwindow); sparec is
	// spare's.
	qc, sparec []bool
	bytes      int // queued and not written yet (a batch being written counts)
	limit      int
	// started: the writer runs; dead: the client is gone (reset, a
	// failed write, or its session left): nothing more is queued.
	started, dead bool
}

func (o *iiopOut) init(limit int) {
	o.limit = limit
	o.wcond.L = &o.mu
	o.fcond.L = &o.mu
}

// put queues a copy of b for the client; past the bound it resets the
// client instead. The caller holds is.wmu (so that a member's GIOP 1.1
// fragments are queued with nothing between them). counted: b is a
// reply counted in the client's window (settle); the window keeps what
// is queued of such replies within the bound, so the reset is left for
// what it does not count (late replies, reply Fragments).
func (o *iiopOut) put(is *iiopSession, b []byte, counted bool) {
	m := getMsg(len(b))
	copy(m.b, b)
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		m.unref()
		if counted {
			is.unwindow()
		}
		return
	}
	if o.bytes > 0 && o.bytes+len(b) > o.limit {
		queued := o.bytes
		o.dead = true
		o.wcond.Signal() // (the writer frees the queue)
		o.mu.Unlock()
		m.unref()
		if counted {
			is.unwindow()
		}
		s := is.s
		if s.isClosed() {
			return // (leaving already: not a slow client's reset)
		}
		s.e.stats.iiopSlowResets.Add(1)
		s.e.logf("mblb: IIOP client %s: %d bytes of replies unread (bound %d), reset as a slow client", s.client, queued, o.limit)
		s.Close(true)
		return
	}
	o.q = append(o.q, m)
	o.qc = append(o.qc, counted)
	o.bytes += len(b)
	if !o.started {
		o.started = true
		go o.run(is)
	}
	o.wcond.Signal()
	o.mu.Unlock()
}

// run writes the queue to the client until the client is gone. It is
// the only writer to a one-connect client (its members' connections
// are all shared), so it writes without is.wmu.
func (o *iiopOut) run(is *iiopSession) {
	o.mu.Lock()
	for {
		for len(o.q) == 0 && !o.dead {
			o.wcond.Wait()
		}
		if o.dead {
			break
		}
		batch, counted := o.q, o.qc
		o.q, o.spare = o.spare[:0], nil
		o.qc, o.sparec = o.sparec[:0], nil
		o.mu.Unlock()
		failed := false
		for i, m := range batch {
			if !failed {
				if is.writeClient(m.b, true) {
					is.s.msgsOut.Add(1)
				} else {
					failed = true
				}
			}
			n := len(m.b)
			m.unref()
			batch[i] = nil
			o.mu.Lock()
			o.bytes -= n
			o.mu.Unlock()
			if counted[i] {
				is.unwindow() // (the client's reader may read on)
			}
		}
		o.mu.Lock()
		o.spare, o.sparec = batch[:0], counted[:0]
		if failed {
			o.dead = true
		}
		if o.bytes == 0 {
			o.fcond.Broadcast()
		}
	}
	dropped := 0
	for i, m := range o.q {
		m.unref()
		o.q[i] = nil
		if o.qc[i] {
			dropped++
		}
	}
	o.q, o.spare, o.qc, o.sparec, o.bytes = nil, nil, nil, nil, 0
	o.fcond.Broadcast()
	o.mu.Unlock()
	for range dropped {
		is.unwindow()
	}
}

// flush waits until what is queued has been written, or the client is
// gone (a client that half-closed gets its replies before the close;
// the engine's idle timeout bounds the wait on one that does not read).
func (o *iiopOut) flush() {
	o.mu.Lock()
	for o.bytes > 0 && !o.dead {
		o.fcond.Wait()
	}
	o.mu.Unlock()
}

// finish ends the writer when the client's session leaves; what is
// still queued is dropped.
func (o *iiopOut) finish() {
	o.mu.Lock()
	o.dead = true
	o.wcond.Signal()
	o.fcond.Broadcast()
	o.mu.Unlock()
}
