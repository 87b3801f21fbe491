package clone

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// listen opens a loopback listener in the package's test range.
func listen(t *testing.T, addr string) *net.TCPListener {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("loopback %s unavailable: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// collect accepts one connection and returns what it received until EOF.
func collect(l *net.TCPListener) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			ch <- nil
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		ch <- b
	}()
	return ch
}

type picked struct {
	sent      atomic.Int64
	done      atomic.Int32
	connected atomic.Bool
}

func target(a netip.AddrPort, server bool, p *picked) Target {
	return Target{Server: server, Pick: func() (Dest, bool) {
		if !a.IsValid() {
			return Dest{}, false
		}
		return Dest{Addr: a,
			Sent: func(n int) { p.sent.Add(int64(n)) },
			Done: func(ok bool) { p.connected.Store(ok); p.done.Add(1) }}, true
	}}
}

func TestCloneSides(t *testing.T) {
	lc := listen(t, "127.73.1.1:0")
	ls := listen(t, "127.73.1.2:0")
	gotC, gotS := collect(lc), collect(ls)
	var pc, ps picked
	set := &Set{Counters: &Counters{}, Targets: []Target{
		target(lc.Addr().(*net.TCPAddr).AddrPort(), false, &pc),
		target(ls.Addr().(*net.TCPAddr).AddrPort(), true, &ps),
	}}
	f := set.Start()
	if f == nil {
		t.Fatal("Start: no flow")
	}
	f.Client([]byte("GET /a HTTP/1.1\r\n"))
	f.Server([]byte("GET /b HTTP/1.1\r\n"))
	f.Both([]byte("Host: x\r\n\r\n"))
	f.Close()
	f.Wait()
	for _, c := range []struct {
		name string
		got  <-chan []byte
		want string
		p    *picked
	}{
		{"clientside", gotC, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", &pc},
		{"serverside", gotS, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n", &ps},
	} {
		if b := <-c.got; string(b) != c.want {
			t.Errorf("%s received %q, want %q", c.name, b, c.want)
		}
		if c.p.sent.Load() != int64(len(c.want)) || c.p.done.Load() != 1 || !c.p.connected.Load() {
			t.Errorf("%s accounting: sent %d done %d connected %v", c.name, c.p.sent.Load(), c.p.done.Load(), c.p.connected.Load())
		}
	}
	if n := set.Counters.Conns.Load(); n != 2 {
		t.Errorf("Conns = %d, want 2", n)
	}
	if n := set.Counters.Dropped.Load(); n != 0 {
		t.Errorf("Dropped = %d, want 0", n)
	}
}

func TestCloneDropped(t *testing.T) {
	// A port nobody listens on: the connect is refused.
	dead := listen(t, "127.73.1.3:0")
	deadAddr := dead.Addr().(*net.TCPAddr).AddrPort()
	dead.Close()
	tests := []struct {
		name      string
		addr      netip.AddrPort
		connected bool
	}{
		{"no member available", netip.AddrPort{}, false},
		{"connect refused", deadAddr, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p picked
			set := &Set{Counters: &Counters{}, Targets: []Target{target(tc.addr, false, &p)}}
			f := set.Start()
			for i := 0; i < 100; i++ { // never blocks: the bytes are held or thrown away
				f.Client(bytes.Repeat([]byte{'x'}, 1024))
			}
			f.Close()
			f.Wait()
			if n := set.Counters.Dropped.Load(); n != 1 {
				t.Errorf("Dropped = %d, want 1", n)
			}
			if set.Counters.Conns.Load() != 0 || set.Counters.Bytes.Load() != 0 {
				t.Errorf("Conns %d Bytes %d, want 0", set.Counters.Conns.Load(), set.Counters.Bytes.Load())
			}
			if tc.addr.IsValid() && (p.done.Load() != 1 || p.connected.Load()) {
				t.Errorf("Done: %d calls, connected %v; want one, false", p.done.Load(), p.connected.Load())
			}
		})
	}
}

func TestCloneSlowMemberDropped(t *testing.T) {
	l := listen(t, "127.73.1.4:0")
	held := make(chan net.Conn, 1)
	go func() { // accepts and never reads
		c, err := l.Accept()
		if err == nil {
			held <- c
		}
	}()
	t.Cleanup(func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	})
	var p picked
	set := &Set{Counters: &Counters{}, Limit: 64 << 10,
		Targets: []Target{target(l.Addr().(*net.TCPAddr).AddrPort(), false, &p)}}
	f := set.Start()
	chunk := bytes.Repeat([]byte{'y'}, 16<<10)
	// The socket buffers take a few MiB; 256 MiB is far beyond them.
	for i := 0; i < 16<<10 && set.Counters.Dropped.Load() == 0; i++ {
		f.Client(chunk)
		if i%64 == 63 {
			time.Sleep(time.Millisecond) // let the writer fill the socket
		}
	}
	if set.Counters.Dropped.Load() != 1 {
		t.Fatalf("Dropped = %d, want 1", set.Counters.Dropped.Load())
	}
	f.Client(chunk) // after the drop: thrown away
	f.Close()
	f.Wait()
	if p.done.Load() != 1 || !p.connected.Load() {
		t.Errorf("Done: %d calls, connected %v; want one, true", p.done.Load(), p.connected.Load())
	}
	if set.Counters.Dropped.Load() != 1 {
		t.Errorf("Dropped = %d after close, want 1", set.Counters.Dropped.Load())
	}
}

