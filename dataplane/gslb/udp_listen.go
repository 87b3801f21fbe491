package gslb

import (
	"fmt"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// listenUDP binds the listener's sockets, one per reader
// (rawsock.ListenUDPGroup), datagrams steered to them by the receiving
// CPU (rawsock.SteerByCPU).
func (s *Server) listenUDP(k listenerKey) (*dnsListener, error) {
	conns, err := rawsock.ListenUDPGroup(k.addr.String(), udpSockets())
	if err != nil {
		return nil, fmt.Errorf("gtm listener %s udp: %w", k.addr, err)
	}
	if err := rawsock.SteerByCPU(conns); err != nil {
		// The kernel's hash of the sender's address and port spreads
		// the datagrams instead: every query is still answered.
		s.log.Warn("gtm listener: datagrams not steered by CPU", "addr", k.addr.String(), "err", err)
	}
	l := &dnsListener{key: k, done: make(chan struct{}), sockets: len(conns)}
	l.stop = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	l.running.Add(len(conns))
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
