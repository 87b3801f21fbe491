package udp

import (
	"sync/atomic"

	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/rules"
)

var _ rules.Blocker = (*flow)(nil)

// maxWaiting bounds the client datagrams one flow keeps while its events
// are suspended (`after ms`); later ones are dropped and counted as the
// profile's dropped datagrams [M: BIG-IP documents no bound].
const maxWaiting = 256

// waitQueue is the client side of a flow whose virtual's rules suspend
// events (`after ms` without a script, rules.Program.Waits). On BIG-IP
// such a wait holds up its own connection only; here the listener's
// reader would hold up every client, so each such flow gets a goroutine
// of its own that runs CLIENT_ACCEPTED and then each client datagram in
// order, and the reader only hands datagrams over.
type waitQueue struct {
	in   chan []byte
	done chan struct{} // closed by end
	// busy is set while the goroutine runs an event: the idle sweep
	// leaves such a flow alone, as its client is being served.
	busy atomic.Bool
	// legs are the flow's server sides when it ended, whose
	// SERVER_CLOSED the goroutine runs after the event in progress.
	legs []*leg
}

// MayBlock implements rules.Blocker: `after ms` suspends the event of a
// flow with its own goroutine; elsewhere it would hold up the reader.
func (f *flow) MayBlock() bool { return f.wq != nil }

// newWaitQueue gives a new flow whose rules suspend events its queue
// (newFlow, before the flow is published); open then starts its
// goroutine, which runs CLIENT_ACCEPTED.
func newWaitQueue(f *flow) *waitQueue {
	if f.rs == nil || !irules.Program(f.snap.Cfg.Rules).Waits() {
		return nil
	}
	return &waitQueue{in: make(chan []byte, maxWaiting), done: make(chan struct{})}
}

// handOver queues a copy of a client datagram (the reader's buffer is
// reused) for the flow's goroutine; a full queue drops it.
func (f *flow) handOver(b []byte) {
	if f.ended.Load() {
		return
	}
	select {
	case f.wq.in <- append([]byte(nil), b...):
	default:
		f.vs.Prof.Conns.DgDropped.Add(1)
	}
}

// serveWaiting is the flow's goroutine: CLIENT_ACCEPTED, then the client's
// datagrams in order until the flow ends, then SERVER_CLOSED and
// CLIENT_CLOSED, which end leaves to it so that ending a flow (idle sweep,
// delete sys connection, a commit closing the listener) never waits for
// a suspended event.
func (f *flow) serveWaiting() {
	q := f.wq
	q.busy.Store(true)
	f.opening.Store(false) // busy covers it from here
	if !f.ended.Load() && !f.accepted() {
		f.end()
	}
	q.busy.Store(false)
	for {
		select {
		case b := <-q.in:
			q.busy.Store(true)
			f.fromClient(b)
			f.Touch(f.l.e.now.Load()) // the wait is not idleness
			q.busy.Store(false)
		case <-q.done:
			f.endRules(q.legs)
			return
		}
	}
}
