package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// serverMain runs a labelled server until ctx ends.
func serverMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on")
	label := fs.String("label", "S1", "label put in every answer")
	frame := fs.String("frame", "line", "message framing: line, raw (one read, one message) or length (4-byte big-endian length first)")
	echo := fs.Bool("echo", false, "answer \"<label> Response to <request>\", so clients can check which request an answer is for (always on with -frame length)")
	delay := fs.Duration("delay", 0, "wait this long before each answer (a slow member)")
	crashAfter := fs.Int("crash-after", 0, "after this many messages, reset every connection without answering and exit with status 3 (a crashing member); 0 never")
	closeAfter := fs.Int("close-after", 0, "answer this many messages on each connection, then close it in order (a member ending its sessions); 0 never")
	quiet := fs.Bool("quiet", false, "log connections only, not every message")
	show := fs.Int("show", 60, "log at most this many bytes of each message (what one read gives with -frame raw)")
	stall := fs.Duration("stall", 0, "read nothing on a new connection for this long, then serve it (a member that stops reading: flow control)")
	syn := fs.Bool("syn", false, "log what each client's SYN carried (MSS, TTL, ToS), kept by the listener (TCP_SAVE_SYN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("server needs -listen")
	}
	if *frame != "line" && *frame != "raw" && *frame != "length" {
		return fmt.Errorf("-frame %q: want line, raw or length", *frame)
	}
	var lc net.ListenConfig
	if *syn {
		lc.Control = saveSYNControl // syn_linux.go
	}
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	s := &labelServer{label: *label, frame: *frame, echo: *echo || *frame == "length", delay: *delay, quiet: *quiet, show: *show, stall: *stall,
		syn: *syn, closeAfter: *closeAfter, log: &lockedWriter{w: stdout}}
	crashed := make(chan struct{})
	if *crashAfter > 0 {
		s.gate = &crashGate{after: int64(*crashAfter), fire: func() {
			s.log.printf("%s crashing after %d messages: every connection reset\n", s.label, *crashAfter)
			ln.Close()
			s.conns.closeAll(true)
			close(crashed)
		}}
	}
	s.log.printf("%s listening on %s\n", s.label, ln.Addr())
	err = s.serve(ctx, ln)
	select {
	case <-crashed:
		return errCrashed
	default:
	}
	return err
}

// errCrashed makes main exit with status 3 after -crash-after.
var errCrashed = errors.New("crashed on purpose (-crash-after)")

// lockedWriter serializes log lines from many connections.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, a...)
}

type labelServer struct {
	label string
	frame string
	echo  bool
	delay time.Duration
	stall time.Duration
	quiet bool
	show  int  // bytes of a message logged
	syn   bool // -syn: log each client's SYN
	// closeAfter: answers per connection before closing it (FIN); 0 never.
	closeAfter int
	gate       *crashGate
	log        *lockedWriter
	conns      connSet
}

func (s *labelServer) serve(ctx context.Context, ln net.Listener) error {
	return serveConns(ctx, ln, &s.conns, s.handle)
}

// handle answers every message on one connection. A clean stop (SIGINT,
// SIGTERM) closes connections in order; -crash-after resets them.
func (s *labelServer) handle(c net.Conn) {
	defer c.Close()
	from := c.RemoteAddr().String()
	s.log.printf("%s connection from %s\n", s.label, from)
	if s.syn {
		s.log.printf("%s SYN from %s: %s\n", s.label, from, synLine(c))
	}
	defer s.log.printf("%s connection from %s closed\n", s.label, from)
	if s.stall > 0 {
		time.Sleep(s.stall)
		s.log.printf("%s reading from %s\n", s.label, from)
	}
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	answer := []byte(s.label + " Response")
	outFrame := s.frame
	if outFrame == "raw" {
		outFrame = "line"
	}
	var buf []byte
	answered := 0
	for {
		msg, err := readFramed(r, s.frame, buf)
		if err == nil || len(msg) > 0 {
			if s.frame == "length" {
				buf = msg
			}
			if !s.quiet {
				shown := msg
				if len(shown) > s.show {
					shown = shown[:max(s.show, 0)]
				}
				s.log.printf("%s received %q from %s\n", s.label, shown, from)
			}
			if !s.gate.pass() {
				return
			}
			if s.delay > 0 {
				time.Sleep(s.delay)
			}
			out := answer
			if s.echo {
				out = append(append(append([]byte(nil), answer...), " to "...), msg...)
			}
			if werr := writeFramed(w, outFrame, out); werr != nil {
				return
			}
			// Answer at once unless more requests are already here: a
			// pipelined burst is answered in few segments.
			if r.Buffered() == 0 || s.frame == "raw" {
				if werr := w.Flush(); werr != nil {
					return
				}
			}
			if answered++; s.closeAfter > 0 && answered >= s.closeAfter {
				w.Flush()
				s.log.printf("%s closing the connection from %s after %d answers\n", s.label, from, answered)
				return
			}
		}
		if err != nil {
			return
		}
	}
}
