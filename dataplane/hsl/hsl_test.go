package hsl

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// pools is a fixed member table for tests.
type pools struct {
	mu sync.Mutex
	m  map[string][]netip.AddrPort
}

func (p *pools) members(name string) ([]netip.AddrPort, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms, ok := p.m[name]
	if !ok {
		return nil, fmt.Errorf("no such pool: %s", name)
	}
	return ms, nil
}

// waitFor polls cond for up to 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestUDPBalancesOverMembers sends over UDP to two members, alternately.
func TestUDPBalancesOverMembers(t *testing.T) {
	var got [2][]string
	var mu sync.Mutex
	var addrs []netip.AddrPort
	for i := range 2 {
		c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.96.%d:0", i+1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		addrs = append(addrs, netip.MustParseAddrPort(c.LocalAddr().String()))
		go func() {
			buf := make([]byte, 2048)
			for {
				n, _, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				mu.Lock()
				got[i] = append(got[i], string(buf[:n]))
				mu.Unlock()
			}
		}()
	}
	h := New(Options{Members: (&pools{m: map[string][]netip.AddrPort{"/Common/syslog": addrs}}).members, Logger: quiet()})
	defer h.Close()
	if _, err := h.Open("UDP", "nosuch"); err == nil || !strings.Contains(err.Error(), "no such pool") {
		t.Fatalf("open of a missing pool: %v", err)
	}
	handle, err := h.Open("UDP", "/Common/syslog")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open("udp", "/Common/syslog"); err == nil {
		t.Fatal("a lower-case protocol was accepted")
	}
	if _, err := h.Send("hsl:TCP:/Common/syslog", []byte("x")); err == nil {
		t.Fatal("a handle never opened was accepted")
	}
	for i := range 10 {
		if ok, err := h.Send(handle, []byte(fmt.Sprintf("<134>msg %d", i))); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	waitFor(t, "10 messages", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[0])+len(got[1]) == 10
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got[0]) != 5 || len(got[1]) != 5 || got[0][0] != "<134>msg 0" || got[1][0] != "<134>msg 1" {
		t.Errorf("spread %q / %q; want alternate members", got[0], got[1])
	}
	st := h.Stats()
	if len(st) != 1 || st[0].Sent != 10 || st[0].DroppedFull+st[0].DroppedNoMember != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestPickFollowsThePool: with Pick, the pool's method chooses; a picked
// member that fails leaves the message to the others.
func TestPickFollowsThePool(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	var addrs []netip.AddrPort
	for i := range 2 {
		c, err := net.ListenPacket("udp", fmt.Sprintf("127.0.96.%d:0", i+4))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		addrs = append(addrs, netip.MustParseAddrPort(c.LocalAddr().String()))
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
				mu.Lock()
				got[c.LocalAddr().String()]++
				mu.Unlock()
			}
		}()
	}
	ps := &pools{m: map[string][]netip.AddrPort{"p": addrs}}
	h := New(Options{Members: ps.members, Pick: func(string) (netip.AddrPort, bool) { return addrs[1], true }, Logger: quiet()})
	defer h.Close()
	handle, err := h.Open("TCP", "p")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := h.Open("UDP", "p")
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		h.Send(udp, []byte("x"))
	}
	waitFor(t, "6 messages on the picked member", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got[addrs[1].String()] == 6
	})
	// Nothing listens on TCP there: the picked member fails, and so do
	// the others; the message is counted as dropped.
	h.Send(handle, []byte("y"))
	waitFor(t, "the TCP message dropped", func() bool {
		for _, st := range h.Stats() {
			if st.Proto == "TCP" && st.DroppedNoMember == 1 && st.Failures >= 1 {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	if got[addrs[0].String()] != 0 {
		t.Errorf("spread %v; want every message on the picked member", got)
	}
}

// tcpSink accepts connections and collects lines.
type tcpSink struct {
	ln    net.Listener
	mu    sync.Mutex
	lines []string
	conns []net.Conn
}

func newTCPSink(t *testing.T, addr string) *tcpSink {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ { // the port may still be held a moment after a close
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &tcpSink{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go func() {
				r := bufio.NewScanner(c)
				for r.Scan() {
					s.mu.Lock()
					s.lines = append(s.lines, r.Text())
					s.mu.Unlock()
				}
			}()
		}
	}()
	return s
}

func (s *tcpSink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.lines) }

func (s *tcpSink) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

// TestTCPKeepsAndRemakesConnections sends over one kept TCP connection,
// and reconnects when the member restarts.
func TestTCPKeepsAndRemakesConnections(t *testing.T) {
	sink := newTCPSink(t, "127.0.96.3:0")
	addr := sink.ln.Addr().String()
	ps := &pools{m: map[string][]netip.AddrPort{"/Common/syslog": {netip.MustParseAddrPort(addr)}}}
	h := New(Options{Members: ps.members, Logger: quiet()})
	defer h.Close()
	handle, err := h.Open("TCP", "/Common/syslog")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		h.Send(handle, []byte(fmt.Sprintf("line %d\n", i)))
	}
	waitFor(t, "20 lines", func() bool { return sink.count() == 20 })
	if st := h.Stats(); st[0].Connects != 1 {
		t.Errorf("connects %d; want one kept connection", st[0].Connects)
	}
	// The member restarts on the same address: messages flow again on a
	// new connection (a few may be lost while it is away, as on BIG-IP).
	sink.close()
	sink = newTCPSink(t, addr)
	defer sink.close()
	for i := 0; i < 200 && sink.count() == 0; i++ {
		h.Send(handle, []byte("after restart\n"))
		time.Sleep(10 * time.Millisecond)
	}
	if sink.count() == 0 {
		t.Fatal("no line reached the restarted member")
	}
	if st := h.Stats(); st[0].Connects < 2 {
		t.Errorf("connects %d; want a new connection", st[0].Connects)
	}
}

// TestFullQueueDrops: a sender that cannot keep up drops and counts, and
// Send never blocks.
func TestFullQueueDrops(t *testing.T) {
	release := make(chan struct{})
	var opened atomic.Bool
	members := func(pool string) ([]netip.AddrPort, error) {
		if opened.Load() {
			<-release // the sender is stuck reading members
		}
		return nil, nil
	}
	h := New(Options{Members: members, Queue: 4, Logger: quiet()})
	handle, err := h.Open("UDP", "p")
	if err != nil {
		t.Fatal(err)
	}
	opened.Store(true)
	queued := 0
	for range 100 {
		if ok, _ := h.Send(handle, []byte("x")); ok {
			queued++
		}
	}
	close(release)
	waitFor(t, "the queue drained", func() bool { return h.Stats()[0].Queued == 0 })
	h.Close()
	st := h.Stats()[0]
	// Four wait in the queue, and the stuck sender may have taken one.
	if st.DroppedFull < 95 || st.DroppedFull > 96 || st.DroppedFull+st.DroppedNoMember != 100 || uint64(queued) != st.DroppedNoMember {
		t.Errorf("stats %+v; want 95 or 96 dropped for a full queue, the rest for no member", st)
	}
}

// BenchmarkSend is HSL::send's cost on the connection's side: a queue
// put (messages the writer could not keep up with are dropped, and
// reported).
func BenchmarkSend(b *testing.B) {
	c, err := net.ListenPacket("udp", "127.0.96.20:0")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	ps := &pools{m: map[string][]netip.AddrPort{"p": {netip.MustParseAddrPort(c.LocalAddr().String())}}}
	h := New(Options{Members: ps.members, Logger: quiet()})
	defer h.Close()
	handle, err := h.Open("UDP", "p")
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte("<190>127.0.0.1 GET /index.html 200\n")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.Send(handle, msg)
	}
	b.StopTimer()
	st := h.Stats()[0]
	b.ReportMetric(float64(st.DroppedFull)/float64(b.N), "dropped/op")
}

