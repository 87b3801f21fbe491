package mblb

import (
	"sync"
	"sync/atomic"
	"time"
)

// Flow control: the mblb profile's ingress-high/ingress-low and
// egress-high/egress-low water marks (README.md, "Flow control").
//
// What is counted is the requests the engine holds that a member's
// socket has not taken yet: queued on a server connection
// (submit) until the write that carries them has completed, or the
// connection died and let them go. A client whose own such requests pass
// IngressHigh is not read until they are at or below IngressLow; a
// client that queued a request on a connection holding more than
// EgressHigh is not read until that connection is at or below
// EgressLow. A member that stops reading thus fills the kernel's socket
// buffers, then at most the high mark (plus one turn of reads) in the
// engine, and then the client's own socket, whose sends block, instead
// of the proxy's memory.

// FlowControl holds the water marks, in requests (messages) [M: BIG-IP's
// defaults, 50 and 5, read as bytes would hold back every client after
// each request larger than 50 bytes]. A High of 0 turns that side off; a
// Low above its High is taken as the High.
type FlowControl struct {
	// IngressHigh and IngressLow bound one client's requests held for
	// members.
	IngressHigh, IngressLow int64
	// EgressHigh and EgressLow bound what one server connection holds
	// for its member, whoever sent it.
	EgressHigh, EgressLow int64
	// PendingMessages and PendingBytes are the httprouter profile's
	// max-pending-messages and max-pending-bytes: a client whose requests
	// held for members pass either is not read until they are back
	// within both, so that a client pipelining to a slow member holds a
	// bounded amount of the proxy's memory. 0 leaves that bound off.
	PendingMessages, PendingBytes int64
}

// flowOf normalizes the configured marks; nil when neither side is on,
// so that the message path pays one nil check.
func flowOf(f *FlowControl) *FlowControl {
	if f == nil || (f.IngressHigh <= 0 && f.EgressHigh <= 0 && f.PendingMessages <= 0 && f.PendingBytes <= 0) {
		return nil
	}
	n := *f
	n.IngressLow = min(max(n.IngressLow, 0), max(n.IngressHigh, 0))
	n.EgressLow = min(max(n.EgressLow, 0), max(n.EgressHigh, 0))
	return &n
}

// sessFlow is a client's part of flow control.
type sessFlow struct {
	// in is the client's requests held for members; eg the number
	// of server connections over EgressHigh it waits on; last the
	// connection its latest request was queued on, whose egress mark is
	// checked before the client is read again.
	in   atomic.Int64
	eg   atomic.Int32
	last atomic.Pointer[serverConn]
	// bytes is what the requests held weigh, counted only under a
	// PendingBytes bound.
	bytes atomic.Int64
	// paused: the client is not read until woken (wake).
	paused atomic.Bool
	// wakeCh wakes a reader on a goroutine; resumeFn is posted to the
	// session's event loop.
	wakeCh   chan struct{}
	resumeFn func()
}

// connFlow is a server connection's part of flow control.
type connFlow struct {
	q       atomic.Int64
	mu      sync.Mutex
	waiters []*ClientConn // clients waiting for q to drain
}

// flowQueued counts m, just queued on sc for writing. The caller holds
// sc.qmu.
func (sc *serverConn) flowQueued(fc *FlowControl, m *msg) {
	const n = 1
	s := m.sess
	if s != nil {
		s.flow.in.Add(n)
	}
	e := sc.e
	if t := e.flowQueued.Add(n); t > e.flowPeak.Load() {
		for p := e.flowPeak.Load(); t > p && !e.flowPeak.CompareAndSwap(p, t); p = e.flowPeak.Load() {
		}
	}
	sc.flow.q.Add(n)
	if fc.PendingBytes > 0 {
		m.flowBytes = len(m.b)
		b := int64(m.flowBytes)
		if s != nil {
			s.flow.bytes.Add(b)
		}
		if t := e.flowBytes.Add(b); t > e.flowBytesPeak.Load() {
			for p := e.flowBytesPeak.Load(); t > p && !e.flowBytesPeak.CompareAndSwap(p, t); p = e.flowBytesPeak.Load() {
			}
		}
	}
	if s != nil && fc.EgressHigh > 0 && s.flow.last.Load() != sc {
		s.flow.last.Store(sc)
	}
}

// flowWritten uncounts the requests of a batch sc wrote, or let go of
// unwritten (the connection died; the reader re-sends what is pending,
// counted again then), and wakes the clients that may read again.
// Upload parts are not requests: upload.go accounts for them.
func (sc *serverConn) flowWritten(fc *FlowControl, batch []*msg) {
	var total int64
	for _, m := range batch {
		if m.hx.part {
			continue
		}
		const n = 1
		total += n
		s := m.sess
		// (Not zeroed: a request sent again elsewhere while this write
		// was in progress is counted twice and uncounted twice.)
		if b := int64(m.flowBytes); b > 0 {
			sc.e.flowBytes.Add(-b)
			if s != nil {
				s.flow.bytes.Add(-b)
			}
		}
		if s != nil && (s.flow.in.Add(-n) <= fc.IngressLow || fc.PendingMessages > 0 || fc.PendingBytes > 0) {
			s.flowMaybeWake(fc)
		}
	}
	if total == 0 {
		return
	}
	sc.e.flowQueued.Add(-total)
	if q := sc.flow.q.Add(-total); fc.EgressHigh > 0 && q <= fc.EgressLow {
		sc.flowRelease(fc)
	}
}

