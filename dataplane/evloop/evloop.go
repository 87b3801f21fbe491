//go:build linux

// Package evloop runs readiness loops over raw non-blocking sockets. Each
// loop is one goroutine with its own epoll set, serving many connections,
// so that a proxied byte costs a read(2) and a write(2) and no goroutine
// switch of its own.
//
// Why not the net package: its poller is edge-triggered, so every reader
// must read until EAGAIN before it may sleep (one wasted read(2) per burst),
// and every wake-up is a goroutine park and unpark through the scheduler.
// A level-triggered set lets a handler stop after a short read: if more
// bytes, or the peer's FIN, arrive, the next wait reports them.
//
// A handler runs on its loop's thread and must never block. Other
// goroutines reach a loop only through Post.
package evloop

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sendbatch"
)

// Event bits, as epoll(7) names them.
const (
	In    = unix.EPOLLIN
	Out   = unix.EPOLLOUT
	RdHup = unix.EPOLLRDHUP
	Err   = unix.EPOLLERR
	Hup   = unix.EPOLLHUP
	// Exclusive wakes only one of the loops sharing a descriptor (a
	// listening socket registered in every loop).
	Exclusive = unix.EPOLLEXCLUSIVE
	// Edge registers for changes only: a handler that stops before EAGAIN
	// must ask for another turn with Again.
	Edge = unix.EPOLLET
)

// Handler receives the events of the descriptors it registered. tag is the
// value given to Add, so that one object can own several descriptors (a
// flow's client and server sockets).
type Handler interface {
	Ready(tag uint8, events uint32)
}

// Flusher is work a handler leaves for the end of the current batch of
// events (Defer).
type Flusher interface {
	Flush()
}

// A Sender is a Flusher whose write may leave in one system call with the
// other Senders' writes of the batch (dataplane/internal/sendbatch).
//
// Why: each write of a batch's end can wake a peer that takes the loop's
// CPU before the next write; together, all leave before any peer runs,
// and the loop pays one system call for them.
type Sender interface {
	Flusher
	// Stage returns the socket and the bytes to write now, which stay as
	// they are until Sent; ok false if there is nothing to write this way
	// (the loop then calls Flush). Empty buffers are Sent at once, as a
	// write of no bytes.
	Stage() (fd int, iov []unix.Iovec, ok bool)
	// Sent takes the outcome of the staged write (the bytes the socket
	// took, or the error; EAGAIN when it took none) and goes on as Flush
	// would with the rest.
	Sent(n int, err syscall.Errno)
}

// Token names one registration. It carries a generation so that an event
// already fetched for a descriptor that has since been removed (and whose
// slot was reused) is recognised as stale and dropped.
type Token uint64

type slot struct {
	h   Handler
	gen uint32
	tag uint8
	// seen is the activity window in which the slot last had events.
	seen uint32
	// guest: the slot holds a hosted loop's epoll descriptor, whose
	// events that loop counts itself (procs.go).
	guest bool
}

// batch is how many events one wait returns at most.
const batch = 256

// sendBatch is how many Senders' writes leave in one system call at most.
const sendBatch = 64

// sendBatchOff: SetSendBatching(false).
var sendBatchOff atomic.Bool

// SetSendBatching decides whether the process's loops send the writes of
// a batch's end (Sender) together, in one system call where the kernel
// gives rings (the default), or one system call each. The daemon sets it
// once, before its loops run (ltmd --send-batch).
func SetSendBatching(on bool) { sendBatchOff.Store(!on) }

// SetSendBatch is SetSendBatching for this loop alone: false makes it
// write one socket at a time whatever the process's setting. Call before
// Run.
func (l *Loop) SetSendBatch(on bool) { l.noSendBatch = !on }

