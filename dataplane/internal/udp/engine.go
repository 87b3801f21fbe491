// Package udp is the dataplane's datagram path: the listeners of
// `ip-protocol udp` virtual servers and their flows. A flow is one client
// address and port on one listener; it keeps, for the udp profile's idle
// timeout, the member its first datagram was balanced to (or, with
// datagram-load-balancing, one server socket per member its datagrams
// went to, each datagram balanced on its own), and answers from a member
// go back to the client that asked. Members are chosen by state.Choose,
// server sides translated by state.Translate and state.SNATSource, as on
// the TCP path; flows are rows of the plane's connection table with
// protocol udp. An Engine is given its environment (Env) and does not
// know the plane that owns it.
package udp

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/icmpreject"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/persist"
)

// DefaultIdleTimeout is the udp profile's idle-timeout default.
const DefaultIdleTimeout = 60 * time.Second

// IdleTimeout is a UDP virtual's idle timeout from its configured value: 0
// is the profile's default, negative never expires (returned as 0).
func IdleTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultIdleTimeout
	case d < 0:
		return 0
	}
	return d
}

// tick is how often flows are checked for their idle timeout, and the
// resolution of the clock datagrams are stamped with.
const tick = 200 * time.Millisecond

// Env is what the datagram path needs of the plane.
type Env struct {
	// Table lists every flow (show/delete sys connection).
	Table *flows.Table
	// Pass makes the steering of wildcard and network virtuals pass
	// over a UDP destination until release (the plane's passPort): a
	// node a rule named, for its leg's life; nil: no steering.
	Pass func(ap netip.AddrPort, udp bool) (release func())
	// Log receives rule errors in BIG-IP's words.
	Log *slog.Logger
	// Pools is the running commit's pool index.
	Pools func() state.Pools
	// Running is the running configuration (snatpools named by rules).
	Running func() *config.Config
	// Persist is the plane's persistence table.
	Persist *persist.Table
	// MRFRouter is the message router of a virtual with message-routing
	// profiles (mrf.go), shared by its flows; nil: none is served.
	MRFRouter func(virtual string, cfg *mrf.Config, c *mrf.Counters) *mrf.Router
	// BWC is the running bandwidth controllers, which rules attach
	// flows to (BWC::policy).
	BWC *bwc.Set
	// Unreach answers the datagrams a packet filter rejects with an ICMP
	// port unreachable; nil drops them.
	Unreach *icmpreject.Sender
	// LSN is the running lsn pools, which rules choose with LSN::pool.
	LSN *lsn.Set
}

// Engine runs the UDP listeners of one plane and their flows.
type Engine struct {
	env Env
	now atomic.Int64 // coarse clock, Unix nanoseconds, advanced every tick
	// gtp indexes GTP sessions' persistence records (gtpsession.go).
	gtp gtpSessions

	// raw sends the answers of ip-forward flows on every port
	// (rawanswer_linux.go), opened with the first.
	raw rawAnswers

	mu        sync.Mutex
	listeners map[*Listener]struct{}
	sweeping  bool
	stop      chan struct{}
	wg        sync.WaitGroup
}

// New makes an engine; its idle sweeper starts with the first listener.
func New(env Env) *Engine {
	e := &Engine{env: env, listeners: map[*Listener]struct{}{}, stop: make(chan struct{})}
	e.now.Store(time.Now().UnixNano())
	return e
}

