package mrf

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Connecting back (the session profile's do-not-connect-back disabled)
// on a TCP virtual: an answer due to a client whose connection has
// ended (or can no longer be written) goes over a new connection the virtual opens to the address the
// answer itself names (a SIP response's top Via once the virtual's own
// is taken off: RFC 3261 §18.2.2), from the virtual's address. The
// connection then serves as a client connection of the router: what
// the client sends on it is routed as over the one it opened (without
// rule events [M]), and later answers due to the ended connection take
// it too. It closes once idle for connectBackIdle with nothing in
// flight (the tcp-idle-timeout of the virtual's address's ltm
// snat-translation instead, where the router's Env holds the address
// and one is set), or when the client closes it. Without a protocol
// that names the address (ConnectBacker), or where it names none, the
// answer is dropped as before. [M: F5 documents the fallback to the
// Via's address; the idle time is openltm's.]

// ConnectBacker is a protocol whose answers name where their client
// listens: the address an answer (data) is delivered to when its
// client's connection has ended; false: none.
type ConnectBacker interface {
	ConnectBackTo(data []byte) (netip.AddrPort, bool)
}

// connectBackIdle is how long a connection back stays open with
// nothing sent on it, unless its address's ltm snat-translation sets
// tcp-idle-timeout.
const connectBackIdle = 30 * time.Second

// backConn is a connection back to a client.
type backConn struct {
	c    net.Conn
	done func()
	sess *Session
	// idle is how long it stays open with nothing sent on it:
	// connectBackIdle, or the held address's tcp-idle-timeout.
	idle time.Duration
	wmu  sync.Mutex
	last time.Time
	dead bool
}

// backConns are the open connections back, by router and address.
var backConns = struct {
	sync.Mutex
	m map[backKey]*backConn
}{m: map[backKey]*backConn{}}

type backKey struct {
	r    *Router
	addr netip.AddrPort
}

// backOnFail says whether answer m, which could not be written to the
// session's client (its connection is going: it closed its side and
// the answers due were being drained), goes over a connection back.
func (s *Session) backOnFail(m *Message) bool {
	return m.Answer && s.peer == nil && s.r.cfg.ConnectBack && !s.r.cfg.UDP
}

// connectBack delivers answer m, due to this ended session's client,
// over a connection back to the address it names; false when there is
// none to be had.
func (s *Session) connectBack(m *Message) bool {
	cb, ok := s.r.cfg.Proto.(ConnectBacker)
	if !ok || s.r.env == nil {
		s.r.C.Dropped.Add(1)
		return false
	}
	addr, ok := cb.ConnectBackTo(m.Data)
	if !ok {
		s.r.C.Dropped.Add(1)
		return false
	}
	b, err := s.r.backConn(addr)
	if err == nil {
		err = b.send(Frame(nil, m.Data, s.r.cfg.Term))
	}
	if err != nil {
		s.r.C.Dropped.Add(1)
		return false
	}
	s.r.C.Delivered.Add(1)
	return true
}

// backConn is the open connection back to addr, opened when there is
// none.
func (r *Router) backConn(addr netip.AddrPort) (*backConn, error) {
	k := backKey{r, addr}
	backConns.Lock()
	b := backConns.m[k]
	backConns.Unlock()
	if b != nil && !b.isDead() {
		return b, nil
	}
	src := r.cfg.Local
	if src.IsUnspecified() {
		src = netip.Addr{}
	}
	hold, err := r.holdAddr(src) // snathold.go: its ltm snat-translation's limit
	if err != nil {
		return nil, err
	}
	c, done, err := r.env.Dial("", addr, src, nil)
	if err != nil {
		if hold != nil {
			hold.Release()
		}
		return nil, err
	}
	done = withHold(done, hold)
	b = &backConn{c: c, done: done, last: time.Now(), idle: heldIdle(connectBackIdle, hold, false)} // snathold.go
	b.sess = r.NewSession(b.send, nil)
	backConns.Lock()
	if old := backConns.m[k]; old != nil && !old.isDead() {
		// Another answer opened one first: use it.
		backConns.Unlock()
		c.Close()
		done()
		return old, nil
	}
	backConns.m[k] = b
	backConns.Unlock()
	go b.serve(k)
	return b, nil
}

func (b *backConn) isDead() bool {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.dead
}

// send writes framed bytes to the client.
func (b *backConn) send(p []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.dead {
		return net.ErrClosed
	}
	b.last = time.Now()
	b.c.SetWriteDeadline(time.Now().Add(b.idle))
	_, err := b.c.Write(p)
	return err
}

// serve reads what the client sends on the connection back and routes
// it, until the client closes it or it idles out; then it is closed.
func (b *backConn) serve(k backKey) {
	defer func() {
		b.wmu.Lock()
		b.dead = true
		b.wmu.Unlock()
		backConns.Lock()
		if backConns.m[k] == b {
			delete(backConns.m, k)
		}
		backConns.Unlock()
		b.sess.Close()
		b.c.Close()
		b.done()
	}()
	r := k.r
	rd := Reader{R: b.c, Term: r.cfg.Term, Max: r.cfg.Max}
	if r.cfg.Proto != nil {
		rd.F = r.cfg.Proto.NewFramer()
	}
	for {
		b.c.SetReadDeadline(time.Now().Add(b.idle))
		data, err := rd.Next()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				b.wmu.Lock()
				quiet := time.Since(b.last) >= b.idle
				b.wmu.Unlock()
				if !quiet || b.sess.inflight.Load() > 0 {
					continue
				}
			}
			return
		}
		if handled, ok := b.sess.Local(data); handled {
			if !ok {
				return
			}
			continue
		}
		if !b.sess.Handle(b.sess.Message(data)) {
			return
		}
	}
}