// Loop is one event loop. Create with New, start with Run.
type Loop struct {
	epfd   int
	wakefd int
	slots  []slot
	free   []uint32
	events [batch]unix.EpollEvent
	now    int64
	again  []Token
	redo   []Token
	later  []Flusher
	lspare []Flusher
	// sends carries the Senders' writes of a batch's end (nil where the
	// kernel gives no rings); staged are the Senders whose writes it
	// holds.
	sends       *sendbatch.Batch
	staged      []Sender
	noSendBatch bool // SetSendBatch(false)
	sentAtEnd   bool // the last batch's end sent staged writes
	spin        time.Duration
	// Activity windows: how many registrations had events in the current
	// window (winRegs) and in the last whole one (lastRegs).
	window    uint32
	windowEnd int64
	winRegs   int
	lastRegs  int
	spinLimit int32 // loops that may poll at once (spinGate)
	// quietAt (Unix nanoseconds): the loop does not busy-poll before then,
	// after it found its CPU contended (busyPoll); contended is the yield
	// that tells it (contendedYield, changed by tests).
	quietAt   int64
	contended time.Duration
	// idleYields counts the slow yields in a row after which no event of
	// the loop's was there (busyPoll).
	idleYields int
	sleeps     int // times the loop went to sleep, for tests
	// wokeAt (Unix nanoseconds): when the loop last came back from the
	// poller, until it has nudged the scheduler or parked again (0).
	wokeAt int64
	// parkedSince (Unix nanoseconds): when the loop went to the poller,
	// 0 while it runs; read by the other loops (nudgeForStalled,
	// nudgeForReady).
	parkedSince atomic.Int64
	// lookAt (Unix nanoseconds): when the loop next looks whether a
	// parked loop has events nobody polls for (nudgeForReady).
	lookAt int64
	looks  int // times the loop looked (nudgeForReady), for tests
	spins  int // times the loop started to busy-poll, for tests
	// waitOwn: the loop leaves the runtime's poller to wait in its own
	// epoll_pwait (settle); ownWaits counts those waits, for tests.
	waitOwn  bool
	ownWaits int
	// holdNext: the loop leaves the runtime's poller to hold its thread
	// (hold.go); holdTS is the timeout of its raw waits.
	holdNext bool
	holdTS   unix.Timespec
	// Shared writes deferred (DeferShared) in the current activity window
	// and in the last whole one; settles reads only whether there were any.
	winDefers, lastDefers int
	// What the processor governor reads and resets each of its windows:
	// the most registrations with events in one activity window, whether
	// the loop settled, and the events of its registrations it handled
	// (winEvents counts them until the activity window ends, handled from
	// then; posts and a guest's descriptor are not counted).
	peakRegs  atomic.Int32
	settled   atomic.Bool
	handled   atomic.Uint64
	winEvents int
	// Hosting (procs.go): joinHost asks the loop to let host serve it;
	// resume ends that; guests are the loops this one serves; onTick and
	// tick are Run's (a host ticks its guests with its own ticks).
	joinHost  *Loop
	joinEpoch uint64
	resume    chan struct{}
	guests    []*guest
	hostedAs  *guest // while another loop serves this one
	onTick    func(now int64)
	tick      time.Duration

	mu      sync.Mutex
	posted  []func()
	spare   []func()
	wakeBuf [8]byte
	stopped bool
	done    chan struct{}
}

// New creates a loop; it does nothing until Run.
func New() (*Loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	l := &Loop{epfd: epfd, wakefd: wfd, done: make(chan struct{}), now: time.Now().UnixNano(), contended: contendedYield}
	l.slots = append(l.slots, slot{}) // slot 0 is the wake-up descriptor
	ev := unix.EpollEvent{Events: In}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &ev); err != nil {
		unix.Close(wfd)
		unix.Close(epfd)
		return nil, err
	}
	return l, nil
}

// SetBusyPoll makes the loop go on polling for d after its last events
// before it sleeps (0, the default, sleeps at once), while no more than a
// few of its registrations are active (spinMaxActive). Call before Run.
//
// Why: waking a sleeping thread costs tens of microseconds on a virtual
// machine (the idle processor must be woken too), and a proxied exchange
// wakes the proxy twice. A loop that polls a little longer finds the
// answer it waits for already there. The polling is polite: between two
// polls the loop gives its processor to any other goroutine and its CPU to
// any thread waiting for that CPU. It is not free: a polling CPU does not
// look idle, so the kernel may queue another process's woken thread
// elsewhere instead (dataplane/README.md has the figures both ways), so
// no more than half the process's processors poll at one time (spinGate),
// and a loop that finds its CPU wanted by other threads stops polling for
// contendedBackoff (busyPoll). BIG-IP's TMM polls all the time, and
// HAProxy's busy-polling does too; this stops after d. Where the
// governor judges polling (Govern), loops on a few exchanges each poll
// only while a trial finds that polling raises the rate they handle
// events at (polljudge.go), and several loops on one exchange each hold
// their threads (hold.go).
func (l *Loop) SetBusyPoll(d time.Duration) { l.spin = d }

// Now is the time the current batch of events was fetched, in Unix
// nanoseconds: handlers stamp activity with it instead of reading the
// clock per event.
func (l *Loop) Now() int64 { return l.now }

func setToken(ev *unix.EpollEvent, t Token) {
	// Fd and Pad together are the kernel's 64-bit user data.
	ev.Fd = int32(uint32(t))
	ev.Pad = int32(uint32(t >> 32))
}

func tokenOf(ev *unix.EpollEvent) Token {
	return Token(uint32(ev.Fd)) | Token(uint32(ev.Pad))<<32
}