// Listener is one bound UDP address of a virtual server. VS is the
// virtual it serves, swapped by commits; flows keep the snapshot they
// started with.
//
// The address has a socket per CPU (up to maxSockets), bound with
// SO_REUSEPORT: the kernel hashes each client address and port to one of
// them, so a client's datagrams always reach the same socket, and each
// socket has its own reader and flows (sibs, each a Listener whose
// primary is this one). Why: with one reader every client datagram
// passed through one goroutine, and while it worked through a batch the
// other CPU idled (a sched_switch trace at full speed: 9.5 % of both
// CPUs' time idle, 70 % of it with only ltmd running on the other CPU;
// nginx's two workers, one socket each, left 1.3 %).
type Listener struct {
	VS   atomic.Pointer[state.Virtual]
	e    *Engine
	conn *net.UDPConn
	rc   syscall.RawConn
	addr netip.AddrPort
	listenerIO
	// primary is the listener whose VS a sibling serves (nil: this one);
	// sibs are a primary's other sockets.
	primary *Listener
	sibs    []*Listener
	// opts is what SetOpts last set (udpopts.go), once optsSet.
	opts    sockopt.Side
	optsSet bool
	// vlans is the VLAN list each datagram is checked against (nil: none
	// to check); vlanCfg what SetVLANs last set, once vlanSet; bound the
	// interface the socket is bound to (SetVLANs).
	vlans   atomic.Pointer[config.VLANFilter]
	vlanCfg *config.VLANFilter
	vlanSet bool
	bound   string
	// arrIf is the arrival interface of the datagram being handled,
	// read while vlans is set (0: not read); only the reader uses it.
	arrIf int
	// any: the listener is bound at a free port of its address and
	// takes the datagrams of every port (of every address of a network
	// virtual), each with the address and port its client sent to
	// (anyport_linux.go); addr's port is 0. A network virtual on one
	// port (ListenNetwork) is bound at its network's address and that
	// port and takes that port of every address of the network.
	any bool
	// dnsOut is a dns listener on every port's answering sockets
	// (dnsany.go), a primary's, which its siblings use.
	dnsOut replyConns

	mu     sync.RWMutex
	flows  map[flowKey]*flow
	closed bool
	done   chan struct{}
}

// flowKey is a flow's client and, on a listener on every port, the
// address and port the client sent to (zero on the others).
type flowKey struct {
	client, to netip.AddrPort
}

// maxSockets bounds the sockets of one listener address.
const maxSockets = 8

// virtual is the virtual the listener serves now (its primary's).
func (l *Listener) virtual() *state.Virtual {
	if l.primary != nil {
		return l.primary.VS.Load()
	}
	return l.VS.Load()
}

// dnsSnap is the listener's virtual and its snapshot when a dns profile
// (dataplane/dnsvs) answers its datagrams instead of the flows, else nil:
// read once per batch, the one cost other UDP virtuals pay.
func (l *Listener) dnsSnap() (*state.Virtual, *state.VirtualSnap) {
	vs := l.virtual()
	if vs == nil {
		return nil, nil
	}
	if snap := vs.Snap.Load(); snap.DNS != nil {
		return vs, snap
	}
	return nil, nil
}

