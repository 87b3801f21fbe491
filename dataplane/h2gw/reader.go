package h2gw

import (
	"errors"
	"io"
	"time"

	"golang.org/x/net/http2"
)

// serve is the reader: it reads the client's frames until the
// connection ends, acting on each under conn.mu; it waits for nothing
// but the client, so that window updates and resets are always read.
func (g *conn) serve() {
	g.mu.Lock()
	settings := []http2.Setting{
		{ID: http2.SettingMaxConcurrentStreams, Val: uint32(g.maxStreams)},
		{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderListSize},
	}
	if g.streamWindow != defaultWindow {
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(g.streamWindow)})
	}
	if t := g.cfg.HeaderTableSize; t > 0 && t != defaultTableSize {
		settings = append(settings, http2.Setting{ID: http2.SettingHeaderTableSize, Val: t})
	}
	g.fr.WriteSettings(settings...)
	if g.connWindow > defaultWindow {
		g.fr.WriteWindowUpdate(0, uint32(g.connWindow-defaultWindow))
	}
	g.flush()
	g.mu.Unlock()

	preface := make([]byte, len(Preface))
	if _, err := io.ReadFull(g.br, preface); err != nil || string(preface) != Preface {
		if err == nil {
			g.mu.Lock()
			g.goAway(http2.ErrCodeProtocol)
			g.mu.Unlock()
		}
		return
	}
	for {
		if !g.frameBuffered() {
			// The next read may wait: what the frames read asked for
			// goes now, to the engine and to the client.
			g.mu.Lock()
			g.batching = false
			g.pushAll()
			g.flush()
			g.mu.Unlock()
		}
		f, err := g.fr.ReadFrame()
		if h, ok := f.(*http2.HeadersFrame); ok && err == nil {
			err = g.readHeaders(h)
		}
		g.mu.Lock()
		g.batching = true
		more := !g.closed
		if more {
			if err != nil {
				more = g.readError(err)
			} else {
				more = g.handle(f)
			}
		}
		g.mu.Unlock()
		if !more {
			if g.eof {
				g.finishOwed()
			}
			return
		}
	}
}

// eofPoll is how often the gateway, its client half-closed, looks
// whether the socket was reset under it (the tcp profile's
// close-wait-timeout: internal/mblbvs) while answers are owed.
const eofPoll = 50 * time.Millisecond

// finishOwed runs once the client half-closed (its FIN after whole
// frames): it sends nothing more, so a stream whose request did not end
// is reset, and one held for lack of window can never be sent (no
// WINDOW_UPDATE can come), but the answers owed to the others are
// delivered before the connection ends, as an HTTP/1 client that
// half-closes after its requests gets its answers. It returns once none
// is owed, or the client connection failed (a write, or the socket reset
// by the close-wait timer).
func (g *conn) finishOwed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.active == 0 {
		return
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // wakes the wait below to look at the socket
		t := time.NewTicker(eofPoll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				g.mu.Lock()
				g.room.Broadcast()
				g.mu.Unlock()
			}
		}
	}()
	for !g.closed && g.active > 0 {
		for _, s := range g.streams {
			if !s.reqEnded || len(s.pending) > 0 && !s.respEnded && (s.send <= 0 || g.sendWindow <= 0) {
				g.resetStream(s, http2.ErrCodeCancel, true)
			}
		}
		g.flush()
		if g.closed || g.active == 0 {
			break
		}
		if g.c.SetWriteDeadline(time.Now().Add(writeTimeout)) != nil {
			g.closed = true // reset under the gateway: nothing more is sent
			break
		}
		g.room.Wait()
	}
	g.room.Broadcast() // responders waiting for room see closed
}

// frameBuffered reports whether a whole frame is buffered: if not, the
// next read may wait, and what is to be sent goes first.
func (g *conn) frameBuffered() bool {
	n := g.br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := g.br.Peek(3)
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}

// readError answers what the framer could not read, and reports whether
// the connection goes on (a stream error). Under mu.
func (g *conn) readError(err error) bool {
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case errors.As(err, &se):
		if se.StreamID%2 == 0 {
			g.goAway(http2.ErrCodeProtocol)
			return false
		}
		if s := g.streams[se.StreamID]; s != nil {
			g.resetStream(s, se.Code, true)
			return true
		}
		g.lastID = max(g.lastID, se.StreamID) // a HEADERS refused as it was read
		g.fr.WriteRSTStream(se.StreamID, se.Code)
		return true
	case errors.As(err, &ce):
		g.goAway(http2.ErrCode(ce))
	case errors.Is(err, http2.ErrFrameTooLarge):
		g.goAway(http2.ErrCodeFrameSize)
	case errors.Is(err, io.EOF):
		g.eof = true // the client half-closed: serve finishes what is owed
	default:
		g.goAway(http2.ErrCodeProtocol) // a frame cut short, or the connection failed
	}
	return false
}

