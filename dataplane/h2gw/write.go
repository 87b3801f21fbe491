package h2gw

import (
	"strconv"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Frames to the client. Every function here runs under conn.mu and
// appends to the output buffer; the goroutine about to wait for its own
// input flushes it (the reader, or the last responder: upstream.fill),
// so that the frames of many streams leave in one write.

// writeHeaderBlock sends the block enc left in hbuf as s's HEADERS,
// split into CONTINUATION frames beyond the client's frame size.
func (g *conn) writeHeaderBlock(s *stream, end bool) {
	if g.disconnect.Load() {
		g.drain() // HTTP2::disconnect's GOAWAY goes before the answer
	}
	block := g.hbuf.Bytes()
	for first := true; first || len(block) > 0; first = false {
		frag := block[:min(len(block), g.maxFrame)]
		block = block[len(frag):]
		if first {
			g.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: frag, EndStream: end, EndHeaders: len(block) == 0})
		} else {
			g.fr.WriteContinuation(s.id, len(block) == 0, frag)
		}
	}
	s.started = true
	if end {
		g.ended(s)
	}
}

// sendData sends p as s's response body, and ends the stream after it
// when end is set. What the client's windows do not allow now waits in
// s.pending for a WINDOW_UPDATE (drainPending).
func (g *conn) sendData(s *stream, p []byte, end bool) {
	if s.reset || s.respEnded || g.closed {
		return
	}
	if len(s.pending) > 0 {
		s.pending = append(s.pending, p...)
		s.pendingEnd = end
		g.pending += len(p)
		return
	}
	n, _ := g.writeData(s, p, end)
	if rest := p[n:]; len(rest) > 0 {
		s.pending = append(s.pending, rest...)
		s.pendingEnd = end
		g.pending += len(rest)
		g.blocked = append(g.blocked, s)
	}
}

// writeData writes as much of p as the windows allow, in frames the
// client accepts, and reports how much and whether the stream ended.
func (g *conn) writeData(s *stream, p []byte, end bool) (int, bool) {
	sent := 0
	frame := g.maxFrame
	if fs := g.cfg.FrameSize; fs > 0 && fs < frame {
		frame = fs // frame-size
	}
	for sent < len(p) {
		k := min(int64(min(len(p)-sent, frame)), s.send, g.sendWindow)
		if k <= 0 {
			return sent, false
		}
		last := end && sent+int(k) == len(p) && s.trailers == nil
		g.fr.WriteData(s.id, last, p[sent:sent+int(k)])
		s.send -= k
		g.sendWindow -= k
		sent += int(k)
		if last {
			g.ended(s)
			return sent, true
		}
	}
	if end {
		if s.trailers != nil {
			g.writeTrailers(s)
			return sent, true
		}
		g.fr.WriteData(s.id, true, nil) // an empty frame takes no window
		g.ended(s)
		return sent, true
	}
	return sent, false
}

// writeTrailers ends s with its trailers, encoded now: HPACK's state is
// the order blocks are written in.
func (g *conn) writeTrailers(s *stream) {
	g.promisePending() // push.go: before the stream ends
	g.hbuf.Reset()
	for _, f := range *s.trailers {
		g.enc.WriteField(f)
	}
	s.trailers = nil
	g.writeHeaderBlock(s, true)
}

// drainPending sends what waits for window: only's, or (nil) every
// stream's in the order they blocked.
func (g *conn) drainPending(only *stream) {
	for i := 0; i < len(g.blocked) && g.sendWindow > 0; {
		s := g.blocked[i]
		if only != nil && s != only {
			i++
			continue
		}
		n, _ := g.writeData(s, s.pending, s.pendingEnd)
		g.pending -= n
		if n < len(s.pending) {
			s.pending = s.pending[n:]
			i++
			continue
		}
		s.pending, s.pendingEnd = nil, false
		g.blocked = append(g.blocked[:i], g.blocked[i+1:]...)
	}
	if g.pending <= pendingLimit {
		g.room.Broadcast()
	}
}

// dropPending forgets what s holds for lack of window.
func (g *conn) dropPending(s *stream) {
	if len(s.pending) == 0 {
		return
	}
	g.pending -= len(s.pending)
	s.pending, s.pendingEnd = nil, false
	for i, b := range g.blocked {
		if b == s {
			g.blocked = append(g.blocked[:i], g.blocked[i+1:]...)
			break
		}
	}
	g.room.Broadcast()
}

// ended notes that s's response ended. A request body still coming that
// goes nowhere is stopped (RST_STREAM NO_ERROR, RFC 9113 section 8.1).
func (g *conn) ended(s *stream) {
	s.respEnded = true
	if !s.reqEnded && s.discard {
		g.fr.WriteRSTStream(s.id, http2.ErrCodeNo)
		s.reqEnded = true
		s.reset = true
	}
	g.maybeClose(s)
}

// respondLocal answers s from the gateway itself.
func (g *conn) respondLocal(s *stream, status int, body string) {
	if s.reset || s.respEnded || g.closed {
		return
	}
	if !s.reqEnded {
		s.discard = true
	}
	g.promisePending() // push.go: before the stream ends
	g.hbuf.Reset()
	g.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	if body != "" {
		g.enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain; charset=utf-8"})
	}
	g.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
	g.writeHeaderBlock(s, body == "")
	if body != "" {
		g.sendData(s, []byte(body), true)
	}
}

// failed answers s 502 (or resets it, its response begun) because the
// engine connection its request went on ended first.
func (g *conn) failed(s *stream) {
	if s.reset || s.respEnded || g.closed {
		return
	}
	if s.started {
		g.resetStream(s, http2.ErrCodeInternal, true)
		return
	}
	if st := g.cfg.Stats; st != nil {
		st.Failed.Add(1)
	}
	g.respondLocal(s, 502, "")
}

// giveBack returns n bytes of window taken by request bodies, the
// connection's and s's (nil: the connection's only), once they are off
// the gateway's hands. WINDOW_UPDATE goes when half a stream window is
// owed, so that a body costs few frames, and never later, so that
// streams waiting their turn cannot hold the connection's window from
// the one being sent.
func (g *conn) giveBack(s *stream, n int32) {
	if n <= 0 || g.closed {
		return
	}
	threshold := g.streamWindow / 2
	g.connUnacked += n
	if g.connUnacked >= threshold {
		g.fr.WriteWindowUpdate(0, uint32(g.connUnacked))
		g.recvWindow += g.connUnacked
		g.connUnacked = 0
	}
	if s == nil || s.reqEnded || s.reset {
		return
	}
	s.unacked += n
	if s.unacked >= threshold {
		g.fr.WriteWindowUpdate(s.id, uint32(s.unacked))
		s.recv += s.unacked
		s.unacked = 0
	}
}
