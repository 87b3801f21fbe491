package mblb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startStallHTTP runs an HTTP member that reads nothing until resume is
// called, then answers each request, in order, with its path.
func startStallHTTP(t *testing.T, addr string) (*testServer, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	start := make(chan struct{})
	var once sync.Once
	resume := func() { once.Do(func() { close(start) }) }
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				<-start
				br := bufio.NewReaderSize(c, 64<<10)
				bw := bufio.NewWriterSize(c, 64<<10)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(r.URL.Path), r.URL.Path)
					if br.Buffered() == 0 && bw.Flush() != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		resume()
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return &testServer{ln: ln, label: "H1"}, resume
}

// pipeliner sends total requests padded to size bytes without waiting,
// and reads the answers back, checking their order.
type pipeliner struct {
	sent, got     atomic.Int64
	sendErr, rErr error
	done, rdone   chan struct{}
}

func startPipeliner(t *testing.T, addr string, total, size int) *pipeliner {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := &pipeliner{done: make(chan struct{}), rdone: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; i < total; i++ {
			req := fmt.Sprintf("GET /%d HTTP/1.1\r\nHost: www\r\n", i)
			req += "X-Pad: " + strings.Repeat("p", max(size-len(req)-11, 1)) + "\r\n\r\n"
			if _, err := io.WriteString(c, req); err != nil {
				p.sendErr = err
				return
			}
			p.sent.Add(1)
		}
	}()
	go func() {
		defer close(p.rdone)
		br := bufio.NewReaderSize(c, 64<<10)
		for i := 0; i < total; i++ {
			r, err := http.ReadResponse(br, nil)
			if err != nil {
				p.rErr = err
				return
			}
			b, err := io.ReadAll(r.Body)
			if err != nil {
				p.rErr = err
				return
			}
			if want := fmt.Sprintf("/%d", i); string(b) != want {
				p.rErr = fmt.Errorf("answer %d is %q", i, b)
				return
			}
			p.got.Add(1)
		}
	}()
	return p
}

// TestPendingBounds: the httprouter profile's max-pending-bytes and
// max-pending-messages. A client pipelining HTTP requests to a member
// that reads nothing fills the kernel's buffers, then at most the bounds
// in the engine (plus one read), and then its own socket, whose sends
// block; once the member reads, every answer comes, in order.
func TestPendingBounds(t *testing.T) {
	const size = 4 << 10
	cases := []struct {
		name          string
		flow          FlowControl
		oc            *OneConnect
		bytes, msgs   int64 // the bounds the engine keeps, 0 none
		checkBytesCap bool
	}{
		{name: "max-pending-bytes", flow: FlowControl{PendingBytes: 32768}, bytes: 32768},
		{name: "max-pending-messages", flow: FlowControl{PendingMessages: 4}, msgs: 4},
		{name: "both, oneconnect", flow: FlowControl{PendingBytes: 16384, PendingMessages: 64}, bytes: 16384, msgs: 64,
			oc: &OneConnect{MaxSize: 1, MaxReuse: 1 << 30}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem, resume := startStallHTTP(t, fmt.Sprintf("127.57.1.%d:0", 10+i))
			pool := newTestPool(mem)
			flow := tc.flow
			cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: Framing{Mode: HTTP},
				MaxInFlight: 1 << 15, Flow: &flow, OneConnect: tc.oc}
			vs := startVS(t, fmt.Sprintf("127.57.1.%d:0", 110+i), cfg)
			// Enough to fill the loopback buffers many times over.
			const total = (96 << 20) / size
			p := startPipeliner(t, vs.addr(), total, size)
			sum := func() int64 { return p.sent.Load() + vs.e.Stats().FlowQueued }
			last, still := sum(), 0
			for n := 0; still < 10; n++ { // until the sends and the engine stand for a second
				if n == 300 {
					t.Fatalf("the client's sends never blocked: sent %d of %d (%+v)", p.sent.Load(), total, vs.e.Stats())
				}
				time.Sleep(100 * time.Millisecond)
				select {
				case <-p.done:
					t.Fatalf("all %d requests sent: nothing held the client back (%v)", total, p.sendErr)
				default:
				}
				if s := sum(); s != last {
					last, still = s, 0
				} else {
					still++
				}
			}
			st := vs.e.Stats()
			// On goroutines the client's reader writes its requests
			// itself, and blocks with the member's socket full: nothing
			// piles up to pause for. On the loops only the bounds hold
			// the client back.
			if st.FlowPauses == 0 && onLoops {
				t.Errorf("no client was paused: the kernel's buffers held them, not the bounds")
			}
			// One read may pass a bound before it is checked, and a
			// request may straddle reads.
			if tc.bytes > 0 && st.FlowBytesPeak > tc.bytes+readSize+size {
				t.Errorf("the engine held %d bytes of requests, over %d and a read", st.FlowBytesPeak, tc.bytes)
			}
			if tc.msgs > 0 && st.FlowQueuedPeak > tc.msgs+readSize/size+1 {
				t.Errorf("the engine held %d requests, over %d and a read", st.FlowQueuedPeak, tc.msgs)
			}
			if tc.bytes == 0 && st.FlowBytesPeak != 0 {
				t.Errorf("bytes counted (%d) without a byte bound", st.FlowBytesPeak)
			}
			t.Logf("blocked after %d requests; engine held %d requests, %d bytes (peaks %d, %d), %d pauses",
				p.sent.Load(), st.FlowQueued, st.FlowBytes, st.FlowQueuedPeak, st.FlowBytesPeak, st.FlowPauses)
			resume()
			select {
			case <-p.rdone:
			case <-time.After(60 * time.Second):
				t.Fatalf("after the member resumed: %d of %d answered", p.got.Load(), total)
			}
			if p.sendErr != nil || p.rErr != nil {
				t.Fatalf("send: %v, read: %v (%d answered)", p.sendErr, p.rErr, p.got.Load())
			}
			// The last write's accounting may follow its answer.
			waitFor(t, "the engine to count nothing held", func() bool {
				st := vs.e.Stats()
				return st.FlowQueued == 0 && st.FlowBytes == 0
			})
		})
	}
}

// TestPendingOff: the bounds alone turn flow control on; without any
// mark or bound it stays off (nothing counted on the message path).
func TestPendingOff(t *testing.T) {
	for _, tc := range []struct {
		f  *FlowControl
		on bool
	}{
		{nil, false},
		{&FlowControl{}, false},
		{&FlowControl{PendingBytes: 1}, true},
		{&FlowControl{PendingMessages: 1}, true},
	} {
		if got := flowOf(tc.f) != nil; got != tc.on {
			t.Errorf("flowOf(%+v) on %v, want %v", tc.f, got, tc.on)
		}
	}
}
