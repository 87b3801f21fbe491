//go:build !linux

package gslb

import (
	"context"
	"fmt"
	"syscall"

	"errors"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// serveUDP answers the queries arriving on one socket until it is
// closed, one datagram per system call.
func (s *Server) serveUDP(c *net.UDPConn, k listenerKey) {
	in := make([]byte, udpBufSize)
	out := make([]byte, 0, 2048)
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
		bc := batchCtx{now: s.now()}
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

func reusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// listenUDP binds the listener's sockets. The first bind decides (a port
// held by another socket without SO_REUSEPORT refuses it); the others
// join the first's address, whose port is fixed by then.
func (s *Server) listenUDP(k listenerKey) (*dnsListener, error) {
	lc := net.ListenConfig{Control: reusePort}
	n := udpSockets()
	l := &dnsListener{key: k, done: make(chan struct{})}
	addr := k.addr.String()
	var conns []*net.UDPConn
	for i := 0; i < n; i++ {
		pc, err := lc.ListenPacket(context.Background(), "udp", addr)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, fmt.Errorf("gtm listener %s udp: %w", k.addr, err)
		}
		c := pc.(*net.UDPConn)
		if i == 0 {
			addr = c.LocalAddr().String()
		}
		conns = append(conns, c)
		l.sockets++
	}
	l.stop = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	l.running.Add(n)
	for _, c := range conns {
		go func() {
			defer l.running.Done()
			s.serveUDP(c, k)
		}()
	}
	go func() {
		l.running.Wait()
		close(l.done)
	}()
	return l, nil
}
