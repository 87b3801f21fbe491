package mblb

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Slow one-connect IIOP client tests listen on 127.251.1.0/24, ports
// 25100-25119, and 127.251.200.0/24, ports 25200-25219.

// TestIIOPOneConnectSlowClient: two clients share one member connection
// (max-size 1); one asks for far more in replies than the bound
// (max-in-flight x max-message-size) and stops reading: it is slowed
// (its requests are not read while its unwritten replies fill its
// window; the member is asked for no more than the window and the
// sockets' buffers hold), the other's requests are still answered;
// then the slow one reads every reply, in order, and is never reset. A
// third client slowed so that closes its socket ends its session (its
// reader, paused for room in its window, is woken), and the virtual
// stops with no session left behind.
func TestIIOPOneConnectSlowClient(t *testing.T) {
	m, err := iioptest.Listen("127.251.200.1:25201", "m1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	p := oneMember(m.Addr(), "m1")
	cfg := iiopConfig(p, IIOPOptions{})
	var slowLogs atomic.Int32
	cfg.Events.Log = func(line string) {
		if strings.Contains(line, "reset as a slow client") {
			slowLogs.Add(1)
		}
	}
	cfg.OneConnect = &OneConnect{MaxSize: 1, MaxReuse: 1 << 20}
	cfg.MaxInFlight, cfg.MaxMessageSize = 16, 1<<20
	bound := cfg.MaxInFlight * cfg.MaxMessageSize
	vs := startVS(t, "127.251.200.10:25210", cfg)
	text := strings.Repeat("x", 64<<10)
	slowReq := func(key string, id uint32) []byte {
		return iiop.AppendRequest(nil, 2, false, id, true, []byte(key), "say:"+text, nil)
	}
	reply := len(iiop.AppendReply(nil, 2, false, 1, 0, []byte("m1/"+text)))

	slowClient := func() net.Conn {
		// A small receive buffer (no autotuning), set before the
		// connect so that the window is small from the start (shrunk
		// after, the peer's segments past it are dropped and resent
		// ever more slowly): what the sockets hold of the slow client's
		// replies is at most the virtual's send buffer (4 MB on Linux
		// at most) and this one.
		d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			}); err != nil {
				return err
			}
			return serr
		}}
		c, err := d.Dial("tcp", vs.addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	slow := slowClient()
	fast := dialIIOP(t, vs)
	round := func(i int) {
		t.Helper()
		want := fmt.Sprintf("%d=m1/b%d", i, i)
		if got := iiopExchange(t, fast, iiop.AppendRequest(nil, 2, false, uint32(i), true, []byte("k"), fmt.Sprintf("say:b%d", i), nil), 1); got[0] != want {
			t.Fatalf("fast client got %v, want %s", got, want)
		}
	}
	round(0)

	// The slow client asks for twice the bound in replies and reads
	// none; its requests (as large as the replies) are written aside,
	// the virtual reading them only as the window has room.
	n := 2 * bound / reply
	if (n-cfg.MaxInFlight)*reply < 8<<20 {
		t.Fatalf("the bound %d leaves too little room over the sockets' buffers", bound)
	}
	send := func(c net.Conn, key string) chan error {
		var reqs []byte
		for i := range n {
			reqs = append(reqs, slowReq(key, uint32(i))...)
		}
		c.SetWriteDeadline(time.Now().Add(60 * time.Second))
		werr := make(chan error, 1)
		go func() {
			_, err := c.Write(reqs)
			werr <- err
		}()
		return werr
	}
	slowSent := send(slow, "slow")
	for i := 1; i <= 20; i++ {
		round(i)
	}
	waitFor(t, "the slow client's requests served up to its window", func() bool { return m.Keys()["slow"] > cfg.MaxInFlight })
	time.Sleep(200 * time.Millisecond) // (time to read on, were it not slowed)
	if asked := m.Keys()["slow"]; asked >= n {
		t.Fatalf("the member was asked all %d of the slow client's requests: not slowed", asked)
	}
	if st := vs.e.Stats(); st.Resets != 0 || st.IIOPSlowResets != 0 || slowLogs.Load() != 0 {
		t.Fatalf("a client was reset: %+v, %d logged", st, slowLogs.Load())
	}

	// Now it reads: every reply, in order, and it is never reset.
	slow.SetReadDeadline(time.Now().Add(60 * time.Second))
	want := "m1/" + text
	for i := range n {
		b, err := iioptest.ReadMessage(slow)
		if err != nil {
			t.Fatalf("slow client's reply %d: %v", i, err)
		}
		if m, err := iiop.Parse(b); err != nil || m.RequestID != uint32(i) || string(iiop.ReplyBody(b)) != want {
			t.Fatalf("slow client's reply %d: id %d, %d bytes of body, %v", i, m.RequestID, len(iiop.ReplyBody(b)), err)
		}
	}
	if err := <-slowSent; err != nil { // (within its write deadline)
		t.Fatalf("slow client's requests: %v", err)
	}
	for i := 21; i <= 25; i++ {
		round(i)
	}
	if st := vs.e.Stats(); st.Resets != 0 || st.IIOPSlowResets != 0 || slowLogs.Load() != 0 {
		t.Fatalf("a client was reset: %+v, %d logged", st, slowLogs.Load())
	}
	if n := m.Keys()["slow"]; n != 2*bound/reply {
		t.Fatalf("the member served %d of the slow client's requests, want %d", n, 2*bound/reply)
	}

	// A client slowed so that leaves: its session ends, its reader woken
	// from its wait for room.
	gone := slowClient()
	goneSent := send(gone, "gone")
	waitFor(t, "the leaving client slowed", func() bool { return m.Keys()["gone"] > cfg.MaxInFlight })
	gone.Close()
	if err := <-goneSent; err == nil { // (its write ends with the close)
		t.Fatal("the leaving client's requests all written, none read")
	}
	vs.mu.Lock()
	s := vs.sessions[len(vs.sessions)-1]
	vs.mu.Unlock()
	waitFor(t, "the leaving client's session ended", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.closed && len(s.iiop.pending) == 0 && s.iiop.replied == 0
	})
	round(26)
	if st, _ := vs.e.OneConnectStats(); st.New != 1 {
		t.Fatalf("%d member connections opened, want the one shared: %+v", st.New, st)
	}
	// Every session ends as the virtual stops (bounded: a reader left
	// waiting would hold it).
	done := make(chan struct{})
	go func() { vs.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic("the virtual did not stop: a session's reader is left waiting")
	}
}

