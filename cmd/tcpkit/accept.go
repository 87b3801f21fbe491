package main

import (
	"context"
	"net"
	"sync"
)

// connSet is the connections a server has open, so that stopping (or a
// deliberate crash) can close them all.
type connSet struct {
	mu sync.Mutex
	m  map[net.Conn]bool
}

func (cs *connSet) add(c net.Conn) {
	cs.mu.Lock()
	if cs.m == nil {
		cs.m = map[net.Conn]bool{}
	}
	cs.m[c] = true
	cs.mu.Unlock()
}

func (cs *connSet) remove(c net.Conn) {
	cs.mu.Lock()
	delete(cs.m, c)
	cs.mu.Unlock()
}

// closeAll closes every connection; reset sends an RST instead of a FIN.
func (cs *connSet) closeAll(reset bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for c := range cs.m {
		if tc, ok := c.(*net.TCPConn); ok && reset {
			tc.SetLinger(0)
		}
		c.Close()
	}
}

// serveConns accepts connections until ctx ends and runs handle on each;
// conns (nil for a private set) tracks them so they close when ctx ends.
func serveConns(ctx context.Context, ln net.Listener, conns *connSet, handle func(net.Conn)) error {
	if conns == nil {
		conns = &connSet{}
	}
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		ln.Close()
		conns.closeAll(false)
	}()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		conns.add(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle(c)
			conns.remove(c)
		}()
	}
}
