package mblb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// The wire formats the test servers and clients speak.
const (
	wirePerRead = iota // one write is one message
	wireLength         // 4-byte big-endian length of the payload, then the payload
)

var lengthFraming = Framing{Mode: Length, Length: LengthField{Size: 4}}

// testServer is a labelled member: it answers each message with its label,
// "|" and the request ("S1 Response|c1-7"), or echoes the payload behind a
// short label in length mode, and remembers who asked.
type testServer struct {
	t     testing.TB
	label string
	wire  int
	ln    net.Listener
	// delay holds each answer back, to make a member slow.
	delay atomic.Int64
	// mute stops answering (the requests are read and dropped).
	mute atomic.Bool
	// echo answers with the bare request, for benchmarks.
	echo bool
	// hangUpAfter: each connection is closed in order (a FIN) right
	// after this many answers, as a member ending its sessions; 0 never.
	hangUpAfter atomic.Int64

	mu       sync.Mutex
	conns    map[net.Conn]bool
	accepted int
	got      []string
	msgs     atomic.Int64
	wg       sync.WaitGroup
	dead     atomic.Bool
}

func startServer(t testing.TB, addr, label string, wire int) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &testServer{t: t, label: label, wire: wire, ln: ln, conns: make(map[net.Conn]bool)}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.kill)
	return s
}

func (s *testServer) addr() netip.AddrPort { return rawsock.AddrPortOf(s.ln.Addr()) }

func (s *testServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.dead.Load() {
			s.mu.Unlock()
			resetConn(c)
			return
		}
		s.conns[c] = true
		s.accepted++
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *testServer) record(req []byte) {
	s.msgs.Add(1)
	if s.echo {
		return
	}
	s.mu.Lock()
	if len(req) > 64 {
		req = req[:64]
	}
	s.got = append(s.got, string(req))
	s.mu.Unlock()
}

func (s *testServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	buf := make([]byte, 64<<10)
	var out []byte
	hdr := make([]byte, 4)
	var served int64
	for {
		var req []byte
		switch s.wire {
		case wirePerRead:
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			req = buf[:n]
		case wireLength:
			if _, err := io.ReadFull(c, hdr); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(hdr))
			if n > len(buf) {
				buf = make([]byte, n)
			}
			if _, err := io.ReadFull(c, buf[:n]); err != nil {
				return
			}
			req = buf[:n]
		}
		s.record(req)
		if d := s.delay.Load(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		if s.mute.Load() {
			continue
		}
		out = out[:0]
		if s.wire == wireLength {
			out = append(out, 0, 0, 0, 0)
		}
		if !s.echo {
			out = append(out, s.label...)
			out = append(out, '|')
		}
		out = append(out, req...)
		if s.wire == wireLength {
			binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		}
		if _, err := c.Write(out); err != nil {
			return
		}
		if served++; served == s.hangUpAfter.Load() {
			return
		}
	}
}

// kill stops the member the hard way: listener closed, connections reset.
func (s *testServer) kill() {
	s.mu.Lock()
	s.dead.Store(true)
	s.ln.Close()
	for c := range s.conns {
		resetConn(c)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *testServer) acceptedConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// testPool is the proxy's side for the tests: round robin over enabled
// members, honouring exclusions and directed targets.
type testPool struct {
	mu       sync.Mutex
	members  []Member
	disabled map[MemberID]bool
	next     int
	picks    map[MemberID]int
}

func newTestPool(servers ...*testServer) *testPool {
	p := &testPool{disabled: make(map[MemberID]bool), picks: make(map[MemberID]int)}
	for i, s := range servers {
		p.members = append(p.members, Member{ID: MemberID(i + 1), Addr: s.addr(), Pool: "/Common/test_pool", Name: s.label})
	}
	return p
}

func (p *testPool) setDisabled(id MemberID, off bool) {
	p.mu.Lock()
	p.disabled[id] = off
	p.mu.Unlock()
}

func (p *testPool) Pick(c Choice) (Member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.Target.Member.IsValid() {
		for _, m := range p.members {
			if m.Addr == c.Target.Member && !excluded(c.Exclude, m.ID) {
				p.picks[m.ID]++
				return m, nil
			}
		}
	}
	for range p.members {
		m := p.members[p.next%len(p.members)]
		p.next++
		if p.disabled[m.ID] || excluded(c.Exclude, m.ID) {
			continue
		}
		p.picks[m.ID]++
		return m, nil
	}
	return Member{}, ErrNoMember
}

func dialMember(ctx context.Context, _ netip.AddrPort, m Member) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", m.Addr.String())
}

// legLog counts the legs the engine reports, per owner.
type legLog struct {
	mu      sync.Mutex
	open    map[*Leg]bool
	opened  int
	closed  int
	failed  map[MemberID]int
	owners  map[any]int
	logs    []string
	maxOpen int
}

func newLegLog() *legLog {
	return &legLog{open: make(map[*Leg]bool), failed: make(map[MemberID]int), owners: make(map[any]int)}
}

