package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// maxChunk bounds one Out response so a command that writes a huge buffer
// at once still streams in pieces a reader can start printing.
const maxChunk = 32 << 10

// Server answers control connections with sessions of a Backend: one
// session per connection, so a cli transaction or a module context lives
// exactly as long as the tmsh process that opened it.
type Server struct {
	// Backend makes the sessions.
	Backend Backend
	// Logger receives connection-level events; nil means slog.Default().
	Logger *slog.Logger
	// Authorize decides whether a peer may talk at all; nil means
	// AllowSameUserOrRoot. A refused peer gets the error text and is closed.
	Authorize func(Peer) error

	active atomic.Int64
}

// Active is the number of connections being served now, so an embedded
// daemon can wait for the other shells joined to it before it stops.
func (s *Server) Active() int { return int(s.active.Load()) }

// Serve is the common case: serve ln with backend's sessions under the
// default peer policy until ctx ends.
func Serve(ctx context.Context, ln net.Listener, backend Backend, logger *slog.Logger) error {
	s := &Server{Backend: backend, Logger: logger}
	return s.Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx ends, then closes ln and every
// open connection (cancelling commands in flight, closing their sessions)
// and returns nil once all are done. Any other accept failure is returned.
// A misbehaving client (bad JSON, a crash mid-stream) only loses its own
// connection.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	log := s.logger()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	// Accept fails as soon as the listener starts closing; closing again
	// here waits until it has finished (socket file gone, lock released),
	// so a daemon started right after this one returns finds the path free.
	defer ln.Close()

	delay := time.Duration(0)
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: back off and retry
				// rather than take the daemon down.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				log.Warn("control: accept failed; retrying", "err", err, "delay", delay)
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return nil
				}
				continue
			}
			return err
		}
		delay = 0
		wg.Add(1)
		s.active.Add(1)
		go func() {
			defer wg.Done()
			defer s.active.Add(-1)
			s.handle(ctx, conn)
		}()
	}
}

// isTemporary reports accept errors worth retrying (EMFILE, ENFILE,
// ECONNABORTED), which net still flags through the deprecated interface.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// handle runs one connection to its end.
func (s *Server) handle(ctx context.Context, conn net.Conn) {
	log := s.logger()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer conn.Close()
	// Closing the connection when ctx ends unblocks the reader and any
	// write stuck on a client that stopped reading.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	out := &encoder{w: bufio.NewWriter(conn)}
	peer, err := peerOf(conn)
	if err == nil {
		authorize := s.Authorize
		if authorize == nil {
			authorize = AllowSameUserOrRoot
		}
		err = authorize(peer)
	}
	if err != nil {
		log.Warn("control: peer refused", "pid", peer.PID, "uid", peer.UID, "err", err)
		out.send(Response{Done: true, Err: err.Error(), Version: ProtocolVersion})
		return
	}
	log.Debug("control: session opened", "user", peer.User, "pid", peer.PID)
	sess := s.Backend.NewSession(peer.User)
	defer func() {
		sess.Close()
		log.Debug("control: session closed", "user", peer.User, "pid", peer.PID)
	}()

	reqs := make(chan Request)
	go readRequests(ctx, conn, reqs, log)
	for {
		var req Request
		var ok bool
		select {
		case <-ctx.Done():
			return
		case req, ok = <-reqs:
			if !ok {
				return
			}
		}
		var err error
		switch req.Op {
		case OpHello:
			if ds, ok := sess.(DirSetter); ok && req.Dir != "" {
				ds.SetDir(req.Dir)
			}
			p := sess.Prompt()
			err = out.send(Response{Done: true, Version: ProtocolVersion, Prompt: &p})
		case OpPrompt:
			p := sess.Prompt()
			err = out.send(Response{Done: true, Prompt: &p})
		case OpComplete:
			err = out.send(Response{Done: true, Suggestions: complete(sess, req.Line, log)})
		case OpExec:
			err = s.exec(ctx, sess, req.Line, out, reqs)
		case OpCancel:
			// Nothing is running: the command finished before the cancel
			// arrived. Not an error.
		default:
			err = out.send(Response{Done: true, Err: fmt.Sprintf("unknown request %q", req.Op)})
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, errClientGone) {
				log.Debug("control: connection ends", "user", peer.User, "err", err)
			}
			return
		}
	}
}

