package h2gw

import (
	"bufio"
	"net"
	"slices"
	"sync"
)

// upstream is one connection into the engine: a lane (lanes.go), which
// carries one stream's request at a time, and its responder takes the
// response (exq holds more only while a reset stream's response is
// drained). Why a writer goroutine as well: the reader must not wait for
// the engine (the engine may be waiting for the responder, and the
// responder for a WINDOW_UPDATE only the reader reads), so what the
// engine does not take at once (a Pipe with room takes it at once,
// without a goroutine) is queued for the writer.
type upstream struct {
	g    *conn
	c    net.Conn
	pipe *pipeConn // c when it is a Pipe
	br   *bufio.Reader

	// Under conn.mu.
	wq      []byte   // requests for the writer
	credits []credit // window to give back once wq is written
	writing bool     // the writer is in a Write
	wake    sync.Cond
	exq     []*stream // requests written (or queued), not yet answered
	resp    *stream   // the stream whose response is being read
	body    *stream   // the stream whose request body is still coming
	closing bool      // a response that closes the connection was read
	dead    bool

	// The responder's.
	rbuf   []byte
	head   respHead
	names  map[string]string // interned field names
	values map[string]string // the last value of each field name
}

// credit is request body handed to an engine connection whose window
// goes back to the client once written.
type credit struct {
	s *stream
	n int32
}

// startDial opens the next engine connection on a goroutine of its
// own, so that neither the reader nor a responder waits for the dial
// (a Dialer may wait for the previous connection's session to end).
// Under mu.
func (g *conn) startDial() {
	if g.dialing || g.closed {
		return
	}
	g.dialing = true
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		c, err := g.dial()
		g.mu.Lock()
		defer g.mu.Unlock()
		g.dialing = false
		if g.closed {
			if c != nil {
				c.Close()
			}
			return
		}
		if err != nil {
			// The first request waiting gets 502; the next ones dial
			// again.
			if len(g.waiting) > 0 {
				s := g.waiting[0]
				g.waiting = append(g.waiting[:0], g.waiting[1:]...)
				g.giveBack(nil, s.reqBody)
				s.req, s.reqBody = nil, 0
				g.failed(s)
			}
		} else {
			g.newUpstream(c)
		}
		g.advance()
		g.pushAll() // the reader may be waiting for the client
		g.flush()
	}()
}

// newUpstream starts an engine connection's writer and responder.
// Under mu.
func (g *conn) newUpstream(c net.Conn) *upstream {
	u := &upstream{g: g, c: c, br: bufio.NewReaderSize(c, 32<<10), rbuf: make([]byte, 16<<10),
		names: map[string]string{}, values: map[string]string{}}
	if u.pipe, _ = c.(*pipeConn); u.pipe != nil {
		u.pipe.r.count(&g.unread, nil)          // answers the responder has not read
		u.pipe.w.count(&g.unread, g.engineRead) // requests the engine has not read
	}
	u.wake.L = &g.mu
	g.ups = append(g.ups, u)
	g.busyResp++ // until its first wait
	g.wg.Add(2)
	go u.writeLoop()
	go u.readLoop()
	return u
}

// handBytes sends b on u, then gives back n bytes of s's window.
// While the reader has more frames at hand (batching), the bytes wait
// for it to reach the end of them (pushAll), so that the requests that
// came together reach the engine together. Under mu.
func (g *conn) handBytes(u *upstream, b []byte, s *stream, n int32) {
	if u.dead {
		return
	}
	u.wq = append(u.wq, b...)
	if n > 0 {
		u.credits = append(u.credits, credit{s: s, n: n})
	}
	if !g.batching {
		g.push(u)
	}
}

// pushAll sends what waits for every engine connection. Under mu.
func (g *conn) pushAll() {
	for i := 0; i < len(g.ups); i++ {
		g.push(g.ups[i]) // (one that fails leaves g.ups; the next is then skipped until later)
	}
}

// push sends what waits for u: into a Pipe with room at once, else
// through the writer. Under mu.
func (g *conn) push(u *upstream) {
	if len(u.wq) == 0 || u.writing || u.dead {
		return // a writer in a Write takes wq after it
	}
	if u.pipe != nil {
		ok, err := u.pipe.tryWrite(u.wq)
		if err != nil {
			g.failUpstream(u)
			return
		}
		if ok {
			u.wq = u.wq[:0]
			for _, c := range u.credits {
				g.giveBack(c.s, c.n)
			}
			clear(u.credits)
			u.credits = u.credits[:0]
			return
		}
	}
	u.wake.Signal()
}

// writeLoop writes what the reader queued, all that queued in one
// write, and gives the window of the bodies written back.
func (u *upstream) writeLoop() {
	g := u.g
	defer g.wg.Done()
	var buf []byte
	var cr []credit
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		for len(u.wq) == 0 && !u.dead {
			u.wake.Wait()
		}
		if u.dead {
			return
		}
		buf, u.wq = u.wq, buf[:0]
		cr, u.credits = u.credits, cr[:0]
		u.writing = true
		g.mu.Unlock()
		_, err := u.c.Write(buf)
		g.mu.Lock()
		u.writing = false
		if err != nil {
			for _, c := range cr {
				g.giveBack(nil, c.n)
			}
			g.failUpstream(u)
			return
		}
		for _, c := range cr {
			g.giveBack(c.s, c.n)
		}
		if len(cr) > 0 {
			clear(cr)
			g.flush()
		}
	}
}

// failUpstream ends u: the streams whose requests went on it and are
// not answered get 502, and the requests waiting for a lane go on the
// others. Under mu.
func (g *conn) failUpstream(u *upstream) {
	if u.dead {
		return
	}
	u.dead = true
	u.c.Close()
	u.wake.Broadcast()
	g.room.Broadcast()
	if i := slices.Index(g.ups, u); i >= 0 {
		g.ups = slices.Delete(g.ups, i, i+1)
	}
	u.body = nil // its body can go nowhere now
	lost := u.exq
	if u.resp != nil {
		lost = append([]*stream{u.resp}, lost...)
		u.resp = nil
	}
	g.inflight -= len(u.exq)
	for _, c := range u.credits {
		g.giveBack(nil, c.n) // the connection's window: the bodies go nowhere
	}
	u.exq, u.wq, u.credits = nil, nil, nil
	for _, s := range lost {
		if !s.reqEnded {
			s.discard = true
		}
		g.failed(s)
	}
	g.advance()
	g.pushAll()
	g.flush()
}
