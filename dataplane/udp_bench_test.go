package dataplane

import (
	"net"
	"testing"
)

// udpEcho answers every datagram with itself until the benchmark ends,
// allocating nothing per datagram.
func udpEcho(b *testing.B, addr string) {
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
}

// udpRoundTrips sends 64-byte datagrams to addr one at a time, each
// waiting for its answer. Allocations per op are those of the whole
// exchange: client, proxy and member (the client and member allocate
// nothing).
func udpRoundTrips(b *testing.B, addr string) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg, buf := make([]byte, 64), make([]byte, 65535)
	// The first exchange makes the flow: not what is measured.
	c.Write(msg)
	if _, err := c.Read(buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUDPDirect is the yardstick: round trips straight to the member.
func BenchmarkUDPDirect(b *testing.B) {
	udpEcho(b, "127.41.90.2:5300")
	udpRoundTrips(b, "127.41.90.2:5300")
}

// BenchmarkUDPProxied is the same through a UDP virtual (per-flow
// balancing): the forwarding path, both directions.
func BenchmarkUDPProxied(b *testing.B) {
	udpEcho(b, "127.41.90.4:5300")
	p := New(Options{})
	b.Cleanup(p.Close)
	if err := p.Apply(nil, udpBasic("127.41.90.3:53", "127.41.90.4:5300")); err != nil {
		b.Fatal(err)
	}
	udpRoundTrips(b, "127.41.90.3:53")
}

// BenchmarkUDPDatagramLB balances every datagram (datagram-load-balancing)
// over two members.
func BenchmarkUDPDatagramLB(b *testing.B) {
	udpEcho(b, "127.41.90.6:5300")
	udpEcho(b, "127.41.90.7:5300")
	p := New(Options{})
	b.Cleanup(p.Close)
	cfg := udpBasic("127.41.90.5:53", "127.41.90.6:5300", "127.41.90.7:5300")
	cfg.Virtuals["/Common/vs"].DatagramLB = true
	if err := p.Apply(nil, cfg); err != nil {
		b.Fatal(err)
	}
	udpRoundTrips(b, "127.41.90.5:53")
}