// errClientGone ends a connection whose client left mid-command.
var errClientGone = errors.New("client went away")

// readRequests decodes requests until the connection ends, then closes reqs.
func readRequests(ctx context.Context, conn net.Conn, reqs chan<- Request, log *slog.Logger) {
	defer close(reqs)
	dec := json.NewDecoder(bufio.NewReader(conn))
	for {
		var req Request
		if err := dec.Decode(&req); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Debug("control: bad request stream", "err", err)
			}
			return
		}
		select {
		case reqs <- req:
		case <-ctx.Done():
			return
		}
	}
}

// exec runs one statement, streaming its output, while still listening for
// a cancel (or the client vanishing) on reqs.
func (s *Server) exec(connCtx context.Context, sess Session, line string, out *encoder, reqs <-chan Request) error {
	ctx, cancel := context.WithCancel(connCtx)
	defer cancel()
	cw := &chunkWriter{enc: out, cancel: cancel}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.logger().Error("control: command panicked", "line", line, "panic", r, "stack", string(debug.Stack()))
				done <- fmt.Errorf("internal error: %v", r)
			}
		}()
		done <- sess.Exec(ctx, line, cw)
	}()

	var execErr error
	gone := false
wait:
	for {
		select {
		case execErr = <-done:
			break wait
		case req, ok := <-reqs:
			switch {
			case !ok:
				gone = true
				cancel()
			case req.Op == OpCancel:
				cancel()
			default:
				// One command at a time per connection: a client that sends
				// another request mid-command is broken; stop serving it.
				gone = true
				cancel()
			}
		}
	}
	cw.close()
	if gone || cw.failed() {
		return errClientGone
	}
	if connCtx.Err() != nil {
		// The daemon is stopping; tell the user why, if the line still holds.
		out.send(Response{Done: true, Err: "ltmd is shutting down; the command was interrupted"})
		return connCtx.Err()
	}
	p := sess.Prompt()
	resp := Response{Done: true, Prompt: &p}
	if c, ok := sess.(Committer); ok {
		resp.Committed = c.LastCommitted()
	}
	if execErr != nil {
		resp.Err = execErr.Error()
		if resp.Err == "" {
			resp.Err = "command failed"
		}
	}
	return out.send(resp)
}

// complete asks the session for suggestions, shielding the connection from
// a completer that panics on odd input.
func complete(sess Session, line string, log *slog.Logger) (out []Suggestion) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("control: completion panicked", "line", line, "panic", r)
			out = nil
		}
	}()
	return sess.Complete(line)
}

// encoder writes one JSON response per line and flushes it at once: the
// client is a person at a prompt, not a bulk reader.
type encoder struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (e *encoder) send(r Response) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w.Write(b)
	e.w.WriteByte('\n')
	return e.w.Flush()
}

// chunkWriter is the io.Writer a command writes its output to: every Write
// goes out as Out responses. After a write fails (client gone) it cancels
// the command and fails every later write, so a command streaming a huge
// table stops promptly.
type chunkWriter struct {
	enc    *encoder
	cancel context.CancelFunc
	mu     sync.Mutex
	err    error
	closed bool
}

// Write sends p as one or more Out responses.
func (c *chunkWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.closed {
		return 0, errors.New("write after the command finished")
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), maxChunk)
		// Cut on a character boundary: JSON strings must stay valid UTF-8.
		for k < len(p) && k > maxChunk-utf8.UTFMax && !utf8.RuneStart(p[k]) {
			k--
		}
		if err := c.enc.send(Response{Out: string(p[:k])}); err != nil {
			c.err = err
			c.cancel()
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

func (c *chunkWriter) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *chunkWriter) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}