// Add registers fd for events; h.Ready(tag, ev) runs on the loop when they
// occur. Loop thread only (or before Run).
func (l *Loop) Add(fd int, events uint32, h Handler, tag uint8) (Token, error) {
	var idx uint32
	if n := len(l.free); n > 0 {
		idx = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		idx = uint32(len(l.slots))
		l.slots = append(l.slots, slot{})
	}
	s := &l.slots[idx]
	s.gen++
	s.h, s.tag, s.guest = h, tag, false
	t := Token(idx) | Token(s.gen)<<32
	ev := unix.EpollEvent{Events: events}
	setToken(&ev, t)
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		s.h = nil
		s.gen++
		l.free = append(l.free, idx)
		return 0, err
	}
	return t, nil
}

// Modify changes the events fd is registered for. Loop thread only.
func (l *Loop) Modify(fd int, t Token, events uint32) error {
	ev := unix.EpollEvent{Events: events}
	setToken(&ev, t)
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
}

// Again gives t another turn with an In event after the current batch,
// without waiting: for an edge-triggered descriptor whose handler stopped
// early to let others run. Loop thread only.
func (l *Loop) Again(t Token) {
	l.again = append(l.again, t)
	if g := l.hostedAs; g != nil && len(l.again) == 1 {
		// A hosted loop's turns are the host's to give: they raise no
		// event in the guest's epoll set, which is all the host watches
		// of it (procs.go).
		g.h.Again(g.tok)
	}
}

// Defer runs f.Flush once the current batch of events has been handled,
// before the loop waits again. Why: the writes of a batch then leave
// together, so a peer woken by the first finds the others' bytes too
// (the members of message-balanced virtuals, dataplane/mblb). Loop
// thread only; the caller keeps f from being deferred twice in one batch
// if that matters.
func (l *Loop) Defer(f Flusher) { l.later = append(l.later, f) }

// DeferShared is Defer for bytes that several handlers of a batch queue
// for one shared socket (a OneConnect server connection carrying many
// clients' requests): written at the end, they leave in one write(2) and
// reach the peer in one segment. A batch that defers such a write keeps
// the loop from settling (settles), because the larger batches a late
// wake-up from the runtime's poller gathers are what make it pay.
func (l *Loop) DeferShared(f Flusher) {
	l.winDefers++
	l.later = append(l.later, f)
}

// Forget releases t's slot without touching the descriptor: the caller
// closes it (which leaves the epoll set by itself) or removes it with
// Remove. Events already fetched for t are dropped. Loop thread only.
func (l *Loop) Forget(t Token) {
	idx := uint32(t)
	if idx == 0 || int(idx) >= len(l.slots) {
		return
	}
	s := &l.slots[idx]
	if s.gen != uint32(t>>32) || s.h == nil {
		return
	}
	s.h = nil
	s.gen++
	l.free = append(l.free, idx)
}

// Remove takes fd out of the set (for a descriptor that stays open, such
// as a listening socket shared with other loops) and forgets t.
func (l *Loop) Remove(fd int, t Token) {
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	l.Forget(t)
}

// Post runs fn on the loop's thread, soon. Safe from any goroutine; after
// Stop, fn is dropped.
func (l *Loop) Post(fn func()) { l.post(fn) }

// post is Post, reporting whether fn was queued (false: the loop stopped).
func (l *Loop) post(fn func()) bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	wake := len(l.posted) == 0
	l.posted = append(l.posted, fn)
	l.mu.Unlock()
	if wake {
		// A raw system call: the eventfd is non-blocking, and the runtime's
		// path (entersyscall) would wake its monitor thread when that
		// sleeps, a futex wake per post on a quiet process.
		one := uint64(1)
		unix.RawSyscall(unix.SYS_WRITE, uintptr(l.wakefd), uintptr(unsafe.Pointer(&one)), 8)
	}
	return true
}

// Call runs fn on the loop's thread and waits for it. It must not be
// called from the loop itself. It reports false if the loop has stopped
// (fn did not run).
func (l *Loop) Call(fn func()) bool {
	ran := make(chan struct{})
	l.Post(func() { fn(); close(ran) })
	select {
	case <-ran:
		return true
	case <-l.done:
		select {
		case <-ran:
			return true
		default:
			return false
		}
	}
}

func (l *Loop) runPosted() {
	unix.RawSyscall(unix.SYS_READ, uintptr(l.wakefd), uintptr(unsafe.Pointer(&l.wakeBuf[0])), uintptr(len(l.wakeBuf)))
	l.mu.Lock()
	fns := l.posted
	l.posted = l.spare[:0]
	l.mu.Unlock()
	for i, fn := range fns {
		fn()
		fns[i] = nil
	}
	l.mu.Lock()
	l.spare = fns[:0]
	l.mu.Unlock()
}

// ErrStopped is returned by Run after Stop.
var ErrStopped = errors.New("evloop: stopped")

