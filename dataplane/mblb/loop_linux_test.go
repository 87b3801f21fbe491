//go:build linux

package mblb

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sendbatch"
)

// The engine's tests run twice: with sessions on goroutines, then with
// every session of a Loopable engine on one of two event loops (the way
// the proxy runs them on Linux). Set MBLB_LOOPS=0 to skip the second run.

var (
	onLoops   bool
	testLoops []*evloop.Loop
	loopTurn  atomic.Uint32
	// loopSessions counts the sessions moved onto loops, to show the
	// second run really used them.
	loopSessions atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && os.Getenv("MBLB_LOOPS") != "0" {
		fmt.Println("mblb: the same tests with sessions on event loops")
		for i := 0; i < 2; i++ {
			l, err := evloop.New()
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			if i == 1 {
				// One loop busy-polls, as ltmd's do; the other sleeps at
				// once: sessions cross between the two kinds. The one
				// that polls writes one socket at a time, the other sends
				// its batch's writes together (evloop.Sender): both paths
				// serve every test.
				l.SetBusyPoll(200 * time.Microsecond)
				l.SetSendBatch(false)
			}
			testLoops = append(testLoops, l)
			go l.Run(0, nil)
		}
		onLoops = true
		code = m.Run()
		fmt.Printf("mblb: %d sessions ran on event loops\n", loopSessions.Load())
		for _, l := range testLoops {
			l.Stop(true)
		}
	}
	os.Exit(code)
}

// loopSession moves an accepted connection onto a test loop.
func loopSession(e *Engine, c net.Conn, opt ClientOptions, done func()) *ClientConn {
	loopSessions.Add(1)
	return startOnLoop(e, testLoops[loopTurn.Add(1)%uint32(len(testLoops))], c, opt, done)
}

