package gslb

import (
	"context"
	"fmt"
	"net"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// listenUDP binds the listener's sockets. The first bind decides (a port
// held by another socket without SO_REUSEPORT refuses it); the others
// join the first's address, whose port is fixed by then.
func (s *Server) listenUDP(k listenerKey) (*dnsListener, error) {
	lc := net.ListenConfig{Control: rawsock.ReusePort}
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
