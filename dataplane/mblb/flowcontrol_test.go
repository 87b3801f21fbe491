package mblb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stallMember is a length-framed echo member that reads nothing until
// go is closed: a member that stops reading.
type stallMember struct {
	ln       net.Listener
	start    chan struct{}
	once     sync.Once
	mu       sync.Mutex
	conns    []net.Conn
	accepted atomic.Int64
}

func startStallMember(t *testing.T, addr string) *stallMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	m := &stallMember{ln: ln, start: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.accepted.Add(1)
			m.mu.Lock()
			m.conns = append(m.conns, c)
			m.mu.Unlock()
			go m.serve(c)
		}
	}()
	t.Cleanup(func() {
		m.resume()
		ln.Close()
		m.mu.Lock()
		for _, c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
	})
	return m
}

func (m *stallMember) resume() { m.once.Do(func() { close(m.start) }) }

func (m *stallMember) serve(c net.Conn) {
	<-m.start
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var hdr [4]byte
	buf := make([]byte, 64<<10)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return
		}
		w.Write(hdr[:])
		w.Write(buf[:n])
		if r.Buffered() == 0 && w.Flush() != nil {
			return
		}
	}
}

// flowClient sends total length-framed messages of size bytes, each
// carrying its number, and reads the echoes back in order.
type flowClient struct {
	c             net.Conn
	sent, got     atomic.Int64
	sendErr, rErr error
	done, rdone   chan struct{}
}

func startFlowClient(t *testing.T, addr string, total, size int) *flowClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fc := &flowClient{c: c, done: make(chan struct{}), rdone: make(chan struct{})}
	go func() {
		defer close(fc.done)
		b := make([]byte, 4+size)
		binary.BigEndian.PutUint32(b, uint32(size))
		for i := 0; i < total; i++ {
			binary.BigEndian.PutUint64(b[4:], uint64(i))
			if _, err := c.Write(b); err != nil {
				fc.sendErr = err
				return
			}
			fc.sent.Add(1)
		}
	}()
	go func() {
		defer close(fc.rdone)
		r := bufio.NewReaderSize(c, 64<<10)
		b := make([]byte, 4+size)
		for i := 0; i < total; i++ {
			if _, err := io.ReadFull(r, b); err != nil {
				fc.rErr = err
				return
			}
			if n := binary.BigEndian.Uint64(b[4:]); n != uint64(i) {
				fc.rErr = fmt.Errorf("answer %d carries message %d", i, n)
				return
			}
			fc.got.Add(1)
		}
	}()
	return fc
}

// stalled waits until none of the clients has sent anything, and the
// engine's queue has not moved, for a second (their sends block), and
// reports false if that never happened.
func stalled(e *Engine, clients []*flowClient) bool {
	sum := func() (n int64) {
		for _, c := range clients {
			n += c.sent.Load()
		}
		return n + e.Stats().FlowQueued
	}
	last, still := sum(), 0
	for i := 0; i < 300; i++ { // 30 s at most
		time.Sleep(100 * time.Millisecond)
		for _, c := range clients {
			select {
			case <-c.done:
				return false // all sent: nothing held it back
			default:
			}
		}
		if n := sum(); n != last {
			last, still = n, 0
			continue
		}
		if still++; still == 10 {
			return true
		}
	}
	return false
}