func (l *legLog) events() Events {
	return Events{
		LegOpened: func(g *Leg) {
			l.mu.Lock()
			l.open[g] = true
			l.opened++
			if g.Owner != nil {
				l.owners[g.Owner]++
			}
			if len(l.open) > l.maxOpen {
				l.maxOpen = len(l.open)
			}
			l.mu.Unlock()
		},
		LegClosed: func(g *Leg) {
			l.mu.Lock()
			delete(l.open, g)
			l.closed++
			l.mu.Unlock()
		},
		MemberFailed: func(m Member, err error) {
			l.mu.Lock()
			l.failed[m.ID]++
			l.mu.Unlock()
		},
		Log: func(s string) {
			l.mu.Lock()
			l.logs = append(l.logs, s)
			l.mu.Unlock()
		},
	}
}

func (l *legLog) snapshot() (open, opened, maxOpen int, failed map[MemberID]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := make(map[MemberID]int)
	for k, v := range l.failed {
		f[k] = v
	}
	return len(l.open), l.opened, l.maxOpen, f
}

// testVS is a virtual server in front of an engine.
type testVS struct {
	t   testing.TB
	e   *Engine
	ln  net.Listener
	wg  sync.WaitGroup
	opt func(c net.Conn) ClientOptions

	mu       sync.Mutex
	sessions []*ClientConn
	errs     []error
}

func startVS(t testing.TB, addr string, cfg Config, opt ...func(net.Conn) ClientOptions) *testVS {
	t.Helper()
	if onLoops && cfg.DialFD == nil {
		cfg.DialFD = loopDial
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	v := &testVS{t: t, e: e, ln: ln}
	if len(opt) > 0 {
		v.opt = opt[0]
	}
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			opt := ClientOptions{Tag: c.RemoteAddr().String()}
			if v.opt != nil {
				opt = v.opt(c)
			}
			if onLoops && e.Loopable() {
				v.wg.Add(1)
				s := loopSession(e, c, opt, v.wg.Done)
				v.mu.Lock()
				v.sessions = append(v.sessions, s)
				v.mu.Unlock()
				continue
			}
			s := e.NewClientConn(c, opt)
			v.mu.Lock()
			v.sessions = append(v.sessions, s)
			v.mu.Unlock()
			v.wg.Add(1)
			go func() {
				defer v.wg.Done()
				if err := s.Run(); err != nil {
					v.mu.Lock()
					v.errs = append(v.errs, err)
					v.mu.Unlock()
				}
			}()
		}
	}()
	t.Cleanup(v.stop)
	return v
}

func (v *testVS) stop() {
	v.ln.Close()
	v.e.Close()
	v.wg.Wait()
}

func (v *testVS) addr() string { return v.ln.Addr().String() }

// client is a test client speaking one wire format.
type client struct {
	t    testing.TB
	c    net.Conn
	name string
	wire int
	hdr  [4]byte // recv's
	out  []byte  // send's
	buf  []byte
}

func dialVS(t testing.TB, v *testVS, name string, wire int) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", v.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, name: name, wire: wire, buf: make([]byte, 64<<10)}
}

func (c *client) send(payload []byte) error {
	c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if c.wire == wireLength {
		c.out = binary.BigEndian.AppendUint32(c.out[:0], uint32(len(payload)))
		c.out = append(c.out, payload...)
		payload = c.out
	}
	_, err := c.c.Write(payload)
	return err
}

// recv reads one response.
func (c *client) recv() ([]byte, error) {
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	switch c.wire {
	case wireLength:
		if _, err := io.ReadFull(c.c, c.hdr[:]); err != nil {
			return nil, err
		}
		n := int(binary.BigEndian.Uint32(c.hdr[:]))
		if n > len(c.buf) {
			c.buf = make([]byte, n)
		}
		_, err := io.ReadFull(c.c, c.buf[:n])
		return c.buf[:n], err
	default:
		n, err := c.c.Read(c.buf)
		return c.buf[:n], err
	}
}

// call sends one request and waits for its answer: a synchronous client.
func (c *client) call(req string) (string, error) {
	if err := c.send([]byte(req)); err != nil {
		return "", err
	}
	b, err := c.recv()
	return string(b), err
}

// label and request of a "S1 Response|c1-7" answer.
func splitAnswer(a string) (label, req string) {
	if i := bytes.IndexByte([]byte(a), '|'); i >= 0 {
		return a[:i], a[i+1:]
	}
	return a, ""
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func baseConfig(p *testPool, l *legLog) Config {
	cfg := Config{Pick: p.Pick, Dial: dialMember}
	if l != nil {
		cfg.Events = l.events()
	}
	return cfg
}

func reqName(client string, i int) string { return fmt.Sprintf("%s-%d", client, i) }

// serveEach listens on addr until the test ends and runs handle on each
// connection it accepts, in a goroutine of its own: the members tests
// write in a few lines (handle closes its connection).
func serveEach(t testing.TB, addr string, handle func(net.Conn)) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
}
