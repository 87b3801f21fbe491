package etcdtest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP relay in front of the member's client port. Clients that
// connect through it can be cut off at once, as a crash or a network
// partition does, instead of being drained the way a graceful etcd shutdown
// drains them (which takes etcd several seconds).
type Proxy struct {
	s *Server
	l net.Listener

	mu    sync.Mutex
	conns map[net.Conn]bool
	cut   bool
	done  bool
}

// NewProxy starts a relay to the member, closed at cleanup. Each device of a
// test can have its own, to partition one device from etcd.
func (s *Server) NewProxy(tb testing.TB) *Proxy {
	tb.Helper()
	p, err := s.Proxy()
	if err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Proxy starts a relay to the member; the caller (or Server.Close) closes
// it.
func (s *Server) Proxy() (*Proxy, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(s.opts.host(), "0"))
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{s: s, l: l, conns: map[net.Conn]bool{}}
	s.mu.Lock()
	s.proxies = append(s.proxies, p)
	s.mu.Unlock()
	go p.serve()
	return p, nil
}

// Endpoints are the client URLs through the relay.
func (p *Proxy) Endpoints() []string {
	return []string{p.s.scheme + "://" + p.l.Addr().String()}
}

// Cut drops every relayed connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
	p.dropAll()
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Close stops the relay.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	p.l.Close()
	p.dropAll()
}

func (p *Proxy) dropAll() {
	p.mu.Lock()
	conns := p.conns
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.done {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *Proxy) relay(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.s.client.Host, 2*time.Second)
	if err != nil || !p.track(up) {
		c.Close()
		if up != nil {
			up.Close()
		}
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
	}
	go pipe(up, c)
	go pipe(c, up)
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}