// TestIIOPOneConnectSlowLateReset: what the window does not count
// still resets a slow client past the bound: late replies (each request
// forgotten on its timeout, the window freed, its large reply coming
// after) pile up unread past max-in-flight x max-message-size; the
// client is reset, counted and logged once.
func TestIIOPOneConnectSlowLateReset(t *testing.T) {
	const member = "127.251.200.2:25202"
	body := make([]byte, 256<<10)
	serveEach(t, member, func(c net.Conn) {
		defer c.Close()
		var wmu sync.Mutex
		for range 1000 {
			b, err := iioptest.ReadMessage(c)
			if err != nil {
				return
			}
			m, err := iiop.Parse(b)
			if err != nil || m.Type != iiop.Request {
				continue
			}
			go func() {
				time.Sleep(300 * time.Millisecond) // past the timeout
				wmu.Lock()
				defer wmu.Unlock()
				c.Write(iiop.AppendReply(nil, m.Minor, m.Little(), m.RequestID, 0, body))
			}()
		}
	})
	cfg := iiopConfig(oneMember(member, "m1"), IIOPOptions{Timeout: 50 * time.Millisecond})
	var slowLogs atomic.Int32
	cfg.Events.Log = func(line string) {
		if strings.Contains(line, "reset as a slow client") {
			slowLogs.Add(1)
		}
	}
	cfg.OneConnect = &OneConnect{MaxSize: 1, MaxReuse: 1 << 20}
	cfg.MaxInFlight, cfg.MaxMessageSize = 4, 1<<20
	vs := startVS(t, "127.251.200.11:25211", cfg)
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	c, err := d.Dial("tcp", vs.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// 64 requests, 16 MB of late replies: past the sockets' buffers and
	// the 4 MB bound.
	var reqs []byte
	for id := range uint32(64) {
		reqs = iiop.AppendRequest(reqs, 2, false, id, true, []byte("k"), "late", nil)
	}
	c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(reqs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow client reset", func() bool { return vs.e.Stats().IIOPSlowResets == 1 })
	time.Sleep(300 * time.Millisecond) // (more late replies come for it)
	if st := vs.e.Stats(); st.IIOPSlowResets != 1 || st.Resets != 1 || slowLogs.Load() != 1 || st.IIOPTimeouts == 0 {
		t.Fatalf("slow resets %d, resets %d, logged %d, timeouts %d: want 1, 1, 1 and some", st.IIOPSlowResets, st.Resets, slowLogs.Load(), st.IIOPTimeouts)
	}
}

// TestIIOPOneConnectHalfClose: a one-connect client that sends its
// requests and half-closes gets every reply, queued for it, before the
// close.
func TestIIOPOneConnectHalfClose(t *testing.T) {
	_, _, vs := startSharedIIOP(t, "127.251.1.2:25102", "127.251.1.11:25111", OneConnect{MaxSize: 1}, IIOPOptions{})
	c := dialIIOP(t, vs)
	// A receive buffer of 256 KB (no autotuning) and replies larger than
	// the sockets hold, read only after the half-close: they wait in the
	// client's queue.
	if err := c.(interface{ SetReadBuffer(int) error }).SetReadBuffer(256 << 10); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("y", 900<<10)
	var reqs []byte
	for id := uint32(1); id <= 12; id++ {
		reqs = iiop.AppendRequest(reqs, 2, false, id, true, []byte("k"), "say:"+big, nil)
	}
	reqs = iiop.AppendRequest(reqs, 2, false, 13, true, []byte("k"), "say:c", nil)
	if _, err := c.Write(reqs); err != nil {
		t.Fatal(err)
	}
	if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the replies in before reading
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for id := uint32(1); id <= 13; id++ {
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			t.Fatalf("reply %d: %v", id, err)
		}
		want := "m1/c"
		if id <= 12 {
			want = "m1/" + big
		}
		if m, err := iiop.Parse(b); err != nil || m.RequestID != id || string(iiop.ReplyBody(b)) != want {
			t.Fatalf("reply %d: id %d, %d bytes of body, %v", id, m.RequestID, len(iiop.ReplyBody(b)), err)
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("after the replies: %d bytes, %v; want the close", n, err)
	}
}