// Run serves events until Stop. Every tick (if tick > 0) it calls onTick
// with the current time, for timers such as idle timeouts.
//
// While it has no events the loop does not hold a thread: the epoll
// descriptor is itself registered in the Go runtime's poller, so the loop
// goroutine parks there like any network reader and the scheduler stays in
// charge of the threads. A busy loop settles instead (settleRegs): it
// waits in its own epoll_pwait(2) through the runtime's system call path,
// which lets the runtime hand its processor to other goroutines meanwhile.
// While the process runs on one processor (procs.go), a loop asked to
// join the first one parks until released, and the first serves its
// events, posts and ticks: one goroutine then serves every connection.
func (l *Loop) Run(tick time.Duration, onTick func(now int64)) error {
	defer close(l.done)
	defer unix.Close(l.wakefd)
	running.add(l)
	defer running.remove(l)
	if err := unix.SetNonblock(l.epfd, true); err != nil {
		unix.Close(l.epfd)
		return err
	}
	defer unix.Close(l.epfd)
	// The runtime's poller watches a duplicate of the epoll descriptor,
	// so that closing it takes the loop out of the poller while the loop
	// holds its thread (hold.go) and a new one puts it back.
	var f *os.File
	var rc syscall.RawConn
	register := func(next time.Time) error {
		fd, err := unix.FcntlInt(uintptr(l.epfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return err
		}
		f = os.NewFile(uintptr(fd), "epoll")
		if rc, err = f.SyscallConn(); err != nil {
			f.Close()
			return err
		}
		if tick > 0 {
			f.SetReadDeadline(next)
		}
		return nil
	}
	defer func() {
		if f != nil { // nil when a hold ended the loop
			f.Close()
		}
	}()
	defer l.releaseGuests()
	if !l.noSendBatch && !sendBatchOff.Load() && sendbatch.Supported() {
		if b, err := sendbatch.New(sendBatch); err == nil {
			l.sends = b
			defer b.Close()
		}
	}
	l.onTick, l.tick = onTick, tick
	l.spinLimit = int32(max(1, Procs()/2))
	// active: the loop has handled events since it last slept, so it
	// busy-polls (until the next tick at the latest) before sleeping again.
	active := false
	stopped := false
	next := time.Now().Add(tick)
	if err := register(next); err != nil {
		return err
	}
	// pollFn serves events until there are none (it returns false: the
	// goroutine waits in the runtime's poller, then pollFn runs again),
	// the loop is stopped or a tick is due (true). One rc.Read lasts as
	// long as the loop has work: each call resets the descriptor's
	// readiness in the runtime, so that one per batch would throw away
	// the notice of events that arrived during the batch and need a poll
	// to find them again.
	pollFn := func(uintptr) bool {
		if l.parkedSince.Load() != 0 { // back from the poller
			l.parkedSince.Store(0)
			l.wokeAt = time.Now().UnixNano()
			// The thread that polled readied every loop whose events
			// were there; a loop that parks again within lookEvery
			// polls on its way, so only a longer turn needs to look.
			l.lookAt = l.wokeAt + int64(lookEvery)
		}
		if l.joinHost != nil { // asked while it was hosted or waited in its own epoll_pwait
			return true
		}
		for {
			if l.sentAtEnd {
				// The batch's end woke the peers its writes were for;
				// where the loop settles (many busy registrations), let
				// them run before looking for their answers, which an
				// immediate poll would not find yet. Measured at 64
				// keep-alive connections through an L4 virtual (wrk,
				// nginx): 35-38k requests/s against 21-30k, 4.0 system
				// calls per request against 5.2. At 64 message clients
				// of Go peers it costs 3-4 % of the rate
				// (dataplane/README.md, "A batch's writes in one
				// system call").
				l.sentAtEnd = false
				if l.settles() {
					unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
				}
			}
			n := l.poll()
			// few: out of events after serving a few exchanges, where
			// the loop holds its thread or busy-polls.
			few := n == 0 && len(l.again) == 0 && active && l.lastRegs <= spinMaxActive
			if few && l.mayHold() {
				l.holdNext = true
				return true
			}
			if few && l.spin > 0 && l.now >= l.quietAt && !pollOff.Load() {
				if spinners.enter(l.spinLimit) {
					until := time.Now().Add(l.spin)
					if tick > 0 && next.Before(until) {
						until = next
					}
					l.spins++
					n = l.busyPoll(until)
					spinners.leave()
				}
			}
			if n == 0 && len(l.again) == 0 && active && l.settles() {
				if !l.settled.Load() {
					l.settled.Store(true)
				}
				if n = l.settle(); n == 0 {
					l.waitOwn = true
					return true // the wait below, off the runtime's poller
				}
			}
			if n == 0 && len(l.again) == 0 {
				active = false
				l.sleeps++
				l.wokeAt = 0
				l.parkedSince.Store(time.Now().UnixNano())
				return false
			}
			active = true
			now := time.Now()
			if l.handle(n, now) {
				stopped = true
				return true
			}
			if l.joinHost != nil {
				return true
			}
			if l.wokeAt != 0 && l.now-l.wokeAt > int64(nudgeAfter) {
				l.nudgeForStalled(l.now)
			}
			if l.now >= l.lookAt {
				l.lookAt = l.now + int64(lookEvery)
				l.nudgeForReady(l.now)
			}
			if tick > 0 && !now.Before(next) {
				return true
			}
		}
	}
	for {
		err := rc.Read(pollFn)
		if stopped {
			return ErrStopped
		}
		if l.holdNext {
			l.holdNext = false
			f.Close() // out of the runtime's poller while the loop holds
			f = nil
			if stopped, active = l.hold(tick, &next); stopped {
				return ErrStopped
			}
			if err := register(next); err != nil {
				return err
			}
			continue
		}
		if h := l.joinHost; h != nil {
			l.joinHost = nil
			l.resume = make(chan struct{})
			e := l.joinEpoch
			if h.post(func() { h.adopt(l, e) }) {
				// A host that stops before it takes the request releases
				// nobody: its end is the release.
				select {
				case <-l.resume:
				case <-h.done:
				}
			}
			if l.isStopped() {
				return ErrStopped
			}
			active = false
		}
		if l.waitOwn {
			l.waitOwn = false
			if n := l.wait(tick, next); n > 0 {
				if l.handle(n, time.Now()) {
					return ErrStopped
				}
			} else {
				active = false
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if now := time.Now(); tick > 0 && !now.Before(next) {
			next = l.ticked(now, tick)
			f.SetReadDeadline(next)
		}
	}
}

// ticked runs the loop's tick, and its guests', at now and returns when
// the next is due.
func (l *Loop) ticked(now time.Time, tick time.Duration) time.Time {
	l.now = now.UnixNano()
	l.onTick(l.now)
	for _, g := range l.guests {
		g.l.now = l.now
		g.l.onTick(l.now)
	}
	return now.Add(tick)
}

// handle dispatches the n events of the last poll, fetched at now, then
// the turns asked with Again and the deferred flushes. It reports true
// when the loop was stopped.
func (l *Loop) handle(n int, now time.Time) bool {
	l.now = now.UnixNano()
	for i := 0; i < n; i++ {
		ev := &l.events[i]
		t := tokenOf(ev)
		idx := uint32(t)
		if idx == 0 {
			l.runPosted()
			if l.isStopped() {
				return true
			}
			continue
		}
		if s := l.live(t); s != nil {
			if !s.guest { // a guest counts its own
				l.winEvents++
				if s.seen != l.window {
					s.seen = l.window
					l.winRegs++
				}
			}
			s.h.Ready(s.tag, ev.Events)
		}
	}
	if l.now >= l.windowEnd {
		l.lastRegs, l.winRegs = l.winRegs, 0
		if int32(l.lastRegs) > l.peakRegs.Load() {
			l.peakRegs.Store(int32(l.lastRegs))
		}
		l.lastDefers, l.winDefers = l.winDefers, 0
		l.handled.Add(uint64(l.winEvents))
		l.winEvents = 0
		l.window++
		l.windowEnd = l.now + int64(activityWindow)
	}
	if len(l.again) > 0 {
		l.redo, l.again = l.again, l.redo[:0]
		for _, t := range l.redo {
			if s := l.live(t); s != nil {
				s.h.Ready(s.tag, In)
			}
		}
	}
	for len(l.later) > 0 {
		fs := l.later
		l.later = l.lspare[:0]
		for i, f := range fs {
			fs[i] = nil
			if !l.stage(f) {
				f.Flush()
			}
		}
		l.submitSends()
		l.lspare = fs[:0]
	}
	return false
}

// SendsTogether reports whether a handler should leave a write for the
// batch's end, where the loop sends its Senders' writes together: it has
// a ring (SetSendBatching) and more than spinMaxActive registrations had
// events in the last activity window. Why the second: a loop serving a
// few exchanges rarely has two writes in one batch, so leaving one for
// the batch's end only delays it (two new connections per request
// through an L4 virtual, 8 alternating rounds: 4.95k requests/s leaving
// every write against 5.15k writing at once). Loop thread only.
func (l *Loop) SendsTogether() bool { return l.sends != nil && l.lastRegs > spinMaxActive }

// batchedSends counts the writes sent together with others (BatchedSends).
var batchedSends atomic.Uint64

// BatchedSends is how many writes the process's loops sent together with
// others of their batch, in one system call, since it started: what shows
// an operator that the kernel gives the loops rings and that batches
// carry several writes (the metric
// openltm_event_loop_batched_sends_total).
func BatchedSends() uint64 { return batchedSends.Load() }

// stage hands f's write to the batch's sends if f is a Sender with bytes
// to write and the loop has a ring, and reports whether it did (if not,
// the caller flushes f).
func (l *Loop) stage(f Flusher) bool {
	s, ok := f.(Sender)
	if !ok || l.sends == nil {
		return false
	}
	if l.sends.Len() == l.sends.Cap() {
		l.submitSends()
	}
	fd, iov, ok := s.Stage()
	if !ok {
		return false
	}
	if l.sends.Add(fd, iov) {
		l.staged = append(l.staged, s)
	} else { // empty buffers, or a broken ring
		r := sendbatch.SendNow(fd, iov)
		s.Sent(r.N, r.Err)
	}
	return true
}

// submitSends writes what the staged Senders hold and tells each its
// outcome.
func (l *Loop) submitSends() {
	if len(l.staged) == 0 {
		return
	}
	if len(l.staged) > 1 {
		batchedSends.Add(uint64(len(l.staged)))
	}
	l.sentAtEnd = true
	res := l.sends.Submit()
	for i, s := range l.staged {
		l.staged[i] = nil
		s.Sent(res[i].N, res[i].Err)
	}
	l.staged = l.staged[:0]
}

// live is t's slot, or nil if t was forgotten since (an event fetched in
// the same batch, or a turn asked with Again).
func (l *Loop) live(t Token) *slot {
	idx := uint32(t)
	if idx == 0 || int(idx) >= len(l.slots) {
		return nil
	}
	s := &l.slots[idx]
	if s.h == nil || s.gen != uint32(t>>32) {
		return nil
	}
	return s
}

// busyPoll polls until events arrive or the deadline passes, yielding between polls
// (SetBusyPoll): the processor to other goroutines and the CPU to other
// threads (sched_yield(2)).
//
// It gives up, and the loop does not poll again for contendedBackoff,
// after contendedYields yields in a row that each took longer than
// contendedYield and after which none of the loop's events was there:
// other threads wanted this CPU and ran, and they were not the peers of
// the loop's exchanges (a slow yield that let the client or the member
// answer is what polling is for). Why: the CPU is not idle, so polling
// only takes from those threads, and the kernel counts every polled
// microsecond against the loop's thread, which then waits behind them
// when it has work (a thread woken from sleep is served first). On an
// idle machine a yield returns at once and nothing changes. Measured on
// 2 vCPUs, one connection through an L4 virtual (bench/run.sh, medians
// of 3): with a load average of 7-15 from other work, polling regardless
// ran 100-2800 requests/s at 36-150 µs of CPU each and backing off at the
// first slow yield 12.6k at 18 µs; on a quiet machine, backing off at the
// first slow yield cost a third (26k → 15k req/s, HAProxy 12k), and this
// rule keeps the quiet figure (27k) and, beside two busy loops of other
// processes, polling's (40k, against 6k for backing off at once).
//
// The yield is timed alone: runtime.Gosched may run other goroutines of
// the process, which is no sign of a contended CPU.
func (l *Loop) busyPoll(until time.Time) int {
	for time.Now().Before(until) {
		if now := time.Now().UnixNano(); l.wokeAt != 0 && now-l.wokeAt > int64(nudgeAfter) {
			l.nudgeForStalled(now)
		} else if now >= l.lookAt {
			l.lookAt = now + int64(lookEvery)
			l.nudgeForReady(now)
		}
		runtime.Gosched()
		t := time.Now()
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		slow := time.Since(t) > l.contended
		if n := l.poll(); n > 0 {
			l.idleYields = 0
			return n
		}
		if !slow {
			l.idleYields = 0
		} else if l.idleYields++; l.idleYields >= contendedYields {
			l.idleYields = 0
			l.quietAt = time.Now().Add(contendedBackoff).UnixNano()
			return 0
		}
	}
	return 0
}

// contendedYield is how long a yield may take before the loop concludes
// that other threads are waiting for its CPU (a yield to nobody takes a
// microsecond or two); contendedBackoff is how long it then does not
// poll.
const (
	contendedYields  = 3
	contendedYield   = 20 * time.Microsecond
	contendedBackoff = 100 * time.Millisecond
)

// A loop busy-polls only while few of its registrations are active: at
// most spinMaxActive had events in the last activityWindow. Why: polling
// pays where a loop waits on one or two exchanges (each answer would
// otherwise wake it); with many connections busy, an event is always near,
// a sleeping loop finds several at once when it wakes, and polling only
// takes CPU time from the peers. Measured on 2 vCPUs against polling
// whenever a loop runs dry: one client keeps the whole gain, 8 clients
// gain 14-35 %, 64 clients 3-17 % (dataplane/README.md).
const (
	spinMaxActive  = 4
	activityWindow = time.Millisecond
)

// spinGate bounds how many loops busy-poll at once. Why: the peers a
// loop waits for (clients, members, other processes) need CPUs too; with
// every loop polling they get none of their own and each of their
// wake-ups must preempt a poller. Half the processors poll at most (at
// least one), as the Go scheduler bounds its own spinning threads.
type spinGate struct{ n atomic.Int32 }

// enter reports whether the caller may poll, below limit pollers.
func (g *spinGate) enter(limit int32) bool {
	if g.n.Add(1) <= limit {
		return true
	}
	g.n.Add(-1)
	return false
}

// leave ends a poll that enter allowed.
func (g *spinGate) leave() { g.n.Add(-1) }

// spinners is the gate of every loop of the process.
var spinners spinGate

// A loop waits for its events in the Go runtime's poller, and the runtime
// keeps one thread blocked there at a time. When that thread wakes for
// one loop, it runs that loop and nobody waits in the poller any more: a
// second parked loop whose events arrive meanwhile is not run — though a
// processor is idle — until the first loop parks again (its thread then
// polls on the way) or the runtime's monitor polls, which it does only
// when nobody has for 10 ms. A busy loop may not park for that long (and
// a busy-polling one, yielding, finds itself first in the run queue, so
// its thread never polls either): the other loop's connections stalled
// for up to 10-20 ms, the tail of the latency distribution.
//
// So a loop that has run for nudgeAfter since it came back from the
// poller, while another loop has been parked for stallAfter, nudges the
// scheduler, once per turn: readying a goroutine wakes an idle
// processor's thread, which finds nothing to run and blocks in the poller
// in the first one's place. A nudge costs a thread wake-up, so none is
// made for a loop parked only briefly (between two of its events while
// traffic flows: nudging then cost 6 % of an L4 virtual's requests/s at
// 64 connections), a loop that parks again sooner needs none (its thread
// polls), and none is made while the last nudge has not been taken. With
// it, the p99 latency of an HTTP virtual at 64 connections went from
// 4-5 ms to HAProxy's 2 ms (dataplane/README.md).
//
// A parked loop whose events have come is found sooner: a running loop
// asks, every lookEvery, whether the descriptor of a loop parked for
// readyAfter or more is readable, and nudges if it is (nudgeForReady).
// It first asks lookEvery after it came back from the poller: the poll
// that readied it readied every loop whose events were there, and a
// loop that parks again sooner polls on its way. (Asking at every
// wake-up cost one poll(2) per parked loop and wake-up: with one new
// connection per request and polling off, 3.4 per connection against
// 0.9 now.)
// The stall rule stays for a loop parked long without events: its nudge
// leaves a thread in the poller, so that events yet to come wake that
// loop at once rather than at the next look.
const (
	nudgeAfter = 200 * time.Microsecond
	stallAfter = time.Millisecond
	lookEvery  = 50 * time.Microsecond
	readyAfter = 50 * time.Microsecond
)

var (
	nudges     = make(chan struct{})
	nudgesSent atomic.Uint64 // for tests
)

func init() {
	go func() {
		for range nudges {
		}
	}()
}

// loopSet is the loops running in the process, which the nudges
// looks over.
type loopSet struct {
	mu sync.Mutex
	ls atomic.Pointer[[]*Loop]
}

var running loopSet

func (s *loopSet) add(l *Loop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ls []*Loop
	if p := s.ls.Load(); p != nil {
		ls = append(ls, *p...)
	}
	ls = append(ls, l)
	s.ls.Store(&ls)
}

func (s *loopSet) remove(l *Loop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ls []*Loop
	for _, o := range *s.ls.Load() {
		if o != l {
			ls = append(ls, o)
		}
	}
	s.ls.Store(&ls)
}

// nudgeForStalled nudges (once this turn) if another loop has been parked
// for stallAfter at now.
func (l *Loop) nudgeForStalled(now int64) {
	for _, o := range *running.ls.Load() {
		if p := o.parkedSince.Load(); o != l && p != 0 && now-p > int64(stallAfter) {
			l.wokeAt = 0
			select {
			case nudges <- struct{}{}:
				nudgesSent.Add(1)
			default:
			}
			return
		}
	}
}

// nudgeForReady nudges if another loop has been parked for readyAfter
// and its epoll descriptor has events: nobody may be polling for them
// (see nudges), and waiting for the stall rule would hold its
// connections for a millisecond or more. Asking the descriptor costs one
// poll(2) every lookEvery while the loop runs; a nudge is made only when
// it is needed, so it costs no wake-up otherwise.
func (l *Loop) nudgeForReady(now int64) {
	l.looks++
	for _, o := range *running.ls.Load() {
		if p := o.parkedSince.Load(); o != l && p != 0 && now-p > int64(readyAfter) && o.hasEvents() {
			select {
			case nudges <- struct{}{}:
				nudgesSent.Add(1)
			default:
			}
			return
		}
	}
}

// hasEvents reports whether the loop's epoll descriptor is readable,
// without taking its events. Safe from any goroutine (at worst, as the
// loop stops, it asks a closed descriptor and says false).
func (l *Loop) hasEvents() bool {
	fds := [1]unix.PollFd{{Fd: int32(l.epfd), Events: unix.POLLIN}}
	var now unix.Timespec // zero: do not wait
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1,
		uintptr(unsafe.Pointer(&now)), 0, 0, 0)
	return e == 0 && n == 1 && fds[0].Revents&unix.POLLIN != 0
}

// poll fetches ready events without waiting.
func (l *Loop) poll() int {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), batch, 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(r)
}

func (l *Loop) isStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// Stop ends Run after the functions posted before it have run, and waits
// for it; for a loop that was never run (started false) it just releases
// the loop's own descriptors. Descriptors still registered are not closed.
func (l *Loop) Stop(started bool) {
	if !started {
		l.mu.Lock()
		l.stopped = true
		l.mu.Unlock()
		unix.Close(l.wakefd)
		unix.Close(l.epfd)
		return
	}
	l.Post(func() {
		l.mu.Lock()
		l.stopped = true
		l.mu.Unlock()
	})
	<-l.done
}

// A busy loop that runs out of events settles instead of parking in the
// runtime's poller: it polls for up to settleFor, yielding its CPU
// between polls (sched_yield(2)), and if nothing came it waits in its
// own epoll_pwait(2), as a system call on its own thread. A loop is busy
// when more than settleRegs of its registrations had events in the last
// activity window, and none of its recent batches deferred a write to
// a shared socket (DeferShared).
//
// Why: a loop parked in the runtime's poller comes back on whichever
// thread polled, so under load ltmd's work was spread over three or four
// threads that the kernel could not keep apart: a sched_switch trace at
// 64 HTTP connections showed two of them queued on one CPU while the
// other idled 6-12 % of the time (HAProxy's two threads kept one CPU
// each, never idle). A loop that settles stays on its thread, the
// thread is woken by the kernel itself when its events come, and its
// voluntary context switches fell from 0.06 to 0.004 per request.
// Measured against parking (dataplane/README.md, "Settling busy loops"):
// L4 at 64 connections +7-11 % requests/s at 0.9x the CPU per request,
// HTTP with OneConnect +4 % (plain) and +8 % (the 10-line rule).
//
// Not for every loop. Few registrations: the busy-poll (SetBusyPoll)
// already serves those, and at 8 connections settling gained nothing.
// Shared writes: a loop writing several clients' messages to a shared
// OneConnect connection at the batch's end gains from the larger batches
// that a late wake-up from the runtime's poller gathers (MBLB with
// OneConnect at 64 clients: 0.81x HAProxy settling, 0.96x parking).
// Writes of one client's own (Defer) gain nothing from waiting: a loop
// of message clients without OneConnect settles (64 clients, length
// framing: +9 % messages/s, the seed's rule +4 %; dataplane/README.md,
// "Settling with writes of a client's own").
const (
	settleRegs = 16
	settleFor  = 30 * time.Microsecond
)

// settles reports whether the loop, out of events, settles (see
// settleRegs) rather than parking in the runtime's poller.
func (l *Loop) settles() bool {
	return l.lastRegs > settleRegs && l.lastDefers == 0 && l.winDefers == 0
}

// settle polls for up to settleFor, yielding the CPU between polls, and
// returns the events found (0: none came).
func (l *Loop) settle() int {
	until := time.Now().Add(settleFor)
	for time.Now().Before(until) {
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		if n := l.poll(); n > 0 {
			return n
		}
	}
	return 0
}

// wait blocks in the loop's own epoll_pwait until events come or the
// next tick is due, and returns how many came. It goes through the
// runtime's system call path, so the runtime may give the loop's
// processor to other goroutines while it waits; posts wake it through
// the loop's eventfd as they wake a parked loop.
func (l *Loop) wait(tick time.Duration, next time.Time) int {
	l.sleeps++
	l.ownWaits++
	ms := -1
	if tick > 0 {
		ms = max(0, int(time.Until(next)/time.Millisecond)+1)
	}
	r, _, e := syscall.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), batch, uintptr(ms), 0, 0)
	if e != 0 {
		return 0
	}
	return int(r)
}