// TestSendChecked: a checked send is refused when the pool has no
// member, queued (and reported dropped later) when the member is not
// yet known to refuse, refused while every member refuses, and taken
// again once the member listens (the sender tries it on its own).
func TestSendChecked(t *testing.T) {
	const refusing = "127.17.2.50:5999"
	p := &pools{m: map[string][]netip.AddrPort{
		"/Common/none": nil,
		"/Common/tcp":  {netip.MustParseAddrPort(refusing)},
	}}
	h := New(Options{Members: p.members, Logger: quiet()})
	defer h.Close()
	var dropped sync.Map
	onDrop := func(b []byte) { dropped.Store(string(b), true) }
	steps := []struct {
		name, proto, pool, msg string
		// listen: start the member's listener before this step.
		listen bool
		// want: SendChecked's answer; drop: the message is reported
		// dropped later.
		want, drop bool
	}{
		{name: "no member", proto: "UDP", pool: "/Common/none", msg: "a", want: false},
		{name: "refusing, not yet known", proto: "TCP", pool: "/Common/tcp", msg: "b", want: true, drop: true},
		{name: "refusing, known", proto: "TCP", pool: "/Common/tcp", msg: "c", want: false},
		{name: "listening again", proto: "TCP", pool: "/Common/tcp", msg: "d", listen: true, want: true},
	}
	var got chan string
	for _, st := range steps {
		handle, err := h.Open(st.proto, st.pool)
		if err != nil {
			t.Fatal(err)
		}
		if st.listen {
			ln, err := net.Listen("tcp", refusing)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got = make(chan string, 4)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				b, _ := bufio.NewReader(c).ReadString('\n')
				got <- b
			}()
			waitFor(t, "the sender to find the member listening", func() bool {
				return h.SendChecked(handle, []byte(st.msg+"\n"), onDrop)
			})
			select {
			case line := <-got:
				if line != st.msg+"\n" {
					t.Errorf("%s: the member got %q", st.name, line)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: the member got nothing", st.name)
			}
			continue
		}
		if ok := h.SendChecked(handle, []byte(st.msg), onDrop); ok != st.want {
			t.Fatalf("%s: SendChecked = %v, want %v", st.name, ok, st.want)
		}
		if st.drop {
			waitFor(t, st.name+": the drop report", func() bool { _, ok := dropped.Load(st.msg); return ok })
		}
	}
}
