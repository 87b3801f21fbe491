package h2gw

import (
	"net"
	"sync"

	"golang.org/x/net/http2"
)

// laneRing is how many of a lane's latest requests Lane remembers: more
// than a lane carries at once (pipelineDepth), so that a request's
// events, which run while it is in flight, always find it.
const laneRing = 64

// defaultWeight is a stream's priority weight when its HEADERS carry
// none (RFC 9113 section 5.3.5: 16, sent as 15).
const defaultWeight = 15

// Lane is what the engine's end of a Pipe can learn of the HTTP/2 client
// and the stream behind each request it reads, for the HTTP2:: iRule
// commands: the requests reach the engine as HTTP/1.1, and the engine
// session of a lane numbers them in the order the gateway handed them.
// Its methods may be called from any goroutine; none waits for the
// client.
type Lane struct {
	mu   sync.Mutex
	g    *conn
	seq  uint64 // requests handed on the lane
	ring [laneRing]laneReq
}

// laneReq is one request handed on a lane.
type laneReq struct {
	n      uint64 // its number on the lane, from 1
	id     uint32
	weight uint8
}

// LaneOf is the Lane of a Pipe's engine end, nil for any other
// connection (an HTTP/1 client's socket).
func LaneOf(c net.Conn) *Lane {
	if p, ok := c.(*pipeConn); ok {
		return p.lane
	}
	return nil
}

// handed notes that s's request went on the lane, the next in its
// order. Under conn.mu.
func (l *Lane) handed(g *conn, s *stream) {
	l.mu.Lock()
	l.g = g
	l.seq++
	l.ring[l.seq%laneRing] = laneReq{n: l.seq, id: s.id, weight: s.weight}
	l.mu.Unlock()
}

// Stream is the stream of the lane's request number n (from 1, as the
// engine session counts them) and its priority weight (0-255, as sent:
// the weight less one); false when n is not one the lane remembers.
func (l *Lane) Stream(n uint64) (id uint32, weight uint8, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.ring[n%laneRing]
	if n == 0 || r.n != n {
		return 0, 0, false
	}
	return r.id, r.weight, true
}

// SetWeight changes the priority weight that Stream reports for request
// n. The gateway sends the responses of its streams as they come, so
// the weight orders nothing [M]; it is kept for the rules that read it.
func (l *Lane) SetWeight(n uint64, weight uint8) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &l.ring[n%laneRing]
	if n == 0 || r.n != n {
		return false
	}
	r.weight = weight
	return true
}

// conn is the client connection the lane serves, nil before its first
// request.
func (l *Lane) conn() *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.g
}

// Concurrency is the number of streams open on the client connection.
func (l *Lane) Concurrency() int {
	if g := l.conn(); g != nil {
		return int(g.nactive.Load())
	}
	return 0
}

// Requests is the number of streams the client opened on the
// connection (those refused at once, over the limits, too).
func (l *Lane) Requests() int {
	if g := l.conn(); g != nil {
		return int(g.nopened.Load())
	}
	return 0
}

// Disconnect ends the client connection cleanly: GOAWAY (NO_ERROR) names
// the last stream the client opened, the streams open are answered, the
// ones it opens after are refused (REFUSED_STREAM: a client retries them
// on a new connection), and the connection closes when the last open one
// is done. It does not wait (the caller, a rule, must not wait for the
// client): the GOAWAY goes before the next answer or the next stream the
// gateway reads, whichever comes first, or from a goroutine of its own
// when neither comes.
func (l *Lane) Disconnect() {
	g := l.conn()
	if g == nil || g.disconnect.Swap(true) {
		return
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.mu.Lock()
		defer g.mu.Unlock()
		g.drain()
		g.flush()
	}()
}

// drain sends HTTP2::disconnect's GOAWAY once, and closes the connection
// at once when no stream is open (else closeStream does with the last).
// Under mu.
func (g *conn) drain() {
	if g.closed || g.draining {
		return
	}
	g.draining = true
	g.fr.WriteGoAway(g.lastID, http2.ErrCodeNo, nil)
	if g.active == 0 {
		g.goneAway()
	}
}

// goneAway closes a connection that sent its GOAWAY once its last stream
// is done. Under mu.
func (g *conn) goneAway() {
	g.flush()
	g.closed = true
	g.c.Close() // the reader returns
	g.room.Broadcast()
}