// all is the listener and its siblings.
func (l *Listener) all() []*Listener {
	return append([]*Listener{l}, l.sibs...)
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// FD is the listener's first socket, which a virtual on every port puts
// in the plane's socket map (the kernel picks among its SO_REUSEPORT
// group as for its own lookup); -1 once closed.
func (l *Listener) FD() int {
	fd := -1
	l.rc.Control(func(x uintptr) { fd = int(x) })
	return fd
}

// socketBuffer is the receive and send buffer asked for each listener
// socket, so that a burst of queries is queued rather than dropped while
// the reader is busy.
const socketBuffer = 4 << 20

// Listen binds ap without serving it yet: a commit binds every new address
// before it changes anything, so that a failed bind changes nothing.
// It binds a socket per CPU (rawsock.ListenUDPGroup: the first bind
// decides); the first is the listener, the others its siblings.
func (e *Engine) Listen(ap netip.AddrPort) (*Listener, error) {
	return e.listen(ap, ap.Port() == 0) // port 0: every port (anyport_linux.go)
}

// ListenNetwork binds ap, a network virtual's address on its port, for
// the datagrams the steering hands it for every address of the network
// on that port: each is read with its original destination, as on
// every port, and answered from there.
func (e *Engine) ListenNetwork(ap netip.AddrPort) (*Listener, error) {
	return e.listen(ap, true)
}

// Every reports whether l takes datagrams for other addresses or ports
// than its own (every port, or a network on a port).
func (l *Listener) Every() bool { return l.any }

func (e *Engine) listen(ap netip.AddrPort, every bool) (*Listener, error) {
	conns, err := rawsock.ListenUDPGroup(net.UDPAddrFromAddrPort(ap).String(), min(evloop.Procs(), maxSockets))
	if err != nil {
		return nil, err
	}
	var l *Listener
	for _, c := range conns {
		c.SetReadBuffer(socketBuffer)
		c.SetWriteBuffer(socketBuffer)
		rc, _ := c.SyscallConn() // a *net.UDPConn's never fails
		if every {
			var serr error
			rc.Control(func(fd uintptr) { serr = setOrigDst(int(fd), !ap.Addr().Is4()) })
			if serr != nil {
				for _, c := range conns {
					c.Close()
				}
				return nil, serr
			}
		}
		s := &Listener{e: e, conn: c, rc: rc, addr: ap, any: every, flows: map[flowKey]*flow{}, done: make(chan struct{})}
		if l == nil {
			l = s
		} else {
			s.primary = l
			l.sibs = append(l.sibs, s)
		}
	}
	return l, nil
}

// CloseUnstarted releases a listener a failed commit bound.
func (l *Listener) CloseUnstarted() {
	for _, s := range l.all() {
		s.conn.Close()
		close(s.done)
	}
}

// Start serves the listeners.
func (e *Engine) Start(ls []*Listener) {
	if len(ls) == 0 {
		return
	}
	e.mu.Lock()
	for _, l := range ls {
		for _, s := range l.all() {
			e.listeners[s] = struct{}{}
			go s.serve()
		}
	}
	if !e.sweeping && e.stop != nil {
		e.sweeping = true
		e.wg.Add(1)
		go e.sweep(e.stop)
	}
	e.mu.Unlock()
}

// Stop closes the listeners and ends their flows: a flow's answers leave
// from the listener's address, so they cannot outlive it.
func (e *Engine) Stop(ls []*Listener) {
	var each []*Listener
	for _, l := range ls {
		each = append(each, l.all()...)
	}
	for _, l := range each {
		e.mu.Lock()
		delete(e.listeners, l)
		e.mu.Unlock()
		l.mu.Lock()
		l.closed = true
		all := make([]*flow, 0, len(l.flows))
		for _, f := range l.flows {
			all = append(all, f)
		}
		l.mu.Unlock()
		l.conn.Close()
		<-l.done
		for _, f := range all {
			f.end()
		}
		l.dnsOut.sweep(0, true)
	}
}

// Close stops every listener and the sweeper.
func (e *Engine) Close() {
	e.mu.Lock()
	ls := make([]*Listener, 0, len(e.listeners))
	for l := range e.listeners {
		if l.primary == nil { // Stop takes the siblings with it
			ls = append(ls, l)
		}
	}
	e.mu.Unlock()
	e.Stop(ls)
	e.mu.Lock()
	if e.stop != nil {
		close(e.stop)
		e.stop = nil
	}
	e.mu.Unlock()
	e.wg.Wait()
	e.raw.close()
}

// sweep advances the coarse clock and ends flows idle past their timeout.
func (e *Engine) sweep(stop <-chan struct{}) {
	defer e.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	var idle []*flow
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			n := now.UnixNano()
			prev := e.now.Swap(n)
			e.mu.Lock()
			ls := make([]*Listener, 0, len(e.listeners))
			for l := range e.listeners {
				ls = append(ls, l)
			}
			e.mu.Unlock()
			for _, l := range ls {
				idle = idle[:0]
				l.mu.RLock()
				for _, f := range l.flows {
					if !f.sweepable() {
						continue
					}
					if idleAt(f.LastActive(), prev, n, f.IdleTimeout()) {
						idle = append(idle, f)
					}
				}
				l.mu.RUnlock()
				for _, f := range idle {
					f.end()
				}
				if l.any && l.primary == nil {
					l.dnsOut.sweep(n, false)
				}
			}
		}
	}
}

// sweepable tells whether the idle sweep may end f: not while it is
// opening (its first datagram not through yet) nor while its goroutine
// runs an event, perhaps suspended.
func (f *flow) sweepable() bool {
	return !f.opening.Load() && (f.wq == nil || !f.wq.busy.Load())
}

