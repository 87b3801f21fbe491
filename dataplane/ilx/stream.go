package ilx

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Streaming (ltm profile ilx): a virtual server whose ilx profile names a
// plugin hands each client connection to one of the plugin's processes
// that started an f5.ILXPlugin. The extension sees an ILXFlow with a
// client and a server ILXStream, decides when the server side connects
// and to which pool or member (flow.lbSelect, flow.client.allow), and
// reads and writes both streams.
//
// Over the process's socket, next to the calls (f5-nodejs/index.js has
// the whole list):
//
//	extension -> ltmd: start {options}; allow {flow, pool, member};
//	                   write {flow, side, data}; end {flow, side};
//	                   destroy {flow}; ack {flow, side, n}
//	ltmd -> extension: initialized {datagroups}; datagroups {datagroups};
//	                   open {flow, client, local, virtual};
//	                   connected {flow, server}; data {flow, side, data};
//	                   end {flow, side}; ack {flow, side, n};
//	                   error {flow, side, text}; close {flow}
//
// Flow control is by credit, each way: ltmd has at most window bytes of
// a side sent to the extension and not yet acknowledged (the extension
// acknowledges what its handlers took, and holds that back while the
// flow's own writes are waiting), so it stops reading a socket whose
// bytes the extension does not keep up with; the extension has at most
// window bytes written to a side and not yet acknowledged (ltmd
// acknowledges what it wrote to the socket), so its write() returns
// false and 'drain' follows, as a net.Socket's does.

// window is the credit of one direction of one flow.
const window = 64 << 10

// chunk is the most one read of a socket passes on.
const chunk = 16 << 10

// Errors of a streamed flow.
var (
	// ErrNotStreaming: no process of the plugin has started an ILXPlugin.
	ErrNotStreaming = errors.New("ILX failure: no extension of the plugin has started an ILXPlugin")
	// ErrDestroyed: the extension destroyed the flow, or its process
	// exited while it ran.
	ErrDestroyed = errors.New("ILX: the flow was destroyed")
)

// PluginOptions are the ILXPluginOptions an extension started its
// ILXPlugin with, as far as ltmd acts on them.
type PluginOptions struct {
	// HandleClientData: the client's bytes go to the extension (false:
	// straight to the server).
	HandleClientData bool `json:"handleClientData"`
	// HandleServerData: the server's bytes go to the extension (false:
	// straight to the client).
	HandleServerData bool `json:"handleServerData"`
}

// Endpoint is an address and port as the extension reads them.
type Endpoint struct {
	Address string `json:"address"`
	Port    uint16 `json:"port"`
	Family  string `json:"family,omitempty"`
}

func endpoint(a netip.AddrPort) *Endpoint {
	if !a.IsValid() {
		return nil
	}
	fam := "IPv4"
	if a.Addr().Unmap().Is6() {
		fam = "IPv6"
	}
	return &Endpoint{Address: a.Addr().Unmap().String(), Port: a.Port(), Family: fam}
}

// VirtualInfo is ILXFlow.virtual.
type VirtualInfo struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    uint16 `json:"port"`
}

// Choice is the server the extension chose with flow.lbSelect: a pool
// (empty: the virtual's), a member of it (invalid: the pool's balancing).
type Choice struct {
	Pool   string
	Member netip.AddrPort
}

// FlowInfo describes a client connection handed to a plugin.
type FlowInfo struct {
	Virtual     string
	VirtualAddr netip.AddrPort // the virtual's address and port the client reached
	Client      netip.AddrPort
}

// Dialer opens the server side the extension chose; the dataplane
// balances, connects and counts it as it does its other flows.
type Dialer func(Choice) (net.Conn, error)

// StreamProfile is an ilx profile as a virtual server runs it.
type StreamProfile struct {
	Name   string // the profile
	Plugin string // the plugin its flows go to
	m      *Manager
}

// StreamProfile makes the handle a virtual's ilx profile serves its flows
// through; the plugin's processes are looked up for each flow, so that
// one handle outlives restarts and plugin changes.
func (m *Manager) StreamProfile(profile, plugin string) *StreamProfile {
	return &StreamProfile{Name: profile, Plugin: plugin, m: m}
}