// flowRelease lets every client waiting on sc go (sc drained, or ended).
func (sc *serverConn) flowRelease(fc *FlowControl) {
	sc.flow.mu.Lock()
	w := sc.flow.waiters
	sc.flow.waiters = w[:0]
	for i, s := range w {
		w[i] = nil
		if s.flow.eg.Add(-1) == 0 {
			s.flowMaybeWake(fc)
		}
	}
	sc.flow.mu.Unlock()
}

// flowOver reports whether the client must stop being read.
func (s *ClientConn) flowOver(fc *FlowControl) bool {
	if fc.IngressHigh > 0 && s.flow.in.Load() > fc.IngressHigh {
		return true
	}
	if s.pendingOver(fc) {
		return true
	}
	if s.flow.eg.Load() > 0 {
		return true
	}
	sc := s.flow.last.Load()
	return sc != nil && fc.EgressHigh > 0 && sc.flow.q.Load() > fc.EgressHigh
}

// flowWait registers the client with the connection its latest request
// went to when that one is over EgressHigh, so that its drain wakes it.
func (s *ClientConn) flowWait(fc *FlowControl) {
	sc := s.flow.last.Load()
	if sc == nil || fc.EgressHigh <= 0 || sc.flow.q.Load() <= fc.EgressHigh {
		return
	}
	sc.flow.mu.Lock()
	sc.flow.waiters = append(sc.flow.waiters, s)
	s.flow.eg.Add(1)
	sc.flow.mu.Unlock()
	// It may have drained (or died) before the registration: the
	// release that would have seen us already ran.
	if sc.flow.q.Load() <= fc.EgressLow {
		sc.flowRelease(fc)
	}
}

// pendingOver reports whether the client's requests held for members
// are over the httprouter profile's bounds; back within them, it may be
// read again (the bounds are their own low marks [M]).
func (s *ClientConn) pendingOver(fc *FlowControl) bool {
	return fc.PendingMessages > 0 && s.flow.in.Load() > fc.PendingMessages ||
		fc.PendingBytes > 0 && s.flow.bytes.Load() > fc.PendingBytes
}

// flowDrained reports whether a paused client may be read again.
func (s *ClientConn) flowDrained(fc *FlowControl) bool {
	return (fc.IngressHigh <= 0 || s.flow.in.Load() <= fc.IngressLow) && s.flow.eg.Load() == 0 && !s.pendingOver(fc)
}

// flowMaybeWake wakes the client if it is paused and may read again.
func (s *ClientConn) flowMaybeWake(fc *FlowControl) {
	if !s.flow.paused.Load() || !s.flowDrained(fc) || !s.flow.paused.CompareAndSwap(true, false) {
		return
	}
	if s.lp != nil {
		s.lp.l.Post(s.flow.resumeFn)
		return
	}
	select {
	case s.flow.wakeCh <- struct{}{}:
	default:
	}
}

// flowPause marks the client paused when it is over a high mark, and
// reports whether it is: a writer that drains it meanwhile either sees
// the mark and wakes it, or is seen by the second check here.
func (s *ClientConn) flowPause(fc *FlowControl) bool {
	if !s.flowOver(fc) {
		return false
	}
	s.flow.paused.Store(true)
	if s.flow.eg.Load() == 0 {
		s.flowWait(fc)
	}
	if s.flowDrained(fc) && s.flow.paused.CompareAndSwap(true, false) {
		return false
	}
	s.e.stats.flowPauses.Add(1)
	return true
}

// flowAwait holds a reader on a goroutine while the client is over a
// high mark, until it drains to the low ones; an error means the session
// closed meanwhile.
func (s *ClientConn) flowAwait(fc *FlowControl) error {
	if !s.flowOver(fc) {
		return nil
	}
	s.flushDirty() // what this read queued must go for anything to drain
	if !s.flowPause(fc) {
		return nil
	}
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	for s.flow.paused.Load() {
		if s.isClosed() {
			return errClosed
		}
		select {
		case <-s.flow.wakeCh:
		case <-t.C:
			t.Reset(100 * time.Millisecond)
			// A writer's wake cannot be missed (flowPause), but a
			// session closed from elsewhere sends none.
			if s.flowDrained(fc) {
				s.flow.paused.Store(false)
			}
		}
	}
	return nil
}

// flowResume runs on the session's loop when a paused client may be
// read again: its readiness edge has passed, so it is read at once.
func (s *ClientConn) flowResume() {
	if s.isClosed() || s.lp.released {
		return
	}
	s.readable()
}