// idleAt tells whether a flow last stamped at last has idled past its
// timeout to (0: never) at the tick n, whose previous tick set the clock to
// prev. Datagrams since that tick were stamped with prev however late this
// tick runs: a flow stamped so was active within the last interval and is
// not idle, even when a loaded machine ran this sweep long after its time
// (a one-second "immediate" flow would otherwise end between a query and
// its answer, the answer dropped).
func idleAt(last, prev, n int64, to time.Duration) bool {
	return to > 0 && last < prev && n-last >= int64(to)
}

// maxDatagram is the largest UDP payload over IPv4 and IPv6 without
// jumbograms.
const maxDatagram = 65535

// datagram handles one client datagram: its flow (made for a new client),
// the rules, the member, the send. to is where the client sent it on a
// listener on every port, else zero.
func (l *Listener) datagram(client, to netip.AddrPort, b []byte) {
	if len(b) == 0 && !l.allowEmpty() { // udpopts.go
		return
	}
	client = netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	key := flowKey{client, to}
	l.mu.RLock()
	f := l.flows[key]
	l.mu.RUnlock()
	if f == nil {
		vs := l.virtual()
		if vs == nil {
			return
		}
		if f = l.open(vs, key, b); f == nil {
			return
		}
		if f.wq == nil {
			f.fromClient(b)
			f.opening.Store(false) // after the stamp fromClient put
			return
		}
	}
	if f.wq != nil {
		f.handOver(b) // rulewait.go
		return
	}
	f.fromClient(b)
}

// open makes the flow of a new client, or nil when the virtual does not
// admit it (disabled, foreign source, connection limit), a flow on every
// port cannot have its answering socket, or a rule ended it in
// CLIENT_ACCEPTED.
func (l *Listener) open(vs *state.Virtual, key flowKey, b []byte) *flow {
	snap := vs.Snap.Load()
	client, local := key.client, l.addr
	if l.any {
		local = key.to
	}
	ok, pfClass, ifx := vs.AdmitArrival(snap, client, local, func() int { return l.arrIf })
	if !ok {
		if l.e.env.Unreach != nil && snap.Rejects(client, local, ifx) {
			// A packet filter's reject: the client is told, as BIG-IP
			// tells it (dataplane/internal/icmpreject).
			l.e.env.Unreach.PortUnreachable(client, local, b)
		}
		return nil
	}
	out, orc := l.conn, l.rc
	raw := false
	if l.any && snap.Cfg.IPForward {
		// Forwarded where the client was going, a port another program
		// holds: answered by a raw socket (rawanswer_linux.go). Not the
		// listener's own address and port (a network virtual on a
		// port): forwarded, it would come back to the listener.
		if local == l.addr || !l.e.raw.ok(local) {
			vs.Prof.Conns.DgDropped.Add(1)
			vs.Leave(snap.Addr)
			return nil
		}
		raw = true
	} else if l.any {
		var err error
		if out, orc, err = replySocket(local, snap); err != nil {
			// Another program's socket holds the port without
			// SO_REUSEADDR: the flow could not answer from it [M].
			vs.Prof.Conns.DgDropped.Add(1)
			vs.Leave(snap.Addr)
			return nil
		}
	}
	f := newFlow(l, vs, snap, key, local)
	f.out, f.orc, f.raw = out, orc, raw
	f.Arrival = int32(ifx)
	if pfClass != "" {
		// The packet filter that let the flow in names a rate class
		// (bwcrules.go); one gone since the commit: not shaped.
		f.RateClass(pfClass)
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		f.clone.Close()
		f.closeOut()
		vs.Leave(snap.Addr)
		return nil
	}
	l.flows[key] = f
	l.mu.Unlock()
	l.e.env.Table.Add(&f.Flow)
	if f.wq != nil {
		go f.serveWaiting() // which runs CLIENT_ACCEPTED (rulewait.go)
		return f
	}
	if f.rs != nil && !f.accepted() {
		f.end()
		return nil
	}
	return f
}

// forget takes f out of the listener's flows.
func (l *Listener) forget(f *flow) {
	l.mu.Lock()
	if l.flows[f.key] == f {
		delete(l.flows, f.key)
	}
	l.mu.Unlock()
}