// pickStreaming is the next process of the plugin that started an
// ILXPlugin, in turn.
func (m *Manager) pickStreaming(pluginName string) (*proc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plugins[pluginName]
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPlugin, pluginName)
	}
	if p.disabled.Load() {
		return nil, fmt.Errorf("%w: %s", ErrDisabled, pluginName)
	}
	var all []*proc
	for _, name := range p.names {
		if x := p.exts[name]; x != nil {
			for _, pr := range x.procs {
				if pr.live() && pr.streaming.Load() != nil {
					all = append(all, pr)
				}
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNotStreaming, pluginName)
	}
	return all[p.rr.Add(1)%uint64(len(all))], nil
}

// Serve runs one client connection through the plugin until the flow
// ends, and reports how: nil when both sides closed in order (the
// caller closes the sockets), an error when the flow was refused or
// destroyed (the caller resets the client). The server side is opened
// with dial once the extension allows it.
func (sp *StreamProfile) Serve(client net.Conn, info FlowInfo, dial Dialer) error {
	if sp.m == nil {
		return fmt.Errorf("%w (%s): iRules LX is not running", ErrNotStreaming, sp.Plugin)
	}
	p, err := sp.m.pickStreaming(sp.Plugin)
	if err != nil {
		return err
	}
	opts := p.streaming.Load()
	if opts == nil { // the process exited meanwhile
		return fmt.Errorf("%w (%s)", ErrNotStreaming, sp.Plugin)
	}
	f := &sflow{p: p, opts: *opts, done: make(chan struct{}), allow: make(chan Choice, 1)}
	for i := range f.side {
		f.side[i].f, f.side[i].idx = f, i
		f.side[i].cond = sync.NewCond(&f.side[i].mu)
	}
	f.side[client_].setConn(client)
	p.mu.Lock()
	p.seq++
	f.id = p.seq
	if p.flows == nil {
		p.flows = map[uint64]*sflow{}
	}
	p.flows[f.id] = f
	p.mu.Unlock()
	p.x.stats.flows.Add(1)
	defer func() {
		p.mu.Lock()
		delete(p.flows, f.id)
		p.mu.Unlock()
	}()
	local := netip.AddrPort{}
	if la, ok := client.LocalAddr().(*net.TCPAddr); ok {
		local = la.AddrPort()
	}
	va := info.VirtualAddr
	if !va.IsValid() {
		va = local
	}
	if err := p.send(&message{Kind: "open", Flow: f.id, Client: endpoint(info.Client), Local: endpoint(local),
		Virtual: &VirtualInfo{Name: info.Virtual, Address: va.Addr().Unmap().String(), Port: va.Port()}}); err != nil {
		return err
	}
	// Before the server side connects, the flow can also end with its
	// client side: the extension ended it without allowing the flow.
	var clientLegs sync.WaitGroup
	clientDone := make(chan struct{})
	leg := func(run func()) {
		f.legs.Add(1)
		clientLegs.Add(1)
		go func() {
			defer clientLegs.Done()
			run()
		}()
	}
	leg(f.side[client_].writeLoop)
	if f.opts.HandleClientData {
		leg(func() { f.side[client_].readLoop(f.toExtension, false) })
	}
	go func() {
		clientLegs.Wait()
		close(clientDone)
	}()
	select {
	case <-clientDone:
	case ch := <-f.allow:
		sc, err := dial(ch)
		if err != nil {
			p.send(&message{Kind: "error", Flow: f.id, Side: "server", Text: err.Error()})
			f.destroy(err)
			break
		}
		f.side[server_].setConn(sc)
		remote, slocal := netip.AddrPort{}, netip.AddrPort{}
		if a, ok := sc.RemoteAddr().(*net.TCPAddr); ok {
			remote = a.AddrPort()
		}
		if a, ok := sc.LocalAddr().(*net.TCPAddr); ok {
			slocal = a.AddrPort()
		}
		p.send(&message{Kind: "connected", Flow: f.id, Server: endpoint(remote), Local: endpoint(slocal)})
		f.legs.Add(2)
		go f.side[server_].writeLoop()
		if f.opts.HandleServerData {
			go f.side[server_].readLoop(f.toExtension, false)
		} else {
			go f.side[server_].readLoop(f.side[client_].enqueueDirect, true)
		}
		if !f.opts.HandleClientData {
			f.legs.Add(1)
			go f.side[client_].readLoop(f.side[server_].enqueueDirect, true)
		}
	case <-f.done:
	}
	// The flow's legs end on their own (both ways closed in order) or
	// all at once (destroyed).
	finished := make(chan struct{})
	go func() {
		f.legs.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-f.done:
	}
	f.destroy(nil) // wakes what still waits
	<-finished
	p.send(&message{Kind: "close", Flow: f.id})
	if e := f.err.Load(); e != nil {
		return *e
	}
	return nil
}