// handle acts on one frame and reports whether the connection goes on.
// Under mu.
func (g *conn) handle(f http2.Frame) bool {
	if !g.sawSettings {
		// The client's preface ends with SETTINGS.
		if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
			g.goAway(http2.ErrCodeProtocol)
			return false
		}
		g.sawSettings = true
	}
	switch f := f.(type) {
	case *http2.HeadersFrame:
		g.onHeaders(&g.hb)
	case *http2.DataFrame:
		g.onData(f)
	case *http2.SettingsFrame:
		g.onSettings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			g.fr.WritePing(true, f.Data)
		}
	case *http2.WindowUpdateFrame:
		g.onWindowUpdate(f)
	case *http2.RSTStreamFrame:
		if s := g.streams[f.StreamID]; s != nil {
			g.resetStream(s, 0, false)
		} else if g.idleStream(f.StreamID) {
			g.goAway(http2.ErrCodeProtocol)
		}
	case *http2.PriorityFrame:
		if f.StreamDep == f.StreamID {
			g.streamError(f.StreamID, http2.ErrCodeProtocol)
		}
	case *http2.PushPromiseFrame:
		g.goAway(http2.ErrCodeProtocol) // a client does not push
	case *http2.GoAwayFrame:
		// The client opens no more streams; those open are served.
	}
	return !g.closed
}

// idleStream reports whether id names a stream the client has not
// opened, or the gateway not promised: a frame on it other than HEADERS
// or PRIORITY is a connection error.
func (g *conn) idleStream(id uint32) bool {
	if id%2 == 0 {
		return id > g.lastPush || id == 0
	}
	return id > g.lastID
}

// streamError resets stream id, open or not. Under mu.
func (g *conn) streamError(id uint32, code http2.ErrCode) {
	if s := g.streams[id]; s != nil {
		g.resetStream(s, code, true)
		return
	}
	g.fr.WriteRSTStream(id, code)
}

func (g *conn) onSettings(f *http2.SettingsFrame) {
	if f.IsAck() {
		// A smaller receive-window applies to the streams opened from
		// now on. The streams open keep HTTP/2's default: their client
		// may have counted bytes against it before it read our
		// SETTINGS and send them after its ACK (Go's client does), and
		// RFC 9113 6.9.3 lets a receiver go on with such streams rather
		// than reset them.
		g.acked = true
		return
	}
	err := f.ForeachSetting(func(st http2.Setting) error {
		if err := st.Valid(); err != nil {
			return err
		}
		switch st.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(st.Val) - int64(g.initialWindow)
			for _, s := range g.streams {
				if s.send += delta; s.send > maxWindow {
					return http2.ConnectionError(http2.ErrCodeFlowControl)
				}
			}
			g.initialWindow = int32(st.Val)
		case http2.SettingMaxFrameSize:
			g.maxFrame = int(st.Val)
		case http2.SettingHeaderTableSize:
			g.enc.SetMaxDynamicTableSize(st.Val)
		case http2.SettingEnablePush:
			g.noPush.Store(st.Val == 0) // push.go
		case http2.SettingMaxConcurrentStreams:
			g.peerMaxStreams = st.Val // the pushed streams' bound
		}
		return nil
	})
	var ce http2.ConnectionError
	if errors.As(err, &ce) {
		g.goAway(http2.ErrCode(ce))
		return
	}
	g.fr.WriteSettingsAck()
	g.drainPending(nil)
}

func (g *conn) onWindowUpdate(f *http2.WindowUpdateFrame) {
	inc := int64(f.Increment)
	if f.StreamID == 0 {
		if g.sendWindow+inc > maxWindow {
			g.goAway(http2.ErrCodeFlowControl)
			return
		}
		g.sendWindow += inc
		g.drainPending(nil)
		return
	}
	s := g.streams[f.StreamID]
	if s == nil {
		if g.idleStream(f.StreamID) {
			g.goAway(http2.ErrCodeProtocol)
		}
		return
	}
	if s.send+inc > maxWindow {
		g.resetStream(s, http2.ErrCodeFlowControl, true)
		return
	}
	s.send += inc
	g.drainPending(s)
}

// onData takes a request body's bytes: the connection's and the
// stream's windows first, then the bytes to the engine (or to the
// stream's turn).
func (g *conn) onData(f *http2.DataFrame) {
	n := int32(f.Length) // padding counts
	if n > g.recvWindow {
		g.goAway(http2.ErrCodeFlowControl)
		return
	}
	g.recvWindow -= n
	s := g.streams[f.StreamID]
	if s == nil || s.reqEnded {
		g.giveBack(nil, n)
		switch {
		case s != nil:
			g.resetStream(s, http2.ErrCodeStreamClosed, true)
		case g.idleStream(f.StreamID):
			g.goAway(http2.ErrCodeProtocol)
		default:
			g.fr.WriteRSTStream(f.StreamID, http2.ErrCodeStreamClosed)
		}
		return
	}
	if n > s.recv {
		g.giveBack(nil, n)
		g.resetStream(s, http2.ErrCodeFlowControl, true)
		return
	}
	s.recv -= n
	data := f.Data()
	g.giveBack(s, n-int32(len(data)))
	if s.discard {
		g.giveBack(s, int32(len(data)))
		if f.StreamEnded() {
			s.reqEnded = true
			g.maybeClose(s)
		}
		return
	}
	if s.left >= 0 {
		if int64(len(data)) > s.left || f.StreamEnded() && int64(len(data)) != s.left {
			// The body is not the length declared (RFC 9113 8.1.1).
			g.giveBack(nil, int32(len(data)))
			g.resetStream(s, http2.ErrCodeProtocol, true)
			return
		}
		s.left -= int64(len(data))
	}
	g.requestBody(s, data, f.StreamEnded(), nil)
}