func TestCloneAbort(t *testing.T) {
	l := listen(t, "127.73.1.5:0")
	got := collect(l)
	var p picked
	set := &Set{Counters: &Counters{}, Targets: []Target{target(l.Addr().(*net.TCPAddr).AddrPort(), true, &p)}}
	f := set.Start()
	f.Server([]byte("abc"))
	f.Abort()
	f.Wait()
	<-got
	if set.Counters.Dropped.Load() != 0 {
		t.Errorf("an aborted flow's clone counted as dropped")
	}
	if p.done.Load() != 1 {
		t.Errorf("Done called %d times, want 1", p.done.Load())
	}
}

func TestCloneNilSet(t *testing.T) {
	var s *Set
	if s.Start() != nil {
		t.Fatal("nil set started a flow")
	}
	var f *Flow
	f.Close()
	f.Abort()
	f.Wait()
	if n := testing.AllocsPerRun(100, func() { _ = s.Start() }); n != 0 {
		t.Errorf("a virtual without clone pools allocates %v per flow", n)
	}
}

// TestCloneCloseStalled: a clone member that stopped reading cannot hold
// its connection (and the goroutine writing it) after the flow ended: the
// copy is given up and counted.
func TestCloneCloseStalled(t *testing.T) {
	l := listen(t, "127.73.1.6:0")
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			held <- c // never read
		}
	}()
	t.Cleanup(func() {
		select {
		case c := <-held:
			c.Close()
		default:
		}
	})
	var p picked
	set := &Set{Counters: &Counters{}, Limit: 1 << 30,
		Targets: []Target{target(l.Addr().(*net.TCPAddr).AddrPort(), false, &p)}}
	f := set.Start()
	chunk := bytes.Repeat([]byte{'s'}, 1<<20)
	for i := 0; i < 64; i++ { // 64 MiB: more than the socket buffers take
		f.Client(chunk)
	}
	f.Close()
	done := make(chan struct{})
	go func() { f.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the clone connection outlived its flow")
	}
	if set.Counters.Dropped.Load() != 1 || p.done.Load() != 1 {
		t.Errorf("Dropped %d, Done %d; want 1 and 1", set.Counters.Dropped.Load(), p.done.Load())
	}
}

// TestCloneWith: With leaves the flow it extends as it was (a reader of
// it writes to its connections only) and returns one with a connection
// more; closing the new flow closes them all.
func TestCloneWith(t *testing.T) {
	l1 := listen(t, "127.193.6.1:0")
	l2 := listen(t, "127.193.6.2:0")
	got1, got2 := collect(l1), collect(l2)
	set := &Set{Counters: &Counters{}}
	d := func(l *net.TCPListener) Dest { return Dest{Addr: l.Addr().(*net.TCPAddr).AddrPort()} }
	f1 := set.With(nil, d(l1), false)
	f1.Client([]byte("one "))
	f2 := set.With(f1, d(l2), true)
	if len(f1.conns) != 1 || len(f2.conns) != 2 {
		t.Fatalf("With: old flow has %d connections, new %d; want 1 and 2", len(f1.conns), len(f2.conns))
	}
	f1.Client([]byte("old "))
	f2.Client([]byte("two"))
	f2.Server([]byte("srv"))
	f2.Close()
	f2.Wait()
	if b := <-got1; string(b) != "one old two" {
		t.Errorf("first clone received %q", b)
	}
	if b := <-got2; string(b) != "srv" {
		t.Errorf("second clone received %q", b)
	}
}
