package mblb

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchClient is a synchronous client that sends one message and waits for
// its echo, allocating nothing per message.
type benchClient struct {
	c    net.Conn
	wire int
	out  []byte
	in   []byte
}

func newBenchClient(b *testing.B, addr string, wire, size int) *benchClient {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	bc := &benchClient{c: c, wire: wire}
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	if wire == wireLength {
		bc.out = append([]byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}, payload...)
	} else {
		bc.out = payload
	}
	bc.in = make([]byte, len(bc.out))
	return bc
}

func (bc *benchClient) roundTrip() error {
	if _, err := bc.c.Write(bc.out); err != nil {
		return err
	}
	_, err := io.ReadFull(bc.c, bc.in)
	return err
}

// runClients shares b.N messages among n synchronous clients and reports
// messages per second.
func runClients(b *testing.B, addr string, wire, size, n int) {
	clients := make([]*benchClient, n)
	for i := range clients {
		clients[i] = newBenchClient(b, addr, wire, size)
		if err := clients[i].roundTrip(); err != nil { // warm: server flows open
			b.Fatal(err)
		}
	}
	defer func() {
		for _, c := range clients {
			c.c.Close()
		}
	}()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := c.roundTrip(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "msgs/s")
}

var benchAddr atomic.Int32

func nextBenchAddr() string {
	n := benchAddr.Add(1)
	return fmt.Sprintf("127.0.59.%d:0", 100+n%100)
}

// BenchmarkMessages measures messages per second through the engine
// against clients talking straight to one member, with synchronous clients.
func BenchmarkMessages(b *testing.B) {
	type framing struct {
		name string
		wire int
		f    Framing
	}
	framings := []framing{{"per-read", wirePerRead, Framing{}}, {"length", wireLength, lengthFraming}}
	for _, fr := range framings {
		for _, size := range []int{64, 16 << 10} {
			for _, n := range []int{1, 8, 64} {
				for _, mode := range []string{"direct", "mblb", "oneconnect"} {
					name := fmt.Sprintf("%s/%dB/clients=%d/%s", fr.name, size, n, mode)
					b.Run(name, func(b *testing.B) {
						srv := startServer(b, nextBenchAddr(), "S1", fr.wire)
						srv.echo = true
						addr := srv.ln.Addr().String()
						if mode != "direct" {
							pool := newTestPool(srv)
							cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: fr.f}
							if mode == "oneconnect" {
								cfg.OneConnect = &OneConnect{MaxSize: 8}
							}
							vs := startVS(b, nextBenchAddr(), cfg)
							addr = vs.addr()
						}
						runClients(b, addr, fr.wire, size, n)
					})
				}
			}
		}
	}
}

// BenchmarkPipelined measures one client keeping 32 requests in flight, the
// asynchronous clients of seed 000.
func BenchmarkPipelined(b *testing.B) {
	for _, mode := range []string{"direct", "mblb", "oneconnect"} {
		b.Run(mode, func(b *testing.B) {
			srv := startServer(b, nextBenchAddr(), "S1", wireLength)
			srv.echo = true
			addr := srv.ln.Addr().String()
			if mode != "direct" {
				pool := newTestPool(srv)
				cfg := Config{Pick: pool.Pick, Dial: dialMember, Request: lengthFraming}
				if mode == "oneconnect" {
					cfg.OneConnect = &OneConnect{MaxSize: 8}
				}
				vs := startVS(b, nextBenchAddr(), cfg)
				addr = vs.addr()
			}
			bc := newBenchClient(b, addr, wireLength, 64)
			defer bc.c.Close()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			done := make(chan error, 1)
			go func() {
				for i := 0; i < b.N; i++ {
					if _, err := io.ReadFull(bc.c, bc.in); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			// Write in batches of 32 messages.
			batch := make([]byte, 0, 32*len(bc.out))
			for i := 0; i < 32; i++ {
				batch = append(batch, bc.out...)
			}
			for sent := 0; sent < b.N; sent += 32 {
				k := min(32, b.N-sent)
				if _, err := bc.c.Write(batch[:k*len(bc.out)]); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