// startOnLoop serves an accepted connection's session on l, the way the
// proxy's acceptor does: a raw non-blocking socket, the net.Conn closed.
func startOnLoop(e *Engine, l *evloop.Loop, c net.Conn, opt ClientOptions, done func()) *ClientConn {
	client := rawsock.AddrPortOf(c.RemoteAddr())
	f, err := c.(*net.TCPConn).File()
	c.Close()
	if err != nil {
		panic(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		panic(err)
	}
	unix.SetNonblock(fd, true)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	s := e.NewLoopClientConn(l, fd, client, opt, done)
	l.Post(s.Start)
	return s
}

// loopDial starts a non-blocking connect to the member.
func loopDial(_ netip.AddrPort, m Member) (int, bool, netip.AddrPort, error) {
	a := m.Addr
	var sa unix.Sockaddr
	family := unix.AF_INET
	if a.Addr().Unmap().Is4() {
		sa = &unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().Unmap().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, false, netip.AddrPort{}, err
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	switch err := unix.Connect(fd, sa); err {
	case nil:
		return fd, true, netip.AddrPort{}, nil
	case unix.EINPROGRESS:
		return fd, false, netip.AddrPort{}, nil
	default:
		unix.Close(fd)
		return -1, false, netip.AddrPort{}, err
	}
}

func TestWritevAdvance(t *testing.T) {
	p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	var iov []unix.Iovec
	got := make([]byte, 16)
	// Several buffers (sendmsg), then one (send).
	for _, bufs := range [][][]byte{{[]byte("ab"), nil, []byte("cde"), []byte("f")}, {nil, []byte("abcdef")}} {
		n, errno := writev(p[1], bufs, &iov)
		if errno != 0 || n != 6 {
			t.Fatalf("writev = %d, %v", n, errno)
		}
		k, _ := unix.Read(p[0], got)
		if string(got[:k]) != "abcdef" {
			t.Fatalf("read %q", got[:k])
		}
	}
	for _, c := range []struct {
		n    int
		want string
	}{{0, "ab|cde|f"}, {1, "b|cde|f"}, {2, "cde|f"}, {4, "e|f"}, {5, "f"}, {6, ""}} {
		b := advance([][]byte{[]byte("ab"), []byte("cde"), []byte("f")}, c.n)
		s := ""
		for i, x := range b {
			if i > 0 {
				s += "|"
			}
			s += string(x)
		}
		if s != c.want {
			t.Errorf("advance(%d) = %q, want %q", c.n, s, c.want)
		}
	}
}

// pooledEngine is a length-framed engine with OneConnect over one member.
func pooledEngine(t *testing.T, srv *testServer, maxSize int) *Engine {
	t.Helper()
	m := newTestPool(srv).members[0]
	e, err := New(Config{
		Pick:       func(Choice) (Member, error) { return m, nil },
		Dial:       dialMember,
		DialFD:     loopDial,
		Request:    lengthFraming,
		OneConnect: &OneConnect{MaxSize: maxSize},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// newLoop runs a loop of the test's own.
func newLoop(t *testing.T) *evloop.Loop {
	t.Helper()
	l, err := evloop.New()
	if err != nil {
		t.Fatal(err)
	}
	go l.Run(0, nil)
	t.Cleanup(func() { l.Stop(true) })
	return l
}

// loopClient connects a length-framed client through vln and serves its
// session on l.
func loopClient(t *testing.T, e *Engine, vln net.Listener, l *evloop.Loop, name string) *client {
	t.Helper()
	c, err := net.Dial("tcp", vln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc, err := vln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	startOnLoop(e, l, sc, ClientOptions{}, nil)
	return &client{t: t, c: c, name: name, wire: wireLength, buf: make([]byte, 64<<10)}
}

// answered reads one answer and checks it is the member's to req.
func answered(t *testing.T, c *client, req string) {
	t.Helper()
	b, err := c.recv()
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	if label, got := splitAnswer(string(b)); label != "S1" || got != req {
		t.Fatalf("%s: answer %q to %q", c.name, b, req)
	}
}

// TestPooledWritesJoinAtBatchEnd: requests of several clients that one
// loop handles in the same batch, bound for the same OneConnect
// connection, leave in one write (one TCP segment at the member) instead
// of one write each.
func TestPooledWritesJoinAtBatchEnd(t *testing.T) {
	if onLoops {
		t.Skip("runs its own loop; once is enough")
	}
	srv := startServer(t, "127.0.63.1:0", "S1", wireLength)
	l := newLoop(t)
	e := pooledEngine(t, srv, 1)
	vln, err := net.Listen("tcp", "127.0.63.10:0")
	if err != nil {
		t.Fatal(err)
	}
	defer vln.Close()
	const n = 4
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = loopClient(t, e, vln, l, fmt.Sprintf("c%d", i))
	}
	// The first request opens the pooled connection.
	if ans, err := clients[0].call("first"); err != nil || ans != "S1|first" {
		t.Fatalf("first answer %q, %v", ans, err)
	}
	var mc *net.TCPConn
	srv.mu.Lock()
	for c := range srv.conns {
		mc = c.(*net.TCPConn)
	}
	srv.mu.Unlock()
	if mc == nil {
		t.Fatal("no connection reached the member")
	}
	segs := func() uint32 {
		raw, _ := mc.SyscallConn()
		var info *unix.TCPInfo
		raw.Control(func(fd uintptr) { info, _ = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
		return info.Data_segs_in
	}
	before := segs()
	// Every client's request is in its socket before the loop looks: one
	// batch of events holds them all.
	l.Call(func() {
		for _, c := range clients {
			c.send([]byte(c.name))
		}
	})
	for _, c := range clients {
		answered(t, c, c.name)
	}
	if got := segs() - before; got != 1 {
		t.Errorf("the member received %d data segments for %d requests of one batch, want 1", got, n)
	}
}

// TestPooledConnectionOpensOnTheCallersLoop: while the pool may grow, a
// client on one loop gets a connection opened on its loop rather than an
// idle one on another loop (which would cost a hand-off per message); a
// full pool is shared across loops.
func TestPooledConnectionOpensOnTheCallersLoop(t *testing.T) {
	if onLoops {
		t.Skip("runs its own loops; once is enough")
	}
	for _, c := range []struct {
		maxSize int
		want    uint64
	}{{2, 2}, {1, 1}} {
		srv := startServer(t, fmt.Sprintf("127.0.63.%d:0", 20+c.maxSize), "S1", wireLength)
		l1, l2 := newLoop(t), newLoop(t)
		e := pooledEngine(t, srv, c.maxSize)
		vln, err := net.Listen("tcp", fmt.Sprintf("127.0.63.%d:0", 30+c.maxSize))
		if err != nil {
			t.Fatal(err)
		}
		defer vln.Close()
		a, b := loopClient(t, e, vln, l1, "a"), loopClient(t, e, vln, l2, "b")
		for i := 0; i < 3; i++ {
			for _, cl := range []*client{a, b} {
				req := reqName(cl.name, i)
				if err := cl.send([]byte(req)); err != nil {
					t.Fatal(err)
				}
				answered(t, cl, req)
			}
		}
		st, _ := e.OneConnectStats()
		if st.New != c.want {
			t.Errorf("max-size %d: %d connections opened for clients on two loops, want %d", c.maxSize, st.New, c.want)
		}
	}
}

// TestBusyLoopSendsAnswersTogether: sixteen length-framed clients on one
// loop, each with twenty requests in flight over two members, get every
// answer in order and then the end of the stream after their half-close,
// while the loop, busy enough, sends its batches' writes (requests and
// answers) together (evloop.Sender).
func TestBusyLoopSendsAnswersTogether(t *testing.T) {
	if onLoops {
		t.Skip("runs its own loop; once is enough")
	}
	s1 := startServer(t, "127.0.63.21:0", "S1", wireLength)
	s2 := startServer(t, "127.0.63.22:0", "S2", wireLength)
	pool := newTestPool(s1, s2)
	e, err := New(Config{Pick: pool.Pick, Dial: dialMember, DialFD: loopDial, Request: lengthFraming})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	l := newLoop(t)
	vln, err := net.Listen("tcp", "127.0.63.20:0")
	if err != nil {
		t.Fatal(err)
	}
	defer vln.Close()
	const clients, depth, rounds = 16, 20, 5
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = loopClient(t, e, vln, l, fmt.Sprintf("c%d", i))
	}
	before := evloop.BatchedSends()
	errs := make(chan error, clients)
	for _, c := range cs {
		go func() {
			errs <- func() error {
				for r := 0; r < rounds; r++ {
					for i := 0; i < depth; i++ {
						if err := c.send([]byte(reqName(c.name, r*depth+i))); err != nil {
							return err
						}
					}
					if r == rounds-1 {
						c.c.(*net.TCPConn).CloseWrite()
					}
					for i := 0; i < depth; i++ {
						b, err := c.recv()
						if err != nil {
							return fmt.Errorf("%s: answer %d: %v", c.name, r*depth+i, err)
						}
						if _, got := splitAnswer(string(b)); got != reqName(c.name, r*depth+i) {
							return fmt.Errorf("%s: answer %q, want one to %s", c.name, b, reqName(c.name, r*depth+i))
						}
					}
				}
				if b, err := c.recv(); err != io.EOF {
					return fmt.Errorf("%s: after the last answer %q, %v, want the end of the stream", c.name, b, err)
				}
				return nil
			}()
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if sendbatch.Supported() && evloop.BatchedSends() == before {
		t.Error("a loop busy with sixteen clients sent no writes together")
	}
}
