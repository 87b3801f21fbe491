package mblb

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Slow one-connect IIOP client tests listen on 127.251.1.0/24, ports
// 25100-25119.

// TestIIOPOneConnectSlowClient: two clients share one member connection
// (max-size 1); one stops reading while its replies pile up past what
// the sockets hold, and the other's requests are still answered; once
// the slow one's unread replies pass the bound (max-in-flight x
// max-message-size) it is reset, and the other goes on on the same
// connection.
func TestIIOPOneConnectSlowClient(t *testing.T) {
	m, err := iioptest.Listen("127.251.1.1:25101", "m1")
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
	vs := startVS(t, "127.251.1.10:25110", cfg)
	text := strings.Repeat("x", 64<<10)
	slowReq := func(id uint32) []byte {
		return iiop.AppendRequest(nil, 2, false, id, true, []byte("k"), "say:"+text, nil)
	}
	reply := len(iiop.AppendReply(nil, 2, false, 1, 0, []byte("m1/"+text)))

	slow := dialIIOP(t, vs)
	// A small receive buffer (no autotuning): what the sockets hold of
	// the slow client's replies is at most the virtual's send buffer
	// (4 MB on Linux at most) and this one.
	if err := slow.(interface{ SetReadBuffer(int) error }).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	fast := dialIIOP(t, vs)
	round := func(i int) {
		t.Helper()
		want := fmt.Sprintf("%d=m1/b%d", i, i)
		if got := iiopExchange(t, fast, iiop.AppendRequest(nil, 2, false, uint32(i), true, []byte("k"), fmt.Sprintf("say:b%d", i), nil), 1); got[0] != want {
			t.Fatalf("fast client got %v, want %s", got, want)
		}
	}
	round(0)

	// The slow client asks for three quarters of the bound in replies
	// and reads none: more than the sockets hold, so that the rest waits
	// in its queue, less than the bound.
	n := bound * 3 / 4 / reply
	if n*reply < 8<<20 {
		t.Fatalf("the bound %d leaves too little room over the sockets' buffers", bound)
	}
	slow.SetWriteDeadline(time.Now().Add(20 * time.Second))
	for i := range n {
		if _, err := slow.Write(slowReq(uint32(i))); err != nil {
			t.Fatalf("slow client's request %d: %v", i, err)
		}
	}
	for i := 1; i <= 20; i++ {
		round(i)
	}
	if st := vs.e.Stats(); st.Resets != 0 || st.IIOPSlowResets != 0 || slowLogs.Load() != 0 {
		t.Fatalf("a client was reset under the bound: %+v, %d logged", st, slowLogs.Load())
	}

	// Past the bound the slow client is reset: its writes fail.
	var werr error
	for i := n; i < n+2*bound/reply && werr == nil; i++ {
		_, werr = slow.Write(slowReq(uint32(i)))
	}
	if werr == nil {
		t.Fatal("the slow client was not reset past the bound")
	}
	waitFor(t, "the slow client's reset counted", func() bool { return vs.e.Stats().Resets == 1 })
	for i := 21; i <= 25; i++ {
		round(i)
	}
	// Counted and logged once, though replies kept coming for it.
	if st := vs.e.Stats(); st.IIOPSlowResets != 1 || st.Resets != 1 || slowLogs.Load() != 1 {
		t.Fatalf("slow resets %d, resets %d, logged %d: want 1 each", st.IIOPSlowResets, st.Resets, slowLogs.Load())
	}
	if st, _ := vs.e.OneConnectStats(); st.New != 1 {
		t.Fatalf("%d member connections opened, want the one shared: %+v", st.New, st)
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