const (
	client_ = 0
	server_ = 1
)

var sideNames = [2]string{"client", "server"}

// sflow is one streamed flow on a process.
type sflow struct {
	p     *proc
	id    uint64
	opts  PluginOptions
	side  [2]sside
	allow chan Choice
	legs  sync.WaitGroup
	done  chan struct{}
	once  sync.Once
	err   atomic.Pointer[error]
}

// destroy ends the flow at once; err (nil: an orderly end) is what
// Serve reports.
func (f *sflow) destroy(err error) {
	f.once.Do(func() {
		if err != nil {
			f.err.Store(&err)
		}
		close(f.done)
		for i := range f.side {
			s := &f.side[i]
			s.mu.Lock()
			s.closed = true
			c := s.conn
			s.cond.Broadcast()
			s.mu.Unlock()
			if c != nil && err != nil {
				c.Close()
			}
		}
	})
}

// toExtension passes bytes a side read to the extension.
func (f *sflow) toExtension(side int, b []byte) error {
	if b == nil {
		return f.p.send(&message{Kind: "end", Flow: f.id, Side: sideNames[side]})
	}
	return f.p.send(&message{Kind: "data", Flow: f.id, Side: sideNames[side], Data: b})
}

// sside is one socket of a flow: what its reader has sent on and not had
// acknowledged, and what waits to be written to it.
type sside struct {
	f    *sflow
	idx  int
	conn net.Conn
	mu   sync.Mutex
	cond *sync.Cond
	// unacked are the bytes this side read and passed on that were not
	// acknowledged yet (by the extension, or by the other side's writer).
	unacked int
	// out waits to be written; eof: a half-close follows it.
	out      [][]byte
	outBytes int
	eof      bool
	closed   bool
	// ackTo are the sides whose credit each queued write gives back:
	// nil for the extension's writes (acknowledged to it), the reading
	// side for bytes passed straight across.
	ackTo []*sside
}

func (s *sside) setConn(c net.Conn) {
	s.mu.Lock()
	s.conn = c
	closed := s.closed
	s.mu.Unlock()
	if closed {
		c.Close()
	}
}

// readLoop reads the socket and passes what it reads to pass, never more
// than window bytes ahead of their acknowledgement; nil is the socket's
// EOF. An error that is not EOF destroys the flow.
func (s *sside) readLoop(pass func(side int, b []byte) error, direct bool) {
	defer s.f.legs.Done()
	var buf []byte
	for {
		s.mu.Lock()
		for s.unacked >= window && !s.closed {
			s.cond.Wait()
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		// A read passed straight across is kept by the other side's
		// queue; one sent to the extension is copied into its frame.
		if buf == nil || direct {
			buf = make([]byte, chunk)
		}
		n, err := s.conn.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.unacked += n
			s.mu.Unlock()
			if pass(s.idx, buf[:n]) != nil {
				s.f.destroy(ErrDestroyed)
				return
			}
		}
		if err == io.EOF {
			pass(s.idx, nil)
			return
		}
		if err != nil {
			s.f.destroy(fmt.Errorf("ILX: %s side: %w", sideNames[s.idx], err))
			return
		}
	}
}

// ack gives back n bytes of the side's credit.
func (s *sside) ack(n int) {
	s.mu.Lock()
	s.unacked -= n
	if s.unacked < 0 {
		s.unacked = 0
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

// enqueueDirect is the other side's reader passing its bytes straight to
// this side's socket (handleClientData or handleServerData false).
func (s *sside) enqueueDirect(from int, b []byte) error {
	return s.enqueue(b, &s.f.side[from])
}

// enqueue queues b (nil: the half-close) to be written; from is the
// side whose credit the write gives back (nil: the extension's).
func (s *sside) enqueue(b []byte, from *sside) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrDestroyed
	}
	if b == nil {
		s.eof = true
	} else {
		// The extension keeps to its credit; past four windows it does
		// not, and the flow ends rather than grow [M].
		if from == nil && s.outBytes+len(b) > 4*window {
			return fmt.Errorf("ILX: the extension wrote past its window to the %s side", sideNames[s.idx])
		}
		s.out = append(s.out, b)
		s.ackTo = append(s.ackTo, from)
		s.outBytes += len(b)
	}
	s.cond.Broadcast()
	return nil
}

