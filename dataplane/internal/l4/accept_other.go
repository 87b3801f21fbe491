//go:build !linux

package l4

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

func (e *Engine) stopLoops() {}

type listenSys struct {
	ln *net.TCPListener
}

// Listen binds a virtual's address. TCP keepalive stays off on proxied
// sockets (the idle timeout governs them).
func (e *Engine) Listen(ap netip.AddrPort, mptcp bool) (*Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	lc.SetMultipathTCP(mptcp)
	ln, err := lc.Listen(context.Background(), "tcp", ap.String())
	if err != nil {
		return nil, err
	}
	return &Listener{Addr: ap, MPTCP: mptcp, listenSys: listenSys{ln: ln.(*net.TCPListener)}}, nil
}

// CloseUnstarted closes a listener that never started (a commit that
// failed to bind another address).
func (l *Listener) CloseUnstarted() { l.ln.Close() }

// ListenerFD is -1 off Linux: nothing steers there.
func ListenerFD(l *Listener) int { return -1 }

// Start starts an accepting goroutine per listener.
func (e *Engine) Start(ls []*Listener) {
	for _, l := range ls {
		e.accepts.Add(1)
		go e.acceptLoop(l)
	}
}

// Stop closes the listeners; their goroutines end.
func (e *Engine) Stop(ls []*Listener) {
	for _, l := range ls {
		l.ln.Close()
	}
}

func (e *Engine) acceptLoop(l *Listener) {
	defer e.accepts.Done()
	for {
		c, err := l.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: back off
			continue
		}
		var client netip.Addr
		if ra, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			client = ra.AddrPort().Addr()
		}
		go e.serve(Pick(l.VS.Load(), l.Alts.Load(), client), c)
	}
}

// LoopLoads is nil: there are no event loops here.
func (e *Engine) LoopLoads() []int { return nil }
