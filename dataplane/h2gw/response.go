package h2gw

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

var (
	errBadResponse = errors.New("h2gw: malformed response from the engine")
	errDrain       = errors.New("h2gw: an abandoned response body was not drained")
)

// readLoop is u's responder: it reads the responses in the order their
// requests were written and sends each to its stream, or drops it (the
// client reset the stream). The frames go into the client's output
// buffer, which is flushed only when the engine has nothing more at
// hand, so that the responses that came together leave together.
func (u *upstream) readLoop() {
	g := u.g
	defer g.wg.Done()
	defer func() {
		g.mu.Lock()
		if g.busyResp--; g.busyResp == 0 {
			g.flush()
		}
		g.mu.Unlock()
	}()
	for {
		err := u.readHead()
		g.mu.Lock()
		if err == nil && len(u.exq) == 0 {
			err = errBadResponse // an answer to nothing
		}
		if err != nil || u.dead {
			g.failUpstream(u)
			g.mu.Unlock()
			return
		}
		s := u.exq[0]
		u.exq = append(u.exq[:0], u.exq[1:]...)
		g.inflight--
		u.resp = s
		h := &u.head
		bodyless := s.head || h.status == 204 || h.status == 304 || h.length == 0
		if h.close || !bodyless && !h.chunked && h.length < 0 {
			// Before the stream has its answer and its client can ask
			// again: no request goes on this lane any more.
			u.closing = true
		}
		if !s.reset && !s.respEnded && !g.closed {
			g.promisePending() // push.go: before this stream may end
			g.hbuf.Reset()
			u.encodeHead(g.enc)
			g.writeHeaderBlock(s, bodyless)
		}
		g.mu.Unlock()
		if !bodyless {
			switch {
			case h.chunked:
				err = u.copyChunked(s)
			case h.length > 0:
				err = u.copyN(s, h.length, true)
			default:
				err = u.copyN(s, -1, true) // to the end of the connection
			}
		}
		g.mu.Lock()
		if err != nil || u.closing || u.dead {
			g.failUpstream(u) // u.resp, if unanswered, with the others
			g.mu.Unlock()
			return
		}
		u.resp = nil
		if len(g.waiting) > 0 && u.takes(g.waiting[0]) {
			g.advance()
		}
		g.mu.Unlock()
	}
}

// fill makes sure the next read from the engine has bytes, or waits for
// them only after the client has what is ready: the last responder of
// the connection to wait, when no lane has an answer unread, flushes
// what the others wrote meanwhile, so that the answers of many lanes
// leave in one write.
func (u *upstream) fill() {
	if u.br.Buffered() > 0 {
		return
	}
	g := u.g
	g.mu.Lock()
	// A lane (a Pipe) whose engine has a request it has not read, or
	// whose responder has an answer it has not read, is about to
	// answer: its responder flushes for all, or the engine's read of
	// the last request does (engineRead).
	if g.busyResp--; g.busyResp == 0 && g.unread.Load() == 0 {
		g.flush()
	}
	g.mu.Unlock()
	u.br.Peek(1) // an error comes again with the read that follows
	g.mu.Lock()
	g.busyResp++
	g.mu.Unlock()
}

// engineRead runs on an engine session's goroutine when it took the
// last request its lane's Pipe held: when no lane has an answer on its
// way then, nothing would flush what the responders left (a lane's
// engine may take minutes to answer), so it does.
func (g *conn) engineRead() {
	if g.unread.Load() != 0 {
		return
	}
	g.mu.Lock()
	if g.busyResp == 0 && g.unread.Load() == 0 {
		g.flush()
	}
	g.mu.Unlock()
}

// readLine reads a line of a head or of chunked framing, without its
// CRLF. It is valid until the next read.
func (u *upstream) readLine() ([]byte, error) {
	u.fill()
	line, err := u.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			err = errBadResponse
		}
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// deliver sends a piece of s's body (or drops it), waiting while the
// connection holds pendingLimit bytes for lack of window.
func (u *upstream) deliver(s *stream, p []byte, end bool) error {
	g := u.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.reset || s.respEnded {
		u.head.dropped += len(p)
		if u.head.dropped > drainLimit {
			return errDrain // ends the engine connection instead
		}
		return nil
	}
	g.sendData(s, p, end)
	for g.pending > pendingLimit && !g.closed && !u.dead {
		g.flush()
		g.room.Wait()
	}
	return nil
}

// deliverEnd ends s's response, with trailers when there are any: they
// go after the body held for lack of window.
func (u *upstream) deliverEnd(s *stream, trailers []hpack.HeaderField) error {
	if len(trailers) > 0 {
		u.g.mu.Lock()
		if !s.reset && !s.respEnded {
			s.trailers = &trailers
		}
		u.g.mu.Unlock()
	}
	return u.deliver(s, nil, true)
}

// trailerField is a chunked trailer line as an HTTP/2 field (name in
// lower case), or false for what HTTP/2 cannot carry or a trailer may
// not say (RFC 9110 section 6.5.1).
func trailerField(line []byte) (hpack.HeaderField, bool) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return hpack.HeaderField{}, false
	}
	name := bytes.ToLower(line[:colon])
	if hopByHop(name) || !wireName(string(name)) {
		return hpack.HeaderField{}, false
	}
	switch string(name) {
	case "content-length", "host", "content-encoding", "content-type", "content-range":
		return hpack.HeaderField{}, false
	}
	v := bytes.TrimSpace(line[colon+1:])
	if !httpguts.ValidHeaderFieldValue(string(v)) {
		return hpack.HeaderField{}, false
	}
	return hpack.HeaderField{Name: string(name), Value: string(v)}, true
}

