package gslb

import (
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// BenchmarkAnswer is the decision and response building of one wide IP
// query without sockets: what each query costs the server itself.
func BenchmarkAnswer(b *testing.B) {
	for _, mode := range []Mode{RoundRobin, Topology, LowestRoundTripTime} {
		b.Run(string(mode), func(b *testing.B) {
			cfg := testConfig(netip.AddrPort{})
			cfg.Pools["/Common/app_pool"].Mode = mode
			cfg.Topology = []TopologyRecord{{LDNS: Match{Kind: MatchSubnet, Prefix: netip.MustParsePrefix("127.0.85.0/24")},
				Server: Match{Kind: MatchDatacenter, Name: "/Common/dc-gz"}, Score: 10}}
			cfg.Settings.ProbeProtocols = []string{"tcp"}
			cfg.Settings.ProbeTimeout = 50 * time.Millisecond
			s := newServer(b, cfg, Options{})
			q := new(dns.Msg)
			q.SetQuestion(wideName, dns.TypeA)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, _ := s.Answer(q, ldnsCNC, true)
				if len(m.Answer) != 1 {
					b.Fatal(m)
				}
			}
		})
	}
}

// BenchmarkUDP is queries per second for a wide IP answer over a real UDP
// listener on loopback, with parallel clients each keeping one query in
// flight; allocs/op counts the client's share too.
func BenchmarkUDP(b *testing.B) {
	listen := freeAddr(b, "127.0.80.20")
	cfg := testConfig(listen)
	cfg.Listeners[0].Protocol = "udp"
	newServer(b, cfg, Options{})
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		src := netip.AddrFrom4([4]byte{127, 0, 85, byte(n.Add(1))})
		c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), net.UDPAddrFromAddrPort(listen))
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf, _ := q.Pack()
		in := make([]byte, 512)
		for pb.Next() {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := c.Write(buf); err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Read(in); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "queries/s")
}

// BenchmarkAnswerWire is what a UDP listener does for one wide IP query
// once the datagram is read: decision and answer in wire format, in a
// reused buffer. Four A records per answer (max-answers-returned 4), as
// the peers' benchmarks serve; persistence answers from the LDNS's record.
func BenchmarkAnswerWire(b *testing.B) {
	// "topology, 64 LDNS": queries from 64 resolvers in turn, so the
	// reader's memo of topology scores (topoMemo) misses at every query.
	for _, mode := range []string{"round-robin", "topology", "topology, 64 LDNS", "persistence"} {
		b.Run(mode, func(b *testing.B) {
			s, in := wireBenchServer(b, mode)
			srcs := []netip.Addr{ldnsCNC}
			if mode == "topology, 64 LDNS" {
				srcs = nil
				for i := range 64 {
					srcs = append(srcs, netip.AddrFrom4([4]byte{127, 0, 85, byte(i + 1)}))
				}
			}
			out := make([]byte, 0, 2048)
			var bc batchCtx // kept from batch to batch, as a reader keeps it
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A batch of one query: the reader's worst case.
				bc.now = time.Now()
				resp, send := s.answerUDP(in, srcs[i%len(srcs)], out[:0], listenerKey{}, &bc)
				s.flushSeen(&bc)
				if !send || len(resp) != len(in)+4*16 {
					b.Fatal(len(resp), send)
				}
			}
		})
	}
}

// wireBenchServer is the server of the AnswerWire benchmarks, its wide IP
// answering four addresses by the method mode names ("round-robin",
// "topology...", "persistence"), and the packed A query for it.
func wireBenchServer(b *testing.B, mode string) (*Server, []byte) {
	cfg := testConfig(netip.AddrPort{})
	pl := cfg.Pools["/Common/app_pool"]
	pl.MaxAnswers = 4
	switch {
	case strings.HasPrefix(mode, "topology"):
		pl.Mode = Topology
		cfg.Topology = []TopologyRecord{{LDNS: Match{Kind: MatchSubnet, Prefix: netip.MustParsePrefix("127.0.85.0/24")},
			Server: Match{Kind: MatchDatacenter, Name: "/Common/dc-gz"}, Score: 10}}
	case mode == "persistence":
		w := cfg.WideIPs["/Common/www.example.com"]
		w.Persistence, w.PersistTTL = true, time.Hour
	}
	s := newServer(b, cfg, Options{})
	q := new(dns.Msg)
	q.SetQuestion(wideName, dns.TypeA)
	in, _ := q.Pack()
	return s, in
}

// BenchmarkAnswerWireParallel is BenchmarkAnswerWire from every CPU at
// once, as the per-CPU UDP readers run it: what shared counters, locks
// and per-method state (the round-robin turn, the persistence table) cost.
func BenchmarkAnswerWireParallel(b *testing.B) {
	for _, mode := range []string{"round-robin", "topology", "persistence"} {
		b.Run(mode, func(b *testing.B) {
			s, in := wireBenchServer(b, mode)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				out := make([]byte, 0, 2048)
				var bc batchCtx // one per reader, with its counter shard
				bc.shard = int(s.readers.Add(1) - 1)
				for {
					// Batches of 16 queries, as a busy reader gets them.
					bc.now = time.Now()
					n := 0
					for ; n < 16 && pb.Next(); n++ {
						if _, send := s.answerUDP(in, ldnsCNC, out[:0], listenerKey{}, &bc); !send {
							b.Error("not sent")
							return
						}
					}
					s.flushSeen(&bc)
					if n < 16 {
						return
					}
				}
			})
		})
	}
}
