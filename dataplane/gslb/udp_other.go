//go:build !linux

package gslb

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// serveUDP answers the queries arriving on one socket until it is
// closed, one datagram per system call. There is no steering program
// here (rawsock.SteerByCPU): steer is nil.
func (s *Server) serveUDP(c *net.UDPConn, k listenerKey, _ *udpSteer, _ *atomic.Pointer[config.VLANFilter]) {
	in := make([]byte, udpBufSize)
	out := make([]byte, 0, 2048)
	var bc batchCtx // one per reader: its memo outlives the datagram
	bc.shard = int(s.readers.Add(1) - 1)
	for {
		n, from, err := c.ReadFromUDPAddrPort(in)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A socket error (ICMP reports, ENOBUFS) concerns one
			// datagram; pause a little so a persistent one cannot spin.
			time.Sleep(time.Millisecond)
			continue
		}
		if s.plan.Load().afterRules { // a rule may suspend the query
			s.answerAsync(c, in[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), k)
			continue
		}
		bc.now, bc.port = s.now(), from.Port()
		resp, send := s.answerUDP(in[:n], from.Addr().Unmap(), out[:0], k, &bc)
		s.flushSeen(&bc)
		if send {
			c.WriteToUDPAddrPort(resp, from)
		}
		if cap(resp) > cap(out) && cap(resp) <= 64<<10 {
			out = resp[:0]
		}
	}
}
