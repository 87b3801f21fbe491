package dataplane

import (
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// echoBackend answers each read with the same bytes, for round-trip
// benchmarks.
func echoBackend(b *testing.B, addr string) {
	serveConns(b, addr, func(c net.Conn) { io.Copy(c, c) })
}

func benchPlane(b *testing.B, vs, member string) *Plane {
	p := New(Options{})
	b.Cleanup(p.Close)
	if err := p.Apply(nil, basic(vs, member)); err != nil {
		b.Fatal(err)
	}
	return p
}

func roundTrips(b *testing.B, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, 64)
	buf := make([]byte, 64)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeepAliveDirect is the yardstick for BenchmarkKeepAliveProxied:
// 64-byte request/answer round trips on one connection, straight to the
// backend.
func BenchmarkKeepAliveDirect(b *testing.B) {
	echoBackend(b, "127.20.90.2:9000")
	roundTrips(b, "127.20.90.2:9000")
}

// BenchmarkKeepAliveProxied is the same through an L4 virtual.
func BenchmarkKeepAliveProxied(b *testing.B) {
	echoBackend(b, "127.20.91.2:9000")
	benchPlane(b, "127.20.91.1:8000", "127.20.91.2:9000")
	roundTrips(b, "127.20.91.1:8000")
}

// BenchmarkConnectionPerRequest opens a new proxied connection for every
// round trip (connection setup dominates, as with wrk -H 'Connection: close').
func BenchmarkConnectionPerRequest(b *testing.B) {
	echoBackend(b, "127.20.92.2:9000")
	benchPlane(b, "127.20.92.1:8000", "127.20.92.2:9000")
	connectionRoundTrips(b, "127.20.92.1:8000")
}

// connectionRoundTrips opens a new connection to vs for each 64-byte round
// trip, b.N times, and resets it (no TIME_WAIT pile-up across b.N).
func connectionRoundTrips(b *testing.B, vs string) {
	msg := make([]byte, 64)
	buf := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := net.Dial("tcp", vs)
		if err != nil {
			b.Fatal(err)
		}
		c.Write(msg)
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
}

// BenchmarkIdleMemory opens OPENLTM_IDLE_PAIRS (default 4,000) idle proxied
// connections and reports the dataplane's heap and stack bytes per pair.
// The client and backend sockets live in this process too, so the figure
// is an upper bound. (The file limit here, 20,000, caps one process at
// about 4,500 pairs: each pair is four sockets.)
func BenchmarkIdleMemory(b *testing.B) {
	n := 4000
	if s := os.Getenv("OPENLTM_IDLE_PAIRS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ln, err := net.Listen("tcp", "127.20.93.2:9000")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, n)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // backend side: held, no goroutine
		}
	}()
	p := benchPlane(b, "127.20.93.1:8000", "127.20.93.2:9000")
	for it := 0; it < b.N; it++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		clients := make([]net.Conn, 0, n)
		for i := 0; i < n; i++ {
			c, err := net.Dial("tcp", "127.20.93.1:8000")
			if err != nil {
				b.Fatalf("pair %d: %v", i, err)
			}
			clients = append(clients, c)
		}
		for i := 0; i < 500 && p.ConnectionCount() < n; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		for i := 0; i < 500 && len(held) < n; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		used := (after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse)
		b.ReportMetric(float64(used)/float64(n), "bytes/pair")
		b.ReportMetric(float64(p.ConnectionCount()), "flows")
		for _, c := range clients {
			c.Close()
		}
		for len(held) > 0 {
			(<-held).Close()
		}
		for i := 0; i < 500 && p.ConnectionCount() > 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
