//go:build !linux

package dataplane

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// Without epoll, each listener has an accepting goroutine and every flow
// runs on goroutines of its own (proxy.go).

type loopSet struct{}

func (p *Plane) stopLoops() {}

type listenSys struct {
	ln *net.TCPListener
}

// listen binds a virtual's address. TCP keepalive stays off on proxied
// sockets (the idle timeout governs them).
func (p *Plane) listen(ap netip.AddrPort) (*listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", ap.String())
	if err != nil {
		return nil, err
	}
	return &listener{addr: ap, listenSys: listenSys{ln: ln.(*net.TCPListener)}}, nil
}

func (l *listener) closeUnstarted() { l.ln.Close() }

func (p *Plane) startListeners(ls []*listener) {
	for _, l := range ls {
		p.accepts.Add(1)
		go p.acceptLoop(l)
	}
}

func (p *Plane) stopListeners(ls []*listener) {
	for _, l := range ls {
		l.ln.Close()
	}
}

func (p *Plane) acceptLoop(l *listener) {
	defer p.accepts.Done()
	for {
		c, err := l.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: back off
			continue
		}
		go p.serve(l.vs.Load(), c)
	}
}