// TestFlowControl: with a member that stops reading, the clients' sends
// block once the kernel's buffers and the engine's high water mark are
// full; what the engine holds stays within the mark (plus one turn of
// reads per client), and every message is answered, in order, once the
// member reads again.
func TestFlowControl(t *testing.T) {
	const size = 4 << 10
	// A turn of reads per client may pass the mark before it is checked:
	// loopReads reads on a loop, one on a goroutine; and a message may
	// straddle the last read.
	slack := int64((loopReads*readSize)/(size+4) + 2)
	cases := []struct {
		name    string
		flow    FlowControl
		oc      *OneConnect
		clients int
		bound   int64 // the requests the engine may hold at most, slack apart
	}{
		{"ingress", FlowControl{IngressHigh: 64, IngressLow: 16}, nil, 1, 64},
		{"ingress, two clients", FlowControl{IngressHigh: 32, IngressLow: 8}, nil, 2, 2 * 32},
		{"egress, shared connection", FlowControl{EgressHigh: 32, EgressLow: 4}, &OneConnect{MaxSize: 1, MaxReuse: 1 << 30}, 2, 32},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := startStallMember(t, fmt.Sprintf("127.24.1.%d:0", 10+i))
			pool := newTestPool(&testServer{ln: mem.ln, label: "M1"})
			flow := tc.flow
			cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: lengthFraming,
				MaxInFlight: 1 << 15, Flow: &flow, OneConnect: tc.oc}
			vs := startVS(t, fmt.Sprintf("127.24.1.%d:0", 110+i), cfg)
			// Enough to fill the loopback buffers many times over.
			const total = (96 << 20) / size
			var clients []*flowClient
			for range tc.clients {
				clients = append(clients, startFlowClient(t, vs.addr(), total, size))
				if tc.oc != nil {
					// The next client shares the connection once it is
					// filed in the pool (a request is queued on it): an
					// event loop whose client comes while it is still
					// being dialled opens one of its own over max-size
					// rather than wait, and each connection has its own
					// egress mark.
					waitFor(t, "a request queued on the member's connection", func() bool { return vs.e.Stats().FlowQueuedPeak > 0 })
				}
			}
			if !stalled(vs.e, clients) {
				for _, c := range clients {
					t.Logf("client: sent %d of %d, send error %v", c.sent.Load(), total, c.sendErr)
				}
				t.Fatalf("the clients' sends never blocked (%+v, member connections %d)", vs.e.Stats(), mem.accepted.Load())
			}
			st := vs.e.Stats()
			if tc.oc != nil && mem.accepted.Load() != 1 {
				t.Fatalf("the member accepted %d connections, want the one the clients share", mem.accepted.Load())
			}
			// On goroutines a client's own connection is written by its
			// reader, whose write blocks with the member's socket full:
			// nothing piles up to pause for. Elsewhere the engine queues
			// without blocking, and only the marks hold the client back.
			if st.FlowPauses == 0 && (onLoops || tc.oc != nil) {
				t.Errorf("no client was paused: the kernel's buffers or MaxInFlight held them, not flow control")
			}
			if limit := tc.bound + int64(tc.clients)*slack; st.FlowQueuedPeak > limit {
				t.Errorf("the engine held %d requests for the member, over %d", st.FlowQueuedPeak, limit)
			}
			t.Logf("blocked after %d messages; engine held %d requests (peak %d), %d pauses", clients[0].sent.Load(), st.FlowQueued, st.FlowQueuedPeak, st.FlowPauses)
			mem.resume()
			for _, c := range clients {
				select {
				case <-c.rdone:
				case <-time.After(60 * time.Second):
					t.Fatalf("after the member resumed: %d of %d answered", c.got.Load(), total)
				}
				if c.sendErr != nil || c.rErr != nil {
					t.Fatalf("send: %v, read: %v (%d answered)", c.sendErr, c.rErr, c.got.Load())
				}
			}
			// The loop that wrote the last requests counts them out after
			// its write returns, which a loaded machine can run after the
			// member's answers reached the clients: a count that stays
			// above 0 is the leak this looks for.
			waitFor(t, "the engine's count of held requests to return to 0 once all were answered", func() bool { return vs.e.Stats().FlowQueued == 0 })
		})
	}
}

// TestFlowControlOff: without water marks the engine counts nothing (no
// cost on the message path) and a client is not paused.
func TestFlowControlOff(t *testing.T) {
	for _, f := range []*FlowControl{nil, {}, {IngressLow: 5, EgressLow: 5}} {
		if flowOf(f) != nil {
			t.Errorf("flowOf(%+v) is on", f)
		}
	}
	got := flowOf(&FlowControl{IngressHigh: 10, IngressLow: 50, EgressHigh: 0, EgressLow: 7})
	if got == nil || got.IngressLow != 10 || got.EgressLow != 0 {
		t.Errorf("flowOf: lows not clamped to their highs: %+v", got)
	}
}
