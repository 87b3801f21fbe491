package gslb

import (
	"fmt"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// listenUDP binds the listener's sockets, one per reader
// (rawsock.ListenUDPGroup), datagrams steered to the first while it
// keeps up and to all of them by the receiving CPU under load
// (udpSteer).
func (s *Server) listenUDP(k listenerKey, vl *config.VLANFilter) (*dnsListener, error) {
	conns, err := rawsock.ListenUDPGroup(k.addr.String(), udpSockets())
	if err != nil {
		return nil, fmt.Errorf("gtm listener %s udp: %w", k.addr, err)
	}
	steer, err := newUDPSteer(conns, s.now(), s.log)
	if err != nil {
		// The kernel's hash of the sender's address and port spreads
		// the datagrams over every socket instead: every query is
		// still answered.
		s.log.Warn("gtm listener: datagrams not steered by CPU", "addr", k.addr.String(), "err", err)
	}
	l := &dnsListener{key: k, done: make(chan struct{}), sockets: len(conns)}
	l.udp = conns
	l.setVLANs(vl) // before the first datagram is read
	l.stop = func() {
		for _, c := range conns {
			c.Close()
		}
	}
	l.running.Add(len(conns))
	for _, c := range conns {
		go func() {
			defer l.running.Done()
			s.serveUDP(c, k, steer, &l.vlans)
		}()
	}
	go func() {
		l.running.Wait()
		close(l.done)
	}()
	return l, nil
}