// writeLoop writes what is queued, acknowledging each write, and
// half-closes the socket after the queued EOF.
func (s *sside) writeLoop() {
	defer s.f.legs.Done()
	for {
		s.mu.Lock()
		for len(s.out) == 0 && !s.eof && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		if len(s.out) == 0 { // eof
			s.mu.Unlock()
			if cw, ok := s.conn.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
			}
			return
		}
		b, from := s.out[0], s.ackTo[0]
		s.out[0], s.ackTo[0] = nil, nil
		s.out, s.ackTo = s.out[1:], s.ackTo[1:]
		s.outBytes -= len(b)
		s.mu.Unlock()
		s.conn.SetWriteDeadline(time.Time{})
		if _, err := s.conn.Write(b); err != nil {
			s.f.destroy(fmt.Errorf("ILX: %s side: %w", sideNames[s.idx], err))
			return
		}
		if from != nil {
			from.ack(len(b))
		} else {
			s.f.p.send(&message{Kind: "ack", Flow: s.f.id, Side: sideNames[s.idx], N: len(b)})
		}
	}
}

// stream takes a streaming message from the extension; it never blocks
// (the process's reader calls it).
func (p *proc) stream(m *message) {
	switch m.Kind {
	case "start":
		o := PluginOptions{HandleClientData: true, HandleServerData: true}
		if m.Options != nil {
			o = *m.Options
		}
		// initialized goes out before the first flow can be opened.
		p.sendDataGroups("initialized")
		p.streaming.Store(&o)
		return
	}
	p.mu.Lock()
	f := p.flows[m.Flow]
	p.mu.Unlock()
	if f == nil {
		return // a flow that ended meanwhile
	}
	side := client_
	if m.Side == "server" {
		side = server_
	}
	switch m.Kind {
	case "allow":
		ch := Choice{Pool: m.Pool}
		if m.Member != "" {
			a, err := netip.ParseAddrPort(m.Member)
			if err != nil {
				p.send(&message{Kind: "error", Flow: f.id, Side: "server", Text: fmt.Sprintf("lbSelect: member %q is not ADDRESS:PORT", m.Member)})
				f.destroy(err)
				return
			}
			ch.Member = a
		}
		select {
		case f.allow <- ch:
		default: // allowed already
		}
	case "write":
		if err := f.side[side].enqueue(m.Data, nil); err != nil {
			f.destroy(err)
		}
	case "end":
		f.side[side].enqueue(nil, nil)
	case "ack":
		f.side[side].ack(m.N)
	case "destroy":
		f.destroy(ErrDestroyed)
	}
}

// failFlows destroys the flows of a process that exited.
func (p *proc) failFlows() {
	p.streaming.Store(nil)
	p.mu.Lock()
	fs := make([]*sflow, 0, len(p.flows))
	for _, f := range p.flows {
		fs = append(fs, f)
	}
	p.mu.Unlock()
	for _, f := range fs {
		f.destroy(fmt.Errorf("%w: the extension %s exited", ErrDestroyed, p.x.cfg.Name))
	}
}

func sameDataGroup(a, b DataGroup) bool {
	return a.Name == b.Name && a.Type == b.Type && slices.Equal(a.Records, b.Records)
}

func (x *ext) dataGroups() []DataGroup { return *x.dgs.Load() }

// setDataGroups keeps the extension's data groups and sends them to its
// processes that started an ILXPlugin, whose ILXDatagroup objects then
// read the new records (as BIG-IP updates them when records change).
func (x *ext) setDataGroups(dgs []DataGroup) {
	x.dgs.Store(&dgs)
	x.cfg.DataGroups = dgs
	for _, p := range x.procs {
		if p.live() && p.streaming.Load() != nil {
			p.sendDataGroups("datagroups")
		}
	}
}

// sendDataGroups sends the extension's data groups, as kind.
func (p *proc) sendDataGroups(kind string) {
	dgs := p.x.dataGroups()
	if dgs == nil {
		dgs = []DataGroup{}
	}
	if err := p.send(&message{Kind: kind, DataGroups: dgs}); err != nil {
		p.x.m.o.Logger.Warn("ilx: cannot send the data groups", "plugin", p.x.plugin, "extension", p.x.cfg.Name, "error", err)
	}
}