// copyN copies n bytes of body (-1: to the end of the connection).
func (u *upstream) copyN(s *stream, n int64, end bool) error {
	for n != 0 {
		u.fill()
		want := len(u.rbuf)
		if n > 0 && n < int64(want) {
			want = int(n)
		}
		k, err := u.br.Read(u.rbuf[:want])
		if k > 0 {
			if n > 0 {
				n -= int64(k)
			}
			if derr := u.deliver(s, u.rbuf[:k], end && n == 0); derr != nil {
				return derr
			}
		}
		if err != nil {
			if n < 0 && errors.Is(err, io.EOF) {
				u.g.mu.Lock()
				u.closing = true
				u.g.mu.Unlock()
				return u.deliver(s, nil, true)
			}
			return err
		}
	}
	return nil
}

// copyChunked copies a chunked body; its trailers end the stream as a
// HEADERS frame (gRPC's status comes there).
func (u *upstream) copyChunked(s *stream) error {
	for {
		line, err := u.readLine()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 16, 62)
		if err != nil {
			return errBadResponse
		}
		if size == 0 {
			var trailers []hpack.HeaderField
			for {
				line, err := u.readLine()
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return u.deliverEnd(s, trailers)
				}
				if f, ok := trailerField(line); ok {
					trailers = append(trailers, f)
				}
			}
		}
		if err := u.copyN(s, int64(size), false); err != nil {
			return err
		}
		if line, err := u.readLine(); err != nil || len(line) != 0 {
			return errBadResponse
		}
	}
}

// respHead is the head of a response as read from the engine: its lines
// copied (names in lower case), its fields as offsets into them.
type respHead struct {
	raw     []byte
	fields  []span // name, value, name, value...
	conn    []span // the tokens of Connection
	status  int
	code    span
	length  int64 // -1: not declared
	chunked bool
	close   bool
	dropped int // body bytes dropped (its stream was reset)
}

type span struct{ from, to int }

func (h *respHead) text(s span) []byte { return h.raw[s.from:s.to] }

// readHead reads the next final response head, skipping interim ones
// (100 Continue, 103 Early Hints).
func (u *upstream) readHead() error {
	h := &u.head
	for {
		*h = respHead{raw: h.raw[:0], fields: h.fields[:0], conn: h.conn[:0], length: -1}
		line, err := u.readLine()
		if err != nil {
			return err
		}
		// HTTP/1.1 200 OK
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return errBadResponse
		}
		old := line[7] == '0'
		h.raw = append(h.raw, line[9:12]...)
		h.code = span{0, 3}
		h.status, err = strconv.Atoi(string(h.raw))
		if err != nil || h.status < 100 {
			return errBadResponse
		}
		keepAlive := false
		for {
			line, err := u.readLine()
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return errBadResponse
			}
			name := span{len(h.raw), len(h.raw) + colon}
			for _, c := range line[:colon] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				h.raw = append(h.raw, c)
			}
			v := bytes.TrimSpace(line[colon+1:])
			value := span{len(h.raw), len(h.raw) + len(v)}
			h.raw = append(h.raw, v...)
			h.fields = append(h.fields, name, value)
			switch string(h.text(name)) {
			case "content-length":
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil || n < 0 || h.length >= 0 && n != h.length {
					return errBadResponse
				}
				h.length = n
			case "transfer-encoding":
				h.chunked = bytes.HasSuffix(bytes.ToLower(v), []byte("chunked"))
			case "connection":
				for _, t := range bytes.Split(v, []byte(",")) {
					t = bytes.TrimSpace(t)
					switch {
					case bytes.EqualFold(t, []byte("close")):
						h.close = true
					case bytes.EqualFold(t, []byte("keep-alive")):
						keepAlive = true
					}
				}
				h.conn = append(h.conn, value)
			}
		}
		if h.status < 200 && h.status != 101 {
			continue
		}
		if h.status == 101 {
			return errBadResponse // an upgrade cannot go back over HTTP/2
		}
		if h.chunked {
			h.length = -1
		}
		if old && !keepAlive {
			h.close = true
		}
		return nil
	}
}

// encodeHead encodes the head for HTTP/2: the status, then the fields
// but the connection's own and those Connection names. Under mu.
func (u *upstream) encodeHead(enc *hpack.Encoder) {
	h := &u.head
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: u.value(":status", h.text(h.code))})
	for i := 0; i < len(h.fields); i += 2 {
		name := h.text(h.fields[i])
		if hopByHop(name) || h.namedByConnection(name) {
			continue
		}
		if u.g.cfg.DropContentLength && string(name) == "content-length" {
			continue // include-content-length disabled
		}
		n := u.name(name)
		enc.WriteField(hpack.HeaderField{Name: n, Value: u.value(n, h.text(h.fields[i+1]))})
	}
}

// hopByHop are the fields that describe one connection, not the message:
// never forwarded.
func hopByHop(name []byte) bool {
	switch string(name) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer":
		return true
	}
	return false
}

func (h *respHead) namedByConnection(name []byte) bool {
	for _, v := range h.conn {
		for _, t := range bytes.Split(h.text(v), []byte(",")) {
			if bytes.EqualFold(bytes.TrimSpace(t), name) {
				return true
			}
		}
	}
	return false
}

// name interns a field name: the names of responses repeat.
func (u *upstream) name(b []byte) string {
	if s, ok := u.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(u.names) < 256 {
		u.names[s] = s
	}
	return s
}

// value gives name's value as a string, the one of the last response
// when it is the same: most values of a connection's responses repeat.
func (u *upstream) value(name string, b []byte) string {
	if v, ok := u.values[name]; ok && v == string(b) {
		return v
	}
	v := string(b)
	if _, ok := u.values[name]; ok || len(u.values) < 256 {
		u.values[name] = v
	}
	return v
}
